#if canImport(Glibc)
import Glibc
#endif

/// RFC 9111 as pure functions of a request, a stored entry and the clock: what may be stored,
/// how long it stays fresh, how old it is, which stored variant a request may use, and what
/// to do with it. No I/O here: `CachedSend` asks these and acts on the answers, so every rule
/// is testable with a head and a number.
public enum CachePolicy {
    /// Status codes a cache may store and give heuristic freshness to (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Status codes this cache understands well enough to store (with explicit freshness).
    static let understood: Set<Int> = heuristicallyCacheable.union([302, 303, 307, 400, 401, 403, 500, 502, 503, 504])

    // MARK: - Storing (§3)

    /// Whether a response to `request` may be stored.
    /// - Parameters:
    ///   - method: the request method; only GET responses are stored (HEAD is served from them).
    ///   - requestHeaders: the request's fields (its `no-store`, `Authorization` in shared mode).
    ///   - head: the response (status, fields).
    ///   - shared: a shared cache (`private` and `Authorization` then forbid storing).
    public static func isStorable(method: String, requestHeaders: Headers, head: ResponseHead, shared: Bool) -> Bool {
        guard method == "GET", head.status >= 200, head.status != 206, head.status != 304,
              understood.contains(head.status) else { return false }
        let response = CacheControl(head.headers)
        if response.noStore || CacheControl(requestHeaders).noStore { return false }
        if response.mustUnderstand && !understood.contains(head.status) { return false }
        if shared && response.isPrivate { return false }
        if shared && requestHeaders.contains("authorization")
            && !(response.mustRevalidate || response.isPublic || response.sharedMaxAge != nil) { return false }
        if head.headers.values(for: "vary").contains(where: { $0.contains("*") }) { return false }
        return response.isPublic || (!shared && response.isPrivate) || response.maxAge != nil
            || (shared && response.sharedMaxAge != nil) || head.headers.contains("expires")
            || heuristicallyCacheable.contains(head.status) || response.noCache
    }

    // MARK: - Freshness (§4.2)

    /// How long the stored response stays fresh after it was generated, in seconds.
    public static func freshnessLifetime(_ entry: CacheEntry, shared: Bool) -> Double {
        let cc = CacheControl(entry.headers)
        if shared, let s = cc.sharedMaxAge { return Double(s) }
        if let m = cc.maxAge { return Double(m) }
        if entry.headers.contains("expires") {
            // Invalid, or several lines of it: already stale (§5.3).
            let lines = entry.headers.values(for: "expires")
            guard lines.count == 1, let when = CachePolicy.date(lines[0]) else { return 0 }
            let date = entry.headers["date"].flatMap(CachePolicy.date) ?? entry.responseTime
            return max(0, when - date)
        }
        // Heuristic freshness (§4.2.2): 10% of the time since Last-Modified, for the status codes
        // the RFC allows, and only when no explicit freshness was given.
        if heuristicallyCacheable.contains(entry.status) || cc.isPublic,
           let lm = entry.headers["last-modified"].flatMap(CachePolicy.date) {
            let date = entry.headers["date"].flatMap(CachePolicy.date) ?? entry.responseTime
            return max(0, (date - lm) / 10)
        }
        return 0
    }

    /// The stored response's current age in seconds at `now` (§4.2.3).
    public static func currentAge(_ entry: CacheEntry, now: Double) -> Double {
        let dateValue = entry.headers["date"].flatMap(CachePolicy.date) ?? entry.responseTime
        let ageValue = entry.headers["age"].map { Double(CacheControl.seconds($0.trimmingSpaces())) } ?? 0
        let apparent = max(0, entry.responseTime - dateValue)
        let delay = max(0, entry.responseTime - entry.requestTime)
        let correctedInitial = max(apparent, ageValue + delay)
        return correctedInitial + max(0, now - entry.responseTime)
    }

    // MARK: - Choosing (§4.1)

    /// The values `request` has for the fields `vary` names: the secondary key of a response
    /// stored for it. Several lines of one field are joined with ", ", spaces trimmed.
    public static func varyValues(varyHeader: [String], request: Headers) -> [CacheEntry.VaryValue] {
        var names: [String] = []
        for line in varyHeader {
            for part in line.split(separator: ",") {
                let name = String(part).trimmingSpaces().lowercased()
                if !name.isEmpty && !names.contains(name) { names.append(name) }
            }
        }
        return names.sorted().map { name in
            let values = request.values(for: name).map { $0.trimmingSpaces() }
            return CacheEntry.VaryValue(name: name, value: values.isEmpty ? nil : values.joined(separator: ", "))
        }
    }

