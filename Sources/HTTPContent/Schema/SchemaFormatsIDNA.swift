import CIDN2
#if canImport(Glibc)
import Glibc
#endif

/// The host name formats by IDNA2008 (RFC 5890–5893) through libidn2, which libcurl already
/// links: no tables of our own.
/// - `hostname`: RFC 1123 names of ASCII labels; an A-label (`xn--`) must decode to a U-label
///   that IDNA2008 accepts and that encodes back to it.
/// - `idn-hostname`: labels that are ASCII, A-labels or U-labels IDNA2008 accepts for
///   registration (code point classes, CONTEXTJ / CONTEXTO rules, the Bidi rule per label);
///   U+3002, U+FF0E and U+FF61 separate labels as "." does (RFC 3490 section 3.1). The name's
///   A-label form must fit RFC 1123's lengths.
/// - `idn-email`: RFC 6531: a local part of UTF-8 (as `email` checks it) at an `idn-hostname`,
///   whose labels need not be in NFC (RFC 6531 section 3.2 leaves normalization to the MTA).
/// What libidn2 does not check is not checked: the Bidi rule across the labels of a name (a
/// name with a right-to-left label whose other label starts with a digit).
enum SchemaIDNA {
    static func hostname(_ s: String) -> Bool {
        guard s.utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        return idnHostname(s, separators: false)
    }

    static func idnHostname(_ s: String) -> Bool { idnHostname(s, separators: true) }

    static func idnEmail(_ s: String) -> Bool {
        guard let at = s.lastIndex(of: "@") else { return false }
        let domain = String(s[s.index(after: at)...])
        if domain.hasPrefix("[") { return SchemaFormatChecks.email(s) }
        // The local part as `email` reads it (UTF-8 allowed), the domain as an idn-hostname.
        return SchemaFormatChecks.email(String(s[..<at]) + "@a") && idnHostname(domain, separators: true, normalize: true)
    }

    private static func idnHostname(_ s: String, separators: Bool, normalize: Bool = false) -> Bool {
        var name = s
        if separators, name.unicodeScalars.contains(where: { $0.value == 0x3002 || $0.value == 0xFF0E || $0.value == 0xFF61 }) {
            var view = String.UnicodeScalarView()
            for c in name.unicodeScalars {
                view.append(c.value == 0x3002 || c.value == 0xFF0E || c.value == 0xFF61 ? "." : c)
            }
            name = String(view)
        }
        guard !name.isEmpty else { return false }
        var ascii: [String] = []
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard let a = aLabel(String(label), normalize: normalize) else { return false }
            ascii.append(a)
        }
        return rfc1123(ascii)
    }

    /// The label's ASCII form: itself when ASCII (an A-label once checked), else its A-label;
    /// nil when IDNA2008 refuses it.
    private static func aLabel(_ label: String, normalize: Bool) -> String? {
        guard !label.isEmpty else { return nil }
        let isASCII = label.utf8.allSatisfy { $0 < 0x80 }
        if isASCII && !label.lowercased().hasPrefix("xn--") { return label }
        var unicode = label
        if isASCII {
            guard let u = toUnicode(label) else { return nil }
            unicode = u
        }
        guard let encoded = register(unicode, normalize: normalize && !isASCII) else { return nil }
        // An A-label must be the one its U-label encodes to (no other spelling of it).
        if isASCII && encoded.lowercased() != label.lowercased() { return nil }
        return encoded
    }

    private static func register(_ ulabel: String, normalize: Bool) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard hc_idn2_register(ulabel, normalize ? 1 : 0, &out) == 0, let out else { return nil }
        defer { hc_idn2_free(out) }
        return String(cString: out)
    }

    private static func toUnicode(_ alabel: String) -> String? {
        var out: UnsafeMutablePointer<CChar>?
        guard hc_idn2_to_unicode(alabel, &out) == 0, let out else { return nil }
        defer { hc_idn2_free(out) }
        return String(cString: out)
    }

    /// RFC 1123 host name rules on ASCII labels: 1–63 letters, digits and hyphens, no hyphen at
    /// either end, "--" in third and fourth place only for A-labels; 253 bytes in all.
    private static func rfc1123(_ labels: [String]) -> Bool {
        guard labels.reduce(labels.count - 1, { $0 + $1.utf8.count }) <= 253 else { return false }
        for label in labels {
            let b = Array(label.utf8)
            guard !b.isEmpty, b.count <= 63, b.first != 0x2D, b.last != 0x2D else { return false }
            for c in b {
                let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D
                if !ok { return false }
            }
            if b.count >= 4, b[2] == 0x2D, b[3] == 0x2D, !label.lowercased().hasPrefix("xn--") { return false }
        }
        return true
    }
}
