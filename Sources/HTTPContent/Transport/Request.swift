/// One HTTP request: method, URL, headers, body and per-request overrides of the client's options.
/// What becomes of the response body is decided by the handler passed alongside it.
public struct Request: Sendable {
    /// The method token, sent as given ("GET", "POST", "PROPFIND"...).
    public var method: String
    /// An absolute http:// or https:// URL.
    public var url: String
    /// Header fields sent with the request, after the client's own.
    public var headers: Headers
    /// The body to send and its Content-Type; nil sends none.
    public var body: RequestBody?
    /// This request's overrides of the client's settings (time limits, redirects, proxy...).
    public var options: RequestOptions

    /// A request; nothing is checked or sent until a ``Client`` sends it.
    public init(_ method: String = "GET", _ url: String, headers: Headers = Headers(),
                body: RequestBody? = nil, options: RequestOptions = RequestOptions()) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.options = options
    }

    /// A GET of `url`.
    public static func get(_ url: String, headers: Headers = Headers()) -> Request {
        Request("GET", url, headers: headers)
    }

    /// Checks what would otherwise fail mid-flight or be sent malformed: the method is a token,
    /// the URL is non-empty, free of control bytes and http:// or https://, and no header
    /// carries CR/LF.
    public func validate() throws(HTTPContentError) {
        try validate(urlKnownValid: false)
    }

    /// `validate`, skipping the URL when it is one already checked (the last one sent on the
    /// handle this request will use).
    func validate(urlKnownValid: Bool) throws(HTTPContentError) {
        if method != "GET", method.isEmpty || !method.utf8.allSatisfy(isTokenByte) {
            throw HTTPContentError(.invalidArgument, "invalid method \(quoted(method))")
        }
        if !urlKnownValid, url.isEmpty || !Request.isPrintableASCIIOrUTF8(url) {
            throw HTTPContentError(.invalidArgument, "invalid URL \(quoted(url))")
        }
        if !urlKnownValid { try Request.checkScheme(url) }
        try headers.validate()
        if let proxy = options.proxy { try Request.checkProxy(proxy) }
    }

    /// A proxy is "" (none) or a URL whose scheme libcurl speaks to proxies; control bytes
    /// (a CR/LF smuggled into the CONNECT line) are refused.
    public static func checkProxy(_ proxy: String) throws(HTTPContentError) {
        if proxy.isEmpty { return }
        guard isPrintableASCIIOrUTF8(proxy) else {
            throw HTTPContentError(.invalidArgument, "invalid proxy \(quoted(proxy))")
        }
        let scheme = proxy.lowercased().prefix { $0 != ":" }
        guard proxy.dropFirst(scheme.count).hasPrefix("://"),
              ["http", "https", "socks4", "socks4a", "socks5", "socks5h"].contains(scheme) else {
            throw HTTPContentError(.invalidArgument,
                "invalid proxy \(quoted(proxy)): it must be a URL with scheme http, https, socks4, socks4a, socks5 or socks5h")
        }
    }

    /// Only http:// and https:// are sent. libcurl would refuse other schemes too (its protocol
    /// list is http,https), but as a transport failure after the attempt; naming the scheme
    /// here makes it the caller's argument error, before any connection.
    static func checkScheme(_ url: String) throws(HTTPContentError) {
        let bytes = Array(url.utf8.prefix(9))
        func hasPrefix(_ p: String) -> Bool {
            let p = Array(p.utf8)
            guard bytes.count >= p.count else { return false }
            for i in 0..<p.count where (bytes[i] | (bytes[i] >= 0x41 && bytes[i] <= 0x5A ? 0x20 : 0)) != p[i] {
                return false
            }
            return true
        }
        if hasPrefix("http://") || hasPrefix("https://") { return }
        // RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":".
        let scheme = url.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
        if !scheme.isEmpty, scheme.first!.isLetter, url.dropFirst(scheme.count).hasPrefix(":"),
           !(url.dropFirst(scheme.count + 1).first?.isNumber ?? false) {  // "host:8080" has no scheme
            throw HTTPContentError(.invalidArgument,
                "unsupported URL scheme \(quoted(scheme.lowercased())) in \(quoted(url)): only http and https are allowed")
        }
        throw HTTPContentError(.invalidArgument, "invalid URL \(quoted(url)): it must start with http:// or https://")
    }

    /// No control byte, space or DEL (checked for every request: a plain loop over the bytes).
    private static func isPrintableASCIIOrUTF8(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            for b in bytes where b <= 0x20 || b == 0x7F { return false }
            return true
        }
    }
}

/// Per-request overrides; nil means "use the client's setting". A time limit of `.zero` lifts
/// the client's (no limit for this request).
public struct RequestOptions: Sendable {
    /// Total time allowed for the request (connect + transfer).
    public var timeout: Duration?
    /// Time allowed to establish the connection.
    public var connectTimeout: Duration?
    /// The longest silence allowed between bytes (`ClientConfiguration.readTimeout`).
    public var readTimeout: Duration?
    public var followRedirects: Bool?
    public var maxRedirects: Int?
    /// This request's proxy, as `ClientConfiguration.proxy` (`""`: none); nil: the client's.
    public var proxy: String?
    /// Cookies sent with this request beside the jar's (name, value pairs).
    public var cookies: [(String, String)]?
    /// Credentials for this request instead of the client's.
    public var auth: Auth?
    /// A retry policy for this request instead of the client's.
    public var retry: RetryPolicy?

    // Inlinable: the C ABI makes one per fetch, mostly all nil; called out of line, the
    // optional Auth and RetryPolicy arguments were copied and destroyed (~450 instructions).
    @inlinable
    public init(timeout: Duration? = nil, connectTimeout: Duration? = nil, readTimeout: Duration? = nil,
                followRedirects: Bool? = nil, maxRedirects: Int? = nil, proxy: String? = nil,
                cookies: [(String, String)]? = nil, auth: Auth? = nil, retry: RetryPolicy? = nil) {
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.followRedirects = followRedirects
        self.maxRedirects = maxRedirects
        self.proxy = proxy
        self.cookies = cookies
        self.auth = auth
        self.retry = retry
    }

    /// Options only a reset handle undoes: a request with them is not a plain one.
    var needsFreshHandle: Bool { cookies != nil || auth != nil }
}

/// What a request sends. Builders for forms, JSON, text, files and streams (Bodies/RequestBodies.swift)
/// produce one of these; Bodies/BodyUpload.swift hands it to libcurl.
public enum RequestBody: Sendable {
    /// Bytes sent as they are, with an optional Content-Type (the caller's header wins).
    case bytes([UInt8], contentType: String?)
    /// Bytes read while sending, from a file, a descriptor or a callback: Content-Length when the
    /// size is known, chunked otherwise.
    case stream(UploadSource, contentType: String?)
    /// `multipart/form-data`; libcurl sets the Content-Type with its boundary.
    case multipart(Multipart)

    public var contentType: String? {
        switch self {
        case .bytes(_, let type), .stream(_, let type): return type
        case .multipart: return nil
        }
    }
}
