/// Builds a `PlistValue` event by event (values, begin/end of arrays and dictionaries, a key
/// before each value in a dictionary), for callers that walk their own data: the C ABI and
/// the Python binding. Misuse throws `.invalidArgument` and leaves the builder as it was.
public struct PlistBuilder {
    /// An open container (a class, so appending to it never copies its elements).
    private final class Open {
        let isArray: Bool
        var items: [PlistValue] = []
        var members: [PlistMember] = []
        var pendingKey: String?
        init(isArray: Bool) { self.isArray = isArray }
    }
    private var stack: [Open] = []
    private var done: PlistValue?

    public init() {}

    /// Adds a scalar, or a closed container, where the next value goes.
    public mutating func value(_ v: PlistValue) throws(HTTPContentError) {
        guard let open = stack.last else {
            guard done == nil else { throw HTTPContentError(.invalidArgument, "plist builder: a second top-level value") }
            done = v
            return
        }
        if open.isArray {
            open.items.append(v)
            return
        }
        guard let key = open.pendingKey else {
            throw HTTPContentError(.invalidArgument, "plist builder: a dictionary value without its key")
        }
        open.members.append(PlistMember(key: key, value: v))
        open.pendingKey = nil
    }

    /// The next member's name in the innermost dictionary.
    public mutating func key(_ k: String) throws(HTTPContentError) {
        guard let open = stack.last, !open.isArray else {
            throw HTTPContentError(.invalidArgument, "plist builder: a key outside a dictionary")
        }
        guard open.pendingKey == nil else { throw HTTPContentError(.invalidArgument, "plist builder: two keys in a row") }
        open.pendingKey = k
    }

    public mutating func beginArray() throws(HTTPContentError) {
        try checkSlot()
        stack.append(Open(isArray: true))
    }

    public mutating func beginDictionary() throws(HTTPContentError) {
        try checkSlot()
        stack.append(Open(isArray: false))
    }

    public mutating func endArray() throws(HTTPContentError) {
        guard let open = stack.last, open.isArray else {
            throw HTTPContentError(.invalidArgument, "plist builder: end of an array that is not open")
        }
        stack.removeLast()
        try value(.array(open.items))
    }

    public mutating func endDictionary() throws(HTTPContentError) {
        guard let open = stack.last, !open.isArray, open.pendingKey == nil else {
            throw HTTPContentError(.invalidArgument, "plist builder: end of a dictionary that is not open, or a key without its value")
        }
        stack.removeLast()
        try value(.dictionary(open.members))
    }

    /// The value built; the builder is empty again.
    public mutating func finish() throws(HTTPContentError) -> PlistValue {
        guard stack.isEmpty, let v = done else {
            throw HTTPContentError(.invalidArgument, "plist builder: " + (stack.isEmpty ? "no value" : "\(stack.count) container(s) still open"))
        }
        done = nil
        return v
    }

    private func checkSlot() throws(HTTPContentError) {
        if stack.isEmpty, done != nil { throw HTTPContentError(.invalidArgument, "plist builder: a second top-level value") }
        if let open = stack.last, !open.isArray, open.pendingKey == nil {
            throw HTTPContentError(.invalidArgument, "plist builder: a dictionary value without its key")
        }
        if stack.count >= PlistOptions.depthCeiling {
            throw HTTPContentError(.invalidArgument, "plist builder: nesting exceeds \(PlistOptions.depthCeiling) levels")
        }
    }
}
