import Testing
@testable import HTTPContent

@Suite("Schema transformers, both directions")
struct SchemaTransformedTests {
    /// "cents": "12.34" -> 1234, and back.
    private let cents = SchemaTransformer(format: "cents", decode: { text in
        guard let d = Double(text) else { throw SchemaTransformError.notA("cents", text) }
        return Int((d * 100).rounded())
    }, encode: { value in (value as? Int).map { "\($0 / 100).\($0 % 100 < 10 ? "0" : "")\($0 % 100)" } })

    @Test func transformedListsPlaceFormatTextAndValue() throws {
        let s = try JSONSchema(parsing: Array(#"{"properties":{"p":{"format":"cents"},"d":{"format":"date"},"a":{"anyOf":[{"type":"integer","format":"cents"},{"type":"string"}]}}}"#.utf8),
                               transformers: [cents])
        let out = try s.transformed(try JSONValue(parsing: Array(#"{"p":"12.34","d":"2024-02-29","a":"7"}"#.utf8)))
        #expect(out.map(\.path) == ["/p", "/d"])
        #expect(out.map(\.format) == ["cents", "date"])
        #expect(out.map(\.text) == ["12.34", "2024-02-29"])
        #expect(out[0].value as? Int == 1234)
        #expect(out[1].value as? SchemaDate == SchemaDate(year: 2024, month: 2, day: 29))
        #expect(try s.encode(4207, format: "cents") == "42.07")
        #expect(throws: HTTPContentError.self) { try s.encode("x", format: "cents") }
        #expect(throws: HTTPContentError.self) { try s.encode(1, format: "nope") }
        do {
            _ = try s.transformed(try JSONValue(parsing: Array(#"{"p":"lots"}"#.utf8)))
            Issue.record("no error")
        } catch {
            #expect(error.code == .callback)
        }
    }
}
