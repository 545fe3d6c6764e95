import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One cookie as libcurl's engine keeps it (a line of a Netscape cookie file).
public struct Cookie: Sendable, Equatable {
    public var name: String
    public var value: String
    /// The host the cookie belongs to, without a leading dot.
    public var domain: String
    /// Sent to subdomains of `domain` too (a Domain attribute was given). Default: false.
    public var includeSubdomains: Bool
    public var path: String
    /// Sent over https only.
    public var secure: Bool
    /// Set with HttpOnly (kept by the jar; there is no script here to hide it from).
    public var httpOnly: Bool
    /// Expiry as seconds since 1970; 0 for a session cookie.
    public var expires: Int64

    public init(name: String, value: String, domain: String, includeSubdomains: Bool = false,
                path: String = "/", secure: Bool = false, httpOnly: Bool = false, expires: Int64 = 0) {
        self.name = name
        self.value = value
        self.domain = domain
        self.includeSubdomains = includeSubdomains
        self.path = path
        self.secure = secure
        self.httpOnly = httpOnly
        self.expires = expires
    }

    /// Parses one line of libcurl's cookie list (Netscape format); nil for anything else.
    init?(netscapeLine line: String) {
        var fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 7 else { return nil }
        if fields.count > 7 { fields[6] = fields[6...].joined(separator: "\t") }
        var domain = fields[0]
        let httpOnly = domain.hasPrefix("#HttpOnly_")
        if httpOnly { domain.removeFirst("#HttpOnly_".count) }
        if domain.hasPrefix(".") { domain.removeFirst() }
        self.init(name: fields[5], value: fields[6], domain: domain,
                  includeSubdomains: fields[1] == "TRUE", path: fields[2], secure: fields[3] == "TRUE",
                  httpOnly: httpOnly, expires: Int64(fields[4]) ?? 0)
    }

    /// The line libcurl's CURLOPT_COOKIELIST takes, or an error for a field it would misread.
    func netscapeLine() throws(HTTPContentError) -> String {
        for (label, text) in [("name", name), ("value", value), ("domain", domain), ("path", path)] {
            if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x3B }) {
                throw HTTPContentError(.invalidArgument, "cookie \(label) \(quoted(text)) contains a control character or ';'")
            }
        }
        guard !name.isEmpty, !name.contains("="), !name.contains(" ") else {
            throw HTTPContentError(.invalidArgument, "invalid cookie name \(quoted(name))")
        }
        guard !domain.isEmpty, !domain.contains(" ") else {
            throw HTTPContentError(.invalidArgument, "a cookie needs a domain (the host it is sent to)")
        }
        guard path.hasPrefix("/") else { throw HTTPContentError(.invalidArgument, "a cookie path starts with /") }
        let host = includeSubdomains ? "." + domain : domain
        return "\(httpOnly ? "#HttpOnly_" : "")\(host)\t\(includeSubdomains ? "TRUE" : "FALSE")\t\(path)\t"
            + "\(secure ? "TRUE" : "FALSE")\t\(expires)\t\(name)\t\(value)"
    }
}

/// A client's cookie jar: libcurl's own cookie engine (its secure, domain, path, expiry and
/// public-suffix rules, libpsl included), held in a share handle so that every easy handle of
/// the client, on any thread and in batches, reads and fills the same jar.
///
/// Reading and changing it goes through a helper easy handle attached to the same share
/// (CURLINFO_COOKIELIST, CURLOPT_COOKIELIST). With a `file`, the jar starts from that Netscape
/// cookie file and is written back to it by `save()` and when the jar is released.
public final class CookieJar: @unchecked Sendable {
    let share: UnsafeMutableRawPointer
    /// One mutex per kind of data libcurl shares (it locks the share itself too).
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    private let mutexCount = Int(CURL_LOCK_DATA_LAST.rawValue) + 1
    /// The handle reading and changing the jar; used under `helperLock` only.
    private let helper: UnsafeMutableRawPointer
    private let helperLock = Locked<Void>(())
    /// The Netscape cookie file loaded at start and written by `save()`; nil: none.
    public let file: String?

