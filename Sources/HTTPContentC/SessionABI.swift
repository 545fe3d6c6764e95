import HTTPContent

// The session layers from C: cookies, authentication, retries (header section "Session").

// MARK: - Cookies

public typealias CookieCallback = @convention(c) (
    UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
    UnsafePointer<CChar>?, UInt32, Int64) -> Int32

let cookieSecure: UInt32 = 1, cookieHTTPOnly: UInt32 = 2, cookieSubdomains: UInt32 = 4

private func jar(_ client: OpaquePointer?, _ function: String = #function) -> (CookieJar?, Int32) {
    guard let box = borrowHandle(client, as: ClientBox.self) else { return (nil, nullArgument("client", in: function)) }
    guard let jar = box.client.cookieJar else {
        return (nil, fail(.invalidArgument, "\(function): cookies are off for this client"))
    }
    return (jar, HC_OK)
}

@_cdecl("hc_client_set_cookies")
public func hc_client_set_cookies(_ client: OpaquePointer?, _ enabled: Int32, _ file: UnsafePointer<CChar>?) -> Int32 {
    let file = string(file)
    if let file, file.isEmpty { return fail(.invalidArgument, "hc_client_set_cookies: empty file name") }
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    do {
        try box.update {
            $0.cookies = enabled != 0
            $0.cookieFile = enabled != 0 ? file : nil
        }
    } catch {
        return fail(error)
    }
    return HC_OK
}

@_cdecl("hc_client_cookies")
public func hc_client_cookies(_ client: OpaquePointer?, _ cb: CookieCallback?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    let (jar, code) = jar(client)
    guard let jar else { return code }
    guard let cb else { return nullArgument("cb") }
    for c in jar.all {
        let flags = (c.secure ? cookieSecure : 0) | (c.httpOnly ? cookieHTTPOnly : 0)
            | (c.includeSubdomains ? cookieSubdomains : 0)
        let stop = c.name.withCString { name in
            c.value.withCString { value in
                c.domain.withCString { domain in
                    c.path.withCString { path in cb(userdata, name, value, domain, path, flags, c.expires) }
                }
            }
        }
        if stop != 0 { return fail(.callback, "hc_client_cookies: the callback stopped the listing") }
    }
    return HC_OK
}

@_cdecl("hc_client_cookie_set")
public func hc_client_cookie_set(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?,
                                 _ domain: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                                 _ flags: UInt32, _ expires: Int64) -> Int32 {
    let (jar, code) = jar(client)
    guard let jar else { return code }
    guard let name = string(name), let value = string(value), let domain = string(domain) else {
        return nullArgument("name, value or domain")
    }
    let cookie = Cookie(name: name, value: value, domain: domain, includeSubdomains: flags & cookieSubdomains != 0,
                        path: string(path) ?? "/", secure: flags & cookieSecure != 0,
                        httpOnly: flags & cookieHTTPOnly != 0, expires: max(0, expires))
    do { try jar.set(cookie) } catch { return fail(error) }
    return HC_OK
}

@_cdecl("hc_client_cookies_clear")
public func hc_client_cookies_clear(_ client: OpaquePointer?) -> Int32 {
    let (jar, code) = jar(client)
    guard let jar else { return code }
    jar.clear()
    return HC_OK
}

@_cdecl("hc_client_cookies_save")
public func hc_client_cookies_save(_ client: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    let (jar, code) = jar(client)
    guard let jar else { return code }
    do { try jar.save(to: string(path)) } catch { return fail(error) }
    return HC_OK
}

@_cdecl("hc_client_cookies_load")
public func hc_client_cookies_load(_ client: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    let (jar, code) = jar(client)
    guard let jar else { return code }
    guard let path = string(path) else { return nullArgument("path") }
    do { try jar.load(from: path) } catch { return fail(error) }
    return HC_OK
}

@_cdecl("hc_request_add_cookie")
public func hc_request_add_cookie(_ request: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                  _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let name = string(name), let value = string(value) else { return nullArgument("name or value") }
    var cookies = box.request.options.cookies ?? []
    cookies.append((name, value))
    do { _ = try CookieJar.cookieHeader(cookies) } catch { return fail(error) }
    box.request.options.cookies = cookies
    return HC_OK
}

// MARK: - Authentication

public typealias AuthCallback = @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, Int32) -> Int32

/// An `hc_auth_request`: the headers a custom auth callback sets, lent for one call.
final class AuthRequestBox {
    var headers: [(String, String)] = []
}

/// The Auth of hc_*_set_auth's arguments.
private func auth(_ kind: Int32, _ a: UnsafePointer<CChar>?, _ b: UnsafePointer<CChar>?,
                  _ cb: AuthCallback?, _ userdata: UnsafeMutableRawPointer?) -> Result<Auth?, HTTPContentError> {
    switch kind {
    case 0: return .success(nil)
    case 1, 3:
        guard let user = string(a), let password = string(b) else {
            return .failure(HTTPContentError(.invalidArgument, "Basic and Digest need a user and a password"))
        }
        return .success(kind == 1 ? .basic(user: user, password: password) : .digest(user: user, password: password))
    case 2:
        guard let token = string(a) else { return .failure(HTTPContentError(.invalidArgument, "Bearer needs a token")) }
        return .success(.bearer(token))
    case 4:
        guard let cb else { return .failure(HTTPContentError(.invalidArgument, "a custom auth needs a callback")) }
        let user = UInt(bitPattern: userdata)
        return .success(.custom(AuthHook { request, refresh in
            let sink = AuthRequestBox()
            let handle = OpaquePointer(Unmanaged.passUnretained(sink).toOpaque())
            let rc = withExtendedLifetime(sink) { cb(UnsafeMutableRawPointer(bitPattern: user), handle, refresh ? 1 : 0) }
            guard rc == 0 else { throw HTTPContentError(.callback, "the auth callback failed (\(rc))") }
            for (name, value) in sink.headers { request.headers.set(name, value) }
        }))
    default:
        return .failure(HTTPContentError(.invalidArgument, "unknown auth kind \(kind)"))
    }
}

