import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// An `hc_client`: the configuration the C setters edit, and the Swift client made from it.
/// Setters replace the client (settings are meant to be made before sending).
final class ClientBox {
    // Replaced only by the setters (before sending): no dynamic exclusivity check per fetch.
    @exclusivity(unchecked) private(set) var configuration = ClientConfiguration()
    @exclusivity(unchecked) private(set) var client: Client
    /// The URL of the last hc_client_fetch as a String: a loop fetching one URL makes no String
    /// per request (and the transfer's checks of it against the handle's find the same String).
    private let lastURL = Locked("")

    init() throws(HTTPContentError) {
        client = try Client(configuration: configuration)
    }

    /// `url` as a String: the last one when its bytes are the same.
    func url(_ url: UnsafePointer<CChar>) -> String {
        lastURL.withLock { last in
            let length = strlen(url)
            let same = last.utf8.count == length && last.withUTF8 { length == 0 || memcmp($0.baseAddress!, url, length) == 0 }
            if !same { last = String(cString: url) }
            return last
        }
    }

    /// The client again with `share` for its TLS sessions and DNS (refused with cookies on: the
    /// client then shares its jar's).
    func use(_ share: ConnectionShare) throws(HTTPContentError) {
        client = try Client(configuration: configuration, cookieJar: client.cookieJar, share: share)
    }

    func update(_ change: (inout ClientConfiguration) -> Void) throws(HTTPContentError) {
        var config = configuration
        change(&config)
        // The cookie jar outlives a setting change, unless the change is to the cookies.
        let sameJar = config.cookies == configuration.cookies && config.cookieFile == configuration.cookieFile
        client = try Client(configuration: config, cookieJar: sameJar ? client.cookieJar : nil,
                            share: !config.cookies && client.cookieJar == nil ? client.share : nil)
        configuration = config
    }
}

@_cdecl("hc_client_new")
public func hc_client_new() -> OpaquePointer? {
    do {
        return retainHandle(try ClientBox())
    } catch {
        fail(error)
        return nil
    }
}

@_cdecl("hc_client_free")
public func hc_client_free(_ client: OpaquePointer?) {
    releaseHandle(client, as: ClientBox.self)
}

/// Applies a configuration change, with the NULL guard every setter needs.
func configure(_ client: OpaquePointer?, _ function: String = #function,
                       _ change: (inout ClientConfiguration) -> Void) -> Int32 {
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client", in: function) }
    do {
        try box.update(change)
    } catch {
        return fail(error)
    }
    return HC_OK
}

@_cdecl("hc_client_set_timeout_ms")
public func hc_client_set_timeout_ms(_ client: OpaquePointer?, _ ms: Int) -> Int32 {
    guard ms >= 0 else { return fail(.invalidArgument, "hc_client_set_timeout_ms: negative timeout") }
    return configure(client) { $0.timeout = ms > 0 ? .milliseconds(ms) : nil }
}

@_cdecl("hc_client_set_connect_timeout_ms")
public func hc_client_set_connect_timeout_ms(_ client: OpaquePointer?, _ ms: Int) -> Int32 {
    guard ms >= 0 else { return fail(.invalidArgument, "hc_client_set_connect_timeout_ms: negative timeout") }
    return configure(client) { $0.connectTimeout = ms > 0 ? .milliseconds(ms) : nil }
}

@_cdecl("hc_client_set_read_timeout_ms")
public func hc_client_set_read_timeout_ms(_ client: OpaquePointer?, _ ms: Int) -> Int32 {
    guard ms >= 0 else { return fail(.invalidArgument, "hc_client_set_read_timeout_ms: negative timeout") }
    return configure(client) { $0.readTimeout = ms > 0 ? .milliseconds(ms) : nil }
}

