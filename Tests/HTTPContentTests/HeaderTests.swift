import Testing
@testable import HTTPContent

@Suite struct HeaderTests {
    @Test func mediaTypeParsesParametersAndQuotes() throws {
        let m = try #require(MediaType(parsing: "Text/HTML; Charset=\"UTF-8\"; q=1"))
        #expect(m.essence == "text/html")
        #expect(m.charset == "utf-8")
        #expect(m.parameter("q") == "1")
        #expect(MediaType(parsing: "nonsense") == nil)
        #expect(MediaType(parsing: "application/problem+json")?.suffix == "json")
    }

    @Test func mediaRangesMatchWildcardsAndSuffixes() throws {
        let json = try #require(MediaType(parsing: "application/problem+json; charset=utf-8"))
        #expect(MediaRange("*/*+json").matches(json))
        #expect(MediaRange("application/*").matches(json))
        #expect(!MediaRange("application/json").matches(json))
        #expect(!MediaRange("image/*").matches(json))
        #expect(MediaRange("*/*").matches(json))
    }

    @Test func headersAreCaseInsensitiveOrderedAndMultiValued() {
        var h: Headers = ["Set-Cookie": "a=1"]
        h.add("set-cookie", "b=2")
        h.add("Content-Type", "text/plain")
        #expect(h["SET-COOKIE"] == "a=1")
        #expect(h.values(for: "Set-Cookie") == ["a=1", "b=2"])
        h.set("content-type", "text/html")
        #expect(h.values(for: "Content-Type") == ["text/html"])
        #expect(h.fields.map(\.name) == ["Set-Cookie", "set-cookie", "content-type"])
    }

    @Test func crLfAndBadNamesAreRefused() {
        #expect(throws: HTTPContentError.self) { try Headers.validate(name: "X", value: "a\r\nb: c") }
        #expect(throws: HTTPContentError.self) { try Headers.validate(name: "X", value: "a\nb") }
        #expect(throws: HTTPContentError.self) { try Headers.validate(name: "Bad Name", value: "x") }
        #expect(throws: Never.self) { try Headers.validate(name: "X-Fine", value: "ok value") }
    }

    @Test func defaultsArePinned() {
        let c = ClientConfiguration()
        #expect(c.timeout == nil)
        #expect(c.connectTimeout == .seconds(30))
        #expect(c.lowSpeedLimit == nil)
        #expect(c.followRedirects && c.maxRedirects == 10)
        #expect(c.verify && c.caFile == nil && c.acceptCompressed)
        #expect(c.userAgent == "httpcontent/\(HTTPContentVersion.string)")
        #expect(Acceptance.builtInDefault.statusCodes == [200...299])
        #expect(Acceptance.builtInDefault.contentTypes.isEmpty)
    }

    @Test func receivedHeadersAreLookedUpOnTheirBytes() {
        let received = ReceivedHeaders()
        for line in ["Content-Type: text/plain", "Set-Cookie: a=1", "X-Folded: one", "set-cookie: b=2",
                     "Content-Length:  42 ", "X-Empty:"] {
            let bytes = Array(line.utf8)
            let colon = bytes.firstIndex(of: 0x3A)!
            var a = colon + 1, b = bytes.count
            while a < b, bytes[a] == 0x20 { a += 1 }
            while b > a, bytes[b - 1] == 0x20 { b -= 1 }
            bytes.withUnsafeBufferPointer {
                received.add(line: $0.baseAddress!, nameEnd: colon, valueStart: a, valueEnd: b)
            }
            if line.hasPrefix("X-Folded") {
                Array("two".utf8).withUnsafeBytes { received.appendToLastValue($0) }
            }
        }
        var h = Headers(received: received)
        #expect(h.count == 6)
        #expect(h["content-type"] == "text/plain")
        #expect(h["SET-COOKIE"] == "a=1")
        #expect(h.values(for: "Set-Cookie") == ["a=1", "b=2"])
        #expect(h["x-folded"] == "one two")
        #expect(h["x-empty"] == "")
        #expect(h["x-missing"] == nil)
        #expect(h.contains("Content-Length") && !h.contains("Content-Lengt"))
        #expect(ResponseHead(status: 200, headers: h).contentLength == 42)
        // Too large for Int64: the largest length, so size limits still fail it early.
        #expect(ResponseHead(status: 200, headers: ["Content-Length": "9000000000000000000"]).contentLength
                == 9_000_000_000_000_000_000)
        #expect(ResponseHead(status: 200, headers: ["Content-Length": "99999999999999999999"]).contentLength
                == .max)
        #expect(ResponseHead(status: 200, headers: ["Content-Length": "12x"]).contentLength == nil)
        #expect(h.fields.map(\.name) == ["Content-Type", "Set-Cookie", "X-Folded", "set-cookie", "Content-Length", "X-Empty"])
        let owned = Headers(h.fields.map { ($0.name, $0.value) })
        #expect(h == owned)
        // A change turns the received fields into owned ones; the copy is untouched.
        let before = h
        h.remove("set-cookie")
        h.add("X-New", "1")
        #expect(h.count == 5 && h["x-new"] == "1" && h["set-cookie"] == nil)
        #expect(before.count == 6 && before["set-cookie"] == "a=1")
        #expect(Headers(received: ReceivedHeaders()) == Headers())
        // A copy of the builder goes on independently.
        let copy = received.copy()
        Array("X-Late".utf8).withUnsafeBufferPointer { copy.add(line: $0.baseAddress!, nameEnd: 6, valueStart: 6, valueEnd: 6) }
        #expect(copy.count == 7 && received.count == 6)
        #expect(Headers(received: copy)["content-length"] == "42")
    }
}