@_cdecl("hc_client_set_auth")
public func hc_client_set_auth(_ client: OpaquePointer?, _ kind: Int32, _ a: UnsafePointer<CChar>?,
                               _ b: UnsafePointer<CChar>?, _ cb: AuthCallback?,
                               _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    switch auth(kind, a, b, cb, userdata) {
    case .failure(let error): return fail(error)
    case .success(let made):
        do { try box.update { $0.auth = made } } catch { return fail(error) }
        return HC_OK
    }
}

@_cdecl("hc_request_set_auth")
public func hc_request_set_auth(_ request: OpaquePointer?, _ kind: Int32, _ a: UnsafePointer<CChar>?,
                                _ b: UnsafePointer<CChar>?, _ cb: AuthCallback?,
                                _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    switch auth(kind, a, b, cb, userdata) {
    case .failure(let error): return fail(error)
    case .success(let made):
        box.request.options.auth = made
        return HC_OK
    }
}

@_cdecl("hc_auth_request_set_header")
public func hc_auth_request_set_header(_ sink: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                       _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(sink, as: AuthRequestBox.self) else { return nullArgument("auth_request") }
    guard let name = string(name), let value = string(value) else { return nullArgument("name or value") }
    do { try Headers.validate(name: name, value: value) } catch { return fail(error) }
    box.headers.append((name, value))
    return HC_OK
}

// MARK: - Retries

let retryAllMethods: UInt32 = 1, retryNoConnectionErrors: UInt32 = 2, retryNoTimeouts: UInt32 = 4,
    retryIgnoreRetryAfter: UInt32 = 8

private func retryPolicy(_ total: Int32, _ backoffMs: Int32, _ capMs: Int32, _ statuses: UnsafePointer<Int32>?,
                         _ count: Int, _ flags: UInt32) -> Result<RetryPolicy?, HTTPContentError> {
    guard total >= 0, backoffMs >= 0, capMs >= 0, count >= 0, count <= 1000 else {
        return .failure(HTTPContentError(.invalidArgument, "retry: negative or absurd value"))
    }
    if total == 0 { return .success(nil) }
    var policy = RetryPolicy(total: Int(total), backoff: .milliseconds(Int(backoffMs)), cap: .milliseconds(Int(capMs)))
    if let statuses {
        policy.statuses = Set((0..<count).map { Int(statuses[$0]) })
    } else if count != 0 {
        return .failure(HTTPContentError(.invalidArgument, "retry: statuses is NULL with a count"))
    }
    policy.allMethods = flags & retryAllMethods != 0
    policy.connectionErrors = flags & retryNoConnectionErrors == 0
    policy.timeouts = flags & retryNoTimeouts == 0
    policy.respectRetryAfter = flags & retryIgnoreRetryAfter == 0
    return .success(policy)
}

@_cdecl("hc_client_set_retry")
public func hc_client_set_retry(_ client: OpaquePointer?, _ total: Int32, _ backoffMs: Int32, _ capMs: Int32,
                                _ statuses: UnsafePointer<Int32>?, _ count: Int, _ flags: UInt32) -> Int32 {
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    switch retryPolicy(total, backoffMs, capMs, statuses, count, flags) {
    case .failure(let error): return fail(error)
    case .success(let policy):
        do { try box.update { $0.retry = policy } } catch { return fail(error) }
        return HC_OK
    }
}

@_cdecl("hc_request_set_retry")
public func hc_request_set_retry(_ request: OpaquePointer?, _ total: Int32, _ backoffMs: Int32, _ capMs: Int32,
                                 _ statuses: UnsafePointer<Int32>?, _ count: Int, _ flags: UInt32) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    switch retryPolicy(total, backoffMs, capMs, statuses, count, flags) {
    case .failure(let error): return fail(error)
    case .success(let policy):
        box.request.options.retry = policy
        return HC_OK
    }
}

@_cdecl("hc_error_attempts")
public func hc_error_attempts(_ err: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(err, as: ErrorBox.self), box !== ErrorBox.none else { return 0 }
    return Int32(box.error.attempts)
}

// MARK: - Download digests

@_cdecl("hc_handler_file_set_digest")
public func hc_handler_file_set_digest(_ handler: OpaquePointer?, _ algorithm: UnsafePointer<CChar>?,
                                       _ hex: UnsafePointer<CChar>?) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    // Only file handlers have a digest; others ignore it (as the header says).
    let download = spec.settings(FileSettings.self)
    guard let name = string(algorithm) else {
        download?.digest = nil
        return HC_OK
    }
    guard let algorithm = DigestAlgorithm(rawValue: name.lowercased()) else {
        return fail(.invalidArgument, "unknown digest algorithm \"\(name)\" (sha256, sha512 or md5)")
    }
    guard let hex = string(hex) else { return nullArgument("hex") }
    do { download?.digest = try ExpectedDigest(algorithm, hex: hex) } catch { return fail(error) }
    return HC_OK
}

@_cdecl("hc_response_file_digest")
public func hc_response_file_digest(_ response: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    guard let download = content(box, as: FileDownload.self) else { return nil }
    return box.strings.get("file-digest") { download.digest }
}
