/// One stored response as the cache keeps it: the head, the values the request had for the
/// fields its `Vary` names (the secondary key, RFC 9111 §4.1), and the clock readings the age
/// calculation needs (§4.2.3). The body is kept apart, in chunks, by the store.
public struct CacheEntry: Sendable, Equatable {
    /// The target URI: the primary cache key (§2).
    public var url: String
    public var status: Int
    public var reason: String
    public var httpVersion: String
    /// The stored header fields (updated by each 304, §4.3.4).
    public var headers: Headers
    /// For each field `Vary` names (lowercased), the request's value; nil when the request had none.
    public var varyValues: [VaryValue]
    /// When the request that brought the response was sent, and when the response arrived
    /// (seconds since 1970): `request_time` and `response_time` of §4.2.3.
    public var requestTime: Double
    public var responseTime: Double
    /// The body's length in bytes once stored.
    public var bodySize: Int64

    /// A field the response varies on, and the value the stored request had for it.
    public struct VaryValue: Sendable, Equatable {
        public var name: String
        public var value: String?
        public init(name: String, value: String?) {
            self.name = name
            self.value = value
        }
    }

    public init(url: String, status: Int, reason: String = "", httpVersion: String = "HTTP/1.1",
                headers: Headers, varyValues: [VaryValue] = [], requestTime: Double, responseTime: Double,
                bodySize: Int64 = 0) {
        self.url = url
        self.status = status
        self.reason = reason
        self.httpVersion = httpVersion
        self.headers = headers
        self.varyValues = varyValues
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.bodySize = bodySize
    }

    /// The secondary key as text: two stored responses of one URL with the same text replace
    /// each other; different texts are different variants.
    public var variantKey: String {
        var key = ""
        for v in varyValues {
            key += v.name
            key += v.value.map { "=" + $0 } ?? "!"
            key += "\n"
        }
        return key
    }
}

/// The binary form of a `CacheEntry` a store keeps (the SQLite store's `meta` column).
///
/// `HCE1`, then fields in a fixed order: integers little-endian, strings as a u32 length and
/// UTF-8 bytes, counts as u32. Decoding checks every length against what is left, so a corrupt
/// or foreign blob is an error (`.decode`), never a crash or a huge allocation (fuzzed:
/// `fuzz/cache_entry`).
public enum CacheEntryCodec {
    static let magic: [UInt8] = Array("HCE1".utf8)
    /// More fields than this is not an entry of ours.
    static let maxCount = 10_000

    public static func encode(_ entry: CacheEntry) -> [UInt8] {
        var out = magic
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { out += $0 } }
        func string(_ s: String) {
            u32(s.utf8.count)
            out += s.utf8
        }
        func f64(_ v: Double) { withUnsafeBytes(of: v.bitPattern.littleEndian) { out += $0 } }
        u32(entry.status)
        string(entry.url)
        string(entry.reason)
        string(entry.httpVersion)
        f64(entry.requestTime)
        f64(entry.responseTime)
        withUnsafeBytes(of: entry.bodySize.littleEndian) { out += $0 }
        let fields = entry.headers.fields
        u32(fields.count)
        for f in fields {
            string(f.name)
            string(f.value)
        }
        u32(entry.varyValues.count)
        for v in entry.varyValues {
            string(v.name)
            if let value = v.value {
                out.append(1)
                string(value)
            } else {
                out.append(0)
            }
        }
        return out
    }

    public static func decode(_ bytes: some Collection<UInt8>) throws(HTTPContentError) -> CacheEntry {
        var reader = Reader(bytes: Array(bytes))
        guard Array(reader.take(4)) == magic else { throw bad("it does not start with HCE1") }
        let status = try reader.u32()
        guard (100...999).contains(status) else { throw bad("status \(status)") }
        let url = try reader.string()
        let reason = try reader.string()
        let version = try reader.string()
        let requestTime = try reader.f64()
        let responseTime = try reader.f64()
        let size = try reader.i64()
        guard requestTime.isFinite, responseTime.isFinite, size >= 0 else { throw bad("bad times or size") }
        var headers = Headers()
        let count = try reader.u32()
        guard count <= maxCount else { throw bad("\(count) header fields") }
        for _ in 0..<count {
            let name = try reader.string()
            headers.add(name, try reader.string())
        }
        let varyCount = try reader.u32()
        guard varyCount <= maxCount else { throw bad("\(varyCount) vary values") }
        var vary: [CacheEntry.VaryValue] = []
        for _ in 0..<varyCount {
            let name = try reader.string()
            switch reader.take(1).first {
            case 0: vary.append(.init(name: name, value: nil))
            case 1: vary.append(.init(name: name, value: try reader.string()))
            default: throw bad("bad vary flag")
            }
        }
        guard reader.atEnd else { throw bad("trailing bytes") }
        return CacheEntry(url: url, status: status, reason: reason, httpVersion: version, headers: headers,
                          varyValues: vary, requestTime: requestTime, responseTime: responseTime, bodySize: size)
    }

    static func bad(_ why: String) -> HTTPContentError {
        HTTPContentError(.decode, "stored cache entry unreadable: \(why)")
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0
        var atEnd: Bool { at == bytes.count }

        mutating func take(_ n: Int) -> ArraySlice<UInt8> {
            guard n >= 0, n <= bytes.count - at else { at = bytes.count; return [] }
            defer { at += n }
            return bytes[at..<at + n]
        }
        mutating func fixed(_ n: Int) throws(HTTPContentError) -> UInt64 {
            let part = take(n)
            guard part.count == n else { throw CacheEntryCodec.bad("truncated") }
            var v: UInt64 = 0
            for (i, b) in part.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
            return v
        }
        mutating func u32() throws(HTTPContentError) -> Int { Int(try fixed(4)) }
        mutating func f64() throws(HTTPContentError) -> Double { Double(bitPattern: try fixed(8)) }
        mutating func i64() throws(HTTPContentError) -> Int64 { Int64(bitPattern: try fixed(8)) }
        mutating func string() throws(HTTPContentError) -> String {
            let n = try u32()
            let part = take(n)
            guard part.count == n else { throw CacheEntryCodec.bad("truncated string") }
            guard let text = String(validating: part, as: UTF8.self) else { throw CacheEntryCodec.bad("not UTF-8") }
            return text
        }
    }
}
