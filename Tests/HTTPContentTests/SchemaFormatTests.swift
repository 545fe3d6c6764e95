import Testing
@testable import HTTPContent

/// Asserted formats beyond RFC 3339 and RFC 3986: host names by IDNA2008 (libidn2), e-mail
/// addresses with them, IRIs, URI templates (RFC 6570), relative JSON pointers.
@Suite("JSON Schema formats: IDNA2008, IRI, URI templates, relative JSON pointers")
struct SchemaFormatTests {
    static func valid(_ format: String, _ text: String) throws -> Bool {
        try JSONSchema(["format": .string(format)], assertFormat: true).isValid(.string(text))
    }

    @Test func hostNamesFollowIDNA2008() throws {
        #expect(try Self.valid("hostname", "xn--ihqwcrb4cv8a8dqg056pqjye.com"))   // 我爱你.com
        #expect(try Self.valid("hostname", "www.example.com") && !Self.valid("hostname", "-a.com"))
        // A-labels whose U-label IDNA2008 refuses: MIDDLE DOT without "l"s, KATAKANA MIDDLE DOT alone.
        #expect(try !Self.valid("hostname", "xn--al-0ea") && !Self.valid("hostname", "xn--vek"))
        #expect(try !Self.valid("hostname", "xn--X") && !Self.valid("hostname", "ab--cd.com"))
        #expect(try !Self.valid("hostname", "실례.테스트"))
        #expect(try Self.valid("idn-hostname", "실례.테스트") && Self.valid("idn-hostname", "l·l"))
        #expect(try !Self.valid("idn-hostname", "a·l") && !Self.valid("idn-hostname", "・"))
        #expect(try !Self.valid("idn-hostname", "\u{302E}\u{B124}\u{C7A5}\u{C774}"))  // Hangul tone mark first
        #expect(try Self.valid("idn-hostname", "a\u{3002}b") && !Self.valid("idn-hostname", "a\u{3002}"))
        #expect(try Self.valid("idn-email", "실례@실례.테스트") && !Self.valid("idn-email", "2962"))
        #expect(try Self.valid("idn-email", "user@cafe\u{301}.com"))
    }

    @Test func irisURITemplatesAndRelativePointers() throws {
        #expect(try Self.valid("iri", "http://ƒøø.ßår/?∂éœ=πîx#πîüx") && !Self.valid("iri", "âππ"))
        #expect(try Self.valid("iri-reference", "âππ") && !Self.valid("iri-reference", "#ƒräg\\mênt"))
        #expect(try Self.valid("uri", "http://[V1.fe]"))
        for t in ["http://example.com/dictionary/{term:1}/{term}", "{+var}", "{x,y}", "{a.b}", "{%41}", "{v:9999}", "a😀b", "a'b", ""] {
            #expect(try Self.valid("uri-template", t), "\(t)")
        }
        for t in ["{term", "{}", "{a,,b}", "{v:0}", "{v:10000}", "{v:01}", "foo}bar", "{a..b}", "a b", "{var=def}", "{,+var}", "{a,}"] {
            #expect(try !Self.valid("uri-template", t), "\(t)")
        }
        for t in ["1", "0/foo/bar", "0#", "120/foo/bar", "0//", "2+3/x", "1-1#"] { #expect(try Self.valid("relative-json-pointer", t), "\(t)") }
        for t in ["/foo", "-1/a", "+1/a", "01/a", "0##", "", "0/~2", "1#/foo", "1\n", "\u{661}/foo"] {
            #expect(try !Self.valid("relative-json-pointer", t), "\(t)")
        }
    }
}
