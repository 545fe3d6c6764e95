/// URI reference resolution (RFC 3986 §5.2) for `$id` and `$ref`, on strings: enough to name
/// schema resources and never used to fetch anything.
enum SchemaURI {
    struct Parts {
        var scheme: String?
        var authority: String?
        var path: String
        var query: String?
        var fragment: String?

        var text: String {
            var s = ""
            if let scheme { s += scheme + ":" }
            if let authority { s += "//" + authority }
            s += path
            if let query { s += "?" + query }
            if let fragment { s += "#" + fragment }
            return s
        }
    }

    static func parse(_ s: String) -> Parts {
        var rest = Substring(s)
        var fragment: String?
        if let i = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: i)...])
            rest = rest[..<i]
        }
        var query: String?
        if let i = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: i)...])
            rest = rest[..<i]
        }
        var scheme: String?
        if let i = rest.firstIndex(of: ":"), let first = rest.first, first.isLetter,
           rest[..<i].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) {
            scheme = rest[..<i].lowercased()
            rest = rest[rest.index(after: i)...]
        }
        var authority: String?
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<end])
            rest = rest[end...]
        }
        return Parts(scheme: scheme, authority: authority, path: String(rest), query: query, fragment: fragment)
    }

    /// `reference` resolved against `base` (which may be empty: the reference stays relative).
    static func resolve(_ reference: String, against base: String) -> String {
        let r = parse(reference)
        if base.isEmpty { var t = r; t.path = r.scheme != nil ? removeDots(r.path) : r.path; return t.text }
        let b = parse(base)
        var t = Parts(scheme: nil, authority: nil, path: "", query: nil, fragment: r.fragment)
        if r.scheme != nil {
            t.scheme = r.scheme; t.authority = r.authority; t.path = removeDots(r.path); t.query = r.query
        } else {
            if r.authority != nil {
                t.authority = r.authority; t.path = removeDots(r.path); t.query = r.query
            } else {
                if r.path.isEmpty {
                    t.path = b.path
                    t.query = r.query ?? b.query
                } else {
                    if r.path.hasPrefix("/") {
                        t.path = removeDots(r.path)
                    } else {
                        t.path = removeDots(merge(b, r.path))
                    }
                    t.query = r.query
                }
                t.authority = b.authority
            }
            t.scheme = b.scheme
        }
        return t.text
    }

    private static func merge(_ base: Parts, _ path: String) -> String {
        if base.authority != nil && base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return String(base.path[...slash]) + path
    }

    private static func removeDots(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var input = Substring(path)
        var output: [Substring] = []
        var out = ""
        while !input.isEmpty {
            if input.hasPrefix("../") { input = input.dropFirst(3) }
            else if input.hasPrefix("./") { input = input.dropFirst(2) }
            else if input.hasPrefix("/./") { input = input.dropFirst(2) }
            else if input == "/." { input = "/" }
            else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." { input = "" }
            else {
                let start = input.startIndex
                var end = input.index(after: start)
                if input.first != "/" { end = start }
                end = input[end...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[start..<end])
                input = input[end...]
            }
        }
        for seg in output { out += seg }
        return out
    }

    /// The URI without its fragment, and the fragment (percent-decoded; "" when none).
    static func split(_ uri: String) -> (base: String, fragment: String) {
        guard let i = uri.firstIndex(of: "#") else { return (uri, "") }
        return (String(uri[..<i]), percentDecode(String(uri[uri.index(after: i)...])))
    }

    static func percentDecode(_ s: String) -> String {
        guard s.contains("%") else { return s }
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.first {
            it = it.dropFirst()
            if b == UInt8(ascii: "%"), it.count >= 2, let h = hex(it[it.startIndex]), let l = hex(it[it.startIndex + 1]) {
                bytes.append(h << 4 | l)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x37
        case 0x61...0x66: return b - 0x57
        default: return nil
        }
    }
}

/// JSON Pointer (RFC 6901) tokens.
enum SchemaPointer {
    static func escape(_ token: String) -> String {
        guard token.contains("~") || token.contains("/") else { return token }
        return token.schemaReplacing("~", "~0").schemaReplacing("/", "~1")
    }

    static func unescape(_ token: Substring) -> String {
        guard token.contains("~") else { return String(token) }
        return String(token).schemaReplacing("~1", "/").schemaReplacing("~0", "~")
    }

    /// The tokens of a pointer ("" → none); nil when it does not start with "/".
    static func tokens(_ pointer: String) -> [String]? {
        if pointer.isEmpty { return [] }
        guard pointer.hasPrefix("/") else { return nil }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map { unescape($0) }
    }

    static func join(_ tokens: some Sequence<String>) -> String {
        var s = ""
        for t in tokens { s += "/" + escape(t) }
        return s
    }
}

extension String {
    /// Foundation-free replacement of every occurrence of `target` (non-empty) by `replacement`.
    func schemaReplacing(_ target: String, _ replacement: String) -> String {
        let t = Array(target.utf8)
        let src = Array(utf8)
        guard !t.isEmpty, src.count >= t.count else { return self }
        var out: [UInt8] = []
        out.reserveCapacity(src.count)
        var i = 0
        while i < src.count {
            if i + t.count <= src.count && src[i] == t[0] && Array(src[i..<i + t.count]) == t {
                out += replacement.utf8
                i += t.count
            } else {
                out.append(src[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
