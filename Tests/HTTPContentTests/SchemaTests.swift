import Foundation
import Testing
@testable import HTTPContent

private func schema(_ text: String, assertFormat: Bool = false) throws -> JSONSchema {
    try JSONSchema(parsing: Array(text.utf8), assertFormat: assertFormat)
}

private func json(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

@Suite("JSON Schema validation")
struct SchemaTests {
    @Test func violationsNameInstanceAndSchemaLocations() throws {
        let s = try schema(##"{"$defs":{"pos":{"type":"integer","minimum":0}},"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/$defs/pos"}}},"required":["a","b"]}"##)
        let v = s.violations(of: try json(#"{"a":[1,-2,"x"]}"#), allErrors: true)
        // Validation keywords first, then applicators: `required` before `properties`.
        #expect(v.map(\.instancePath) == ["", "/a/1", "/a/2"])
        #expect(v.map(\.schemaPath) == ["/required", "/properties/a/items/$ref/minimum", "/properties/a/items/$ref/type"])
        #expect(v.map(\.keyword) == ["required", "minimum", "type"])
        #expect(v[0].message == "'b' is a required property")
        let first = s.violations(of: try json(#"{"a":[1,-2,"x"],"b":1}"#))
        #expect(first.count == 1 && first[0].instancePath == "/a/1")
        #expect(s.violations(of: try json(#"{"a":[],"b":0}"#)).isEmpty)
    }

    @Test func pointerTokensAreEscaped() throws {
        let s = try schema(#"{"properties":{"a/b~c":{"type":"string"}}}"#)
        let v = s.violations(of: try json(#"{"a/b~c":1}"#))
        #expect(v.first?.instancePath == "/a~1b~0c")
        #expect(v.first?.schemaPath == "/properties/a~1b~0c/type")
    }

    @Test func validateThrowsDecodeWithSubKindSchema() throws {
        let s = try schema(#"{"type":"string"}"#)
        do {
            try s.validate(3)
            Issue.record("no error")
        } catch {
            #expect(error.code == .decode)
            #expect(error.subKind == "schema")
            #expect(error.violations.count == 1)
            #expect(error.message.contains("is not of type 'string'"))
        }
        do {
            _ = try RequestBody.json(3, schema: s)
            Issue.record("no error")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.subKind == "schema")
        }
    }

    @Test func invalidSchemasAreRefusedAtConstruction() {
        #expect(throws: HTTPContentError.self) { try schema(#"{"type":"nope"}"#) }
        #expect(throws: HTTPContentError.self) { try schema(#"{"minLength":-1}"#) }
        #expect(throws: HTTPContentError.self) { try schema(#"{"pattern":"[a-"}"#) }
        #expect(throws: HTTPContentError.self) { try schema(#"{"$ref":"other.json"}"#) }
        #expect(throws: HTTPContentError.self) { try schema(#"3"#) }
    }

    @Test func metaSchemaIsBuiltIn() throws {
        let meta = try schema(#"{"$ref":"https://json-schema.org/draft/2020-12/schema"}"#)
        #expect(meta.isValid(try json(#"{"type":"object","properties":{"a":{"minimum":1}}}"#)))
        #expect(!meta.isValid(try json(#"{"type":"objekt"}"#)))
        #expect(!meta.isValid(try json(#"{"properties":{"a":{"minimum":"x"}}}"#)))
    }

    @Test func patternsUseECMAStyleRegex() throws {
        let s = try schema(#"{"pattern":"^\\d+$"}"#)
        #expect(s.isValid("123"))
        #expect(!s.isValid("١٢٣"))   // \d is ASCII, as in ECMA-262
        #expect(!s.isValid("123\n"))  // $ only at the very end
        let u = try schema(#"{"pattern":"^\\u00e9\\u{1F600}$"}"#)
        #expect(u.isValid("é😀"))
        let letters = try schema(#"{"pattern":"^\\p{Letter}+$"}"#)
        #expect(letters.isValid("héllo"))
        #expect(!letters.isValid("h3llo"))
    }

    @Test func catastrophicPatternsStopAtTheBacktrackingLimit() throws {
        let s = try schema(#"{"pattern":"^(a+)+$"}"#)
        let hostile = String(repeating: "a", count: 40) + "!"
        let v = s.violations(of: .string(hostile))
        #expect(v.first?.keyword == "pattern")
    }

    @Test func formatsAreAssertedOnlyWhenAsked() throws {
        let cases: [(String, String, Bool)] = [
            ("date-time", "2024-02-29T23:59:60Z", true), ("date-time", "2023-02-29T10:00:00Z", false),
            ("date-time", "2024-01-01t10:00:00.123+05:30", true), ("date-time", "2024-01-01 10:00:00Z", false),
            ("date", "2024-12-31", true), ("date", "2024-13-01", false),
            ("time", "10:00:00Z", true), ("time", "10:00:00", false),
            ("duration", "P1Y2M3DT4H5M6S", true), ("duration", "PT", false), ("duration", "P1W", true),
            ("email", "a.b@example.com", true), ("email", "a..b@example.com", false),
            ("hostname", "example.com", true), ("hostname", "-bad.com", false),
            ("ipv4", "192.168.0.1", true), ("ipv4", "192.168.0.01", false),
            ("ipv6", "::1", true), ("ipv6", "12345::", false),
            ("uri", "https://example.com/a?b#c", true), ("uri", "//example.com", false), ("uri", "http://a b", false),
            ("uri-reference", "//example.com/x", true), ("uri-reference", "\\\\x", false),
            ("uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", true), ("uuid", "2eb8aa08aa9811eab4aa73b441d16380", false),
            ("regex", "^a+$", true), ("regex", "(", false),
            ("json-pointer", "/a/~0b", true), ("json-pointer", "/a~2", false),
        ]
        for (format, value, valid) in cases {
            let text = #"{"format":"\#(format)"}"#
            #expect(try schema(text).isValid(.string(value)), "annotation only: \(format) \(value)")
            #expect(try schema(text, assertFormat: true).isValid(.string(value)) == valid, "\(format) \(value)")
        }
        #expect(try schema(#"{"format":"date"}"#, assertFormat: true).isValid(3))
    }

    @Test func formatAnnotationsFollowPassingBranchesOnly() throws {
        let s = try schema(##"{"properties":{"when":{"format":"date-time"},"any":{"anyOf":[{"type":"integer"},{"format":"uuid"}]},"list":{"items":{"$ref":"#/$defs/d"}}},"$defs":{"d":{"format":"date"}}}"##)
        let hits = s.formatAnnotations(of: try json(#"{"when":"2024-01-01T00:00:00Z","any":"2eb8aa08-aa98-11ea-b4aa-73b441d16380","list":["2024-01-01","2024-01-02"]}"#))
        let pairs = hits.map { ($0.path.joined(separator: "/"), $0.format) }
        #expect(pairs.map(\.0) == ["when", "any", "list/0", "list/1"])
        #expect(pairs.map(\.1) == ["date-time", "uuid", "date", "date"])
        #expect(s.formatAnnotations(of: try json(#"{"any":5}"#)).isEmpty)
        let typed = try s.transformedValues(of: try json(#"{"when":"2024-01-01T00:00:00Z","any":"2EB8AA08-aa98-11ea-b4aa-73b441d16380"}"#))
        #expect(typed.map(\.path) == ["/when", "/any"])
        #expect((typed[0].value as? SchemaDateTime)?.epochSeconds == 1_704_067_200)
        #expect((typed[1].value as? SchemaUUID)?.description == "2eb8aa08-aa98-11ea-b4aa-73b441d16380")
    }

    @Test func dateTimeTextRoundTrips() throws {
        let dt = try #require(SchemaDateTimeText.parse("2024-02-29T12:30:45.25+01:00"))
        #expect(dt.epochSeconds == 1_709_206_245)
        #expect(dt.nanosecond == 250_000_000)
        #expect(SchemaDateTimeText.format(dt) == "2024-02-29T12:30:45.25+01:00")
        #expect(SchemaDateTimeText.parse("1970-01-01T00:00:00Z")?.epochSeconds == 0)
    }

    @Test func deepRecursionIsBoundedNotACrash() throws {
        let s = try schema(##"{"$ref":"#"}"##)
        #expect(!s.isValid(1))
        let tree = try schema(##"{"type":"array","items":{"$ref":"#"}}"##)
        var deep = "1"
        for _ in 0..<300 { deep = "[" + deep + "]" }
        #expect(!tree.isValid(try json(deep)))
    }
}

// MARK: - Property-based: generated valid documents pass, mutations fail at the mutated pointer

/// A small deterministic generator (SplitMix64), so every run checks the same documents.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
    mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

@Suite("JSON Schema property-based")
struct SchemaPropertyTests {
    static let schemaText = #"""
    {"type":"object","required":["id","name","tags","score","owner"],"additionalProperties":false,
     "properties":{"id":{"type":"integer","minimum":1},"name":{"type":"string","minLength":1,"maxLength":20},
       "tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"uniqueItems":true},
       "score":{"type":"number","maximum":100},
       "owner":{"type":"object","required":["login"],"properties":{"login":{"type":"string"},"admin":{"type":"boolean"}}}}}
    """#

    /// A document valid under `schemaText`.
    static func generate(_ r: inout SplitMix) -> JSONValue {
        let letters = Array("abcdefghij")
        var tags: [JSONValue] = []
        for i in 0..<r.int(4) { tags.append(.string(String(repeating: letters[r.int(10)], count: 1 + i))) }
        var owner: [(String, JSONValue)] = [("login", .string("u\(r.int(1000))"))]
        if r.int(2) == 0 { owner.append(("admin", .bool(r.int(2) == 0))) }
        return .object(JSONObject([
            JSONMember(key: "id", value: .int(Int64(1 + r.int(1000)))),
            JSONMember(key: "name", value: .string(String(repeating: "n", count: 1 + r.int(20)))),
            JSONMember(key: "tags", value: .array(JSONArray(tags))),
            JSONMember(key: "score", value: .double(Double(r.int(10000)) / 100)),
            JSONMember(key: "owner", value: .object(JSONObject(owner.map { JSONMember(key: $0.0, value: $0.1) }))),
        ]))
    }

    /// A mutation that breaks exactly one rule, and the pointer where it must be reported.
    static func mutate(_ doc: JSONValue, _ r: inout SplitMix) -> (JSONValue, String) {
        guard case .object(var o) = doc else { return (doc, "") }
        func set(_ key: String, _ v: JSONValue) { if let i = o.lastIndex(ofKey: key) { o[i].value = v } }
        switch r.int(7) {
        case 0: set("id", .int(0)); return (.object(o), "/id")
        case 1: set("name", .string("")); return (.object(o), "/name")
        case 2: set("score", .string("high")); return (.object(o), "/score")
        case 3: set("tags", .array(["ok", "Not-ok"])); return (.object(o), "/tags/1")
        case 4:
            o.append(key: "extra", value: .null)
            return (.object(o), "")
        case 5: set("owner", .object(JSONObject([JSONMember(key: "admin", value: .bool(true))]))); return (.object(o), "/owner")
        default: set("owner", .object(JSONObject([JSONMember(key: "login", value: .int(3))]))); return (.object(o), "/owner/login")
        }
    }

    @Test func generatedDocumentsPassAndMutationsFailAtTheMutatedPointer() throws {
        let schema = try JSONSchema(parsing: Array(Self.schemaText.utf8))
        var r = SplitMix(state: 2026)
        for _ in 0..<500 {
            let doc = Self.generate(&r)
            #expect(schema.isValid(doc), "\(doc)")
            let (bad, pointer) = Self.mutate(doc, &r)
            let v = schema.violations(of: bad, allErrors: true)
            #expect(v.count == 1, "\(bad): \(v)")
            #expect(v.first?.instancePath == pointer, "\(bad): \(v)")
            // Through text too: what a response body would be.
            let reparsed = try JSONValue(parsing: Array(bad.description.utf8))
            #expect(schema.violations(of: reparsed).first?.instancePath == pointer)
        }
    }
}