@_cdecl("hc_client_set_low_speed")
public func hc_client_set_low_speed(_ client: OpaquePointer?, _ bytesPerSecond: Int, _ seconds: Int) -> Int32 {
    guard bytesPerSecond >= 0, seconds >= 0 else {
        return fail(.invalidArgument, "hc_client_set_low_speed: negative limit")
    }
    return configure(client) {
        $0.lowSpeedLimit = bytesPerSecond > 0 && seconds > 0
            ? .init(bytesPerSecond: bytesPerSecond, seconds: seconds) : nil
    }
}

@_cdecl("hc_client_set_redirects")
public func hc_client_set_redirects(_ client: OpaquePointer?, _ follow: Int32, _ max: Int32) -> Int32 {
    guard max >= 0 else { return fail(.invalidArgument, "hc_client_set_redirects: negative maximum") }
    return configure(client) {
        $0.followRedirects = follow != 0
        $0.maxRedirects = Int(max)
    }
}

@_cdecl("hc_client_set_buffer_sizes")
public func hc_client_set_buffer_sizes(_ client: OpaquePointer?, _ receive: Int, _ upload: Int) -> Int32 {
    configure(client) {
        $0.receiveBufferSize = receive > 0 ? receive : nil
        $0.uploadBufferSize = upload > 0 ? upload : nil
    }
}

@_cdecl("hc_client_set_proxy")
public func hc_client_set_proxy(_ client: OpaquePointer?, _ proxy: UnsafePointer<CChar>?) -> Int32 {
    let proxy = string(proxy)
    return configure(client) { $0.proxy = proxy }
}

@_cdecl("hc_client_set_no_proxy")
public func hc_client_set_no_proxy(_ client: OpaquePointer?, _ hosts: UnsafePointer<CChar>?) -> Int32 {
    let hosts = string(hosts)
    return configure(client) { $0.noProxy = hosts }
}

@_cdecl("hc_client_set_trust_env")
public func hc_client_set_trust_env(_ client: OpaquePointer?, _ trust: Int32) -> Int32 {
    configure(client) { $0.trustEnvironment = trust != 0 }
}

@_cdecl("hc_client_set_user_agent")
public func hc_client_set_user_agent(_ client: OpaquePointer?, _ agent: UnsafePointer<CChar>?) -> Int32 {
    guard let agent = string(agent) else { return nullArgument("user_agent") }
    do { try Headers.validate(name: "User-Agent", value: agent) } catch { return fail(error) }
    return configure(client) { $0.userAgent = agent }
}

@_cdecl("hc_client_add_header")
public func hc_client_add_header(_ client: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                 _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let name = string(name), let value = string(value) else { return nullArgument("name or value") }
    do { try Headers.validate(name: name, value: value) } catch { return fail(error) }
    return configure(client) { $0.headers.add(name, value) }
}

@_cdecl("hc_client_set_verify")
public func hc_client_set_verify(_ client: OpaquePointer?, _ verify: Int32) -> Int32 {
    configure(client) { $0.verify = verify != 0 }
}

@_cdecl("hc_client_set_ca_file")
public func hc_client_set_ca_file(_ client: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    let path = string(path)
    return configure(client) { $0.caFile = path }
}

@_cdecl("hc_client_set_client_cert")
public func hc_client_set_client_cert(_ client: OpaquePointer?, _ cert: UnsafePointer<CChar>?,
                                      _ key: UnsafePointer<CChar>?) -> Int32 {
    let cert = string(cert), key = string(key)
    return configure(client) {
        $0.clientCertificate = cert
        $0.clientKey = cert == nil ? nil : key
    }
}

@_cdecl("hc_client_set_compressed")
public func hc_client_set_compressed(_ client: OpaquePointer?, _ on: Int32) -> Int32 {
    configure(client) { $0.acceptCompressed = on != 0 }
}

@_cdecl("hc_client_set_rejected_body_limit")
public func hc_client_set_rejected_body_limit(_ client: OpaquePointer?, _ bytes: Int) -> Int32 {
    guard bytes >= 0 else { return fail(.invalidArgument, "hc_client_set_rejected_body_limit: negative limit") }
    return configure(client) { $0.rejectedBodyLimit = bytes }
}

