/// One link of a `Link` header field (RFC 8288): its target, as written between `<` and `>`
/// (not resolved against the response URL), and its parameters in order, names lowercased.
public struct Link: Sendable, Equatable {
    public var url: String
    /// `rel`, `type`, `title`... with quotes and backslash escapes removed.
    public var params: [HeaderField]

    public init(url: String, params: [HeaderField] = []) {
        self.url = url
        self.params = params
    }

    /// The value of parameter `name` (lowercase), if present.
    public subscript(param name: String) -> String? {
        params.first { $0.name == name }?.value
    }

    /// The relation type(s), as written (`next`, or `prev first` for several).
    public var rel: String? { self[param: "rel"] }
}

extension Headers {
    /// The links of every `Link` field, in order (`requests`' `parse_header_links`, with quoted
    /// values that may hold `,` and `;`). A malformed link is skipped up to the next comma.
    public var links: [Link] {
        var links: [Link] = []
        for field in self where field.name.lowercased() == "link" {
            var parser = LinkParser(field.value)
            parser.parse(into: &links)
        }
        return links
    }
}

/// Reads `<url>; name=value; name="quoted", <url2>...` one byte at a time.
private struct LinkParser {
    let bytes: [UInt8]
    var at = 0

    init(_ value: String) { bytes = Array(value.utf8) }

    private var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpaces() {
        while let c = current, c == 0x20 || c == 0x09 { at += 1 }
    }

    private func text(_ from: Int, _ to: Int) -> String {
        String(decoding: bytes[from..<to], as: UTF8.self)
    }

    mutating func parse(into links: inout [Link]) {
        while at < bytes.count {
            skipSpaces()
            guard let c = current else { return }
            if c == UInt8(ascii: ",") { at += 1; continue }
            guard c == UInt8(ascii: "<"), let link = parseLink() else {
                skipTo(UInt8(ascii: ","))
                continue
            }
            links.append(link)
        }
    }

    private mutating func parseLink() -> Link? {
        let start = at + 1
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
        var link = Link(url: text(start, end).trimmingSpaces())
        at = end + 1
        while true {
            skipSpaces()
            guard current == UInt8(ascii: ";") else { break }
            at += 1
            skipSpaces()
            let nameStart = at
            while let c = current, ![UInt8(ascii: "="), UInt8(ascii: ";"), UInt8(ascii: ","), 0x20, 0x09].contains(c) {
                at += 1
            }
            let name = text(nameStart, at).lowercased()
            skipSpaces()
            var value = ""
            if current == UInt8(ascii: "=") {
                at += 1
                skipSpaces()
                value = current == UInt8(ascii: "\"") ? quoted() : token()
            }
            if !name.isEmpty { link.params.append(HeaderField(name: name, value: value)) }
        }
        skipSpaces()
        guard current == nil || current == UInt8(ascii: ",") else { return nil }
        return link
    }

    /// A quoted-string, `at` on its opening quote: the text without quotes and escapes.
    private mutating func quoted() -> String {
        at += 1
        var out: [UInt8] = []
        while let c = current {
            at += 1
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\"), let next = current { out.append(next); at += 1; continue }
            out.append(c)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A bare value, up to `;` or `,`, trimmed.
    private mutating func token() -> String {
        let start = at
        while let c = current, c != UInt8(ascii: ";"), c != UInt8(ascii: ",") { at += 1 }
        return text(start, at).trimmingSpaces()
    }

    private mutating func skipTo(_ byte: UInt8) {
        while let c = current, c != byte { at += 1 }
    }
}
