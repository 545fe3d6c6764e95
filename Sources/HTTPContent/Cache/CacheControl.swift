/// The `Cache-Control` directives of a request or a response (RFC 9111 §5.2), parsed once.
///
/// Directive names are case-insensitive; a value may be a token or a quoted string. A directive
/// whose value must be delta-seconds but is not (`max-age=abc`) counts as present with the value 0,
/// the conservative reading (§4.2.1: a cache treats an invalid freshness value as stale). A
/// directive repeated with different values keeps its first value (RFC 9111 §4.2.1 allows the first
/// occurrence or stale). Spaces around `=` make a directive unknown or its value invalid.
public struct CacheControl: Sendable, Equatable {
    public var maxAge: Int?
    public var sharedMaxAge: Int?
    public var maxStale: Int?
    public var minFresh: Int?
    public var staleWhileRevalidate: Int?
    public var staleIfError: Int?
    public var noCache = false
    public var noStore = false
    public var isPrivate = false
    public var isPublic = false
    public var mustRevalidate = false
    public var proxyRevalidate = false
    public var onlyIfCached = false
    public var mustUnderstand = false
    public var immutable = false

    public init() {}

    /// Parses every `Cache-Control` line of `headers` (several lines read as one list).
    public init(_ headers: Headers) {
        for line in headers.values(for: "cache-control") { parse(line) }
    }

    /// A number that stands for "any staleness" (`max-stale` with no value).
    public static let unlimited = Int.max / 4

    private mutating func parse(_ line: String) {
        for item in CacheControl.split(line) {
            let (name, value) = item
            switch name {
            case "max-age": if maxAge == nil { maxAge = CacheControl.seconds(value) }
            case "s-maxage": if sharedMaxAge == nil { sharedMaxAge = CacheControl.seconds(value) }
            case "max-stale": maxStale = value == nil ? CacheControl.unlimited : CacheControl.smaller(maxStale, CacheControl.seconds(value))
            case "min-fresh": minFresh = CacheControl.seconds(value)
            case "stale-while-revalidate": staleWhileRevalidate = CacheControl.seconds(value)
            case "stale-if-error": staleIfError = CacheControl.seconds(value)
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "private": isPrivate = true
            case "public": isPublic = true
            case "must-revalidate": mustRevalidate = true
            case "proxy-revalidate": proxyRevalidate = true
            case "only-if-cached": onlyIfCached = true
            case "must-understand": mustUnderstand = true
            case "immutable": immutable = true
            default: break  // unknown directives are ignored (§5.2.3)
            }
        }
    }

    private static func smaller(_ a: Int?, _ b: Int) -> Int { a.map { min($0, b) } ?? b }

    /// delta-seconds (§1.2.2): digits, saturating at 2^31 as the RFC asks; anything else is 0.
    static func seconds(_ value: String?) -> Int {
        guard let value, !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return 0 }
        var n = 0
        for b in value.utf8 {
            n = n * 10 + Int(b - 0x30)
            if n >= 1 << 31 { return 1 << 31 }
        }
        return n
    }

    /// The comma-separated `name[=value]` items of one line, names lowercased, quotes removed
    /// (a comma inside a quoted string does not split).
    static func split(_ line: String) -> [(String, String?)] {
        var items: [(String, String?)] = []
        var current: [UInt8] = []
        var quoted = false
        func flush() {
            let text = String(decoding: current, as: UTF8.self).trimmingSpaces()
            current.removeAll(keepingCapacity: true)
            guard !text.isEmpty else { return }
            if let eq = text.firstIndex(of: "=") {
                let name = String(text[..<eq]).lowercased()
                var value = String(text[text.index(after: eq)...])
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
                items.append((name, value))
            } else {
                items.append((text.lowercased(), nil))
            }
        }
        for b in line.utf8 {
            if b == 0x22 { quoted.toggle() }
            if b == 0x2C, !quoted { flush() } else { current.append(b) }
        }
        flush()
        return items
    }
}