    /// - Parameter file: a Netscape cookie file to start from (a missing file starts empty) and
    ///   to save to.
    public init(file: String? = nil) throws(HTTPContentError) {
        guard curlGlobalInit == CURLE_OK else {
            throw HTTPContentError(.transport, "libcurl failed to initialise")
        }
        if let file, file.isEmpty || file.utf8.contains(0) {
            throw HTTPContentError(.invalidArgument, "invalid cookie file name \(quoted(file))")
        }
        guard let share = curl_share_init(), let helper = curl_easy_init() else {
            fatalError("httpcontent: curl_share_init failed (out of memory)")
        }
        self.share = share
        self.helper = helper
        self.file = file
        mutexes = .allocate(capacity: mutexCount)
        for i in 0..<mutexCount { pthread_mutex_init(mutexes + i, nil) }
        _ = hc_curl_share_setopt_ptr(share, CURLSHOPT_USERDATA, mutexes)
        _ = hc_curl_share_setopt_lock(share) { _, data, _, user in
            guard let user else { return }
            pthread_mutex_lock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        _ = hc_curl_share_setopt_unlock(share) { _, data, user in
            guard let user else { return }
            pthread_mutex_unlock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        _ = hc_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        _ = hc_curl_setopt_share(helper, share)
        if let file {
            // Loaded now (RELOAD reads the COOKIEFILE list), saved by FLUSH and at cleanup.
            _ = hc_curl_setopt_str(helper, CURLOPT_COOKIEFILE, file)
            _ = hc_curl_setopt_str(helper, CURLOPT_COOKIEJAR, file)
            _ = hc_curl_setopt_str(helper, CURLOPT_COOKIELIST, "RELOAD")
        }
    }

    deinit {
        // The helper writes the file (CURLOPT_COOKIEJAR) as it is cleaned up. Every other easy
        // handle holding this share holds this object too: none is attached any more.
        curl_easy_cleanup(helper)
        curl_share_cleanup(share)
        for i in 0..<mutexCount { pthread_mutex_destroy(mutexes + i) }
        mutexes.deallocate()
    }

    /// Attaches an easy handle to the jar and turns libcurl's cookie engine on for it.
    ///
    /// The engine of a handle is on once libcurl has initialised cookies through it (its
    /// `cookie_engine` state, which curl_easy_reset keeps); joining a share that holds cookies
    /// only points the handle at the shared jar. The usual switch, CURLOPT_COOKIEFILE "", also
    /// leaves the name in a list of cookie files libcurl 7.88 keeps in the handle's options and
    /// reads again before every transfer: curl_easy_reset clears those options without freeing
    /// the list, so each pooled handle reset after it lost that entry (valgrind: 16 + 1 bytes
    /// definitely lost). So, once per handle and before it joins the share: the list is read
    /// at once (COOKIELIST "RELOAD", which initialises the engine on a private, empty jar) and
    /// emptied again (COOKIEFILE NULL, which frees the list and that private jar); then
    /// CURLOPT_SHARE puts the shared jar in its place. No list outlives the call, nothing of
    /// the share is touched outside its lock, and a reset handle only joins the share again.
    func attach(_ easy: EasyHandle) throws(HTTPContentError) {
        if !easy.cookieEngineOn {
            try easy.set(CURLOPT_COOKIEFILE, "")
            try easy.set(CURLOPT_COOKIELIST, "RELOAD")
            _ = hc_curl_setopt_ptr(easy.raw, CURLOPT_COOKIEFILE, nil)
            easy.cookieEngineOn = true
        }
        try easy.set(CURLOPT_SHARE, pointer: UnsafeRawPointer(share))
    }

    // MARK: - Reading and changing

    /// Every cookie in the jar, expired ones left out, in libcurl's order.
    public var all: [Cookie] {
        helperLock.withLock { _ in
            var list: UnsafeMutablePointer<curl_slist>? = nil
            _ = hc_curl_getinfo_slist(helper, CURLINFO_COOKIELIST, &list)
            defer { curl_slist_free_all(list) }
            var cookies: [Cookie] = []
            let now = Int64(time(nil))
            var item = list
            while let node = item {
                if let data = node.pointee.data, let cookie = Cookie(netscapeLine: String(cString: data)),
                   cookie.expires == 0 || cookie.expires > now {
                    cookies.append(cookie)
                }
                item = node.pointee.next
            }
            return cookies
        }
    }

    /// The value of the first cookie named `name` (for `domain` when given).
    public func value(_ name: String, domain: String? = nil) -> String? {
        all.first { $0.name == name && (domain == nil || $0.domain == domain) }?.value
    }

    /// Adds a cookie, or replaces the one with the same name, domain and path.
    public func set(_ cookie: Cookie) throws(HTTPContentError) {
        try command(try cookie.netscapeLine())
    }

    /// Adds the cookies of a `Set-Cookie` header value as received from `domain`.
    public func add(setCookie value: String, domain: String) throws(HTTPContentError) {
        guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }), !domain.isEmpty else {
            throw HTTPContentError(.invalidArgument, "invalid Set-Cookie value or domain")
        }
        var line = "Set-Cookie: \(value)"
        if !value.lowercased().contains("domain=") { line += "; domain=\(domain)" }
        try command(line)
    }

