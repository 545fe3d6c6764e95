import CCurl

/// Transport options users of every peer ask for (httpx, urllib3, requests, niquests), each one
/// libcurl option: nothing here is implemented by hand. Set on `ClientConfiguration.transport`;
/// checked when the client is made (`Client.init` throws `.invalidArgument`).
public struct TransportOptions: Sendable, Equatable {
    /// DNS overrides, as curl's `--resolve`: `"host:port:address[,address...]"`, so that
    /// `https://host:port/` connects to `address` while TLS and the Host header still say
    /// `host` (CURLOPT_RESOLVE). A leading `-` removes an entry, `+` makes it time out. The
    /// entries go into the client's DNS cache, which a shared `ConnectionShare` shares.
    /// Default: none.
    public var resolve: [String] = []
    /// Connect to this Unix domain socket instead of the URL's host and port (which still
    /// name the Host header and, for https, the TLS server name) (CURLOPT_UNIX_SOCKET_PATH).
    /// Default: nil (TCP).
    public var unixSocket: String? = nil
    /// CA certificates to trust, as PEM bytes in memory, instead of the system's and of
    /// `caFile` (CURLOPT_CAINFO_BLOB). Default: nil.
    public var caPEM: [UInt8]? = nil
    /// A client certificate from memory: PEM (certificate, and its key in `clientKeyPEM` or in
    /// the same bytes) or PKCS#12 (key included, `clientCertificatePassword` if it has one)
    /// (CURLOPT_SSLCERT_BLOB, CURLOPT_SSLKEY_BLOB, CURLOPT_SSLCERTTYPE). Default: nil.
    public var clientCertificateBlob: ClientCertificateBlob? = nil
    /// The lowest TLS version accepted (CURLOPT_SSLVERSION). Default: nil, libcurl's (TLS 1.2
    /// with this system's OpenSSL policy).
    public var minimumTLSVersion: TLSVersion? = nil
    /// OpenSSL cipher list for TLS 1.2 and below (CURLOPT_SSL_CIPHER_LIST), and cipher
    /// suites for TLS 1.3 (CURLOPT_TLS13_CIPHERS). Default: nil, OpenSSL's.
    public var ciphers: String? = nil
    /// TLS 1.3 cipher suites, as "TLS_AES_128_GCM_SHA256" (CURLOPT_TLS13_CIPHERS). Default: nil.
    public var tls13Ciphers: String? = nil
    /// Public-key pinning: `"sha256//<base64>;sha256//<base64>"`, or a PEM/DER public key
    /// file; a server whose key matches none fails the transfer (CURLOPT_PINNEDPUBLICKEY,
    /// libcurl's CURLE_SSL_PINNEDPUBKEYNOTMATCH). Default: nil (no pinning).
    public var pinnedPublicKey: String? = nil
    /// How long IPv6 gets before IPv4 is tried too, for a host with both (RFC 8305,
    /// CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS). Default: nil, libcurl's 200 ms.
    public var happyEyeballsTimeout: Duration? = nil
    /// The HTTP versions offered (CURLOPT_HTTP_VERSION). Default: `.http2`, h2 by ALPN over
    /// TLS (HTTP/1.1 over plain http).
    public var httpVersion: HTTPVersion = .http2

    public init() {}

    /// What a client offers (CURL_HTTP_VERSION_*).
    public enum HTTPVersion: Int, Sendable, Equatable {
        /// HTTP/1.1 only: ALPN offers http/1.1. A connection per request then closes cleanly
        /// (nginx 1.22 ends an h2 connection abruptly when it keeps none alive, and OpenSSL 3.0
        /// then forgets its session: BENCHMARKS.md, HTTPS).
        case http1_1 = 2
        /// h2 where ALPN agrees, else HTTP/1.1.
        case http2 = 4
        /// h2 from the first byte, without ALPN or upgrade (h2c servers).
        case http2PriorKnowledge = 5
    }

    /// TLS protocol versions (CURL_SSLVERSION_TLSv1_x).
    public enum TLSVersion: Int, Sendable, Equatable {
        /// TLS 1.0 (CURL_SSLVERSION_TLSv1_0) and the versions after it.
        case tls1_0 = 4
        /// TLS 1.1 and after.
        case tls1_1 = 5
        /// TLS 1.2 and after.
        case tls1_2 = 6
        /// TLS 1.3 only.
        case tls1_3 = 7
    }

    /// A client certificate held in memory.
    public enum ClientCertificateBlob: Sendable, Equatable {
        /// PEM certificate (chain) and its PEM private key; key nil: in `certificate`.
        case pem(certificate: [UInt8], key: [UInt8]?)
        /// A PKCS#12 bundle (certificate and key), with its password if it has one.
        case pkcs12([UInt8], password: String?)
    }

