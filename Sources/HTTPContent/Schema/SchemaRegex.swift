import CPCRE2

/// A compiled `pattern` / `patternProperties` regular expression.
///
/// JSON Schema asks for ECMA-262 regular expressions. We use PCRE2 10.4x (a real, maintained
/// backtracking engine with a JIT, packaged everywhere as libpcre2), given the pattern as
/// `SchemaRegexECMA` rewrites it (ECMA's `\s`, `.`, `\v`, `\cX`, classes; ECMA's refusals) and
/// configured as close to ECMA-262 as it allows (see `Sources/CPCRE2/shim.h`):
/// - `PCRE2_UTF`: patterns and subjects are Unicode text; `.` and classes work on code points.
/// - no `PCRE2_UCP`: `\d`, `\w`, `\b` stay ASCII, as in ECMA-262.
/// - `PCRE2_ALT_BSUX` + `PCRE2_EXTRA_ALT_BSUX`: `\uXXXX`, `\u{...}` and `\xHH` as ECMA writes them.
/// - `PCRE2_DOLLAR_ENDONLY`: `$` matches only at the very end (Perl also before a final newline).
/// - `PCRE2_MATCH_UNSET_BACKREF`: a reference to a group that did not take part matches empty.
/// - `PCRE2_ALLOW_EMPTY_CLASS`: `[]` matches nothing and `[^]` anything, as in ECMA-262.
/// Where it still differs from ECMA-262: a lookbehind must have a bounded length (ES2018 allows
/// any); case-insensitive matching and other flags do not arise (patterns have none). Matching is
/// bounded (match and depth limits): a pathological pattern fails the value with a clear message
/// instead of running for minutes.
final class SchemaRegex: @unchecked Sendable {
    let source: String
    private let code: OpaquePointer

    /// - Throws: `.invalidArgument` naming the pattern and PCRE2's reason.
    init(_ source: String) throws(HTTPContentError) {
        self.source = source
        var errorCode: Int32 = 0
        var errorOffset = 0
        let translated: String
        do {
            translated = try SchemaRegexECMA.translate(source)
        } catch {
            throw HTTPContentError(.invalidArgument,
                                   "invalid regular expression \"\(source)\" at offset \(error.offset): \(error.reason)")
        }
        let compiled: OpaquePointer? = Array(translated.utf8).withUnsafeBufferPointer { buf in
            hc_pcre2_compile_ecma(buf.baseAddress ?? UnsafePointer(bitPattern: 1), buf.count, &errorCode, &errorOffset)
        }
        guard let compiled else {
            throw HTTPContentError(.invalidArgument,
                                   "invalid regular expression \"\(source)\" at offset \(errorOffset): \(SchemaRegex.message(errorCode))")
        }
        code = compiled
    }

    deinit { hc_pcre2_code_free(code) }

    /// An ECMA-262 Unicode property name as PCRE2 10.42 spells it: long General_Category names
    /// (`Letter`), `gc=`/`General_Category=` and `sc=`/`Script=` prefixes become PCRE2's short
    /// forms (`L`, `Greek`).
    static func translateProperty(_ property: String) -> String {
        var name = property
        for prefix in ["General_Category=", "gc=", "Script=", "sc=", "Script_Extensions=", "scx="] where name.hasPrefix(prefix) {
            name = String(name.dropFirst(prefix.count))
        }
        return generalCategories[name] ?? name
    }

    private static let generalCategories: [String: String] = [
        "Letter": "L", "Cased_Letter": "L&", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
        "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M",
        "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N",
        "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P",
        "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps",
        "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi", "Final_Punctuation": "Pf",
        "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
        "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs",
        "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc",
        "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co", "Unassigned": "Cn",
    ]

    static func message(_ code: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = hc_pcre2_error_message(code, &buffer, buffer.count)
        return n > 0 ? String(decoding: buffer[0..<Int(n)], as: UTF8.self) : "PCRE2 error \(code)"
    }

    /// Whether the pattern matches somewhere in `subject` (unanchored, as JSON Schema asks);
    /// nil when matching hit the backtracking limits.
    func search(_ subject: String, _ scratch: SchemaRegexScratch) -> Bool? {
        var s = subject
        let rc = s.withUTF8 { buf in
            hc_pcre2_search(code, buf.baseAddress ?? UnsafePointer(bitPattern: 1), buf.count, scratch.matchData, scratch.context)
        }
        if rc >= 0 { return true }
        if rc == PCRE2_ERROR_NOMATCH { return false }
        return nil
    }

    /// `search`, on bytes that must be valid UTF-8 (PCRE2 is told not to check them): a parsed
    /// document's text read in place by the tape validator.
    func search(validUTF8 subject: UnsafeRawBufferPointer, _ scratch: SchemaRegexScratch) -> Bool? {
        let base = subject.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(bitPattern: 1)
        let rc = hc_pcre2_search(code, base, subject.count, scratch.matchData, scratch.context)
        if rc >= 0 { return true }
        if rc == PCRE2_ERROR_NOMATCH { return false }
        return nil
    }
}

/// Per-validation match state (PCRE2 match data and limits); one per validating thread.
final class SchemaRegexScratch {
    let matchData: OpaquePointer?
    let context: OpaquePointer?
    init() {
        matchData = hc_pcre2_match_data_new()
        context = hc_pcre2_match_context_new(10_000_000, 10_000)
    }
    deinit {
        if let matchData { hc_pcre2_match_data_free(matchData) }
        if let context { hc_pcre2_match_context_free(context) }
    }
}