    /// Removes every cookie (`sessionOnly`: only those without an expiry).
    public func clear(sessionOnly: Bool = false) {
        try? command(sessionOnly ? "SESS" : "ALL")
    }

    /// Writes the jar to `path` (default: the jar's `file`) in Netscape format.
    public func save(to path: String? = nil) throws(HTTPContentError) {
        guard let target = path ?? file, !target.isEmpty, !target.utf8.contains(0) else {
            throw HTTPContentError(.invalidArgument, "no cookie file to save to")
        }
        try helperLock.withLock { (_: inout Void) throws(HTTPContentError) in
            _ = hc_curl_setopt_str(helper, CURLOPT_COOKIEJAR, target)
            _ = hc_curl_setopt_str(helper, CURLOPT_COOKIELIST, "FLUSH")
            if let file { _ = hc_curl_setopt_str(helper, CURLOPT_COOKIEJAR, file) }
        }
        // libcurl reports no write failure: check that the file is there.
        guard access(target, F_OK) == 0 else {
            throw HTTPContentError(.localIO, "cannot write the cookie file \(quoted(target))")
        }
    }

    /// Adds the cookies of a Netscape cookie file.
    public func load(from path: String) throws(HTTPContentError) {
        guard !path.isEmpty, !path.utf8.contains(0) else {
            throw HTTPContentError(.invalidArgument, "invalid cookie file name \(quoted(path))")
        }
        guard access(path, R_OK) == 0 else {
            throw HTTPContentError(.localIO, "cannot read the cookie file \(quoted(path)): \(errnoText())")
        }
        helperLock.withLock { _ in
            _ = hc_curl_setopt_str(helper, CURLOPT_COOKIEFILE, path)
            _ = hc_curl_setopt_str(helper, CURLOPT_COOKIELIST, "RELOAD")
        }
    }

    private func command(_ text: String) throws(HTTPContentError) {
        let code = helperLock.withLock { _ in hc_curl_setopt_str(helper, CURLOPT_COOKIELIST, text) }
        guard code == CURLE_OK else {
            throw HTTPContentError(.invalidArgument, "libcurl refused the cookie: \(curlMessage(code))")
        }
    }
}

extension CookieJar {
    /// A Cookie header value ("a=1; b=2") from name, value pairs, checked.
    public static func cookieHeader(_ cookies: [(String, String)]) throws(HTTPContentError) -> String {
        var parts: [String] = []
        for (name, value) in cookies {
            let bad = { (s: String) in s.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0x3B } }
            guard !name.isEmpty, !name.contains("="), !bad(name), !bad(value) else {
                throw HTTPContentError(.invalidArgument, "invalid cookie \(quoted(name))")
            }
            parts.append("\(name)=\(value)")
        }
        return parts.joined(separator: "; ")
    }
}
