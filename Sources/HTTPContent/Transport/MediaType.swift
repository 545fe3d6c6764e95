/// A parsed Content-Type: `type/subtype; name=value; ...`, lowercased type and parameter names.
public struct MediaType: Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var subtype: String
    /// Parameters in order, names lowercased, values unquoted.
    public var parameters: [(name: String, value: String)]

    public init(type: String, subtype: String, parameters: [(name: String, value: String)] = []) {
        self.type = asciiLowercased(type)
        self.subtype = asciiLowercased(subtype)
        self.parameters = parameters
    }

    /// Parses a Content-Type header value; nil when it is not `token/token` (RFC 9110 §8.3).
    public init?(parsing text: String) {
        var scanner = ByteScanner(Array(text.utf8))
        scanner.skipSpace()
        guard let type = scanner.token(), scanner.take(UInt8(ascii: "/")),
              let subtype = scanner.token() else { return nil }
        var params: [(name: String, value: String)] = []
        while true {
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ";")) else { break }
            scanner.skipSpace()
            guard let name = scanner.token() else { continue }
            guard scanner.take(UInt8(ascii: "=")) else { continue }
            let value = scanner.quotedString() ?? scanner.token() ?? ""
            params.append((asciiLowercased(name), value))
        }
        scanner.skipSpace()
        guard scanner.atEnd else { return nil }
        self.init(type: type, subtype: subtype, parameters: params)
    }

    /// `type/subtype`, without parameters.
    public var essence: String { "\(type)/\(subtype)" }

    /// The `charset` parameter, lowercased, if present.
    public var charset: String? { parameter("charset").map(asciiLowercased) }

    public func parameter(_ name: String) -> String? {
        parameters.first { asciiCaseInsensitiveEqual($0.name, name) }?.value
    }

    /// The structured-syntax suffix (`json` in `application/problem+json`), if any.
    public var suffix: String? {
        guard let plus = subtype.lastIndex(of: "+") else { return nil }
        return String(subtype[subtype.index(after: plus)...])
    }

    public var description: String {
        ([essence] + parameters.map { "\($0.name)=\($0.value)" }).joined(separator: "; ")
    }

    public static func == (a: MediaType, b: MediaType) -> Bool {
        a.type == b.type && a.subtype == b.subtype
            && a.parameters.elementsEqual(b.parameters) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A pattern that media types are accepted by: `application/json`, `image/*`, `*/*`, or a
/// structured-suffix rule `*/*+json` (or `application/*+json`). Matching ignores parameters and case.
public struct MediaRange: Sendable, Equatable, CustomStringConvertible,
    ExpressibleByStringLiteral {
    public let type: String
    public let subtype: String

    public init?(parsing text: String) {
        guard let media = MediaType(parsing: text) else { return nil }
        type = media.type
        subtype = media.subtype
    }

    public init(stringLiteral value: String) {
        guard let range = MediaRange(parsing: value) else {
            preconditionFailure("invalid media range literal \(value)")
        }
        self = range
    }

    public var description: String { "\(type)/\(subtype)" }

    public func matches(_ media: MediaType) -> Bool {
        guard type == "*" || type == media.type else { return false }
        if subtype == "*" || subtype == media.subtype { return true }
        // `*+json` accepts any subtype with that structured suffix.
        if subtype.hasPrefix("*+") {
            return media.suffix.map { "*+" + $0 == subtype } ?? false
        }
        return false
    }
}

/// A tiny cursor over bytes for the header grammars (tokens, quoted strings).
struct ByteScanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }

    mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func token() -> String? {
        let start = index
        while index < bytes.count, isTokenByte(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    mutating func quotedString() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        var out: [UInt8] = []
        while index < bytes.count {
            let b = bytes[index]
            index += 1
            if b == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if b == UInt8(ascii: "\\"), index < bytes.count {
                out.append(bytes[index])
                index += 1
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
