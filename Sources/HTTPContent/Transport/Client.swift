import CCurl

/// Sends requests and hands each response body to the request's handler.
///
/// A client keeps its easy handles (and through them libcurl's connection cache) between
/// requests, so consecutive requests to one server reuse a kept-alive connection. It is safe to
/// use from several threads at once; each concurrent request takes its own handle. Its `async`
/// methods run on one background thread driving libcurl's multi interface (see `Executor`).
public final class Client: Sendable {
    /// The settings every request of this client starts from.
    public let configuration: ClientConfiguration
    let handles = HandlePool()
    /// The request header lines of a request with no header of its own and no body.
    let defaultHeaderLines: [String]?
    /// The configuration's time limits in milliseconds (0: none), converted once.
    let defaultTimeoutMs: Int
    let defaultConnectTimeoutMs: Int
    /// The receive and upload buffer sizes for a transfer sent alone and for one among many
    /// (0: libcurl's default), from the configuration.
    let aloneBuffers: TransferBuffers
    let multiBuffers: TransferBuffers
    /// For a streaming handler among others (one that does not keep the whole body, see
    /// `KeepsWholeBody`): libcurl's 16 KiB, since what one round of reads or one pause for a
    /// slow reader lets through is counted in receive buffers.
    let streamingBuffers: TransferBuffers
    /// No proxy variable was set when the client was made (`ProxyEnvironment`), or the
    /// configuration ignores them (`trustEnvironment` false).
    let direct: Bool
    /// The client's cookie jar, shared by all its transfers; nil when cookies are off.
    public let cookieJar: CookieJar?
    /// What every handle of the client shares: TLS sessions and DNS entries (the cookie jar's
    /// share when cookies are on). See `ConnectionShare`.
    public let share: ConnectionShare
    /// The configuration's transport options as libcurl takes them; nil when there are none.
    let transport: PreparedTransport?
    private let executor = Locked<Executor?>(nil)