    /// Whether the stored entry may answer `request` as far as `Vary` goes: every field it names
    /// has the same value (or is absent in both). `Vary: *` never matches.
    public static func varyMatches(_ entry: CacheEntry, request: Headers) -> Bool {
        let vary = entry.headers.values(for: "vary")
        if vary.contains(where: { $0.contains("*") }) { return false }
        return varyValues(varyHeader: vary, request: request) == entry.varyValues
    }

    // MARK: - Deciding (§4, RFC 5861)

    /// What to do with a stored response for a request.
    public enum Decision: Equatable, Sendable {
        /// Serve it: fresh, or stale within what the request allows (`stale`: say so).
        case serve(stale: Bool)
        /// Serve it now and revalidate it in the background (`stale-while-revalidate`).
        case serveAndRevalidate
        /// Ask the origin with these conditional headers (may be empty: no validator).
        case validate
    }

    /// Decides whether `entry` answers `request` directly, stale, or after validation.
    public static func decide(_ entry: CacheEntry, request: Headers, now: Double, shared: Bool) -> Decision {
        let req = requestDirectives(request)
        let res = CacheControl(entry.headers)
        if req.noCache || res.noCache { return .validate }
        let age = currentAge(entry, now: now)
        let lifetime = freshnessLifetime(entry, shared: shared)
        var fresh = age < lifetime
        if let maxAge = req.maxAge, age > Double(maxAge) { fresh = false }
        if let minFresh = req.minFresh, lifetime - age < Double(minFresh) { fresh = false }
        if fresh { return .serve(stale: false) }
        let staleness = age - lifetime
        let mustRevalidate = res.mustRevalidate || (shared && (res.proxyRevalidate || res.sharedMaxAge != nil))
        if !mustRevalidate {
            if let maxStale = req.maxStale, staleness <= Double(maxStale), req.maxAge.map({ age <= Double($0) }) ?? true {
                return .serve(stale: true)
            }
            if let swr = res.staleWhileRevalidate, staleness <= Double(swr), req.maxAge == nil, req.minFresh == nil {
                return .serveAndRevalidate
            }
        }
        return .validate
    }

    /// Whether a stale entry may answer instead of an error (a 5xx or no response at all):
    /// `stale-if-error` in the response or the request (RFC 5861 §4), unless it must revalidate.
    public static func mayServeOnError(_ entry: CacheEntry, request: Headers, now: Double, shared: Bool) -> Bool {
        let res = CacheControl(entry.headers)
        if res.mustRevalidate || (shared && res.proxyRevalidate) { return false }
        let staleness = currentAge(entry, now: now) - freshnessLifetime(entry, shared: shared)
        let window = max(res.staleIfError ?? -1, requestDirectives(request).staleIfError ?? -1)
        return window >= 0 && staleness <= Double(window)
    }

    /// The request's directives; `Pragma: no-cache` counts as `no-cache` when there is no
    /// `Cache-Control` (RFC 9111 §5.4).
    public static func requestDirectives(_ request: Headers) -> CacheControl {
        var cc = CacheControl(request)
        if !request.contains("cache-control"),
           request.values(for: "pragma").contains(where: { $0.lowercased().contains("no-cache") }) {
            cc.noCache = true
        }
        return cc
    }

    // MARK: - Validating (§4.3)

    /// The conditional fields that validate `entry`: `If-None-Match` from its ETag,
    /// `If-Modified-Since` from its Last-Modified (or, failing that, nothing).
    public static func conditionalHeaders(_ entry: CacheEntry) -> [(String, String)] {
        var out: [(String, String)] = []
        if let etag = entry.headers["etag"] { out.append(("If-None-Match", etag)) }
        if let lm = entry.headers["last-modified"] { out.append(("If-Modified-Since", lm)) }
        return out
    }

    /// Whether a request carries conditional fields of its own that the cache may evaluate
    /// against a stored response (§4.3.2: `If-None-Match`, `If-Modified-Since`).
    public static func hasOwnValidation(_ request: Headers) -> Bool {
        request.contains("if-none-match") || request.contains("if-modified-since")
    }

    /// §4.3.2 with RFC 9110 §13.1.2 and §13.1.3 for GET and HEAD: whether the request's own
    /// conditional fields find `entry` not modified (the cache then answers 304). `If-None-Match`
    /// takes precedence: `*`, or one of its entity-tags equal to the stored ETag by weak
    /// comparison; without it, `If-Modified-Since` at or after the stored Last-Modified (else
    /// the stored Date). A field that does not parse never matches.
    public static func notModified(_ entry: CacheEntry, request: Headers) -> Bool {
        let inm = request.values(for: "if-none-match")
        if !inm.isEmpty {
            guard let stored = entry.headers["etag"].map(weakTag) else {
                return inm.contains { $0.trimmingSpaces() == "*" }
            }
            for line in inm {
                for tag in line.split(separator: ",") {
                    let t = String(tag).trimmingSpaces()
                    if t == "*" || weakTag(t) == stored { return true }
                }
            }
            return false
        }
        guard let since = request["if-modified-since"].flatMap(date),
              let modified = (entry.headers["last-modified"] ?? entry.headers["date"]).flatMap(date) else { return false }
        return modified <= since
    }

