/// A JSON value: what the `JSON` handler produces, `JSONStreamParser` builds, and the generator
/// writes.
///
/// Integers that fit `Int64` are `.int`; other numbers are `.double`, or `.number` with their
/// original text when `JSONOptions.keepNumberText` is set (nothing is ever rounded then).
/// Arrays and objects keep their elements and members in document order; objects keep duplicate
/// keys (lookup by key finds the last, as JavaScript and Python do).
///
/// Tearing down a value never recurses: containers dismantle their children iteratively, so
/// dropping a value nested 100,000 levels deep cannot overflow the stack.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// An integer that fits in 64 bits.
    case int(Int64)
    /// A number with a fraction or exponent, or an integer too large for `Int64`.
    case double(Double)
    /// A number kept as its exact text (`JSONOptions.keepNumberText`).
    case number(String)
    case string(String)
    case array(JSONArray)
    case object(JSONObject)

    // MARK: - Kinds and scalar accessors

    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The string, or nil when this is not a string.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The value as an `Int64`: integers as they are, doubles and number texts only when they
    /// hold an integer exactly representable in 64 bits.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.rounded() == d, d >= -0x1p63, d < 0x1p63 else { return nil }
            return Int64(d)
        case .number(let text):
            if let i = Int64(text) { return i }
            return JSONValue.double(JSONNumberText.double(text) ?? .nan).int64Value
        default: return nil
        }
    }

    /// The value as a `Double` (integers converted, number texts parsed; may round).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .number(let text): return JSONNumberText.double(text)
        default: return nil
        }
    }

    /// The number's text as it would be written: the kept text, or the integer or shortest
    /// round-tripping double.
    public var numberText: String? {
        switch self {
        case .int(let i): return String(i)
        case .double(let d): return JSONNumberText.format(d)
        case .number(let text): return text
        default: return nil
        }
    }

    public var arrayValue: JSONArray? { if case .array(let a) = self { return a } else { return nil } }
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }

    /// Elements of an array or members of an object; 0 for scalars.
    public var count: Int {
        switch self {
        case .array(let a): return a.count
        case .object(let o): return o.count
        default: return 0
        }
    }

    // MARK: - Key paths

    /// The value at a dot-separated key path: `value["user.followers.0.name"]`. A component is a
    /// member name in an object and a decimal index in an array. The empty path is the value
    /// itself. Use `value[path:]` for keys that contain dots.
    public subscript(keyPath: String) -> JSONValue? {
        self[path: JSONValue.keyPathComponents(keyPath)]
    }

    /// The value at a path given component by component: `value[path: ["a.b", "0"]]`.
    public subscript(path components: [String]) -> JSONValue? {
        var current = self
        for component in components {
            guard let next = current.child(component) else { return nil }
            current = next
        }
        return current
    }

    /// One step of a key path: a member of an object, or an element of an array by decimal index.
    public func child(_ component: String) -> JSONValue? {
        switch self {
        case .object(let o): return o[component]
        case .array(let a):
            guard let i = JSONValue.arrayIndex(component), i < a.count else { return nil }
            return a[i]
        default: return nil
        }
    }

    /// Where one key-path component leads in this value: the index of the last member with that
    /// name in an object, or the element index in an array; nil when there is none.
    public func childIndex(_ component: String) -> Int? {
        switch self {
        case .object(let o): return o.members.lastIndex { $0.key == component }
        case .array(let a):
            guard let i = JSONValue.arrayIndex(component), i < a.count else { return nil }
            return i
        default: return nil
        }
    }

    /// The key-path components of a dot-separated path (`""` is the value itself: no component).
    public static func keyPathComponents(_ keyPath: String) -> [String] {
        keyPath.isEmpty ? [] : keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// A non-negative decimal index ("0", "17"), without sign or leading zeros.
    static func arrayIndex(_ text: String) -> Int? {
        let utf8 = text.utf8
        guard let first = utf8.first, first >= 0x30, first <= 0x39, first != 0x30 || utf8.count == 1 else { return nil }
        return Int(text)
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral {
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(JSONArray(elements)) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { JSONMember(key: $0.0, value: $0.1) }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text; values that cannot be written (NaN, nesting beyond the generator's
    /// limit) are described by the error instead.
    public var description: String {
        do {
            return String(decoding: try JSONGenerator.serialize(self), as: UTF8.self)
        } catch {
            return "<unserializable JSON: \(error.message)>"
        }
    }
}
