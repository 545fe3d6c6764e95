/// Builds nested form pairs one value at a time, for callers that cannot write a `FormValue`
/// literal (the C and Python fronts): open an array or dictionary, add to it, close it.
/// Inside an array, values have no key.
public struct FormBuilder: Sendable {
    private struct Open: Sendable {
        var key: [UInt8]?
        var isArray: Bool
        var items: [FormPair] = []
    }

    /// The top level, then one entry per open container.
    private var stack = [Open(key: nil, isArray: false)]

    public init() {}

    /// How many arrays and dictionaries are open.
    public var depth: Int { stack.count - 1 }

    /// Adds a value; `key` must be nil inside an array and non-nil elsewhere.
    public mutating func add(key: [UInt8]?, _ value: FormValue) throws(HTTPContentError) {
        try checkKey(key)
        stack[stack.count - 1].items.append(FormPair(bytes: key ?? [], value))
    }

    public mutating func openArray(key: [UInt8]?) throws(HTTPContentError) {
        try checkKey(key)
        stack.append(Open(key: key, isArray: true))
    }

    public mutating func openDictionary(key: [UInt8]?) throws(HTTPContentError) {
        try checkKey(key)
        stack.append(Open(key: key, isArray: false))
    }

    /// Closes the innermost open array or dictionary.
    public mutating func close() throws(HTTPContentError) {
        guard stack.count > 1, let open = stack.popLast() else {
            throw HTTPContentError(.invalidArgument, "form: nothing open to close")
        }
        let value: FormValue = open.isArray ? .array(open.items.map(\.value)) : .dictionary(open.items)
        stack[stack.count - 1].items.append(FormPair(bytes: open.key ?? [], value))
    }

    /// The pairs built so far.
    /// - Throws: `.invalidArgument` while an array or dictionary is still open.
    public func pairs() throws(HTTPContentError) -> [FormPair] {
        guard stack.count == 1 else {
            throw HTTPContentError(.invalidArgument, "form: \(depth) array(s) or dictionary(ies) still open")
        }
        return stack[0].items
    }

    private func checkKey(_ key: [UInt8]?) throws(HTTPContentError) {
        let inArray = stack[stack.count - 1].isArray
        if inArray && key != nil {
            throw HTTPContentError(.invalidArgument, "form: values inside an array take no key")
        }
        if !inArray && key == nil {
            throw HTTPContentError(.invalidArgument, "form: a key is required outside an array")
        }
    }
}
