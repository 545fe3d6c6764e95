import Testing
@testable import HTTPContent

/// `pattern` and `patternProperties` follow ECMA-262 (with the `u` flag): its classes, its `.`
/// and its refusals (`SchemaRegexECMA`), whatever PCRE2 does by itself.
@Suite("JSON Schema patterns are ECMA-262")
struct SchemaRegexTests {
    static func matches(_ pattern: String, _ subject: String) throws -> Bool {
        let schema = try JSONSchema(["type": "string", "pattern": .string(pattern)])
        return schema.isValid(.string(subject))
    }

    @Test func spaceIsECMAsWhiteSpaceAndLineTerminators() throws {
        for s in ["\u{A0}", "\u{FEFF}", "\u{2028}", "\u{2029}", "\u{2003}", "\u{1680}", "\u{3000}", "\u{0B}", "\t", " "] {
            #expect(try Self.matches(#"^\s$"#, s), "\\s on U+\(String(s.unicodeScalars.first!.value, radix: 16))")
            #expect(try !Self.matches(#"^\S$"#, s))
            #expect(try Self.matches(#"^[\s]$"#, s) && Self.matches(#"^[a\s]$"#, s))
            #expect(try !Self.matches(#"^[^\s]$"#, s) && !Self.matches(#"^[a\S]$"#, s))
            #expect(try Self.matches(#"^[^a\S]$"#, s))
        }
        #expect(try !Self.matches(#"^\s$"#, "\u{85}") && !Self.matches(#"^\s$"#, "\u{200B}"))
        #expect(try Self.matches(#"^[a\S]$"#, "a") && Self.matches(#"^[a\S]$"#, "b") && !Self.matches(#"^[^a\S]$"#, "a"))
        // In patternProperties too.
        let props = try JSONSchema(["patternProperties": [#"^\s"#: ["type": "integer"]]])
        #expect(!props.isValid(["\u{A0}x": "no"]) && props.isValid(["x\u{A0}": "yes"]))
    }

    @Test func digitsAndWordCharactersAreASCIIAndDotStopsAtLineTerminators() throws {
        #expect(try !Self.matches(#"^\d$"#, "\u{0660}") && Self.matches(#"^\d$"#, "7"))
        #expect(try !Self.matches(#"^\w$"#, "é") && Self.matches(#"^\w$"#, "_"))
        #expect(try Self.matches(#"^.$"#, "é") && Self.matches(#"^.$"#, "\u{1F600}"))
        for s in ["\n", "\r", "\u{2028}", "\u{2029}"] { #expect(try !Self.matches(#"^.$"#, s)) }
        #expect(try Self.matches(#"^\cC$"#, "\u{03}") && Self.matches(#"^\v$"#, "\u{0B}") && !Self.matches(#"^\v$"#, "\n"))
        #expect(try Self.matches(#"^[\b]$"#, "\u{08}") && Self.matches(#"^[[:a]+$"#, "[:a"))
        #expect(try Self.matches(#"^\p{Letter}+$"#, "héllo") && Self.matches(#"^(?<y>\d{4})-\k<y>$"#, "2024-2024"))
    }

    @Test func syntaxECMARefusesIsRefused() throws {
        for p in [#"\a"#, #"\z"#, #"\A"#, "(?i)abc", "(?P<n>x)", "(?#c)a", "(?>a)", "a++", "a{2}+", #"\e"#, #"[\k]"#] {
            #expect(throws: HTTPContentError.self, "\(p)") { _ = try JSONSchema(["pattern": .string(p)]) }
            #expect(!(try JSONSchema(["format": "regex"], assertFormat: true)).isValid(.string(p)), "\(p)")
        }
        for p in ["(?:a)", "(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", "a+?", "a{2}?", #"\/\-"#.replacingOccurrences(of: #"\-"#, with: ""), #"\u00e9\u{1F600}\x41"#] {
            #expect(throws: Never.self, "\(p)") { _ = try JSONSchema(["pattern": .string(p)]) }
        }
    }
}