    /// An entity-tag's opaque part for weak comparison (RFC 9110 §8.8.3.2): without `W/`.
    private static func weakTag(_ tag: String) -> String {
        let t = tag.trimmingSpaces()
        return t.hasPrefix("W/") ? String(t.dropFirst(2)) : t
    }

    /// The fields of the 304 a cache sends for `entry` (RFC 9110 §15.4.5): those a 200 would
    /// carry that describe the validators and freshness, nothing of the body.
    public static func notModifiedHeaders(_ entry: CacheEntry) -> Headers {
        var out = Headers()
        for f in entry.headers.fields where notModifiedFields.contains(f.name.lowercased()) {
            out.add(f.name, f.value)
        }
        if !entry.headers.contains("etag"), let lm = entry.headers["last-modified"] { out.add("Last-Modified", lm) }
        return out
    }

    static let notModifiedFields: Set<String> = ["cache-control", "content-location", "date", "etag", "expires", "vary"]

    /// Fields a 304 never replaces (they describe the stored body, §3.2).
    static let keptOn304: Set<String> = ["content-length", "content-encoding", "transfer-encoding",
                                         "content-range", "connection", "keep-alive"]

    /// The stored entry updated by a 304 (§3.2, §4.3.4): each field the 304 carries replaces the
    /// stored fields of that name, and the clock readings are those of the validation.
    public static func merge304(_ entry: CacheEntry, with head: ResponseHead, requestTime: Double,
                                responseTime: Double) -> CacheEntry {
        var updated = entry
        var headers = entry.headers
        let fresh = head.headers.fields.filter { !keptOn304.contains($0.name.lowercased()) }
        var replaced = Set<String>()
        for f in fresh where replaced.insert(f.name.lowercased()).inserted { headers.remove(f.name) }
        for f in fresh { headers.add(f.name, f.value) }
        updated.headers = headers
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// Whether a 304 may update `entry` (§4.3.4): its strong ETag, if any, must be the stored one.
    public static func validates(_ head: ResponseHead, _ entry: CacheEntry) -> Bool {
        guard let etag = head.headers["etag"], let stored = entry.headers["etag"] else { return true }
        func opaque(_ t: String) -> String { t.hasPrefix("W/") ? String(t.dropFirst(2)) : t }
        return opaque(etag.trimmingSpaces()) == opaque(stored.trimmingSpaces())
    }

    /// §4.3.5: whether a 200 answer to HEAD may update the stored GET response `entry` (its
    /// fields merged as a 304's are): the validators it carries must be the stored ones, and
    /// so must its length when neither has a validator.
    public static func headUpdates(_ head: ResponseHead, _ entry: CacheEntry) -> Bool {
        guard head.status == 200 else { return false }
        if let etag = head.headers["etag"], let stored = entry.headers["etag"] {
            return etag.trimmingSpaces() == stored.trimmingSpaces()
        }
        if let lm = head.headers["last-modified"], let stored = entry.headers["last-modified"] {
            return lm.trimmingSpaces() == stored.trimmingSpaces()
        }
        if let length = head.headers["content-length"], let stored = entry.headers["content-length"] {
            return length.trimmingSpaces() == stored.trimmingSpaces()
        }
        return true
    }

    // MARK: - Invalidating (§4.4)

    /// Methods whose non-error responses invalidate what is stored for the target URI.
    public static func isUnsafe(_ method: String) -> Bool {
        !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method)
    }

    /// The URLs an unsafe request's response invalidates: the target, and its `Location` and
    /// `Content-Location` when they name the same origin.
    public static func invalidatedURLs(target: String, head: ResponseHead) -> [String] {
        guard (200..<400).contains(head.status) else { return [] }
        var urls = [target]
        let origin = CachePolicy.origin(of: target)
        for name in ["location", "content-location"] {
            guard let value = head.headers[name]?.trimmingSpaces(), !value.isEmpty else { continue }
            let absolute = resolve(value, against: target)
            if CachePolicy.origin(of: absolute) == origin, !urls.contains(absolute) { urls.append(absolute) }
        }
        return urls
    }

