import CCurl
import Synchronization

/// Sends requests and hands each response body to the request's handler.
///
/// A client keeps its easy handles (and through them libcurl's connection cache) between
/// requests, so consecutive requests to one server reuse a kept-alive connection. It is safe to
/// use from several threads at once; each concurrent request takes its own handle.
public final class Client: Sendable {
    public let configuration: ClientConfiguration
    private let idle = Mutex<[EasyHandle]>([])
    private let maxIdle = 16

    public init(configuration: ClientConfiguration = ClientConfiguration()) throws(HTTPContentError) {
        guard curlGlobalInit == CURLE_OK else {
            throw HTTPContentError(.transport, "libcurl failed to initialise: \(curlMessage(curlGlobalInit))")
        }
        self.configuration = configuration
    }

    deinit {
        for easy in idle.withLock({ $0 }) { curl_easy_cleanup(easy.raw) }
    }

    // MARK: - Sending

    /// Sends `request` and feeds the body to `handler`.
    /// - Parameters:
    ///   - cancel: set it from any thread to stop the transfer with `.cancelled`.
    ///   - progress: called on the sending thread as bytes move.
    /// - Returns: the response with the handler's content.
    /// - Throws: `HTTPContentError`; the handler's `cleanup(failed: true)` has run by then.
    public func send<Handler: ContentHandler>(
        _ request: Request, handler: Handler, cancel: CancellationToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil
    ) throws(HTTPContentError) -> Response<Handler.Content> {
        var prepared = request
        do {
            try request.validate()
            try handler.prepare(&prepared)
            try prepared.validate()
        } catch {
            handler.cleanup(failed: true)
            throw HTTPContentError.wrapping(error)
        }
        let easy = takeHandle()
        defer { returnHandle(easy) }
        let transfer = Transfer(easy: easy, request: prepared, handler: handler,
                                cancel: cancel, progress: progress,
                                rejectedBodyCap: configuration.rejectedBodyLimit)
        let outcome: Result<ResponseHead, HTTPContentError>
        do {
            try transfer.configure(configuration)
            outcome = transfer.complete(EasyDriver.perform(transfer))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .failure(let error):
            handler.cleanup(failed: true)
            throw error
        case .success(let head):
            let content: Handler.Content
            do {
                content = try handler.finish()
            } catch {
                handler.cleanup(failed: true)
                var wrapped = HTTPContentError.wrapping(error)
                if wrapped.response == nil { wrapped.response = head }
                throw wrapped
            }
            handler.cleanup(failed: false)
            return Response(head: head, content: content, metrics: transfer.metrics())
        }
    }

    /// `send` for a handler known only at run time (the C and Python fronts): the content comes
    /// back as `Any`.
    public func send(
        _ request: Request, anyHandler handler: any ContentHandler, cancel: CancellationToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil
    ) throws(HTTPContentError) -> Response<Any> {
        func open<H: ContentHandler>(_ h: H) throws(HTTPContentError) -> Response<Any> {
            try send(request, handler: h, cancel: cancel, progress: progress).map { $0 as Any }
        }
        return try open(handler)
    }

    /// GET `url` into `handler`.
    public func get<Handler: ContentHandler>(
        _ url: String, headers: Headers = Headers(), handler: Handler
    ) throws(HTTPContentError) -> Response<Handler.Content> {
        try send(Request("GET", url, headers: headers), handler: handler)
    }

    // MARK: - Handle pool

    private func takeHandle() -> EasyHandle {
        if let easy = idle.withLock({ $0.popLast() }) { return easy }
        guard let raw = curl_easy_init() else { fatalError("httpcontent: curl_easy_init failed (out of memory)") }
        return EasyHandle(raw: raw)
    }

    private func returnHandle(_ easy: EasyHandle) {
        // Reset drops the options but keeps the connection cache, which is the point of the pool.
        curl_easy_reset(easy.raw)
        let kept = idle.withLock { handles -> Bool in
            guard handles.count < maxIdle else { return false }
            handles.append(easy)
            return true
        }
        if !kept { curl_easy_cleanup(easy.raw) }
    }
}

/// Runs one transfer to completion on the calling thread with `curl_easy_perform`.
enum EasyDriver {
    static func perform(_ transfer: Transfer) -> CURLcode {
        curl_easy_perform(transfer.easy.raw)
    }
}
