import HTTPContent

// MARK: - hc_request_options: a request's settings in one call

/// The C struct `hc_request_options` as this library knows it (include/httpcontent/request_options.h);
/// the field order and types are the header's.
struct RequestOptionsC {
    var structSize: Int
    var timeoutMs: Int
    var connectTimeoutMs: Int
    var readTimeoutMs: Int
    var followRedirects: Int32
    var maxRedirects: Int32
    var proxy: UnsafePointer<CChar>?
}

/// The size of the first (and this library's) version of the struct.
private let requestOptionsSize = MemoryLayout<RequestOptionsC>.size

@_cdecl("hc_request_options_init")
public func hc_request_options_init(_ opts: UnsafeMutableRawPointer?, _ structSize: Int) -> Int32 {
    guard let opts else { return nullArgument("opts") }
    guard structSize >= requestOptionsSize else {
        return fail(.invalidArgument, "hc_request_options_init: size \(structSize) is smaller than \(requestOptionsSize)")
    }
    opts.initializeMemory(as: UInt8.self, repeating: 0, count: structSize)   // fields this library does not know
    opts.assumingMemoryBound(to: RequestOptionsC.self).pointee = RequestOptionsC(
        structSize: structSize, timeoutMs: 0, connectTimeoutMs: 0, readTimeoutMs: 0,
        followRedirects: -1, maxRedirects: -1, proxy: nil)
    return HC_OK
}

@_cdecl("hc_request_apply_options")
public func hc_request_apply_options(_ request: OpaquePointer?, _ opts: UnsafeRawPointer?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let opts else { return nullArgument("opts") }
    do {
        box.request.options = try applied(readRequestOptions(opts), to: box.request.options)
        return HC_OK
    } catch {
        return fail(error)
    }
}

/// The caller's struct, its size checked: a newer caller's fields unknown here must be zero.
private func readRequestOptions(_ opts: UnsafeRawPointer) throws(HTTPContentError) -> RequestOptionsC {
    let size = opts.load(as: Int.self)
    guard size >= requestOptionsSize else {
        throw HTTPContentError(.invalidArgument, "hc_request_options: struct_size \(size) is smaller than \(requestOptionsSize) (call hc_request_options_init)")
    }
    if size > requestOptionsSize {
        let extra = UnsafeRawBufferPointer(start: opts + requestOptionsSize, count: size - requestOptionsSize)
        guard extra.allSatisfy({ $0 == 0 }) else {
            throw HTTPContentError(.invalidArgument, "hc_request_options: fields this library does not know are set")
        }
    }
    return opts.load(as: RequestOptionsC.self)
}

/// `options` with every field of `c` that is not "the client's" applied; all checked first.
private func applied(_ c: RequestOptionsC, to options: RequestOptions) throws(HTTPContentError) -> RequestOptions {
    var out = options
    let limits = [(c.timeoutMs, "timeout_ms"), (c.connectTimeoutMs, "connect_timeout_ms"),
                  (c.readTimeoutMs, "read_timeout_ms")]
    var read: [Duration??] = []
    for (ms, name) in limits {
        guard let limit = requestLimit(ms) else {
            throw HTTPContentError(.invalidArgument, "hc_request_options: negative \(name)")
        }
        read.append(ms == 0 ? nil : limit)   // 0: leave the request's as it is
    }
    guard c.followRedirects >= -1, c.followRedirects <= 1 else {
        throw HTTPContentError(.invalidArgument, "hc_request_options: follow_redirects is -1, 0 or 1")
    }
    guard c.maxRedirects >= -1 else {
        throw HTTPContentError(.invalidArgument, "hc_request_options: max_redirects below -1")
    }
    let proxy = string(c.proxy)
    if let proxy { try Request.checkProxy(proxy) }
    if let limit = read[0] { out.timeout = limit }
    if let limit = read[1] { out.connectTimeout = limit }
    if let limit = read[2] { out.readTimeout = limit }
    if c.followRedirects >= 0 { out.followRedirects = c.followRedirects != 0 }
    if c.maxRedirects >= 0 { out.maxRedirects = Int(c.maxRedirects) }
    if let proxy { out.proxy = proxy }
    return out
}

// MARK: - The library's defaults

@_cdecl("hc_default_connect_timeout_ms")
public func hc_default_connect_timeout_ms() -> Int {
    guard let limit = ClientConfiguration().connectTimeout else { return 0 }
    let (seconds, attoseconds) = limit.components
    return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
}

@_cdecl("hc_default_max_redirects")
public func hc_default_max_redirects() -> Int32 {
    Int32(ClientConfiguration().maxRedirects)
}

@_cdecl("hc_default_rejected_body_limit")
public func hc_default_rejected_body_limit() -> Int {
    ClientConfiguration().rejectedBodyLimit
}

private func milliseconds(_ d: Duration) -> Int32 {
    let (seconds, attoseconds) = d.components
    return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
}

@_cdecl("hc_default_retry_total")
public func hc_default_retry_total() -> Int32 {
    Int32(RetryPolicy().total)
}

@_cdecl("hc_default_retry_backoff_ms")
public func hc_default_retry_backoff_ms() -> Int32 {
    milliseconds(RetryPolicy().backoff)
}

@_cdecl("hc_default_retry_cap_ms")
public func hc_default_retry_cap_ms() -> Int32 {
    milliseconds(RetryPolicy().cap)
}

@_cdecl("hc_default_retry_statuses")
public func hc_default_retry_statuses(_ out: UnsafeMutablePointer<Int32>?, _ capacity: Int) -> Int {
    let statuses = RetryPolicy().statuses.sorted()
    if let out {
        for (i, status) in statuses.prefix(max(capacity, 0)).enumerated() { out[i] = Int32(status) }
    }
    return statuses.count
}
