import CCurl
import Testing
@testable import HTTPContent

/// libcurl's own escaping of `bytes`, the reference the encoder must match in %20 mode.
private func curlEscape(_ bytes: [UInt8]) -> String {
    // Length 0 makes curl_easy_escape call strlen: give it an empty C string instead.
    let input = bytes.isEmpty ? [0] : bytes
    return input.withUnsafeBytes { raw in
        let p = curl_easy_escape(nil, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))!
        defer { curl_free(p) }
        return String(cString: p)
    }
}

/// A small deterministic generator (xorshift), so a failure can be reproduced.
private struct XorShift: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

@Suite struct FormEncoderTests {
    @Test func agreesWithCurlEasyEscapeOnEveryByteAndRandomStrings() {
        for b in 0...255 {
            #expect(PercentEncoding.escaped([UInt8(b)]) == curlEscape([UInt8(b)]))
        }
        var rng = XorShift(state: 0x9E37_79B9_7F4A_7C15)
        for _ in 0..<3000 {
            let key = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let value = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let encoded = FormEncoder().encodeString([FormPair(bytes: key, .bytes(value))])
            #expect(encoded == curlEscape(key) + "=" + curlEscape(value), "key \(key) value \(value)")
            // '+' mode differs from curl only in writing a space as '+' (curl never emits a bare '+').
            let plus = FormEncoder(spaceEncoding: .plusReplaced).encodeString([FormPair(bytes: key, .bytes(value))])
            #expect(plus == (curlEscape(key) + "=" + curlEscape(value)).replacingAll("%20", with: "+"))
        }
    }

    @Test func textIsEscapedAsItsUTF8Bytes() {
        let text = "héllo wörld ✓ 🎉 a+b=c&d/e?f#g~-._"
        #expect(FormEncoder().encodeString(["k é": .string(text)])
                == curlEscape(Array("k é".utf8)) + "=" + curlEscape(Array(text.utf8)))
    }

    @Test func defaultsAreTheDocumentedOnes() {
        let e = FormEncoder()
        #expect(e.spaceEncoding == .percentEscaped)
        #expect(e.arrayEncoding == .brackets)
        #expect(e.boolEncoding == .numeric)
        #expect(e.nullEncoding == .dropped)
        #expect(e.sortedKeys == false)
    }

    @Test func seedRecipeEscapesSpacesAsPercent20AndKeysToo() {
        #expect(FormEncoder().encodeString(["name": "Lucas Drance", "age": 1.5]) == "name=Lucas%20Drance&age=1.5")
        #expect(FormEncoder().encodeString(["first name": "a b"]) == "first%20name=a%20b")
        #expect(FormEncoder(spaceEncoding: .plusReplaced).encodeString(["a b": "c+d e"]) == "a+b=c%2Bd+e")
    }

    @Test func orderAndRepeatedKeysAreKeptUnlessSorted() {
        let pairs: [FormPair] = [.init("b", "1"), .init("a", "2"), .init("b", "3"), .init("A", "4")]
        #expect(FormEncoder().encodeString(pairs) == "b=1&a=2&b=3&A=4")
        #expect(FormEncoder(sortedKeys: true).encodeString(pairs) == "A=4&a=2&b=1&b=3")
        let nested: [FormPair] = [.init("z", ["y": 1, "x": 2, "y": 0]), .init("m", [3, 1, 2])]
        #expect(FormEncoder(arrayEncoding: .repeat, sortedKeys: true).encodeString(nested)
                == "m=3&m=1&m=2&z%5Bx%5D=2&z%5By%5D=1&z%5By%5D=0")
    }

    @Test(arguments: [
        (FormEncoder.ArrayEncoding.brackets, "a%5B%5D=1&a%5B%5D=x&a%5B%5D%5Bk%5D=v"),
        (.repeat, "a=1&a=x&a%5Bk%5D=v"),
        (.indexed, "a%5B0%5D=1&a%5B1%5D=x&a%5B2%5D%5Bk%5D=v"),
    ])
    func arrayEncodings(mode: FormEncoder.ArrayEncoding, expected: String) {
        #expect(FormEncoder(arrayEncoding: mode).encodeString(["a": [1, "x", ["k": "v"]], "empty": []]) == expected)
    }

    @Test func dictionariesBooleansNullsAndNumbers() {
        let pairs: [FormPair] = [
            .init("user", ["name": "Ann", "admin": true, "tags": ["a"], "nick": nil]),
            .init("on", false), .init("none", nil), .init("n", .int(-42)), .init("d", 0.25),
            .init("big", .int(Int64.max)),
        ]
        #expect(FormEncoder().encodeString(pairs)
                == "user%5Bname%5D=Ann&user%5Badmin%5D=1&user%5Btags%5D%5B%5D=a&on=0&n=-42&d=0.25&big=9223372036854775807")
        #expect(FormEncoder(boolEncoding: .literal, nullEncoding: .empty).encodeString(pairs)
                == "user%5Bname%5D=Ann&user%5Badmin%5D=true&user%5Btags%5D%5B%5D=a&user%5Bnick%5D=&on=false&none=&n=-42&d=0.25&big=9223372036854775807")
        #expect(FormEncoder().encodeString([]) == "")
    }

    @Test func builderNestsAndRefusesMisuse() throws {
        var b = FormBuilder()
        try b.add(key: Array("a".utf8), "1")
        try b.openArray(key: Array("list".utf8))
        try b.add(key: nil, true)
        try b.openDictionary(key: nil)
        try b.add(key: Array("k".utf8), "v")
        #expect(throws: HTTPContentError.self) { try b.pairs() }
        try b.close()
        #expect(throws: HTTPContentError.self) { try b.add(key: Array("x".utf8), "in an array") }
        try b.close()
        #expect(throws: HTTPContentError.self) { try b.close() }
        #expect(throws: HTTPContentError.self) { try b.add(key: nil, "no key") }
        #expect(try b.pairs() == [.init("a", "1"), .init("list", [true, ["k": "v"]])])
        #expect(FormEncoder().encodeString(try b.pairs()) == "a=1&list%5B%5D=1&list%5B%5D%5Bk%5D=v")
    }

    @Test(arguments: [
        ("http://h/p", "a=1", "http://h/p?a=1"),
        ("http://h/p?x=1", "a=1", "http://h/p?x=1&a=1"),
        ("http://h/p?x=1#frag", "a=1", "http://h/p?x=1&a=1"),
        ("http://h/p#frag?not=query", "a=1", "http://h/p?a=1"),
        ("http://h/p?", "a=1", "http://h/p?a=1"),
        ("http://h/p?x=1&", "a=1", "http://h/p?x=1&a=1"),
        ("http://h/p?x=1#f", "", "http://h/p?x=1"),
        ("http://h/p", "", "http://h/p"),
    ])
    func queryMerging(url: String, query: String, expected: String) {
        #expect(QueryString.merge(url, query: query) == expected)
    }

    @Test func requestAddQueryEncodesAndAppends() {
        var r = Request.get("http://h/search?lang=fr#top")
        r.addQuery(["q": "a b", "tag": ["x", "y"]], encoder: FormEncoder(arrayEncoding: .repeat))
        #expect(r.url == "http://h/search?lang=fr&q=a%20b&tag=x&tag=y")
    }
}

