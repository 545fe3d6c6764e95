/// What is known of a response once its headers are complete: enough for a handler to decide
/// whether to take the body.
public struct ResponseHead: Sendable {
    /// The fields live in one shared, copy-on-write box: a head is copied into the handler, the
    /// response and any error made from it, and each copy is one reference, not six.
    private final class Storage: CopyOnWriteStorage, @unchecked Sendable {
        var status: Int
        var reason: String
        var httpVersion: String
        var headers: Headers
        var url: String
        var method: String
        var bodyEnded = false
        var redirectNotFollowed = false
        var history: [ResponseHead] = []
        var cacheStatus: CacheStatus?

        init(status: Int, reason: String, httpVersion: String, headers: Headers, url: String, method: String) {
            self.status = status
            self.reason = reason
            self.httpVersion = httpVersion
            self.headers = headers
            self.url = url
            self.method = method
        }

        func copy() -> Storage {
            let other = Storage(status: status, reason: reason, httpVersion: httpVersion, headers: headers,
                                url: url, method: method)
            other.bodyEnded = bodyEnded
            other.redirectNotFollowed = redirectNotFollowed
            other.history = history
            other.cacheStatus = cacheStatus
            return other
        }
    }

    private var box: CopyOnWrite<Storage>

    /// The final response's status code (after redirects).
    public var status: Int {
        get { box.value.status }
        set { box.unique.status = newValue }
    }
    /// The reason phrase from the status line (empty for HTTP/2 and later).
    public var reason: String {
        get { box.value.reason }
        set { box.unique.reason = newValue }
    }
    /// `HTTP/1.1`, `HTTP/2`…
    public var httpVersion: String {
        get { box.value.httpVersion }
        set { box.unique.httpVersion = newValue }
    }
    /// The final response's headers, in order.
    public var headers: Headers {
        get { box.value.headers }
        set { box.unique.headers = newValue }
    }
    /// The URL the final response came from (after redirects).
    public var url: String {
        get { box.value.url }
        set { box.unique.url = newValue }
    }
    /// The request's method.
    public var method: String {
        get { box.value.method }
        set { box.unique.method = newValue }
    }

    /// A head made of its parts (the client makes them from what libcurl received).
    public init(status: Int, reason: String = "", httpVersion: String = "HTTP/1.1",
                headers: Headers = Headers(), url: String = "", method: String = "GET") {
        box = CopyOnWrite(Storage(status: status, reason: reason, httpVersion: httpVersion,
                                  headers: headers, url: url, method: method))
    }

    /// The redirects followed before this response, oldest first: each one's status, headers
    /// and the URL it came from (its `history` is empty). Empty when no redirect was followed.
    public var history: [ResponseHead] {
        get { box.value.history }
        set { box.unique.history = newValue }
    }

    /// How the client's cache answered (nil: the client has no cache, or it did not apply).
    public internal(set) var cacheStatus: CacheStatus? {
        get { box.value.cacheStatus }
        set { box.unique.cacheStatus = newValue }
    }

    /// Set by the transfer when the body ended before a single byte arrived.
    public internal(set) var bodyEnded: Bool {
        get { box.value.bodyEnded }
        set { box.unique.bodyEnded = newValue }
    }

    /// A 3xx with a Location the client did not follow because the request said not to
    /// (`followRedirects` false): the answer the caller asked for. Handlers with the default
    /// status codes accept it, whatever its type, and, as for a 204, it carries no content (its
    /// body, a note for browsers, is not read). Set by the transfer.
    public internal(set) var isUnfollowedRedirect: Bool {
        get { box.value.redirectNotFollowed }
        set { box.unique.redirectNotFollowed = newValue }
    }

    /// True when the response is known to carry no body: 204/205/304, a HEAD request,
    /// `Content-Length: 0`, or a body that ended empty.
    public var bodyIsEmpty: Bool {
        hasNoBodyByDefinition || bodyEnded || contentLength == 0
    }

    /// True for the responses that never carry a body, whatever they declare: 1xx, 204, 205,
    /// 304, any answer to HEAD, and a redirect not followed (`isUnfollowedRedirect`). (An empty
    /// 200 body is a body, of length zero.)
    public var hasNoBodyByDefinition: Bool {
        status == 204 || status == 205 || status == 304 || (100..<200).contains(status) || method == "HEAD"
            || isUnfollowedRedirect
    }

    /// The parsed Content-Type header, nil when absent or unparseable.
    public var contentType: MediaType? { headers["content-type"].flatMap(MediaType.init(parsing:)) }

    /// The Content-Length the server declared, if any. A length too large for Int64 is
    /// Int64.max: still larger than any size limit, so it fails one before the body comes.
    public var contentLength: Int64? {
        headers.withContentLength { text -> Int64? in
            var value: Int64 = 0
            var digits = 0
            for b in text {
                if b == 0x20 || b == 0x09 { if digits > 0 { break } else { continue } }
                guard b >= 0x30, b <= 0x39 else { return nil }
                let (tens, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = tens.addingReportingOverflow(Int64(b - 0x30))
                value = o1 || o2 ? .max : sum
                digits += 1
            }
            return digits > 0 ? value : nil
        } ?? nil
    }

    /// `HTTP 404 Not Found`, the way errors name a status.
    public var statusLine: String {
        let phrase = reason.isEmpty ? ReasonPhrase.standard(status) : reason
        return phrase.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(phrase)"
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// Standard reason phrases, for HTTP/2 responses that carry none.
enum ReasonPhrase {
    static func standard(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 304: return "Not Modified"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 416: return "Range Not Satisfiable"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return ""
        }
    }
}
