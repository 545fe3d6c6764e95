/// Turns a string with a given `format` into a typed value after validation, and a typed value
/// back into its text for a request body.
public struct SchemaTransformer: Sendable {
    public let format: String
    /// Text → value; throws when the text does not hold such a value.
    public let decode: @Sendable (String) throws -> any Sendable
    /// Value → text; nil when the value is not one this transformer makes.
    public let encode: @Sendable (any Sendable) -> String?

    public init(format: String, decode: @escaping @Sendable (String) throws -> any Sendable,
                encode: @escaping @Sendable (any Sendable) -> String?) {
        self.format = format
        self.decode = decode
        self.encode = encode
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
