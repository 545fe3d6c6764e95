import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// Reading what the options point at (@file, stdin) and turning options into request parts.
enum Input {
    /// All of a file's bytes (`-` or an empty path: stdin).
    static func readFile(_ path: String) throws(HTTPContentError) -> [UInt8] {
        let fd: Int32 = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HTTPContentError(.localIO, "cannot open \"\(path)\": \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw HTTPContentError(.localIO, "reading \"\(path)\" failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        return out
    }

    /// A -d/--data-binary/--json value: as given, or read from @file, or stdin for - and @-.
    /// `dropNewlines`: -d's rule for files (curl removes CR and LF from them).
    static func dataValue(_ text: String, dropNewlines: Bool) throws(HTTPContentError) -> [UInt8] {
        if text == "-" || text == "@-" { return try readFile("-").filter { !dropNewlines || ($0 != 0x0A && $0 != 0x0D) } }
        if text.hasPrefix("@") {
            let bytes = try readFile(String(text.dropFirst()))
            return dropNewlines ? bytes.filter { $0 != 0x0A && $0 != 0x0D } : bytes
        }
        return Array(text.utf8)
    }

    /// One --data-urlencode value, the way curl reads it: 'content' (all of it encoded),
    /// '=content', 'name=content', '@file', 'name@file'.
    static func urlencoded(_ text: String) throws(HTTPContentError) -> [UInt8] {
        let equals = text.firstIndex(of: "=")
        let at = text.firstIndex(of: "@")
        if let equals, at == nil || equals < at! {
            let name = text[..<equals]
            let content = percentEncoded(Array(text[text.index(after: equals)...].utf8))
            return name.isEmpty ? content : Array(name.utf8) + [UInt8(ascii: "=")] + content
        }
        if let at {
            let name = text[..<at]
            let content = percentEncoded(try readFile(String(text[text.index(after: at)...])))
            return name.isEmpty ? content : Array(name.utf8) + [UInt8(ascii: "=")] + content
        }
        return percentEncoded(Array(text.utf8))
    }

    /// Percent-encoding of everything but RFC 3986's unreserved characters (space as %20).
    static func percentEncoded(_ bytes: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for b in bytes {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
            }
        }
        return out
    }

    /// The header lines of -H values: 'Name: value', 'Name;' (an empty value, as curl), or
    /// @file with one header per line (empty lines skipped).
    static func headers(_ values: [String]) throws(HTTPContentError) -> [(String, String)] {
        var out: [(String, String)] = []
        for value in values {
            if value.hasPrefix("@") {
                let bytes = try readFile(String(value.dropFirst()))
                let text = String(decoding: bytes, as: UTF8.self)
                for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
                    let line = line.hasSuffix("\r") ? line.dropLast() : line
                    if trimmed(line).isEmpty { continue }
                    out.append(try header(String(line)))
                }
            } else {
                out.append(try header(value))
            }
        }
        return out
    }

    static func header(_ line: String) throws(HTTPContentError) -> (String, String) {
        if line.hasSuffix(";"), !line.contains(":") { return (String(line.dropLast()), "") }
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
            throw HTTPContentError(.invalidArgument, "header \"\(line)\" is not 'Name: value'")
        }
        return (trimmed(line[..<colon]), trimmed(line[line.index(after: colon)...]))
    }

    /// The multipart body of -F values.
    static func multipart(_ values: [String]) throws(HTTPContentError) -> Multipart {
        var body = Multipart()
        for value in values {
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
                throw HTTPContentError(.invalidArgument, "-F \"\(value)\" is not 'name=value', 'name=@file' or 'name=<file'")
            }
            let name = String(value[..<equals])
            let rest = value[value.index(after: equals)...]
            if rest.hasPrefix("@") || rest.hasPrefix("<") {
                // file[;type=TYPE][;filename=NAME]
                var fields = rest.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
                let path = fields.removeFirst()
                var type: String?
                var filename: String?
                for field in fields {
                    let f = trimmed(Substring(field))
                    if f.hasPrefix("type=") { type = String(f.dropFirst(5)) }
                    else if f.hasPrefix("filename=") { filename = String(f.dropFirst(9)) }
                    else { throw HTTPContentError(.invalidArgument, "-F \"\(value)\": unknown part option \"\(f)\"") }
                }
                if rest.hasPrefix("@") {
                    try body.addFile(name, path: path, filename: filename, contentType: type)
                } else {
                    try body.addField(name, String(decoding: try readFile(path), as: UTF8.self))
                }
            } else {
                try body.addField(name, String(rest))
            }
        }
        return body
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let b0 = bytes[i], b1 = n > 1 ? bytes[i + 1] : 0, b2 = n > 2 ? bytes[i + 2] : 0
            out.append(table[Int(b0 >> 2)])
            out.append(table[Int((b0 & 3) << 4 | b1 >> 4)])
            out.append(n > 1 ? table[Int((b1 & 15) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(n > 2 ? table[Int(b2 & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// File names taken from the network (-O, -J) are made safe before anything is written: only
/// the last path component, no control characters, not ".", ".." or hidden, and not empty.
enum SafeName {
    /// The file name of a URL's path (-O): its last segment, query and fragment removed.
    static func fromURL(_ url: String) -> String? {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        guard let slash = rest.firstIndex(of: "/") else { return nil }  // no path: no name
        let path = rest[slash...]
        let last = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        return clean(last)  // as curl: not percent-decoded
    }

    /// The filename of a Content-Disposition header (-J): `filename*=UTF-8''...` preferred,
    /// else `filename="..."` or `filename=...`.
    static func fromContentDisposition(_ value: String) -> String? {
        var plain: String?
        var extended: String?
        for param in value.split(separator: ";").dropFirst() {
            let p = trimmed(param)
            guard let eq = p.firstIndex(of: "=") else { continue }
            let key = trimmed(p[..<eq]).lowercased()
            var v = trimmed(p[p.index(after: eq)...])
            if key == "filename*" {
                // charset'language'percent-encoded
                let parts = v.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if parts.count == 3, parts[0].lowercased() == "utf-8" { extended = percentDecoded(String(parts[2])) }
            } else if key == "filename" {
                if v.hasPrefix("\""), v.hasSuffix("\""), v.count >= 2 {
                    v = String(v.dropFirst().dropLast())
                    v = v.replacingBackslashEscapes()
                }
                plain = v
            }
        }
        return (extended ?? plain).flatMap(clean)
    }

    /// `name` reduced to a safe file name in the current folder, or nil if nothing safe is left.
    static func clean(_ name: String) -> String? {
        // The last component, whichever separator the server used.
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        guard !last.isEmpty, last != ".", last != "..", !last.hasPrefix("."),
              !last.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
              last.utf8.count <= 255 else { return nil }
        return last
    }

    static func percentDecoded(_ text: String) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "%"), bytes.count >= 2,
               let hi = hexValue(bytes[bytes.startIndex]), let lo = hexValue(bytes[bytes.startIndex + 1]) {
                out.append(hi << 4 | lo)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

extension String {
    /// `\"` and `\\` in a quoted-string, unescaped.
    func replacingBackslashEscapes() -> String {
        var out = ""
        var escaping = false
        for c in self {
            if escaping { out.append(c); escaping = false } else if c == "\\" { escaping = true } else { out.append(c) }
        }
        return out
    }
}

/// `text` without leading and trailing spaces and tabs.
func trimmed(_ text: Substring) -> String {
    String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
}