    /// `scheme://authority` of an absolute URL (lowercased), or "" when it has none.
    static func origin(of url: String) -> String {
        let bytes = Array(url.utf8)
        guard let colon = bytes.indices.first(where: { i in
            i + 2 < bytes.count && bytes[i] == 0x3A && bytes[i + 1] == 0x2F && bytes[i + 2] == 0x2F
        }) else { return "" }
        var end = colon + 3
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
        return String(decoding: bytes[..<end], as: UTF8.self).lowercased()
    }

    /// A Location value made absolute: as is when it has a scheme, else on the target's origin
    /// (an absolute path) or beside the target's path (a relative one).
    static func resolve(_ reference: String, against base: String) -> String {
        if reference.contains("://") { return reference }
        let origin = CachePolicy.origin(of: base)
        if reference.hasPrefix("/") { return origin + reference }
        let path = base.dropFirst(origin.count).prefix { $0 != "?" && $0 != "#" }
        let dir = path.lastIndex(of: "/").map { path[...$0] } ?? "/"
        return origin + dir + reference
    }

    /// An HTTP-date (RFC 9110 §5.6.7) as seconds since 1970: the IMF-fixdate exactly
    /// ("Sun, 06 Nov 1994 08:49:37 GMT"), and the obsolete RFC 850 ("Sunday, 06-Nov-94 08:49:37
    /// GMT") and asctime ("Sun Nov  6 08:49:37 1994") forms a recipient must read. Anything else
    /// (a missing comma, doubled spaces, a one-digit hour, a lowercase month) is invalid: nil.
    public static func date(_ text: String) -> Double? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let b = Array(text.utf8)
        func digits(_ r: Range<Int>) -> Int? {
            guard r.upperBound <= b.count, r.allSatisfy({ b[$0] >= 0x30 && b[$0] <= 0x39 }) else { return nil }
            return r.reduce(0) { $0 * 10 + Int(b[$1] - 0x30) }
        }
        func word(_ r: Range<Int>) -> String { r.upperBound <= b.count ? String(decoding: b[r], as: UTF8.self) : "" }
        func clock(_ at: Int) -> (Int, Int, Int)? {
            guard at + 8 <= b.count, b[at + 2] == 0x3A, b[at + 5] == 0x3A,
                  let h = digits(at..<at + 2), let m = digits(at + 3..<at + 5), let s = digits(at + 6..<at + 8) else { return nil }
            return (h, m, s)
        }
        var day = 0, month = -1, year = 0, time: (Int, Int, Int)?
        if b.count == 29, b[3] == 0x2C, word(25..<29) == " GMT" {           // IMF-fixdate
            day = digits(5..<7) ?? 0
            month = months.firstIndex(of: word(8..<11)) ?? -1
            year = digits(12..<16) ?? 0
            time = clock(17)
            guard b[4] == 0x20, b[7] == 0x20, b[11] == 0x20, b[16] == 0x20 else { return nil }
        } else if let comma = b.firstIndex(of: 0x2C), b.count == comma + 24, word(comma + 20..<comma + 24) == " GMT" {
            let at = comma + 2                                                // RFC 850
            guard b[comma + 1] == 0x20, b[at + 2] == 0x2D, b[at + 6] == 0x2D, b[at + 9] == 0x20 else { return nil }
            day = digits(at..<at + 2) ?? 0
            month = months.firstIndex(of: word(at + 3..<at + 6)) ?? -1
            year = (digits(at + 7..<at + 9) ?? 0) + 1900
            if year < 1970 { year += 100 }
            time = clock(at + 10)
        } else if b.count == 24, b[3] == 0x20, b[7] == 0x20, b[10] == 0x20, b[19] == 0x20 {  // asctime
            day = b[8] == 0x20 ? (digits(9..<10) ?? 0) : (digits(8..<10) ?? 0)
            month = months.firstIndex(of: word(4..<7)) ?? -1
            year = digits(20..<24) ?? 0
            time = clock(11)
        } else {
            return nil
        }
        guard let (h, m, s) = time, month >= 0, (1...31).contains(day), year >= 1970, h < 24, m < 60, s < 61 else { return nil }
        var t = tm()
        t.tm_year = Int32(year - 1900)
        t.tm_mon = Int32(month)
        t.tm_mday = Int32(day)
        t.tm_hour = Int32(h)
        t.tm_min = Int32(m)
        t.tm_sec = Int32(s)
        return Double(timegm(&t))
    }

    /// Hop-by-hop fields (RFC 9110 §7.6.1) and the ones a `Connection` field names: never stored.
    static func hopByHop(_ headers: Headers) -> Set<String> {
        var names: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
                                  "proxy-authenticate", "proxy-authentication-info", "trailer"]
        for line in headers.values(for: "connection") {
            for part in line.split(separator: ",") { names.insert(String(part).trimmingSpaces().lowercased()) }
        }
        return names
    }

    /// The seconds since 1970 now (the clock the age calculation reads).
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
