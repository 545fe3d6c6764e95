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

    private struct Money: Sendable, Equatable { let cents: Int64 }

    /// Numbers and booleans have transformers too; an encoder may write any JSON value.
    @Test func transformersTakeAnyScalarAndWriteAnyValue() throws {
        let cents = SchemaTransformer(format: "cents", decodeValue: { value in
            guard case .int(let n) = value else { throw SchemaTransformError.notA("cents", SchemaTransformer.text(of: value)) }
            return Money(cents: n)
        }, encodeValue: { ($0 as? Money).map { .int($0.cents) } })
        let unixTime = SchemaTransformer(format: "unix-time", scalars: .numbers, decodeValue: { value in
            guard case .int(let n) = value else { throw SchemaTransformError.notA("unix-time", "") }
            return n * 1000
        }, encodeValue: { ($0 as? Int64).map { .int($0 / 1000) } })
        let flag = SchemaTransformer(format: "flag", scalars: .booleans, decodeValue: { value in
            value == .bool(true) ? "yes" : "no"
        }, encodeValue: { ($0 as? String).map { .bool($0 == "yes") } })
        let s = try JSONSchema(parsing: Array(#"""
        {"properties":{"price":{"type":"integer","format":"cents"},"at":{"format":"unix-time"},
         "ok":{"format":"flag"},"when":{"format":"date-time"},"label":{"format":"unix-time"}}}
        """#.utf8), transformers: [cents, unixTime, flag])
        let doc = try JSONValue(parsing: Array(#"{"price":1999,"at":1700000000,"ok":true,"when":5,"label":"x"}"#.utf8))
        let out = try s.transformed(doc)
        // date-time is a string transformer; unix-time takes numbers only.
        #expect(out.map(\.path) == ["/price", "/at", "/ok"])
        #expect(out.map(\.text) == ["1999", "1700000000", "true"])
        #expect(out[0].value as? Money == Money(cents: 1999))
        #expect(out[0].source == .int(1999))
        #expect(out[1].value as? Int64 == 1_700_000_000_000)
        #expect(out[2].value as? String == "yes")
        // The request direction: a number, validated with the body.
        #expect(try s.encodeValue(Money(cents: 1999), format: "cents") == .int(1999))
        #expect(try s.encode(Money(cents: 1999), format: "cents") == "1999")
        let body: JSONValue = ["price": try s.encodeValue(Money(cents: 1999), format: "cents")]
        _ = try RequestBody.json(body, schema: s)
        #expect(throws: HTTPContentError.self) { _ = try RequestBody.json(["price": .string("19.99")], schema: s) }
        // A string transformer on a number: not applied.
        let strings = try JSONSchema(parsing: Array(#"{"format":"cents"}"#.utf8), transformers: [self.cents])
        #expect(try strings.transformed(.int(5)).isEmpty)
    }
}
