/// The character encodings a text body can be sent in. The name goes into the Content-Type's
/// `charset` parameter.
public enum TextCharset: Sendable, Equatable, CaseIterable {
    case utf8
    /// ISO-8859-1 (Latin-1): code points up to U+00FF, one byte each.
    case iso8859_1
    /// US-ASCII: code points up to U+007F.
    case usASCII
    /// UTF-16, little-endian, no byte order mark.
    case utf16LE
    /// UTF-16, big-endian, no byte order mark.
    case utf16BE

    /// The IANA name sent in `charset=`.
    public var name: String {
        switch self {
        case .utf8: return "utf-8"
        case .iso8859_1: return "iso-8859-1"
        case .usASCII: return "us-ascii"
        case .utf16LE: return "utf-16le"
        case .utf16BE: return "utf-16be"
        }
    }

    /// Looks a charset up by name, ignoring case and common aliases (`utf8`, `latin1`, `ascii`).
    public init?(name: String) {
        switch asciiLowercased(name) {
        case "utf-8", "utf8": self = .utf8
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1": self = .iso8859_1
        case "us-ascii", "ascii": self = .usASCII
        case "utf-16le": self = .utf16LE
        case "utf-16be": self = .utf16BE
        default: return nil
        }
    }

    /// `text` in this charset.
    /// - Throws: `.invalidArgument` naming the first character the charset cannot represent
    ///   (nothing is replaced silently).
    public func encode(_ text: String) throws(HTTPContentError) -> [UInt8] {
        switch self {
        case .utf8:
            return Array(text.utf8)
        case .iso8859_1, .usASCII:
            let limit: UInt32 = self == .usASCII ? 0x7F : 0xFF
            var out: [UInt8] = []
            out.reserveCapacity(text.unicodeScalars.count)
            for (offset, scalar) in text.unicodeScalars.enumerated() {
                guard scalar.value <= limit else {
                    throw HTTPContentError(.invalidArgument,
                        "U+\(String(scalar.value, radix: 16, uppercase: true)) at scalar \(offset) cannot be sent as \(name)")
                }
                out.append(UInt8(scalar.value))
            }
            return out
        case .utf16LE, .utf16BE:
            var out: [UInt8] = []
            out.reserveCapacity(text.utf16.count * 2)
            for unit in text.utf16 {
                let (hi, lo) = (UInt8(unit >> 8), UInt8(unit & 0xFF))
                if self == .utf16LE { out += [lo, hi] } else { out += [hi, lo] }
            }
            return out
        }
    }
}
