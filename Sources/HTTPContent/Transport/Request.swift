/// One HTTP request: method, URL, headers, body and per-request overrides of the client's options.
/// What becomes of the response body is decided by the handler passed alongside it.
public struct Request: Sendable {
    public var method: String
    public var url: String
    public var headers: Headers
    public var body: RequestBody?
    public var options: RequestOptions

    public init(_ method: String = "GET", _ url: String, headers: Headers = Headers(),
                body: RequestBody? = nil, options: RequestOptions = RequestOptions()) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.options = options
    }

    public static func get(_ url: String, headers: Headers = Headers()) -> Request {
        Request("GET", url, headers: headers)
    }

    /// Checks what would otherwise fail mid-flight or be sent malformed: the method is a token,
    /// the URL is non-empty and free of control bytes, and no header carries CR/LF.
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
        try headers.validate()
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

/// Per-request overrides; nil means "use the client's setting".
public struct RequestOptions: Sendable {
    /// Total time allowed for the request (connect + transfer).
    public var timeout: Duration?
    public var connectTimeout: Duration?
    public var followRedirects: Bool?
    public var maxRedirects: Int?

    public init(timeout: Duration? = nil, connectTimeout: Duration? = nil,
                followRedirects: Bool? = nil, maxRedirects: Int? = nil) {
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.followRedirects = followRedirects
        self.maxRedirects = maxRedirects
    }
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
