import Foundation
import HTTPContent
import HTTPTypes

// Conversions between swift-http-types (`HTTPRequest`, `HTTPResponse`, `HTTPFields`), the
// vocabulary of swift-openapi-runtime and of server frameworks, and the core's `Request`,
// `ResponseHead` and `Headers`. They live here, beside the transport, so that the core and the
// Foundation layer take no dependency on swift-http-types.

// MARK: - Headers

extension Headers {
    /// The fields of `fields`, in order, repeated names kept; each name as it was spelled.
    public init(_ fields: HTTPFields) {
        self.init(fields.map { ($0.name.rawName, $0.value) })
    }
}

extension HTTPFields {
    /// The fields of `headers`, in order, repeated names kept (Set-Cookie stays a list). A field
    /// whose name is not an RFC 9110 token cannot be held by `HTTPFields` and is left out;
    /// swift-http-types replaces the bytes a value may not carry (CR, LF, NUL) with spaces.
    public init(_ headers: Headers) {
        self.init()
        for field in headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            append(HTTPField(name: name, value: field.value))
        }
    }
}

// MARK: - Requests

extension Request {
    /// The core request for `request`: its method and header fields, sent to
    /// `baseURL` + the request's path and query when `baseURL` is given (as the OpenAPI
    /// transports join them: the base's path, then the request's), else to the request's own
    /// scheme, authority and path.
    /// - Throws: `.invalidArgument` when no absolute http(s) URL can be made.
    public init(_ request: HTTPRequest, baseURL: URL? = nil, body: RequestBody? = nil) throws(HTTPContentError) {
        let url: String
        if let baseURL {
            url = try Request.joining(baseURL, request.path ?? "")
        } else {
            guard let scheme = request.scheme, let authority = request.authority else {
                throw HTTPContentError(.invalidArgument,
                    "the request has no scheme or authority (path \(request.path ?? "nil")): give a base URL")
            }
            url = "\(scheme)://\(authority)\(request.path ?? "/")"
        }
        self.init(request.method.rawValue, url, headers: Headers(request.headerFields), body: body)
    }

    /// `baseURL` with the percent-encoded path of `path` appended and its query in place of the
    /// base's, as swift-openapi-async-http-client and swift-openapi-urlsession do.
    static func joining(_ baseURL: URL, _ path: String) throws(HTTPContentError) -> String {
        guard var base = URLComponents(string: baseURL.absoluteString),
              let relative = URLComponents(string: path) else {
            throw HTTPContentError(.invalidArgument,
                "invalid request URL from path \"\(path)\" relative to base URL \"\(baseURL.absoluteString)\"")
        }
        base.percentEncodedPath += relative.percentEncodedPath
        base.percentEncodedQuery = relative.percentEncodedQuery
        guard let joined = base.string else {
            throw HTTPContentError(.invalidArgument,
                "invalid request URL from path \"\(path)\" relative to base URL \"\(baseURL.absoluteString)\"")
        }
        return joined
    }
}

extension HTTPRequest {
    /// The swift-http-types request for `request`'s method, URL (split into scheme, authority
    /// and path with query) and header fields; the body is not part of an `HTTPRequest`.
    /// - Throws: `.invalidArgument` for a method that is not a token or a URL that is not
    ///   `scheme://authority[/path][?query]`.
    public init(_ request: Request) throws(HTTPContentError) {
        guard let method = HTTPRequest.Method(request.method) else {
            throw HTTPContentError(.invalidArgument, "invalid method \"\(request.method)\"")
        }
        guard let separator = request.url.range(of: "://") else {
            throw HTTPContentError(.invalidArgument, "invalid URL \"\(request.url)\": it has no scheme")
        }
        let scheme = String(request.url[..<separator.lowerBound])
        let rest = request.url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = String(rest[..<authorityEnd])
        guard !authority.isEmpty else {
            throw HTTPContentError(.invalidArgument, "invalid URL \"\(request.url)\": it has no host")
        }
        var path = String(rest[authorityEnd...].prefix { $0 != "#" })
        if path.isEmpty || path.first == "?" { path = "/" + path }
        self.init(method: method, scheme: scheme, authority: authority, path: path,
                  headerFields: HTTPFields(request.headers))
    }
}

// MARK: - Responses

extension HTTPResponse {
    /// The swift-http-types response for `head`: status, reason phrase and header fields.
    public init(_ head: ResponseHead) {
        let code = (0...999).contains(head.status) ? head.status : 500  // libcurl reads 3 digits
        self.init(status: HTTPResponse.Status(code: code, reasonPhrase: head.reason),
                  headerFields: HTTPFields(head.headers))
    }
}

extension ResponseHead {
    /// The core's head for `response`, as a response to `method` from `url`.
    public init(_ response: HTTPResponse, url: String = "", method: String = "GET") {
        self.init(status: response.status.code, reason: response.status.reasonPhrase,
                  headers: Headers(response.headerFields), url: url, method: method)
    }
}