@_cdecl("hc_client_send")
public func hc_client_send(_ client: OpaquePointer?, _ request: OpaquePointer?,
                           _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("response") }
    out.pointee = nil
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    guard let req = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    var handler: (any ContentHandler)?
    let (cancel, progress) = req.sendOptions()
    do {
        // The response moves straight into the box (a named local would be copied). The body
        // is read after the send: the handler may have swapped in memory lent by the caller.
        // A handler is made per attempt (a retry policy may send the request again).
        let response = try box.client.send(req.request, makeHandler: {
            let made = req.handler?.make() ?? Bytes()
            handler = made
            return made
        }, cancel: cancel, progress: progress)
        out.pointee = retainHandle(ResponseBox(response, body: (handler as? Bytes)?.body))
        return HC_OK
    } catch {
        return fail(error)
    }
}

/// `hc_fetch_result`, field for field.
struct FetchResult {
    var response: OpaquePointer?
    var status: Int32
    var bytes: UnsafePointer<UInt8>?
    var bytesLen: Int
}

extension FetchResult {
    init(response: ResponseBox, status: Int32, bytes: UnsafePointer<UInt8>?, bytesLen: Int) {
        self.init(response: retainHandle(response), status: status, bytes: bytes, bytesLen: bytesLen)
    }

    /// What hc_client_fetch and hc_batch_step report of `boxed`, whose handle the caller now owns.
    init(_ boxed: ResponseBox) {
        let body = (boxed.body ?? ((boxed.response.content as? ImageInfo?)??.data))?.contents
        self.init(response: boxed, status: boxed.status, bytes: body?.base, bytesLen: body?.count ?? 0)
    }
}

@_cdecl("hc_client_fetch")
public func hc_client_fetch(_ client: OpaquePointer?, _ method: UnsafePointer<CChar>?, _ url: UnsafePointer<CChar>?,
                            _ handler: OpaquePointer?, _ timeoutMs: Int, _ followRedirects: Int32,
                            _ result: UnsafeMutableRawPointer?) -> Int32 {
    guard let result else { return nullArgument("result") }
    let out = result.bindMemory(to: FetchResult.self, capacity: 1)
    out.pointee = FetchResult(response: nil, status: 0, bytes: nil, bytesLen: 0)
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    guard let method, let url else { return nullArgument("method or url") }
    guard timeoutMs >= -1 else { return fail(.invalidArgument, "hc_client_fetch: negative timeout") }
    // GET as a literal: no String made and checked per request.
    let methodName = method[0] == 0x47 && method[1] == 0x45 && method[2] == 0x54 && method[3] == 0
        ? "GET" : String(cString: method)
    var options = RequestOptions()
    if timeoutMs != 0 { options.timeout = timeoutMs > 0 ? .milliseconds(timeoutMs) : .zero }
    if followRedirects >= 0 { options.followRedirects = followRedirects != 0 }
    let spec = borrowHandle(handler, as: HandlerSpec.self)
    // Made by the send (a handler per attempt); nothing made ahead that a send would replace.
    var made: (any ContentHandler)?
    do {
        // Moved straight into the box, as in hc_client_send.
        let response = ResponseBox(try box.client.send(Request(methodName, box.url(url), options: consume options), makeHandler: {
            let handler = spec?.make() ?? Bytes()
            made = handler
            return handler
        }), body: (made as? Bytes)?.body)
        let body = (response.body ?? (made is Image ? (response.response.content as? ImageInfo?)??.data : nil))?.contents
        out.pointee = FetchResult(response: retainHandle(response), status: response.status,
                                  bytes: body?.base, bytesLen: body?.count ?? 0)
        return HC_OK
    } catch {
        return fail(error)
    }
}
