/// Turns a JSON scalar with a given `format` into a typed value after validation, and a typed
/// value back into JSON for a request body.
///
/// A transformer made from text functions (`init(format:decode:encode:)`, the built-in ones)
/// applies to strings only; one made with `init(format:scalars:decodeValue:encodeValue:)`
/// applies to the scalars it names (by default any: `{"type": "integer", "format": "cents"}`,
/// Unix times...), and its encoder may write any JSON value, which the schema then validates
/// like the rest of the body.
public struct SchemaTransformer: Sendable {
    /// The kinds of JSON scalar a transformer applies to.
    public struct Scalars: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let strings = Scalars(rawValue: 1)
        public static let numbers = Scalars(rawValue: 2)
        public static let booleans = Scalars(rawValue: 4)
        public static let nulls = Scalars(rawValue: 8)
        public static let any: Scalars = [.strings, .numbers, .booleans, .nulls]

        /// Whether `value` is of one of these kinds (containers never are).
        public func accepts(_ value: JSONValue) -> Bool {
            switch value {
            case .string: return contains(.strings)
            case .int, .double, .number: return contains(.numbers)
            case .bool: return contains(.booleans)
            case .null: return contains(.nulls)
            case .array, .object: return false
            }
        }
    }

    public let format: String
    /// What the transformer applies to.
    public let scalars: Scalars
    /// Value → typed value; throws when the value does not hold such a value.
    public let decodeValue: @Sendable (JSONValue) throws -> any Sendable
    /// Typed value → JSON; nil when the value is not one this transformer makes.
    public let encodeValue: @Sendable (any Sendable) -> JSONValue?

    /// A transformer of any JSON scalars (`scalars`, default all of them).
    public init(format: String, scalars: Scalars = .any,
                decodeValue: @escaping @Sendable (JSONValue) throws -> any Sendable,
                encodeValue: @escaping @Sendable (any Sendable) -> JSONValue?) {
        self.format = format
        self.scalars = scalars
        self.decodeValue = decodeValue
        self.encodeValue = encodeValue
    }

    /// A transformer of strings: text → value, value → text.
    public init(format: String, decode: @escaping @Sendable (String) throws -> any Sendable,
                encode: @escaping @Sendable (any Sendable) -> String?) {
        self.init(format: format, scalars: .strings, decodeValue: { value in
            guard case .string(let text) = value else { throw SchemaTransformError.notA(format, SchemaTransformer.text(of: value)) }
            return try decode(text)
        }, encodeValue: { encode($0).map(JSONValue.string) })
    }

    /// Text → value (a string's text; a number, boolean or null as its JSON text).
    public var decode: @Sendable (String) throws -> any Sendable {
        let f = decodeValue
        return { try f(.string($0)) }
    }

    /// Value → text: a string as it is, any other value as its JSON text.
    public var encode: @Sendable (any Sendable) -> String? {
        let f = encodeValue
        return { v in f(v).map(SchemaTransformer.text(of:)) }
    }

    /// A scalar's text: a string's own, or the JSON text of anything else.
    public static func text(of value: JSONValue) -> String {
        if case .string(let s) = value { return s }
        return String(decoding: (try? value.serialized()) ?? [], as: UTF8.self)
    }

    /// date-time → `SchemaDateTime`, date → `SchemaDate`, uuid → `SchemaUUID`, uri → `String`
    /// (Foundation-free types of our own; the fronts map them to theirs).
    public static let builtin: [String: SchemaTransformer] = [
        "date-time": SchemaTransformer(format: "date-time", decode: { text in
            guard let v = SchemaDateTimeText.parse(text) else { throw SchemaTransformError.notA("date-time", text) }
            return v
        }, encode: { ($0 as? SchemaDateTime).map(SchemaDateTimeText.format) }),
        "date": SchemaTransformer(format: "date", decode: { text in
            guard let (y, m, d) = SchemaDates.date(Array(text.utf8)[...]) else { throw SchemaTransformError.notA("date", text) }
            return SchemaDate(year: y, month: m, day: d)
        }, encode: { ($0 as? SchemaDate)?.description }),
        "uuid": SchemaTransformer(format: "uuid", decode: { text in
            guard let v = SchemaUUID(text) else { throw SchemaTransformError.notA("uuid", text) }
            return v
        }, encode: { ($0 as? SchemaUUID)?.description }),
        "uri": SchemaTransformer(format: "uri", decode: { $0 }, encode: { $0 as? String }),
    ]
}

enum SchemaTransformError: Error, CustomStringConvertible {
    case notA(String, String)
    var description: String {
        switch self { case .notA(let f, let t): return "\"\(t)\" is not a \(f)" }
    }
}

/// A calendar date (the `date` format's value).
public struct SchemaDate: Sendable, Equatable, CustomStringConvertible {
    public var year, month, day: Int
    public var description: String {
        func pad(_ n: Int, _ w: Int) -> String { var s = String(n); while s.count < w { s = "0" + s }; return s }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}

/// A UUID's 16 bytes (the `uuid` format's value); written in lowercase 8-4-4-4-12 form.
public struct SchemaUUID: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]
    public init?(_ text: String) {
        guard SchemaFormatChecks.uuid(text) else { return nil }
        var out: [UInt8] = []
        var hi: UInt8? = nil
        for c in text.utf8 where c != 0x2D {
            let v: UInt8 = c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57
            if let h = hi { out.append(h << 4 | v); hi = nil } else { hi = v }
        }
        bytes = out
    }
    public var description: String {
        let hex = Array("0123456789abcdef".utf8)
        var s: [UInt8] = []
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { s.append(0x2D) }
            s.append(hex[Int(b >> 4)]); s.append(hex[Int(b & 15)])
        }
        return String(decoding: s, as: UTF8.self)
    }
}
