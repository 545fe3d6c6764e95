import CCurl

/// How a request proves who sends it. Basic, Digest and Bearer are libcurl's own: it sends the
/// credentials to the host of the request's URL only, never to another host a redirect leads
/// to (CURLOPT_UNRESTRICTED_AUTH stays off), and it answers a Digest challenge itself.
public enum Auth: Sendable {
    /// `Authorization: Basic` with the user and password.
    case basic(user: String, password: String)
    /// `Authorization: Bearer <token>`.
    case bearer(String)
    /// HTTP Digest (RFC 7616): libcurl sends the request, reads the 401 challenge and answers it.
    case digest(user: String, password: String)
    /// Your hook sets the request's headers before each send; after a 401 it is called once
    /// more with `refresh: true` and the request is sent again.
    case custom(AuthHook)

    /// Sets libcurl's options for the built-in kinds (the custom hook works on the request).
    func configure(_ easy: EasyHandle) throws(HTTPContentError) {
        switch self {
        case .basic(let user, let password), .digest(let user, let password):
            try Auth.check(user, "user")
            try Auth.check(password, "password")
            if case .digest = self {
                try easy.set(CURLOPT_HTTPAUTH, hc_curlauth_digest())
            } else {
                try easy.set(CURLOPT_HTTPAUTH, hc_curlauth_basic())
            }
            try easy.set(CURLOPT_USERNAME, user)
            try easy.set(CURLOPT_PASSWORD, password)
        case .bearer(let token):
            try Auth.check(token, "bearer token")
            try easy.set(CURLOPT_HTTPAUTH, hc_curlauth_bearer())
            try easy.set(CURLOPT_XOAUTH2_BEARER, token)
        case .custom:
            break
        }
    }

    var hook: AuthHook? {
        if case .custom(let hook) = self { return hook }
        return nil
    }

    /// Credentials end up in a header: no control byte may reach it.
    private static func check(_ text: String, _ what: String) throws(HTTPContentError) {
        if text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw HTTPContentError(.invalidArgument, "the \(what) contains a control character")
        }
    }
}

/// A custom authentication step: sets headers on each request it is given (for example a token
/// it keeps), and gets a chance to refresh once when the server answers 401.
public struct AuthHook: Sendable {
    /// - Parameters:
    ///   - request: the request about to be sent; set its headers.
    ///   - refresh: true when the previous send got a 401: renew the credentials now.
    public let apply: @Sendable (_ request: inout Request, _ refresh: Bool) throws -> Void

    public init(_ apply: @escaping @Sendable (_ request: inout Request, _ refresh: Bool) throws -> Void) {
        self.apply = apply
    }
}
