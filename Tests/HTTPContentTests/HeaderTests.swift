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
        #expect(c.verifyTLS && c.caFile == nil && c.acceptCompressed)
        #expect(c.userAgent == "httpcontent/\(HTTPContentVersion.string)")
        #expect(Acceptance.builtInDefault.statusCodes == [200...299])
        #expect(Acceptance.builtInDefault.contentTypes.isEmpty)
    }
}
