import Testing
@testable import HTTPContent

/// A schema for the plist tests: a date, data, a bounded integer.
private let plistSchemaText = #"""
{"type":"object","required":["when","blob"],"properties":{
  "when":{"type":"string","format":"date-time"},
  "blob":{"type":"string","contentEncoding":"base64"},
  "n":{"type":"integer","maximum":9}}}
"""#

private let when = PlistDate(secondsSince1970: 1_714_564_800)   // 2024-05-01T12:00:00Z

private func doc(_ members: [(String, PlistValue)]) -> PlistValue {
    .dictionary(members.map { PlistMember(key: $0.0, value: $0.1) })
}

private let good = doc([("when", .date(when)), ("blob", .data(Array("hello".utf8))), ("n", 3)])

@Suite("JSON Schema on property lists")
struct SchemaPlistTests {
    let schema: JSONSchema

    init() throws { schema = try JSONSchema(parsing: Array(plistSchemaText.utf8), assertFormat: true) }

    @Test func datesAndDataAreSeenAsTheirText() {
        #expect(SchemaPlistView(.date(when)).value == .string("2024-05-01T12:00:00Z"))
        #expect(SchemaPlistView(.date(PlistDate(secondsSince1970: -0.25))).value == .string("1969-12-31T23:59:59.75Z"))
        #expect(SchemaPlistView(.date(PlistDate(secondsSince2001: 0))).value == .string("2001-01-01T00:00:00Z"))
        #expect(SchemaPlistView(.date(PlistDate(secondsSince1970: 951_782_400))).value == .string("2000-02-29T00:00:00Z"))
        for (bytes, text) in [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("hello", "aGVsbG8=")] {
            #expect(SchemaPlistView(.data(Array(bytes.utf8))).value == .string(text))
        }
        let view = SchemaPlistView(doc([("a", .array([.data([1]), .string("x")])), ("u", .uint(UInt64.max))]))
        #expect(view.dataPaths == [["a", "0"]])
        #expect(view.value["u"] == .number("18446744073709551615"))
    }

    @Test func epochSecondsRoundTrip() {
        for seconds: Int64 in [0, -1, 86_399, 86_400, -86_401, 951_782_400, 253_402_300_799, -62_135_596_800] {
            #expect(SchemaDateTime(epochSeconds: seconds).epochSeconds == seconds)
        }
    }

    @Test func datesMatchDateTimeAndDataMatchesContentEncoding() {
        #expect(schema.isValid(plist: good))
        let cases: [(PlistValue, String, String)] = [
            (doc([("when", .date(when)), ("blob", .string("aGVsbG8="))]), "/blob", "contentEncoding"),
            (doc([("when", .string("yesterday")), ("blob", .data([1]))]), "/when", "format"),
            (doc([("when", .data([1])), ("blob", .data([1]))]), "/when", "format"),
            (doc([("when", .date(when)), ("blob", .data([])), ("n", 10)]), "/n", "maximum"),
            (doc([("blob", .data([]))]), "", "required"),
        ]
        for (value, pointer, keyword) in cases {
            let v = schema.violations(ofPlist: value)
            #expect(v.count == 1)
            #expect(v.first?.instancePath == pointer)
            #expect(v.first?.keyword == keyword)
        }
        // For JSON documents contentEncoding stays an annotation.
        #expect(schema.isValid(.object(JSONObject([JSONMember(key: "when", value: "2024-05-01T12:00:00Z"),
                                                   JSONMember(key: "blob", value: "aGVsbG8=")]))))
    }

    @Test func schemasWrittenAsPlistsInBothFormats() throws {
        let asPlist = try JSONSchema(plist: SchemaPlistView.plist(of: try JSONValue(parsing: Array(plistSchemaText.utf8))),
                                     assertFormat: true)
        for format in [PlistFormat.xml, .binary] {
            let bytes = try SchemaPlistView.plist(of: asPlist.document).serialized(format: format)
            let parsed = try JSONSchema(parsingDocument: bytes, assertFormat: true)
            #expect(parsed.document == schema.document)
            #expect(parsed.isValid(plist: good))
            #expect(parsed.violations(ofPlist: doc([("when", .date(when)), ("blob", .string("x"))])).first?.keyword == "contentEncoding")
        }
        #expect(try JSONSchema(parsingDocument: Array(" {\"type\":\"string\"}".utf8)).isValid("x"))
        #expect(throws: HTTPContentError.self) { try JSONSchema(parsingDocument: Array("<plist><dict>".utf8)) }
    }

    @Test func handlerAndRequestBodyValidate() throws {
        let handler = try Plist(validator: JSONSchemaCheck(schema, allErrors: true))
        let bad = try doc([("when", .string("x")), ("blob", .string("y"))]).serialized(format: .binary)
        _ = try handler.accept(ResponseHead(status: 200, headers: Headers([("Content-Type", "application/x-bplist")])))
        try bad.withUnsafeBytes { try handler.consume($0) }
        do {
            _ = try handler.finish()
            Issue.record("no error")
        } catch let error as HTTPContentError {
            #expect(error.code == .decode && error.subKind == "schema")
            #expect(error.violations.map(\.keyword) == ["format", "contentEncoding"])
            #expect(error.response?.status == 200)
            #expect(error.body == bad)
        }
        handler.cleanup(failed: true)
        #expect(throws: HTTPContentError.self) { try RequestBody.plist(doc([("n", 1)]), schema: schema) }
        do {
            _ = try RequestBody.plist(doc([("n", 1)]), format: .binary, schema: schema)
        } catch {
            #expect(error.code == .invalidArgument && error.violations.first?.keyword == "required")
        }
        _ = try RequestBody.plist(good, format: .binary, schema: schema)
    }
}

extension SchemaPlistView {
    /// A JSON value as a plist (test helper: objects, arrays, strings, integers, reals, booleans).
    static func plist(of value: JSONValue) -> PlistValue {
        switch value {
        case .object(let o): return .dictionary(o.map { PlistMember(key: $0.key, value: plist(of: $0.value)) })
        case .array(let a): return .array(a.map { plist(of: $0) })
        case .string(let s): return .string(s)
        case .int(let i): return .int(i)
        case .double(let d): return .real(d)
        case .number(let t): return .real(Double(t) ?? 0)
        case .bool(let b): return .bool(b)
        case .null: return .string("null")
        }
    }
}
