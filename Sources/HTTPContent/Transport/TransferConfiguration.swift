import CCurl

// MARK: - Configuration

/// How a transfer configures its easy handle: the client's fixed options once per new or reset
/// handle, then only what differs from the request the handle last served.
extension Transfer {
    /// Configures the handle for this request. A handle reused from a plain request (no body,
    /// GET or HEAD) keeps that request's options: only what differs is set again, and the
    /// client's fixed options are not set at all. A request with a body or another method
    /// leaves the handle to be reset when it returns to the pool.
    /// `defaultLines`: the header lines of a request with no header of its own and no body
    /// (`Client.defaultHeaderLines`).
    /// `defaultTimeoutMs`, `defaultConnectTimeoutMs`: the configuration's limits in
    /// milliseconds, when the caller has them converted already.
    /// `direct`: the environment names no proxy (`ProxyEnvironment`), so libcurl need not look.
    func configure(_ config: ClientConfiguration, defaultLines: [String]? = nil,
                   defaultTimeoutMs: Int? = nil, defaultConnectTimeoutMs: Int? = nil,
                   direct: Bool = false, buffers: TransferBuffers = TransferBuffers(receive: 0, upload: 0),
                   jar: CookieJar? = nil, share: ConnectionShare? = nil,
                   transport: PreparedTransport? = nil) throws(HTTPContentError) {
        let opts = request.options
        // A request of its own proxy leaves the handle to be reset, as one with a body does.
        let plain = request.body == nil && (request.method == "GET" || request.method == "HEAD")
            && opts.proxy == nil
            && !opts.needsFreshHandle
        easy.reusable = false
        easy.errorBuffer[0] = 0
        // Taken out (moved, not copied): the handle records nothing until configured again.
        var previous = easy.applied.take()
        if !plain, previous != nil {
            // What this request sets is undone only by a reset: start from libcurl's defaults.
            easy.reset()
            previous = nil
        }
        if previous == nil {
            try configureFixed(config, direct: direct, jar: jar, share: share)
            try transport?.apply(to: easy)
        }
        if let proxy = opts.proxy {
            try easy.set(CURLOPT_PROXY, proxy)
            if config.noProxy == nil { try easy.set(CURLOPT_NOPROXY, "") }
        }
        if !plain { try configureSession(opts) }

        if previous?.url != request.url {
            try easy.setURL(request.url)
            let wait = Transfer.mayMultiplex(request.url)
            if wait != (previous.map { Transfer.mayMultiplex($0.url) } ?? false) {
                try easy.set(CURLOPT_PIPEWAIT, wait)
            }
        }
        // Set only when they differ from the handle's: a reset handle has libcurl's defaults.
        let had = previous?.buffers ?? TransferBuffers(receive: 0, upload: 0)
        if had.receive != buffers.receive {
            try easy.set(CURLOPT_BUFFERSIZE, buffers.receive == 0 ? 16 * 1024 : buffers.receive)
        }
        if had.upload != buffers.upload {
            try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, buffers.upload == 0 ? 64 * 1024 : buffers.upload)
        }
        let follow = opts.followRedirects ?? config.followRedirects
        followsRedirects = follow
        if previous?.followRedirects != follow { try easy.set(CURLOPT_FOLLOWLOCATION, follow) }
        let maxRedirects = opts.maxRedirects ?? config.maxRedirects
        if previous?.maxRedirects != maxRedirects { try easy.set(CURLOPT_MAXREDIRS, maxRedirects) }
        let timeout = opts.timeout.map(milliseconds)
            ?? defaultTimeoutMs ?? config.timeout.map(milliseconds) ?? 0
        if previous?.timeoutMs ?? 0 != timeout { try easy.set(CURLOPT_TIMEOUT_MS, timeout) }
        let connectTimeout = opts.connectTimeout.map(milliseconds)
            ?? defaultConnectTimeoutMs ?? config.connectTimeout.map(milliseconds) ?? 0
        if previous?.connectTimeoutMs ?? 0 != connectTimeout {
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeout)
        }
        if let read = opts.readTimeout ?? config.readTimeout, read > .zero {
            readTimeoutNs = UInt64(clamping: read.components.seconds) &* 1_000_000_000
                &+ UInt64(clamping: read.components.attoseconds / 1_000_000_000)
        }

        // Method and body. A plain GET or HEAD can be switched back and forth; anything else
        // is undone by a reset.
        let head = request.method == "HEAD"
        if plain {
            if previous == nil ? head : previous!.head != head {
                try easy.set(head ? CURLOPT_NOBODY : CURLOPT_HTTPGET, true)
            }
        } else {
            upload = try BodyUpload.configure(request, on: easy)
        }
        let lines = try headerLines(config, defaultLines)
        if previous?.headerLines != lines { try setHeaders(lines) }

        easy.transfer = Unmanaged.passUnretained(self)
        let wantsProgress = progress != nil || cancel?.isPolled == true || pauseAware != nil
        if wantsProgress {
            if previous?.progress != true {
                _ = hc_curl_setopt_xferinfo_cb(easy.raw, transferProgressCallback)
                try easy.set(CURLOPT_NOPROGRESS, false)
            }
        } else if previous?.progress == true {
            try easy.set(CURLOPT_NOPROGRESS, true)
        }
        if plain {
            easy.applied = AppliedOptions(url: request.url, buffers: buffers, followRedirects: follow,
                                          maxRedirects: maxRedirects, timeoutMs: timeout,
                                          connectTimeoutMs: connectTimeout, head: head,
                                          progress: wantsProgress, headerLines: lines)
            easy.reusable = true
        }
    }

    /// Whether a transfer to `url` may be multiplexed: https, where ALPN can pick HTTP/2 (plain
    /// http:// is HTTP/1.1). Such a transfer waits (CURLOPT_PIPEWAIT), in a batch, for a
    /// connection to its host still being made to say whether it multiplexes, rather than
    /// opening its own: 40 transfers at once then share one h2 connection instead of making 40.
    /// Not set for http://, which is HTTP/1.1 here and has nothing to wait for.
    static func mayMultiplex(_ url: String) -> Bool {
        var scheme = url.utf8.prefix(6).makeIterator()
        for expected in "https:".utf8 {
            guard let c = scheme.next() else { return false }
            let lowered = c >= 0x41 && c <= 0x5A ? c | 0x20 : c  // ASCII letters only
            guard lowered == expected else { return false }
        }
        return true
    }

    /// libcurl is built on OpenSSL, whose SSL_CTX `hc_curl_setopt_allow_tickets` changes.
    static let openSSL = hc_curl_ssl_is_openssl() != 0
    /// libcurl's built-in CA bundle (CURLINFO_CAINFO) exists: it is the system's store.
    static let defaultCAFile = hc_curl_default_cainfo_exists() != 0

    /// The options that depend only on the client's configuration, set on a new or reset handle.
    private func configureFixed(_ config: ClientConfiguration, direct: Bool, jar: CookieJar?,
                                share: ConnectionShare?) throws(HTTPContentError) {
        try easy.set(CURLOPT_NOSIGNAL, true)
        if let jar {
            try jar.attach(easy)
            easy.jar = jar
        } else if let share {
            try share.attach(easy)
        }
        try config.auth?.configure(easy)
        if let proxy = config.proxy {
            // Said by the caller: the environment is not consulted (no_proxy neither).
            try easy.set(CURLOPT_PROXY, proxy)
            try easy.set(CURLOPT_NOPROXY, config.noProxy ?? "")
        } else if direct {
            // What libcurl would find in the environment, said once: it skips its reads.
            try easy.set(CURLOPT_PROXY, "")
            try easy.set(CURLOPT_NOPROXY, config.noProxy ?? "")
        } else if let noProxy = config.noProxy {
            try easy.set(CURLOPT_NOPROXY, noProxy)
        }
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        if let low = config.lowSpeedLimit {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, low.bytesPerSecond)
            try easy.set(CURLOPT_LOW_SPEED_TIME, low.seconds)
        }
        try easy.set(CURLOPT_SSL_VERIFYPEER, config.verify)
        try easy.set(CURLOPT_SSL_VERIFYHOST, config.verify ? 2 : 0)
        if let ca = config.caFile { try easy.set(CURLOPT_CAINFO, ca) }
        if config.caFile != nil || Transfer.defaultCAFile {
            // A CA file alone, no CA directory: libcurl 7.87+ then keeps the parsed store
            // (CURLOPT_CA_CACHE_TIMEOUT, a day) for every connection of the handle's multi
            // handle. With a directory too (Debian's libcurl has both by default) it parses the
            // whole bundle again for every new connection: ~10x fewer handshakes a second
            // with the system's 140 certificates (BENCHMARKS.md, HTTPS). The caller's file is
            // meant "instead of the system's"; the system's directory holds its bundle's
            // certificates (update-ca-certificates writes both).
            _ = hc_curl_setopt_ptr(easy.raw, CURLOPT_CAPATH, nil)
        }
        if config.tlsSessionTickets, Transfer.openSSL { _ = hc_curl_setopt_allow_tickets(easy.raw) }
        if let cert = config.clientCertificate {
            try easy.set(CURLOPT_SSLCERT, cert)
            if let key = config.clientKey { try easy.set(CURLOPT_SSLKEY, key) }
        }
        if config.acceptCompressed { try easy.set(CURLOPT_ACCEPT_ENCODING, "") }
        try easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, true)
        // The User-Agent as libcurl's option, not a line of the header list: a request with no
        // header of its own then needs no list at all. A request's own User-Agent header (in
        // the list) overrides it.
        if !config.userAgent.isEmpty { try easy.set(CURLOPT_USERAGENT, config.userAgent) }
        _ = hc_curl_setopt_data_cb(easy.raw, CURLOPT_WRITEFUNCTION, transferWriteCallback)
        _ = hc_curl_setopt_data_cb(easy.raw, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
        // The callbacks' userdata is the handle, not the transfer: set once, not per request.
        let handle = UnsafeRawPointer(Unmanaged.passUnretained(easy).toOpaque())
        try easy.set(CURLOPT_WRITEDATA, pointer: handle)
        try easy.set(CURLOPT_HEADERDATA, pointer: handle)
        try easy.set(CURLOPT_XFERINFODATA, pointer: handle)
    }

    /// The session options of one request (Sources/HTTPContent/Session), on a handle that is
    /// reset when it returns to the pool.
    private func configureSession(_ opts: RequestOptions) throws(HTTPContentError) {
        if let cookies = opts.cookies, !cookies.isEmpty {
            try easy.set(CURLOPT_COOKIE, try CookieJar.cookieHeader(cookies))
        }
        try opts.auth?.configure(easy)
    }

    /// The header lines of a request with no header of its own and no body, or nil when the
    /// configuration's headers are invalid (each request then fails as it would anyway).
    static func defaultHeaderLines(_ config: ClientConfiguration) -> [String]? {
        try? headerLines(Request("GET", "http://localhost/"), upload: nil, config)
    }

    private func headerLines(_ config: ClientConfiguration, _ defaultLines: [String]?) throws(HTTPContentError) -> [String] {
        // The common case, no header of the request's own and no body: the client's lines,
        // made once per client.
        if request.body == nil, request.headers.count == 0, let defaultLines { return defaultLines }
        return try Transfer.headerLines(request, upload: upload, config)
    }

    /// The request header lines as libcurl takes them: the request's own, then the client's,
    /// and the body's type unless the request set it. The User-Agent is an option of the
    /// handle (`configureFixed`); only an empty one is sent as a line.
    private static func headerLines(_ request: Request, upload: BodyUpload?,
                                    _ config: ClientConfiguration) throws(HTTPContentError) -> [String] {
        var headers = request.headers
        for field in config.headers where !headers.contains(field.name) {
            headers.add(field.name, field.value)
        }
        if !headers.contains("User-Agent") {
            if config.userAgent.isEmpty {
                headers.add("User-Agent", "")
            } else {
                try Headers.validate(name: "User-Agent", value: config.userAgent)
            }
        }
        if let type = upload?.contentType, !headers.contains("Content-Type") {
            headers.add("Content-Type", type)
        }
        // A POST body of more than 1 MiB makes libcurl wait for 100-continue; we send at once.
        if request.body != nil, !headers.contains("Expect") { headers.add("Expect", "") }
        try headers.validate()
        var lines: [String] = []
        lines.reserveCapacity(headers.count + 1)
        for field in headers {
            // "Name:" alone removes a header libcurl would add; "Name;" sends it empty.
            lines.append(field.value.isEmpty && field.name.lowercased() != "expect"
                ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        // libcurl would label a POST without a type as a form: "Content-Type:" removes that.
        if upload?.removesDefaultContentType == true, !headers.contains("Content-Type") {
            lines.append("Content-Type:")
        }
        return lines
    }

    private func setHeaders(_ lines: [String]) throws(HTTPContentError) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                throw HTTPContentError(.invalidArgument, "could not add header \(line.prefix { $0 != ":" && $0 != ";" })")
            }
            list = appended
        }
        try easy.setHeaderList(list)
    }
}
