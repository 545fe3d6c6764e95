/// Property lists under JSON Schema: the same schemas validate plists, which the validator
/// sees through this view (so one schema serves a JSON and a plist version of an API, as
/// TyphoonRestClient's do):
///
/// | plist      | seen as                                                                 |
/// |------------|-------------------------------------------------------------------------|
/// | dictionary | object (members in document order)                                      |
/// | array      | array                                                                   |
/// | string     | string                                                                  |
/// | integer    | integer (above `Int64.max` too)                                         |
/// | real       | number                                                                  |
/// | boolean    | boolean                                                                 |
/// | date       | string: its RFC 3339 date-time in UTC ("2024-05-01T12:00:00Z", a fraction when it has one), so `"type": "string", "format": "date-time"` matches it |
/// | data       | string: its base64 text (RFC 4648, padded); `"type": "string", "contentEncoding": "base64"` matches it |
/// | UID        | integer                                                                 |
///
/// The rule for data: in a property list, `contentEncoding: "base64"` is an assertion that
/// the value is data (a plist string there fails, keyword "contentEncoding"), whereas for JSON
/// documents it stays the annotation the specification makes it. `format` is as for JSON: an
/// annotation unless asserted, and a date always satisfies "date-time".
struct SchemaPlistView {
    /// The value as the validator sees it.
    let value: JSONValue
    /// The instance paths (tokens) of the data values.
    let dataPaths: Set<[String]>

    init(_ plist: PlistValue) {
        var paths: Set<[String]> = []
        var path: [String] = []
        value = SchemaPlistView.view(plist, &path, &paths)
        dataPaths = paths
    }

