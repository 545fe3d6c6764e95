import HTTPContent

public typealias ProgressCallback = @convention(c) (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64, Int64) -> Int32

/// An `hc_request`: the Swift request plus what the C caller attached to it.
final class RequestBox {
    // Set by the caller between sends, read once per send: no dynamic exclusivity checks.
    @exclusivity(unchecked) var request: Request
    @exclusivity(unchecked) var handler: HandlerSpec?
    @exclusivity(unchecked) var cancel: CancelToken?
    @exclusivity(unchecked) var progress: ProgressCallback?
    @exclusivity(unchecked) var progressUserdata: UnsafeMutableRawPointer?

    init(_ request: Request) { self.request = request }

    /// The cancellation token and progress closure for one send. A non-zero return from the C
    /// progress callback cancels that send only, not the shared token.
    func sendOptions() -> (CancelToken?, ((TransferProgress) -> Void)?) {
        guard let cb = progress else { return (cancel, nil) }
        let local = CancelToken(linkedTo: cancel)
        let userdata = progressUserdata
        return (local, { p in
            if cb(userdata, p.received, p.expected, p.decoded, p.sent, p.toSend) != 0 { local.cancel() }
        })
    }
}

@_cdecl("hc_request_new")
public func hc_request_new(_ method: UnsafePointer<CChar>?, _ url: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let method = string(method), let url = string(url) else {
        nullArgument("method or url")
        return nil
    }
    let request = Request(method, url)
    do {
        try request.validate()
    } catch {
        fail(error)
        return nil
    }
    return retainHandle(RequestBox(request))
}

@_cdecl("hc_request_free")
public func hc_request_free(_ request: OpaquePointer?) {
    releaseHandle(request, as: RequestBox.self)
}

@_cdecl("hc_request_add_header")
public func hc_request_add_header(_ request: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                  _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let name = string(name), let value = string(value) else { return nullArgument("name or value") }
    do {
        try Headers.validate(name: name, value: value)
    } catch {
        return fail(error)
    }
    box.request.headers.add(name, value)
    return HC_OK
}

@_cdecl("hc_request_set_body")
public func hc_request_set_body(_ request: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int,
                                _ contentType: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    // `bytes` refuses NULL with a length, and a size_t above Int.max (which trapped here).
    guard let body = bytes(data, len, "data") else { return HTTPContentError.Code.invalidArgument.rawValue }
    box.request.body = .bytes(body, contentType: string(contentType))
    return HC_OK
}

@_cdecl("hc_request_set_handler")
public func hc_request_set_handler(_ request: OpaquePointer?, _ handler: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    box.handler = spec
    return HC_OK
}

@_cdecl("hc_request_set_timeout_ms")
public func hc_request_set_timeout_ms(_ request: OpaquePointer?, _ ms: Int) -> Int32 {
    setLimit(request, ms, "hc_request_set_timeout_ms") { $0.timeout = $1 }
}

@_cdecl("hc_request_set_connect_timeout_ms")
public func hc_request_set_connect_timeout_ms(_ request: OpaquePointer?, _ ms: Int) -> Int32 {
    setLimit(request, ms, "hc_request_set_connect_timeout_ms") { $0.connectTimeout = $1 }
}

@_cdecl("hc_request_set_read_timeout_ms")
public func hc_request_set_read_timeout_ms(_ request: OpaquePointer?, _ ms: Int) -> Int32 {
    setLimit(request, ms, "hc_request_set_read_timeout_ms") { $0.readTimeout = $1 }
}

/// A request's time limit from C: 0 the client's (nil), HC_TIMEOUT_NONE none (`.zero`, which
/// lifts the client's), else milliseconds.
func requestLimit(_ ms: Int) -> Duration?? {
    ms == 0 ? .some(nil) : ms == -1 ? .some(.zero) : ms > 0 ? .some(.milliseconds(ms)) : nil
}

private func setLimit(_ request: OpaquePointer?, _ ms: Int, _ function: String,
                      _ set: (inout RequestOptions, Duration?) -> Void) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let limit = requestLimit(ms) else { return fail(.invalidArgument, "\(function): negative timeout") }
    set(&box.request.options, limit)
    return HC_OK
}

@_cdecl("hc_request_set_follow_redirects")
public func hc_request_set_follow_redirects(_ request: OpaquePointer?, _ follow: Int32) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    box.request.options.followRedirects = follow != 0
    return HC_OK
}

@_cdecl("hc_request_set_proxy")
public func hc_request_set_proxy(_ request: OpaquePointer?, _ proxy: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    let proxy = string(proxy)
    if let proxy {
        do { try Request.checkProxy(proxy) } catch { return fail(error) }
    }
    box.request.options.proxy = proxy
    return HC_OK
}

@_cdecl("hc_request_set_progress")
public func hc_request_set_progress(_ request: OpaquePointer?, _ cb: ProgressCallback?,
                                    _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    box.progress = cb
    box.progressUserdata = userdata
    return HC_OK
}

@_cdecl("hc_request_set_cancel")
public func hc_request_set_cancel(_ request: OpaquePointer?, _ token: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    box.cancel = borrowHandle(token, as: CancelToken.self)
    return HC_OK
}
