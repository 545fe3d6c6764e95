import Foundation
import Testing
@testable import HTTPContent

private func parse(_ text: String, _ options: JSONOptions = JSONOptions()) throws -> JSONValue {
    try JSONValue(parsing: text, options: options)
}

private func decodeError(_ text: String, _ options: JSONOptions = JSONOptions(), chunk: Int = 0) -> HTTPContentError? {
    if case .failure(let e) = parseChunked(Array(text.utf8), chunk: chunk, options: options) { return e }
    return nil
}

@Suite("JSON values and parsing")
struct JSONParserTests {
    @Test func optionDefaultsArePinned() {
        let o = JSONOptions()
        #expect(!o.removeNulls && !o.allowComments && !o.allowMultipleValues)
        #expect(o.maxDepth == 512 && o.maxSize == nil && o.strictUTF8 && !o.keepNumberText)
        #expect(!o.allowTrailingGarbage && !o.allowPartialValues && o.errorBodyLimit == 65536 && !o.exactIntegers)
        #expect(JSONOptions.defaultContentTypes.map(\.description) ==
                ["application/json", "text/json", "text/javascript", "*/*+json"])
        #expect(ServerMessage.defaultKeyPaths == ["error.message", "error", "message", "error_description", "detail", "title"])
    }

    @Test func scalarsAndNumbersKeepTheirKinds() throws {
        let v = try parse(#"[null, true, 42, -9223372036854775808, 9223372036854775808, 1.5, 1e2, "s"]"#)
        #expect(v == [nil, true, 42, .int(Int64.min), .double(9223372036854775808), 1.5, 100.0, "s"])
        #expect(v["1"]?.boolValue == true)
        #expect(v["2"]?.int64Value == 42 && v["2"]?.doubleValue == 42)
        #expect(v["6"]?.int64Value == 100)
    }

    @Test func exactIntegersKeepBigIntegersAsTheirText() throws {
        let text = #"[9223372036854775807, 9223372036854775808, -99999999999999999999, 1e400, 1.5, 100000000000000000000.0]"#
        for chunk in [0, 1, 3] {
            // 1e400 is out of double's range: refused unless kept as text, exactIntegers or not.
            guard case .failure = parseChunked(Array(text.utf8), chunk: chunk, options: JSONOptions(exactIntegers: true)) else {
                Issue.record("1e400 accepted"); continue
            }
            let ok = text.replacingOccurrences(of: "1e400, ", with: "")
            let v = try parseChunked(Array(ok.utf8), chunk: chunk, options: JSONOptions(exactIntegers: true)).get()
            #expect(v == [.int(Int64.max), .number("9223372036854775808"), .number("-99999999999999999999"), 1.5,
                          .double(1e20)])
            // A big integer at the top level too.
            #expect(try parseChunked(Array("123456789012345678901234567890".utf8), chunk: chunk,
                                     options: JSONOptions(exactIntegers: true)).get() == .number("123456789012345678901234567890"))
        }
    }

    @Test func keyPathsReachMembersAndElements() throws {
        let v = try parse(#"{"user": {"followers": [{"name": "ann"}, {"name": "bob"}]}, "a.b": {"0": 7}}"#)
        #expect(v["user.followers.0.name"] == "ann")
        #expect(v["user.followers.1.name"]?.stringValue == "bob")
        #expect(v["user.followers.2.name"] == nil)
        #expect(v["user.followers.01"] == nil)
        #expect(v["user.followers.-1"] == nil)
        #expect(v[path: ["a.b", "0"]] == 7)
        #expect(v["a.b"] == nil)
        #expect(v[""] == v)
        #expect(v["user.followers"]?.count == 2)
    }

    @Test func objectsKeepOrderAndDuplicatesAndLookupFindsTheLast() throws {
        let v = try parse(#"{"b": 1, "a": 2, "b": 3}"#)
        #expect(v.objectValue?.keys == ["b", "a", "b"])
        #expect(v["b"] == 3)
        #expect(String(decoding: try v.serialized(), as: UTF8.self) == #"{"b":1,"a":2,"b":3}"#)
    }

    @Test func removeNullsWorksAtEveryDepthIncludingObjectsInArrays() throws {
        let v = try parse(#"{"a": null, "b": [null, {"c": null, "d": 1}], "e": {"f": {"g": null}}}"#,
                          JSONOptions(removeNulls: true))
        #expect(v == ["b": [nil, ["d": 1]], "e": ["f": [:]]])
    }

    @Test func multipleValuesGiveAnArrayOfDocuments() throws {
        let v = try parse("{\"i\":0}\n{\"i\":1}\n[2]\n", JSONOptions(allowMultipleValues: true))
        #expect(v == [["i": 0], ["i": 1], [2]])
        #expect(decodeError("{} {}")?.message.contains("trailing garbage") == true)
    }

    @Test func commentsOnlyWhenAllowed() throws {
        let text = "[1, /* two */ 2 // end\n]"
        let e = try #require(decodeError(text))
        #expect(e.code == .decode && e.message.contains("comment"))
        #expect(try parse(text, JSONOptions(allowComments: true)) == [1, 2])
    }

    @Test func truncatedDocumentAndTrailingGarbageAreDecodeErrorsWithOffsetAndBody() throws {
        let truncated = try #require(decodeError(#"{"a": [1, 2"#, chunk: 3))
        #expect(truncated.code == .decode)
        #expect(truncated.offset == 11)
        #expect(truncated.message.contains("premature EOF"))
        #expect(truncated.body == Array(#"{"a": [1, 2"#.utf8))
        let garbage = try #require(decodeError(#"{"a": 1} x"#))
        #expect(garbage.offset != nil && garbage.offset! >= 8)
        #expect(garbage.message.contains("trailing garbage"))
    }

    @Test func errorBodyIsCapped() throws {
        let text = "[" + String(repeating: "1,", count: 1000) + "x]"
        let e = try #require(decodeError(text, JSONOptions(errorBodyLimit: 100), chunk: 64))
        #expect(e.body.count == 100)
        #expect(e.offset == 2001)  // the index of the bad byte
    }

    @Test func invalidUTF8InStringsIsRejectedUnlessLax() throws {
        let bytes: [UInt8] = Array(#"["a"#.utf8) + [0xC3, 0x28] + Array(#""]"#.utf8)
        guard case .failure(let e) = parseChunked(bytes, chunk: 1) else {
            Issue.record("accepted invalid UTF-8")
            return
        }
        #expect(e.message.contains("UTF8") || e.message.contains("UTF-8"))
        #expect(e.offset != nil)
        let overlong: [UInt8] = Array(#"[""#.utf8) + [0xC0, 0xAF] + Array(#""]"#.utf8)
        #expect((try? parseChunked(overlong, chunk: 0).get()) == nil)
        let lax = try parseChunked(bytes, chunk: 0, options: JSONOptions(strictUTF8: false)).get()
        #expect(lax == ["a\u{FFFD}("])
    }

    @Test func hundredThousandDeepNestingIsAClearErrorWithoutStackOverflow() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let e = try #require(decodeError(deep, chunk: 4096))
        #expect(e.code == .decode && e.message.contains("maximum depth of 512"))
        #expect(e.offset == 512)
        // Allowed, it parses, and the value tears down without recursion.
        var v: JSONValue? = try parse(deep, JSONOptions(maxDepth: 200_000))
        var depth = 0
        var cursor = v
        while case .array(let a)? = cursor, let first = a.first { depth += 1; cursor = first }
        #expect(depth == 99_999)
        #expect(v == v)  // equality is iterative too
        v = nil
        #expect(v == nil)
        // Deep objects, built by hand, as well.
        var o: JSONValue = [:]
        for _ in 0..<100_000 { o = ["k": o] }
        o = nil
    }

    @Test func maxDepthCountsContainers() throws {
        #expect(try parse("[[1]]", JSONOptions(maxDepth: 2)) == [[1]])
        #expect(decodeError("[[[1]]]", JSONOptions(maxDepth: 2))?.message.contains("maximum depth of 2") == true)
    }

    @Test func aHugeStringClaimCutShortIsAnErrorAndMaxSizeBoundsIt() throws {
        // A string that claims to go on for ever and is cut short: premature EOF.
        let parser = JSONStreamParser()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        try parser.feed(Array(#"{"s": ""#.utf8))
        for _ in 0..<8 { try parser.feed(chunk) }
        do {
            _ = try parser.finish()
            Issue.record("accepted")
        } catch {
            #expect(error.code == .decode && error.message.contains("premature EOF"))
            #expect(error.offset == 7 + 8 << 20)
            #expect(error.body.count == 65536)
        }
        // With a size limit, yajl never buffers more than the limit.
        let limited = JSONStreamParser(options: JSONOptions(maxSize: 4 << 20))
        do {
            try limited.feed(Array(#"{"s": ""#.utf8))
            for _ in 0..<8 { try limited.feed(chunk) }
            Issue.record("no limit")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }

    @Test func maxSizeIsTooLarge() throws {
        let e = try #require(decodeError("[1,2,3,4,5]", JSONOptions(maxSize: 5), chunk: 2))
        #expect(e.code == .tooLarge)
    }

    @Test func hugeNumbersAreTextWhenAskedElseDoubleOrAClearError() throws {
        let digits400 = "1" + String(repeating: "0", count: 399)
        let kept = try parse("[\(digits400), 0.1, 1e400]", JSONOptions(keepNumberText: true))
        #expect(kept == [.number(digits400), .number("0.1"), .number("1e400")])
        #expect(String(decoding: try kept.serialized(), as: UTF8.self) == "[\(digits400),0.1,1e400]")
        // Without keepNumberText: a 400-digit integer is beyond Double's range: a clear error.
        let e = try #require(decodeError("[\(digits400)]"))
        #expect(e.code == .decode && e.message.contains("out of range") && e.message.contains("keepNumberText"))
        // 300 digits fit a double.
        let big = try parse("[1" + String(repeating: "0", count: 300) + "]")
        #expect(big["0"] == .double(1e300))
    }

    @Test func doublesMatchStrtodOnTheFastPathAndOff() throws {
        let texts = ["0.1", "-0.0", "1.5", "123456789012345.6", "1234567890123456.7", "9007199254740993.0",
                     "1e22", "1e23", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308", "0.30000000000000004",
                     "3.14159", "-2.5E-3", "1E+2", "100e-2", "0.000001", "4.35", "8.589973e9", "1e-22", "123.456e-20"]
        for t in texts {
            let v = try parse("[\(t)]")["0"]
            #expect(v == .double(strtod(t, nil)), "\(t)")
            if let d = v?.doubleValue { #expect(d.sign == strtod(t, nil).sign, "\(t) sign") }
        }
        // Random decimals against strtod.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let m = UInt64.random(in: 0...999_999_999_999_999, using: &rng)
            let e = Int.random(in: -30...30, using: &rng)
            let text = Bool.random(using: &rng) ? "\(m)e\(e)" : "-\(m / 10).\(m % 10)e\(e)"
            #expect(try parse("[\(text)]")["0"]?.doubleValue == strtod(text, nil), "\(text)")
        }
    }

    @Test func emptyInputIsAnError() throws {
        #expect(decodeError("")?.code == .decode)
        #expect(decodeError("   ")?.code == .decode)
        #expect(try parse("", JSONOptions(allowMultipleValues: true)) == [])
    }

    @Test func partialValuesCloseWhatWasOpen() throws {
        #expect(try parse(#"{"a": [1, 2"#, JSONOptions(allowPartialValues: true)) == ["a": [1, 2]])
    }

    @Test func streamParserTakesDocumentsAsTheyComplete() throws {
        let p = JSONStreamParser(options: JSONOptions(allowMultipleValues: true))
        try p.feed(Array("{\"a\":1}\n{\"b\"".utf8))
        #expect(p.takeDocuments() == [["a": 1]])
        try p.feed(Array(":2}\n".utf8))
        #expect(try p.finishDocuments() == [["b": 2]])
    }
}

@Suite("JSON generation and Codable")
struct JSONGeneratorTests {
    @Test func generatorWritesCompactAndPrettyText() throws {
        let v: JSONValue = ["s": "q\"\\\n\u{01}é/", "n": [1, 2.5, -0.0, 1e300, nil, true]]
        let text = String(decoding: try v.serialized(), as: UTF8.self)
        #expect(text == #"{"s":"q\"\\\n\u0001é/","n":[1,2.5,-0.0,1e+300,null,true]}"#)
        #expect(try JSONValue(parsing: text) == v)
        let pretty = String(decoding: try v.serialized(pretty: true), as: UTF8.self)
        #expect(pretty.contains("\n  \"n\": [\n"))
        #expect(try JSONValue(parsing: pretty) == v)
    }

    @Test func nanAndInfinityAreRefused() throws {
        for bad: JSONValue in [.double(.nan), [.double(.infinity)], ["x": .double(-.infinity)], .number("1.")] {
            #expect(throws: HTTPContentError.self) { try bad.serialized() }
            do { _ = try bad.serialized() } catch { #expect(error.code == .invalidArgument) }
        }
        do {
            _ = try JSONValueEncoder().encode(["x": Double.nan])
            Issue.record("NaN encoded")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("NaN"))
        }
    }

    @Test func generatorRefusesNestingBeyondYajlsLimitClearly() throws {
        var v: JSONValue = 1
        for _ in 0..<200 { v = [v] }
        do {
            _ = try v.serialized()
            Issue.record("generated 200 levels")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("127"))
        }
    }

    struct User: Codable, Equatable {
        var name: String
        var age: Int
        var score: Double?
        var tags: [String]
        var nested: Nested
        struct Nested: Codable, Equatable { var flag: Bool; var big: UInt64 }
    }

    @Test func codableRoundTripsThroughJSONValue() throws {
        let user = User(name: "ann", age: 41, score: nil, tags: ["a", "b"], nested: .init(flag: true, big: UInt64.max))
        let value = try JSONValueEncoder().encode(user)
        #expect(value["name"] == "ann" && value["nested.big"] == .number("18446744073709551615"))
        #expect(value.objectValue?.keys == ["name", "age", "tags", "nested"])
        #expect(try value.decode(User.self) == user)
        let parsed = try JSONValue(parsing: Array(try JSONValueEncoder().encodeToBytes(user)),
                                   options: JSONOptions(keepNumberText: true))
        #expect(try parsed.decode(User.self) == user)
        // Numbers convert when exact; mismatches name the path.
        #expect(try JSONValue.double(3).decode(Int.self) == 3)
        do {
            _ = try JSONValue(parsing: #"{"name": "x", "age": "old", "tags": [], "nested": {"flag": true, "big": 1}}"#).decode(User.self)
            Issue.record("decoded a string as Int")
        } catch {
            #expect(error.code == .decode && error.message.contains("age"))
        }
        do {
            _ = try JSONValue(parsing: #"[1.5]"#).decode([Int].self)
            Issue.record("decoded 1.5 as Int")
        } catch {
            #expect(error.code == .decode && error.message.contains("0"))
        }
    }

    @Test func jsonRequestBodies() throws {
        guard case .bytes(let bytes, let type) = try RequestBody.json(["a": [1]]) else { return }
        #expect(bytes == Array(#"{"a":[1]}"#.utf8) && type == "application/json")
        guard case .bytes(let b2, _) = try RequestBody.json(encoding: ["k": 1]) else { return }
        #expect(b2 == Array(#"{"k":1}"#.utf8))
    }
}

@Suite("JSON server messages")
struct JSONServerMessageTests {
    private func head(_ type: String?) -> ResponseHead {
        var h = Headers()
        if let type { h.add("Content-Type", type) }
        return ResponseHead(status: 401, headers: h)
    }

    @Test func firstPresentKeyPathWins() {
        let cases: [(String, String?)] = [
            (#"{"error": {"message": "You are not authorized."}}"#, "You are not authorized."),
            (#"{"error": "invalid_grant", "error_description": "expired"}"#, "invalid_grant"),
            (#"{"error": {"code": 5}, "message": "m"}"#, "m"),
            (#"{"error_description": "d"}"#, "d"),
            (#"{"type": "about:blank", "title": "T", "detail": "D"}"#, "D"),
            (#"{"title": "T"}"#, "T"),
            (#"{"nothing": 1}"#, nil),
            (#"[1]"#, nil),
            ("not json", nil),
        ]
        for (body, expected) in cases {
            #expect(ServerMessage.extract(from: Array(body.utf8), head: head("application/json")) == expected, "\(body)")
        }
        // Without a JSON type, only bodies that look like an object are tried.
        #expect(ServerMessage.extract(from: Array(#"{"message": "m"}"#.utf8), head: head("text/plain")) == "m")
        #expect(ServerMessage.extract(from: Array(#"{"message": "m"}"#.utf8), head: head("application/problem+json")) == "m")
    }
}