@Suite struct BodyValueTests {
    @Test func charsetsEncodeOrRefuse() throws {
        #expect(try TextCharset.iso8859_1.encode("héllo") == [0x68, 0xE9, 0x6C, 0x6C, 0x6F])
        #expect(try TextCharset.utf8.encode("é") == [0xC3, 0xA9])
        #expect(try TextCharset.utf16LE.encode("é€") == [0xE9, 0x00, 0xAC, 0x20])
        #expect(try TextCharset.utf16BE.encode("é") == [0x00, 0xE9])
        #expect(throws: HTTPContentError.self) { try TextCharset.iso8859_1.encode("5 €") }
        #expect(throws: HTTPContentError.self) { try TextCharset.usASCII.encode("é") }
        #expect(TextCharset(name: "LATIN1") == .iso8859_1)
        #expect(TextCharset(name: "UTF8") == .utf8)
        #expect(TextCharset(name: "klingon") == nil)
        for cs in TextCharset.allCases { #expect(TextCharset(name: cs.name) == cs) }
        guard case .bytes(_, let type) = try RequestBody.text("x", charset: .iso8859_1) else {
            Issue.record("text body is not bytes")
            return
        }
        #expect(type == "text/plain; charset=iso-8859-1")
    }

    @Test func minimalJSONKeepsOrderAndEscapes() throws {
        let value: FormValue = ["b": [1, 2.5, true, nil], "a": "q\"\\\n\u{01}é", "raw": .bytes(Array("ok".utf8))]
        #expect(String(decoding: try value.encodedJSON(), as: UTF8.self)
                == #"{"b":[1,2.5,true,null],"a":"q\"\\\n\u0001é","raw":"ok"}"#)
    }

    @Test func jsonRefusesNaNInfinityAndNonUTF8() {
        for bad: FormValue in [["x": .double(.nan)], [.double(.infinity)], .bytes([0xFF]),
                               .dictionary([FormPair(bytes: [0xC3], 1)])] {
            #expect(throws: HTTPContentError.self) { try RequestBody.json(encoding: bad) }
            do {
                _ = try bad.encodedJSON()
            } catch {
                #expect(error.code == .invalidArgument)
            }
        }
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