    private static func view(_ v: PlistValue, _ path: inout [String], _ data: inout Set<[String]>) -> JSONValue {
        switch v {
        case .dictionary(let members):
            var out: [JSONMember] = []
            out.reserveCapacity(members.count)
            for m in members {
                path.append(m.key)
                out.append(JSONMember(key: m.key, value: view(m.value, &path, &data)))
                path.removeLast()
            }
            return .object(JSONObject(out))
        case .array(let items):
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                path.append(String(i))
                out.append(view(item, &path, &data))
                path.removeLast()
            }
            return .array(JSONArray(out))
        case .string(let s): return .string(s)
        case .int(let i): return .int(i)
        case .uint(let u): return .number(String(u))
        case .real(let d): return .double(d)
        case .bool(let b): return .bool(b)
        case .date(let d): return .string(SchemaPlistView.dateText(d))
        case .data(let bytes):
            data.insert(path)
            return .string(SchemaPlistView.base64(bytes))
        case .uid(let u): return u <= UInt64(Int64.max) ? .int(Int64(u)) : .number(String(u))
        }
    }

    /// A date's RFC 3339 text in UTC; a text no date-time check accepts when the date is not
    /// finite or outside years 0–9999.
    static func dateText(_ d: PlistDate) -> String {
        let t = d.secondsSince1970
        guard t.isFinite, t > -62_167_219_200, t < 253_402_300_800 else { return "invalid date \(t)" }
        let whole = t.rounded(.down)
        let nanos = min(Int(((t - whole) * 1e9).rounded()), 999_999_999)
        return SchemaDateTimeText.format(SchemaDateTime(epochSeconds: Int64(whole), nanosecond: nanos))
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [table[Int(n >> 18 & 63)], table[Int(n >> 12 & 63)], table[Int(n >> 6 & 63)], table[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out += [table[Int(n >> 18 & 63)], table[Int(n >> 12 & 63)]]
            out += rest == 2 ? [table[Int(n >> 6 & 63)], 0x3D] : [0x3D, 0x3D]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension SchemaDateTime {
    /// The UTC date-time `epochSeconds` after 1970-01-01T00:00:00Z.
    public init(epochSeconds: Int64, nanosecond: Int = 0) {
        // Civil from days (Howard Hinnant's algorithm), the inverse of `epochSeconds`.
        let days = epochSeconds >= 0 ? epochSeconds / 86400 : (epochSeconds - 86399) / 86400
        let secs = Int(epochSeconds - days * 86400)
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = Int(doy - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
        self.init(year: year, month: month, day: day, hour: secs / 3600, minute: secs / 60 % 60, second: secs % 60,
                  nanosecond: nanosecond, offsetMinutes: 0)
    }
}

// MARK: - Schemas for property lists, and schemas written as property lists

extension JSONSchema {
    /// A schema written as a property list (dictionaries, arrays, strings, numbers, booleans;
    /// dates and data become strings as in `SchemaPlistView`). Options as `init(_:)`.
    public convenience init(plist schema: PlistValue, remotes: [String: JSONValue] = [:], assertFormat: Bool = false,
                            formats: [SchemaFormat] = [], transformers: [SchemaTransformer] = [],
                            baseURI: String = "") throws(HTTPContentError) {
        try self.init(SchemaPlistView(schema).value, remotes: remotes, assertFormat: assertFormat, formats: formats,
                      transformers: transformers, baseURI: baseURI)
    }

    /// A schema document in JSON or a property list (XML or binary), told apart by its first
    /// bytes ("bplist", or "<" after any BOM and white space, is a plist).
    /// - Throws: `.invalidArgument` for a document that does not parse or an invalid schema.
    public convenience init(parsingDocument bytes: [UInt8], remotes: [String: JSONValue] = [:],
                            assertFormat: Bool = false, formats: [SchemaFormat] = [],
                            transformers: [SchemaTransformer] = []) throws(HTTPContentError) {
        if JSONSchema.looksLikePlist(bytes) {
            let value: PlistValue
            do {
                value = try PlistParser.parse(bytes)
            } catch {
                throw HTTPContentError(.invalidArgument, "the schema is not a valid property list: \(error.message)")
            }
            try self.init(plist: value, remotes: remotes, assertFormat: assertFormat, formats: formats, transformers: transformers)
        } else {
            try self.init(parsing: bytes, remotes: remotes, assertFormat: assertFormat, formats: formats, transformers: transformers)
        }
    }

    /// Whether a schema document is a property list rather than JSON.
    static func looksLikePlist(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: Array("bplist".utf8)) { return true }
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        let first = rest.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        return first == 0x3C
    }

    /// The ways the property list `value` fails the schema (see `SchemaPlistView` for how
    /// dates and data are matched); none when valid; the first only unless `allErrors`.
    public func violations(ofPlist value: PlistValue, allErrors: Bool = false) -> [SchemaViolation] {
        let view = SchemaPlistView(value)
        return violations(of: view.value, allErrors: allErrors, plistDataPaths: view.dataPaths)
    }

    /// Whether the property list `value` is valid.
    public func isValid(plist value: PlistValue) -> Bool { violations(ofPlist: value).isEmpty }

    /// - Throws: `code` (`.decode` by default) with sub-kind "schema", as `validate(_:)`.
    public func validate(plist value: PlistValue, allErrors: Bool = false,
                         code: HTTPContentError.Code = .decode) throws(HTTPContentError) {
        let found = violations(ofPlist: value, allErrors: allErrors)
        if found.isEmpty { return }
        throw JSONSchema.error(found, code: code)
    }

    /// `formatAnnotations(of:)` for a property list: a date under "date-time" is listed too
    /// (its transformer's input is its text in the view).
    public func formatAnnotations(ofPlist value: PlistValue) -> [(path: [String], format: String)] {
        let view = SchemaPlistView(value)
        return formatAnnotations(of: view.value, plistDataPaths: view.dataPaths)
    }
}

extension JSONSchema: PlistValueValidator {
    /// Validates a property list with the first error only (the `Plist` handler's check).
    public func check(_ value: PlistValue) throws(HTTPContentError) { try validate(plist: value) }
}

extension JSONSchemaCheck: PlistValueValidator {
    /// Validates a property list, reporting every violation when `allErrors`.
    public func check(_ value: PlistValue) throws(HTTPContentError) { try schema.validate(plist: value, allErrors: allErrors) }
}

extension RequestBody {
    /// A property-list body validated against `schema` before anything is sent.
    /// - Throws: `.invalidArgument` with sub-kind "schema" (`violations`) when `value` is not
    ///   valid (nothing is sent then), or for what the format cannot carry.
    public static func plist(_ value: PlistValue, format: PlistFormat = .xml, schema: JSONSchema,
                             allErrors: Bool = false) throws(HTTPContentError) -> RequestBody {
        try schema.validate(plist: value, allErrors: allErrors, code: .invalidArgument)
        return try .plist(value, format: format)
    }
}
