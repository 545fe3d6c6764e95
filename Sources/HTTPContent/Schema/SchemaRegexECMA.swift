/// ECMA-262 regular expressions (with the `u` flag, as JSON Schema's patterns are Unicode text)
/// rewritten for PCRE2 10.42, which has no option for ECMA's classes:
/// - `\s` / `\S` are ECMA's white space and line terminators (tab, LF, VT, FF, CR, space, NBSP,
///   U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF), in and out of
///   classes; `\d`, `\w`, `\b` stay ASCII (PCRE2 without UCP);
/// - `.` matches anything but the line terminators LF, CR, U+2028, U+2029;
/// - `\v` is U+000B (PCRE2: any vertical space), `\cX` a control character, `[\b]` backspace;
/// - `[` inside a class is a plain character (PCRE2 would read `[:alpha:]` as a POSIX class);
/// - syntax ECMA refuses is refused: escapes of letters it does not define (`\a`, `\A`, `\z`,
///   `\e`...), `(?` other than `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!` and `(?<name>` (so no inline
///   flags, comments, atomic groups or Python's `(?P...)`), possessive quantifiers.
/// Unicode property names are translated to PCRE2's (`SchemaRegex.translateProperty`).
enum SchemaRegexECMA {
    struct Refused: Error {
        let offset: Int
        let reason: String
    }

    /// ECMA-262's WhiteSpace and LineTerminator code points, as PCRE2 class contents (written as
    /// `\xHH` and `\uHHHH`: under PCRE2_ALT_BSUX, `\x{...}` is not an escape).
    static let spaceSet = #"\t\n\x0B\f\r \u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF"#
    static let space = "[" + spaceSet + "]"
    static let nonSpace = "[^" + spaceSet + "]"
    static let dot = #"[^\n\r\u2028\u2029]"#

    /// Escapes ECMA-262 defines with a letter, beside the ones rewritten here.
    private static let letterEscapes: Set<Character> = ["d", "D", "w", "W", "b", "B", "f", "n", "r", "t", "k"]
    private static let syntax: Set<Character> = ["^", "$", "\\", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "/"]

    /// The PCRE2 pattern for ECMA-262 `pattern`.
    /// - Throws: `Refused` (where and why) for syntax ECMA-262 refuses.
    static func translate(_ pattern: String) throws(Refused) -> String {
        let c = Array(pattern)
        var out = ""
        var i = 0
        /// The last thing written was a quantifier (a possessive `+` may not follow it).
        var afterQuantifier = false
        while i < c.count {
            let ch = c[i]
            let quantifier = afterQuantifier
            afterQuantifier = false
            switch ch {
            case "\\":
                let (text, next) = try escape(c, i, inClass: false)
                out += text
                i = next
                continue
            case "[":
                let (text, next) = try characterClass(c, i)
                out += text
                i = next
                continue
            case ".":
                out += dot
            case "(":
                if i + 1 < c.count, c[i + 1] == "?" {
                    let rest = String(c[(i + 2)...].prefix(3))
                    let allowed = rest.hasPrefix(":") || rest.hasPrefix("=") || rest.hasPrefix("!")
                        || rest.hasPrefix("<=") || rest.hasPrefix("<!")
                        || (rest.hasPrefix("<") && rest.count > 1 && (rest.dropFirst().first!.isLetter || rest.dropFirst().first! == "_" || rest.dropFirst().first! == "$"))
                    guard allowed else { throw Refused(offset: i, reason: "\"(?\(rest.prefix(1))\" is not ECMA-262 group syntax") }
                }
                out.append(ch)
            case "*", "+", "?":
                if ch == "+" && quantifier { throw Refused(offset: i, reason: "a possessive quantifier is not ECMA-262") }
                // A lazy `?` after a quantifier is ECMA; `?` as the quantifier itself.
                if !(ch == "?" && quantifier) { afterQuantifier = true }
                out.append(ch)
            case "}":
                afterQuantifier = true
                out.append(ch)
            default:
                out.append(ch)
            }
            i += 1
        }
        return out
    }

    /// A class `[...]` starting at `start`: PCRE2 text and the index after it.
    private static func characterClass(_ c: [Character], _ start: Int) throws(Refused) -> (String, Int) {
        var i = start + 1
        let negated = i < c.count && c[i] == "^"
        if negated { i += 1 }
        var body = ""
        var hasNonSpace = false
        while i < c.count, c[i] != "]" {
            switch c[i] {
            case "\\":
                if i + 1 < c.count, c[i + 1] == "S" {
                    hasNonSpace = true
                    i += 2
                    continue
                }
                let (text, next) = try escape(c, i, inClass: true)
                body += text
                i = next
            case "[":
                body += "\\["
                i += 1
            default:
                body.append(c[i])
                i += 1
            }
        }
        guard i < c.count else { throw Refused(offset: start, reason: "missing terminating ] for character class") }
        i += 1
        guard hasNonSpace else { return ((negated ? "[^" : "[") + body + "]", i) }
        // `\S` in a class: the union of the rest and non-space; negated, space less the rest.
        if negated { return ("(?:" + (body.isEmpty ? "" : "(?![" + body + "])") + space + ")", i) }
        return ("(?:" + (body.isEmpty ? "" : "[" + body + "]|") + nonSpace + ")", i)
    }

    /// The escape at `c[i]` (a backslash): PCRE2 text and the index after it.
    private static func escape(_ c: [Character], _ i: Int, inClass: Bool) throws(Refused) -> (String, Int) {
        guard i + 1 < c.count else { throw Refused(offset: i, reason: "\\ at end of pattern") }
        let e = c[i + 1]
        switch e {
        case "s": return (inClass ? spaceSet : space, i + 2)
        case "S": return (nonSpace, i + 2)
        case "v": return (#"\x0B"#, i + 2)
        case "b" where inClass: return (#"\x08"#, i + 2)
        case "B" where inClass, "k" where inClass:
            throw Refused(offset: i, reason: "\\\(e) is not valid in an ECMA-262 class")
        case "c":
            guard i + 2 < c.count, let v = c[i + 2].asciiValue, c[i + 2].isLetter else {
                throw Refused(offset: i, reason: "\\c must be followed by a letter")
            }
            let hex = String(v & 31, radix: 16)
            return ("\\x" + (hex.count == 1 ? "0" : "") + hex, i + 3)
        case "0":
            if i + 2 < c.count, c[i + 2].isASCII, c[i + 2].isNumber {
                throw Refused(offset: i, reason: "octal escapes are not ECMA-262")
            }
            return (#"\x00"#, i + 2)
        case "p", "P":
            guard i + 2 < c.count, c[i + 2] == "{", let close = c[(i + 2)...].firstIndex(of: "}") else {
                throw Refused(offset: i, reason: "\\\(e) must be followed by {name}")
            }
            let name = String(c[(i + 3)..<close])
            return ("\\\(e){\(SchemaRegex.translateProperty(name))}", close + 1)
        case "x", "u":
            // PCRE2's ALT_BSUX options read \xHH, \uHHHH and \u{...} as ECMA writes them.
            return ("\\" + String(e), i + 2)
        case "-" where inClass:
            return (#"\-"#, i + 2)
        default:
            if letterEscapes.contains(e) || syntax.contains(e) || (e.isASCII && e.isNumber) {
                return ("\\" + String(e), i + 2)
            }
            throw Refused(offset: i, reason: "\\\(e) is not an ECMA-262 escape")
        }
    }
}
