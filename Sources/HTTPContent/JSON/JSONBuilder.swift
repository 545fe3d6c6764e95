/// Builds a `JSONValue` from a sequence of events, as a generator is fed (yajl_gen's shape):
/// values, `beginArray`/`endArray`, `beginObject`, `key` then a value, `endObject`. For callers
/// that cannot write Swift literals (the C front makes request bodies with it).
///
/// Misuse is an `.invalidArgument` error that names it (a value in an object without a key,
/// an unbalanced end, a second top-level value, a non-finite double); the builder stays as it
/// was before the failing call.
public struct JSONBuilder: Sendable {
    private enum Open: Sendable {
        case array([JSONValue])
        case object([JSONMember], pendingKey: String?)
    }

    private var stack: [Open] = []
    private var root: JSONValue?
    /// Deepest nesting accepted, as the parser's default.
    public var maxDepth = 512

    public init() {}

    public mutating func null() throws(HTTPContentError) { try add(.null) }
    public mutating func bool(_ value: Bool) throws(HTTPContentError) { try add(.bool(value)) }
    public mutating func int(_ value: Int64) throws(HTTPContentError) { try add(.int(value)) }

    public mutating func double(_ value: Double) throws(HTTPContentError) {
        guard value.isFinite else { throw HTTPContentError(.invalidArgument, "JSON has no \(value)") }
        try add(.double(value))
    }

    /// A number written exactly as `text`, which must be a JSON number.
    public mutating func number(text: String) throws(HTTPContentError) {
        guard JSONBuilder.isJSONNumber(text) else {
            throw HTTPContentError(.invalidArgument, "\(quoted(text)) is not a JSON number")
        }
        try add(.number(text))
    }

    public mutating func string(_ value: String) throws(HTTPContentError) { try add(.string(value)) }

    /// The name of the next member of the innermost object.
    public mutating func key(_ name: String) throws(HTTPContentError) {
        guard case .object(let members, let pending)? = stack.last else {
            throw HTTPContentError(.invalidArgument, "a key outside an object")
        }
        guard pending == nil else {
            throw HTTPContentError(.invalidArgument, "two keys in a row (the member \(quoted(pending!)) has no value)")
        }
        stack[stack.count - 1] = .object(members, pendingKey: name)
    }

    public mutating func beginArray() throws(HTTPContentError) {
        try checkRoomForValue()
        try checkDepth()
        stack.append(.array([]))
    }

    public mutating func endArray() throws(HTTPContentError) {
        guard case .array(let elements)? = stack.last else {
            throw HTTPContentError(.invalidArgument, "endArray without an open array")
        }
        stack.removeLast()
        try add(.array(JSONArray(elements)))
    }

    public mutating func beginObject() throws(HTTPContentError) {
        try checkRoomForValue()
        try checkDepth()
        stack.append(.object([], pendingKey: nil))
    }

    public mutating func endObject() throws(HTTPContentError) {
        guard case .object(let members, let pending)? = stack.last else {
            throw HTTPContentError(.invalidArgument, "endObject without an open object")
        }
        if let pending {
            throw HTTPContentError(.invalidArgument, "the member \(quoted(pending)) has no value")
        }
        stack.removeLast()
        try add(.object(JSONObject(members)))
    }

    /// The value built; the builder is empty again afterwards.
    public mutating func finish() throws(HTTPContentError) -> JSONValue {
        guard stack.isEmpty else {
            throw HTTPContentError(.invalidArgument, "\(stack.count) array(s) or object(s) still open")
        }
        guard let root else { throw HTTPContentError(.invalidArgument, "nothing was built") }
        self.root = nil
        return root
    }

    // MARK: - Helpers

    private func checkDepth() throws(HTTPContentError) {
        guard stack.count < maxDepth else {
            throw HTTPContentError(.invalidArgument, "nesting deeper than \(maxDepth)")
        }
    }

    private func checkRoomForValue() throws(HTTPContentError) {
        switch stack.last {
        case nil:
            if root != nil { throw HTTPContentError(.invalidArgument, "a second top-level value") }
        case .object(_, let pending)?:
            if pending == nil { throw HTTPContentError(.invalidArgument, "a value in an object without a key") }
        case .array?:
            break
        }
    }

    private mutating func add(_ value: JSONValue) throws(HTTPContentError) {
        try checkRoomForValue()
        switch stack.last {
        case nil:
            root = value
        case .array(var elements)?:
            stack[stack.count - 1] = .array([])  // unique, so the append does not copy
            elements.append(value)
            stack[stack.count - 1] = .array(elements)
        case .object(var members, let pending)?:
            stack[stack.count - 1] = .array([])
            members.append(JSONMember(key: pending!, value: value))
            stack[stack.count - 1] = .object(members, pendingKey: nil)
        }
    }

    /// RFC 8259's number grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    static func isJSONNumber(_ text: String) -> Bool {
        var it = Array(text.utf8)[...]
        func digits() -> Int {
            var n = 0
            while let c = it.first, c >= 0x30, c <= 0x39 { it = it.dropFirst(); n += 1 }
            return n
        }
        if it.first == 0x2D { it = it.dropFirst() }
        if it.first == 0x30 { it = it.dropFirst() } else if digits() == 0 { return false }
        if it.first == 0x2E { it = it.dropFirst(); if digits() == 0 { return false } }
        if it.first == 0x65 || it.first == 0x45 {
            it = it.dropFirst()
            if it.first == 0x2B || it.first == 0x2D { it = it.dropFirst() }
            if digits() == 0 { return false }
        }
        return it.isEmpty
    }
}
