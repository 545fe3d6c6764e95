/// A value in a form or query string. Flat forms use `.string` (or `.bytes`); the nested cases
/// follow the conventions servers decode (`a[]=1`, `a[b]=c`), chosen by `FormEncoder`'s options.
public enum FormValue: Sendable, Equatable {
    /// Text, sent as its UTF-8 bytes.
    case string(String)
    /// Bytes sent as they are (escaped), for values that are not text or not UTF-8.
    case bytes([UInt8])
    /// An integer, in decimal.
    case int(Int64)
    /// A floating-point number, in Swift's shortest round-trip form (`1.5`, `1.0`, `1e-05`).
    case double(Double)
    /// A boolean, as `1`/`0` or `true`/`false` (`FormEncoder.BoolEncoding`).
    case bool(Bool)
    /// No value: dropped, or sent as an empty value (`FormEncoder.NullEncoding`).
    case null
    /// A list, as `a[]=1&a[]=2`, `a=1&a=2` or `a[0]=1&a[1]=2` (`FormEncoder.ArrayEncoding`).
    case array([FormValue])
    /// An ordered dictionary, as `a[b]=c`.
    case dictionary([FormPair])
}

/// One key and its value. Keys are bytes, so a key need not be UTF-8 text (the C and Python
/// fronts accept byte keys); Swift callers usually pass a `String`.
public struct FormPair: Sendable, Equatable {
    public var key: [UInt8]
    public var value: FormValue

    public init(_ key: String, _ value: FormValue) {
        self.key = Array(key.utf8)
        self.value = value
    }

    public init(bytes key: [UInt8], _ value: FormValue) {
        self.key = key
        self.value = value
    }
}

// MARK: - Literals, so call sites read `["name": "Lucas Drance", "age": 1.5, "tags": ["a", "b"]]`

extension FormValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: FormValue...) { self = .array(elements) }
    /// Keeps the literal's order and any repeated keys.
    public init(dictionaryLiteral elements: (String, FormValue)...) {
        self = .dictionary(elements.map { FormPair($0.0, $0.1) })
    }
}

extension Array where Element == FormPair {
    /// Ordered pairs from `(key, value)` tuples, repeated keys kept.
    public init(_ pairs: KeyValuePairs<String, FormValue>) {
        self = pairs.map { FormPair($0.key, $0.value) }
    }
}