    /// - Parameters:
    ///   - configuration: the settings every request starts from (time limits, redirects,
    ///     proxy, TLS, cookies, auth, retries).
    ///   - cookieJar: the jar to use (one kept from another client); nil makes one when the
    ///     configuration has cookies on.
    ///   - share: TLS sessions and DNS entries shared with other clients; nil: the client's own
    ///     (its jar's, with cookies on). A client with cookies on shares its jar's: pass the
    ///     same `CookieJar` (or its `connections`) to share with another.
    /// - Throws: `.invalidArgument` for a `share` that is not the jar's while cookies are on.
    public init(configuration: ClientConfiguration = ClientConfiguration(),
                cookieJar: CookieJar? = nil, share: ConnectionShare? = nil) throws(HTTPContentError) {
        guard curlGlobalInit == CURLE_OK else {
            throw HTTPContentError(.transport, "libcurl failed to initialise: \(curlMessage(curlGlobalInit))")
        }
        if let proxy = configuration.proxy { try Request.checkProxy(proxy) }
        if let size = configuration.receiveBufferSize, !(1024...10 << 20).contains(size) {
            throw HTTPContentError(.invalidArgument, "receive buffer of \(size) bytes: it must be 1 KiB to 10 MiB")
        }
        if let size = configuration.uploadBufferSize, !(16 << 10...2 << 20).contains(size) {
            throw HTTPContentError(.invalidArgument, "upload buffer of \(size) bytes: it must be 16 KiB to 2 MiB")
        }
        if let noProxy = configuration.noProxy, noProxy.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw HTTPContentError(.invalidArgument, "invalid no-proxy list \(quoted(noProxy))")
        }
        transport = configuration.transport.isEmpty ? nil : try PreparedTransport(configuration.transport)
        self.configuration = configuration
        defaultHeaderLines = Transfer.defaultHeaderLines(configuration)
        defaultTimeoutMs = configuration.timeout.map(milliseconds) ?? 0
        defaultConnectTimeoutMs = configuration.connectTimeout.map(milliseconds) ?? 0
        direct = !configuration.trustEnvironment || ProxyEnvironment.namesNoProxy()
        aloneBuffers = TransferBuffers(receive: configuration.receiveBufferSize ?? TransferBuffers.aloneDefault,
                                       upload: configuration.uploadBufferSize ?? TransferBuffers.aloneUploadDefault)
        multiBuffers = TransferBuffers(receive: configuration.receiveBufferSize ?? TransferBuffers.multiDefault,
                                       upload: configuration.uploadBufferSize ?? 0)
        streamingBuffers = TransferBuffers(receive: configuration.receiveBufferSize ?? 0,
                                           upload: configuration.uploadBufferSize ?? 0)
        if !configuration.cookies {
            self.cookieJar = nil
        } else if let cookieJar {
            self.cookieJar = cookieJar
        } else {
            self.cookieJar = try CookieJar(file: configuration.cookieFile)
        }
        if let jar = self.cookieJar {
            if let share, share !== jar.connections {
                throw HTTPContentError(.invalidArgument, "a client with cookies shares its cookie jar's connections: share the jar, or turn cookies off")
            }
            self.share = jar.connections
        } else {
            self.share = share ?? ConnectionShare()
        }
    }

    deinit {
        executor.withLock { $0?.shutdown() }
    }

    // MARK: - Sending

    /// Sends `request` on the calling thread and feeds the body to `handler`.
    /// - Parameters:
    ///   - request: what to send; it is checked before anything goes out.
    ///   - handler: decides what becomes of the body, and the type of the content.
    ///   - cancel: set it from any thread to stop the transfer with `.cancelled`.
    ///   - progress: called on the sending thread as bytes move.
    /// - Returns: the response with the handler's content.
    /// - Throws: `HTTPContentError`; the handler's `cleanup(failed: true)` has run by then.
    public func send<Handler: ContentHandler>(
        _ request: consuming Request, handler: Handler, cancel: CancelToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil
    ) throws(HTTPContentError) -> Response<Handler.Content> {
        if let cache = configuration.cache, Client.cacheApplies(request) {
            let response = try cachedSend(request, cache: cache, makeHandler: { handler }) {
                (sent: Request, make: @escaping () -> any ContentHandler) throws(HTTPContentError) in
                try sendUncached(sent, makeHandler: make, cancel: cancel, progress: progress,
                                 restartable: (handler as? FileWriter)?.options.resume == true)
            }
            // The handler's own finish made the content: it is of its type.
            return response.map { $0 as! Handler.Content }
        }
        if needsLayers(request) {
            // One handler for every attempt: sent again only while it has seen no body, unless
            // it is a resumable download (its prepare continues the part file).
            let resumable = (handler as? File)?.options.resume == true
            return try layered(request, cancel: cancel, restartable: resumable) {
                (attempt: consuming Request, bodyStarted: inout Bool) throws(HTTPContentError) in
                let transfer = try start(attempt, handler: handler, cancel: cancel, progress: progress, alone: true)
                defer { handles.put(transfer) }
                do throws(HTTPContentError) {
                    return try Client.deliver(transfer, handler: handler, code: transfer.perform())
                } catch {
                    bodyStarted = transfer.decodedBytes > 0
                    throw error
                }
            }
        }
        let transfer = try start(request, handler: handler, cancel: cancel, progress: progress, alone: true)
        defer { handles.put(transfer) }
        return try Client.deliver(transfer, handler: handler, code: transfer.perform())
    }

    /// `send` for a handler known only at run time (the C and Python fronts): the content comes
    /// back as `Any`. Not generic, so no type metadata is looked up per request.
    public func send(
        _ request: consuming Request, anyHandler handler: any ContentHandler, cancel: CancelToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil
    ) throws(HTTPContentError) -> Response<Any> {
        if configuration.cache != nil || needsLayers(request) {
            return try send(request, makeHandler: { handler }, cancel: cancel, progress: progress,
                            restartable: (handler as? File)?.options.resume == true)
        }
        let transfer = try start(request, handler: handler, cancel: cancel, progress: progress, alone: true)
        defer { handles.put(transfer) }
        return try Client.deliverAny(transfer, code: transfer.perform())
    }

    /// `send` with a new handler for each attempt, for requests a retry policy or an auth hook
    /// may send more than once (the C and Python fronts make their handlers from a spec). The
    /// handler of the last attempt is the last one `makeHandler` returned.
    public func send(
        _ request: consuming Request, makeHandler: () -> any ContentHandler, cancel: CancelToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil
    ) throws(HTTPContentError) -> Response<Any> {
        if configuration.cache != nil || needsLayers(request) {
            return try send(request, makeHandler: makeHandler, cancel: cancel, progress: progress, restartable: true)
        }
        // `send(_:anyHandler:)` without asking needsLayers again.
        let transfer = try start(request, handler: makeHandler(), cancel: cancel, progress: progress, alone: true)
        defer { handles.put(transfer) }
        return try Client.deliverAny(transfer, code: transfer.perform())
    }

    /// The cache's way in (when the client has one), then `sendUncached`.
    private func send(
        _ request: consuming Request, makeHandler: () -> any ContentHandler, cancel: CancelToken?,
        progress: ((TransferProgress) -> Void)?, restartable: Bool
    ) throws(HTTPContentError) -> Response<Any> {
        if let cache = configuration.cache, Client.cacheApplies(request) {
            let request = copy request
            return try withoutActuallyEscaping(makeHandler) { (makeHandler) throws(HTTPContentError) in
                try cachedSend(request, cache: cache, makeHandler: makeHandler) {
                    (sent: Request, make: @escaping () -> any ContentHandler) throws(HTTPContentError) in
                    try sendUncached(sent, makeHandler: make, cancel: cancel, progress: progress, restartable: restartable)
                }
            }
        }
        return try sendUncached(request, makeHandler: makeHandler, cancel: cancel, progress: progress, restartable: restartable)
    }

    /// One request through the session layers (a plain transfer when it needs none).
    func sendUncached(
        _ request: consuming Request, makeHandler: () -> any ContentHandler, cancel: CancellationToken?,
        progress: ((TransferProgress) -> Void)?, restartable: Bool
    ) throws(HTTPContentError) -> Response<Any> {
        if !needsLayers(request) {
            let transfer = try start(request, handler: makeHandler(), cancel: cancel, progress: progress, alone: true)
            defer { handles.put(transfer) }
            return try Client.deliverAny(transfer, code: transfer.perform())
        }
        return try layered(request, cancel: cancel, restartable: restartable) {
            (attempt: consuming Request, bodyStarted: inout Bool) throws(HTTPContentError) in
            let handler = makeHandler()
            let transfer = try start(attempt, handler: handler, cancel: cancel, progress: progress, alone: true)
            defer { handles.put(transfer) }
            do throws(HTTPContentError) {
                return try Client.deliverAny(transfer, code: transfer.perform())
            } catch {
                bodyStarted = transfer.decodedBytes > 0
                throw error
            }
        }
    }

    /// GET `url` into `handler`.
    public func get<Handler: ContentHandler>(
        _ url: String, headers: Headers = Headers(), handler: Handler
    ) throws(HTTPContentError) -> Response<Handler.Content> {
        try send(Request("GET", url, headers: headers), handler: handler)
    }

    // MARK: - The two halves every driver shares

    /// Validates and prepares the request, and binds it to a configured easy handle.
    /// On failure the handler has been cleaned up and no handle is held.
    /// The request is taken, not copied: it moves into the transfer. `alone`: the transfer runs
    /// by itself on the calling thread (`send`), not among many in a multi handle.
    func start(
        _ request: consuming Request, handler: any ContentHandler, cancel: CancelToken?,
        progress: ((TransferProgress) -> Void)?, alone: Bool = false
    ) throws(HTTPContentError) -> Transfer {
        var prepared = consume request
        let easy = handles.take()
        do {
            // Validated once, after the handler's prepare (which may add headers). A URL the
            // handle was last configured with has been validated already.
            try handler.prepare(&prepared)
            try prepared.validate(urlKnownValid: easy.applied?.url == prepared.url)
        } catch {
            handler.cleanup(failed: true)
            easy.reusable = easy.applied != nil  // untouched: keeps what it had
            handles.put(easy)
            throw HTTPContentError.wrapping(error).about(prepared)
        }
        let transfer = Transfer(easy: easy, request: consume prepared, handler: handler,
                                cancel: cancel, progress: progress,
                                rejectedBodyCap: configuration.rejectedBodyLimit)
        do {
            try transfer.configure(configuration, defaultLines: defaultHeaderLines,
                                   defaultTimeoutMs: defaultTimeoutMs,
                                   defaultConnectTimeoutMs: defaultConnectTimeoutMs, direct: direct,
                                   buffers: alone ? aloneBuffers
                                       : handler is any KeepsWholeBody ? multiBuffers : streamingBuffers,
                                   jar: cookieJar, share: share, transport: transport)
        } catch {
            handler.cleanup(failed: true)
            handles.put(transfer)
            throw error.about(transfer.request)
        }
        return transfer
    }

    /// Turns libcurl's result into the response (finishing the handler) or the error, and
    /// always runs the handler's cleanup. The caller returns the easy handle to the pool.
    static func deliver<Handler: ContentHandler>(
        _ transfer: Transfer, handler: Handler, code: CURLcode
    ) throws(HTTPContentError) -> Response<Handler.Content> {
        try finish(transfer, code: code, cleanup: handler.cleanup(failed:), content: handler.finish)
    }

    /// `deliver` for a handler known only at run time: the content as `Any`.
    static func deliverAny(_ transfer: Transfer, code: CURLcode) throws(HTTPContentError) -> Response<Any> {
        let handler = transfer.handler
        return try finish(transfer, code: code, cleanup: handler.cleanup(failed:)) { try handler.finish() }
    }

    /// The body of both `deliver`s (specialised for each, so no type metadata per request).
    @inline(__always)
    private static func finish<Content>(
        _ transfer: Transfer, code: CURLcode, cleanup: (Bool) -> Void, content finishHandler: () throws -> Content
    ) throws(HTTPContentError) -> Response<Content> {
        let head: ResponseHead
        do {
            head = try transfer.complete(code)
        } catch {
            cleanup(true)
            throw error.about(transfer.request)
        }
        let content: Content
        do {
            content = try finishHandler()
        } catch {
            cleanup(true)
            var wrapped = HTTPContentError.wrapping(error)
            if wrapped.response == nil { wrapped.response = head }
            throw wrapped.about(transfer.request)
        }
        cleanup(false)
        return Response(head: head, content: content, metrics: transfer.metrics())
    }

    /// The client's background executor, started on first use.
    var sharedExecutor: Executor {
        executor.withLock { current in
            if let current { return current }
            let made = Executor(handles: handles, maxConcurrent: configuration.maxConcurrentTransfers,
                                maxPerHost: configuration.maxConnectionsPerHost)
            current = made
            return made
        }
    }
}

/// Idle easy handles, kept so that libcurl's connection cache survives between requests.
/// The handles of one pool serve one client, whose configuration never changes: a handle left
/// configured by a plain request is taken again without a reset (see `EasyHandle`).
final class HandlePool: Sendable {
    private let idle = Locked<[EasyHandle]>([])
    private let maxIdle = 64

    func take() -> EasyHandle {
        if let easy = idle.withLock({ $0.popLast() }) { return easy }
        guard let raw = curl_easy_init() else { fatalError("httpcontent: curl_easy_init failed (out of memory)") }
        return EasyHandle(raw: raw)
    }

    /// Returns a finished transfer's handle, and with it the transfer's header store for reuse.
    func put(_ transfer: Transfer) {
        transfer.easy.spareHeaders = transfer.fields
        put(transfer.easy)
    }

    func put(_ easy: EasyHandle) {
        // Reset drops the options but keeps the connection cache, which is the point of the pool.
        if !easy.reusable { easy.reset() }
        easy.reusable = false
        easy.transfer = nil
        idle.withLock { handles in
            if handles.count < maxIdle { handles.append(easy) }
        }
        // A handle not kept is cleaned up when its last reference goes.
    }
}