    var isEmpty: Bool { self == TransportOptions() }

    /// Checks what libcurl would only reject at the first request, with a message that says which.
    func validate() throws(HTTPContentError) {
        for entry in resolve {
            let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, !parts[0].isEmpty, Int(parts[1]) != nil, !entry.utf8.contains(0),
                  !entry.utf8.contains(where: { $0 < 0x20 }) else {
                throw HTTPContentError(.invalidArgument, "invalid resolve entry \(quoted(entry)): expected host:port:address")
            }
        }
        for (name, text) in [("Unix socket path", unixSocket), ("cipher list", ciphers),
                             ("TLS 1.3 cipher list", tls13Ciphers), ("pinned public key", pinnedPublicKey)] {
            if let text, text.isEmpty || text.utf8.contains(0) {
                throw HTTPContentError(.invalidArgument, "invalid \(name) \(quoted(text))")
            }
        }
        if let caPEM, caPEM.isEmpty { throw HTTPContentError(.invalidArgument, "empty CA certificate bytes") }
        switch clientCertificateBlob {
        case .pem(let cert, let key)?:
            if cert.isEmpty || key?.isEmpty == true {
                throw HTTPContentError(.invalidArgument, "empty client certificate or key bytes")
            }
        case .pkcs12(let bundle, let password)?:
            if bundle.isEmpty || password?.utf8.contains(0) == true {
                throw HTTPContentError(.invalidArgument, "empty PKCS#12 bytes, or a NUL in its password")
            }
        case nil: break
        }
        if let t = happyEyeballsTimeout, t < .zero {
            throw HTTPContentError(.invalidArgument, "negative happy-eyeballs timeout")
        }
    }
}

/// A client's `TransportOptions` made into what libcurl takes, once per client: the resolve
/// list lives here (libcurl keeps the pointer, not a copy) for as long as a handle uses it.
final class PreparedTransport: @unchecked Sendable {
    let options: TransportOptions
    private let resolveList: UnsafeMutablePointer<curl_slist>?

    init(_ options: TransportOptions) throws(HTTPContentError) {
        try options.validate()
        self.options = options
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for entry in options.resolve { list = curl_slist_append(list, entry) }
        resolveList = list
    }

    deinit { curl_slist_free_all(resolveList) }

    /// Sets the options on a new or reset handle, which keeps this object alive.
    func apply(to easy: EasyHandle) throws(HTTPContentError) {
        let o = options
        easy.transportOptions = self
        if let resolveList { try check(hc_curl_setopt_ptr(easy.raw, CURLOPT_RESOLVE, resolveList), "resolve") }
        if let path = o.unixSocket { try easy.set(CURLOPT_UNIX_SOCKET_PATH, path) }
        if let pem = o.caPEM {
            try check(hc_curl_setopt_blob(easy.raw, CURLOPT_CAINFO_BLOB, pem, pem.count), "CA certificates")
        }
        switch o.clientCertificateBlob {
        case .pem(let cert, let key)?:
            try easy.set(CURLOPT_SSLCERTTYPE, "PEM")
            try check(hc_curl_setopt_blob(easy.raw, CURLOPT_SSLCERT_BLOB, cert, cert.count), "client certificate")
            let k = key ?? cert
            try check(hc_curl_setopt_blob(easy.raw, CURLOPT_SSLKEY_BLOB, k, k.count), "client key")
        case .pkcs12(let bundle, let password)?:
            try easy.set(CURLOPT_SSLCERTTYPE, "P12")
            try check(hc_curl_setopt_blob(easy.raw, CURLOPT_SSLCERT_BLOB, bundle, bundle.count), "PKCS#12 bundle")
            if let password { try easy.set(CURLOPT_KEYPASSWD, password) }
        case nil: break
        }
        if let v = o.minimumTLSVersion { try easy.set(CURLOPT_SSLVERSION, v.rawValue) }
        if let c = o.ciphers { try easy.set(CURLOPT_SSL_CIPHER_LIST, c) }
        if let c = o.tls13Ciphers { try easy.set(CURLOPT_TLS13_CIPHERS, c) }
        if let pins = o.pinnedPublicKey { try easy.set(CURLOPT_PINNEDPUBLICKEY, pins) }
        if let t = o.happyEyeballsTimeout { try easy.set(CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS, milliseconds(t)) }
        if o.httpVersion != .http2 { try easy.set(CURLOPT_HTTP_VERSION, o.httpVersion.rawValue) }
    }

    private func check(_ code: CURLcode, _ what: String) throws(HTTPContentError) {
        guard code == CURLE_OK else {
            throw HTTPContentError(.invalidArgument, "libcurl refused the \(what): \(curlMessage(code))")
        }
    }
}
