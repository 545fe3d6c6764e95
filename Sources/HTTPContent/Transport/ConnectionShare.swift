import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// What every easy handle of a client shares, held in one libcurl share handle: TLS sessions (a
/// new connection to a server seen before resumes its session instead of a full handshake) and
/// the DNS cache, and, when the share is a cookie jar's, the cookies.
///
/// Without it each pooled easy handle keeps sessions of its own: a handle new to the pool (a
/// second thread, a batch, an `async` transfer) would pay a full handshake to a server the
/// client has talked to already. Pass one share to several clients (`Client(configuration:
/// cookieJar:share:)`) to let them resume each other's sessions; clients that share a
/// `CookieJar` share its connections' state too. libcurl matches a session to a connection's
/// TLS settings (verification, CA, client certificate...) before it reuses it, so clients of
/// different TLS configurations may share one safely.
public final class ConnectionShare: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
    /// One mutex per kind of data libcurl shares (it locks the share itself too).
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    private let mutexCount = Int(CURL_LOCK_DATA_LAST.rawValue) + 1
    /// Whether this share holds cookies (it is a `CookieJar`'s).
    let holdsCookies: Bool

    /// A share of TLS sessions and DNS entries, for clients without a cookie jar of their own.
    public convenience init() { self.init(cookies: false) }

    /// - Parameter cookies: also share libcurl's cookie store (a `CookieJar`'s share).
    init(cookies: Bool) {
        guard let raw = curl_share_init() else {
            fatalError("httpcontent: curl_share_init failed (out of memory)")
        }
        self.raw = raw
        holdsCookies = cookies
        mutexes = .allocate(capacity: mutexCount)
        for i in 0..<mutexCount { pthread_mutex_init(mutexes + i, nil) }
        _ = hc_curl_share_setopt_ptr(raw, CURLSHOPT_USERDATA, mutexes)
        _ = hc_curl_share_setopt_lock(raw) { _, data, _, user in
            guard let user else { return }
            pthread_mutex_lock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        _ = hc_curl_share_setopt_unlock(raw) { _, data, user in
            guard let user else { return }
            pthread_mutex_unlock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
        }
        // Connections stay in each multi handle's cache (a share's connection cache cannot
        // serve the multi handles of `async` and batches in libcurl 7.88).
        _ = hc_curl_share_setopt_long(raw, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        _ = hc_curl_share_setopt_long(raw, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        if cookies {
            _ = hc_curl_share_setopt_long(raw, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        }
    }

    deinit {
        // Every easy handle attached holds this object (`EasyHandle.share`): none is any more.
        curl_share_cleanup(raw)
        for i in 0..<mutexCount { pthread_mutex_destroy(mutexes + i) }
        mutexes.deallocate()
    }

    /// Attaches an easy handle, which keeps the share alive as long as it lives.
    func attach(_ easy: EasyHandle) throws(HTTPContentError) {
        try easy.set(CURLOPT_SHARE, pointer: UnsafeRawPointer(raw))
        easy.share = self
    }
}
