/// The grammars of `uri-template` (RFC 6570, level 4), `relative-json-pointer`
/// (draft-bhutton-relative-json-pointer-00, as JSON Schema 2020-12 names it), and `iri` /
/// `iri-reference` (RFC 3987: a URI's grammar with `ucschar`, and `iprivate` in queries).
enum SchemaTemplateFormats {
    // MARK: - uri-template

    /// RFC 6570 section 2: literals and `{operator varspec,...}` expressions. Operators are the
    /// level 2 and 3 ones; the reserved `= , ! @ |` are refused, as the RFC asks of
    /// templates using them. The apostrophe is taken as a literal (RFC 6570 erratum 6937).
    static func uriTemplate(_ s: String) -> Bool {
        let u = Array(s.unicodeScalars)
        var i = 0
        while i < u.count {
            let c = u[i].value
            if c == 0x7B {  // {
                guard let close = u[(i + 1)...].firstIndex(where: { $0 == "}" }),
                      expression(Array(u[(i + 1)..<close])) else { return false }
                i = close + 1
                continue
            }
            if c == 0x25 {  // %
                guard pctEncoded(u, i) else { return false }
                i += 3
                continue
            }
            guard literal(c) else { return false }
            i += 1
        }
        return true
    }

    /// RFC 6570 `literals` less `pct-encoded`: any Unicode character but CTL, SP, DQUOTE, `%`,
    /// `<`, `>`, `\`, `^`, backquote, `{`, `|`, `}`; beyond ASCII, `ucschar` and `iprivate`.
    private static func literal(_ c: UInt32) -> Bool {
        if c < 0x80 {
            if c <= 0x20 || c == 0x7F { return false }
            return !"\"%<>\\^`{|}".unicodeScalars.contains { $0.value == c }
        }
        return ucschar(c) || iprivate(c)
    }

    /// RFC 3987 `ucschar`.
    static func ucschar(_ c: UInt32) -> Bool {
        switch c {
        case 0xA0...0xD7FF, 0xF900...0xFDCF, 0xFDF0...0xFFEF: return true
        case 0xE0000...0xE0FFF: return false
        case 0x10000...0xEFFFD: return c & 0xFFFF <= 0xFFFD
        default: return false
        }
    }

    /// RFC 3987 `iprivate`.
    static func iprivate(_ c: UInt32) -> Bool {
        switch c {
        case 0xE000...0xF8FF, 0xF0000...0xFFFFD, 0x100000...0x10FFFD: return true
        default: return false
        }
    }

    private static func isHex(_ c: Unicode.Scalar) -> Bool { c.isASCII && c.properties.isASCIIHexDigit }

    private static func pctEncoded(_ u: [Unicode.Scalar], _ i: Int) -> Bool {
        i + 2 < u.count && u[i] == "%" && isHex(u[i + 1]) && isHex(u[i + 2])
    }

    /// The inside of `{...}`: `[operator] varspec *("," varspec)`.
    private static func expression(_ e: [Unicode.Scalar]) -> Bool {
        var i = 0
        if let first = e.first, "+#./;?&".unicodeScalars.contains(first) { i = 1 }
        // A varspec after each comma, one at least.
        while true {
            guard let next = varspec(e, i) else { return false }
            if next == e.count { return true }
            guard e[next] == "," else { return false }
            i = next + 1
        }
    }

    /// `varname [":" max-length / "*"]` from `i`: the index after it, nil when not one.
    private static func varspec(_ e: [Unicode.Scalar], _ start: Int) -> Int? {
        var i = start
        var afterDot = true  // a varname starts with a varchar, and no "." follows a "."
        while i < e.count {
            let c = e[i]
            if c == "%" {
                guard pctEncoded(e, i) else { return nil }
                i += 3
            } else if c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_") {
                i += 1
            } else if c == "." && !afterDot {
                afterDot = true
                i += 1
                continue
            } else {
                break
            }
            afterDot = false
        }
        guard i > start, !afterDot else { return nil }
        if i < e.count, e[i] == "*" { return i + 1 }
        if i < e.count, e[i] == ":" {
            // max-length: 1 to 9999, no leading zero.
            var j = i + 1
            while j < e.count, ("0"..."9").contains(e[j]) { j += 1 }
            let digits = j - i - 1
            guard digits >= 1, digits <= 4, e[i + 1] != "0" else { return nil }
            return j
        }
        return i
    }

    // MARK: - iri, iri-reference

    /// RFC 3987: as `uri` / `uri-reference`, where `ucschar` (and in the query `iprivate`) may
    /// stand wherever an unreserved character may: each is checked as one.
    static func iri(_ s: String, requireScheme: Bool) -> Bool {
        var view = String.UnicodeScalarView()
        var inQuery = false
        for c in s.unicodeScalars {
            if c == "?" { inQuery = true }
            if c == "#" { inQuery = false }
            if c.isASCII {
                view.append(c)
            } else if ucschar(c.value) || (inQuery && iprivate(c.value)) {
                view.append("a")
            } else {
                return false
            }
        }
        return SchemaFormatChecks.uri(String(view), requireScheme: requireScheme)
    }

    // MARK: - relative-json-pointer

    /// `non-negative-integer [("+" / "-") non-negative-integer] (json-pointer / "#")`.
    static func relativeJSONPointer(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard let afterNumber = nonNegativeInteger(b, 0) else { return false }
        var i = afterNumber
        if i < b.count, b[i] == 0x2B || b[i] == 0x2D {
            guard let next = nonNegativeInteger(b, i + 1) else { return false }
            i = next
        }
        if i == b.count { return true }
        if b[i] == 0x23 { return i + 1 == b.count }  // #
        return SchemaFormatChecks.jsonPointer(String(decoding: b[i...], as: UTF8.self))
    }

    /// "0", or a digit 1-9 and more digits, from `i`: the index after it.
    private static func nonNegativeInteger(_ b: [UInt8], _ i: Int) -> Int? {
        guard i < b.count, b[i] >= 0x30, b[i] <= 0x39 else { return nil }
        if b[i] == 0x30 { return i + 1 }
        var j = i + 1
        while j < b.count, b[j] >= 0x30, b[j] <= 0x39 { j += 1 }
        return j
    }
}
