/// The cache on the paths that do not block the caller: the `async` send (the client's
/// executor) and batches (C hc_batch_*, and through them Python `map`, `amap`, `arequest`).
/// Each runs the two phases of `CachedSend.swift` around its own way of sending: a request the
/// store answers never becomes a transfer, and a batch delivers that answer as it delivers a
/// transfer's, on the driving thread from its next turn (run, perform, step, socket action).
extension Client {
    /// Sends `request` through `cache` without blocking a thread: a stored answer is replayed
    /// in the task, anything else goes out on the executor with the exchange's handler.
    /// - Parameters:
    ///   - handler: the request's handler (every attempt's, as in the uncached `async` send).
    ///   - restartable: an attempt whose handler saw body bytes may be sent again (asked of the
    ///     request's own handler: the one sent is the tee around it).
    func cachedSend(
        _ request: Request, cache: HTTPCache, handler: any ContentHandler, restartable: Bool,
        progress: ((TransferProgress) -> Void)?
    ) async throws(HTTPContentError) -> Response<Any> {
        switch cacheLookup(request, cache: cache) {
        case .answer(let answer):
            return try replay(answer, request: request, handler: handler)
        case .send(let sent, let exchange):
            func open<H: ContentHandler>(_ h: H) async throws(HTTPContentError) -> Response<Any> {
                try await sendUncached(sent, handler: h, restartable: restartable, progress: progress).map { $0 as Any }
            }
            let outcome: Result<Response<Any>, HTTPContentError>
            do throws(HTTPContentError) {
                outcome = .success(try await open(exchange.handler(handler)))
            } catch {
                outcome = .failure(error)
            }
            return try cacheComplete(outcome, exchange: exchange, makeHandler: { handler })
        }
    }
}

extension Batch {
    /// Adds `request` through `cache`: a stored answer is replayed through a handler from
    /// `makeHandler` at the driver's next turn, as delayed work due at once (counted as pending,
    /// cancelled by `cancel` like a waiting transfer); anything else goes out as a transfer
    /// (through the session layers when the request needs them) with the exchange's handler,
    /// and `complete` gets the completion phase's outcome.
    func addCached(
        _ request: consuming Request, cache: HTTPCache, makeHandler: @escaping () -> any ContentHandler,
        restartable: Bool, cancel: CancelToken?, progress: ((TransferProgress) -> Void)?,
        complete: @escaping (Result<Response<Any>, HTTPContentError>) -> Void
    ) {
        let request = copy request
        let client = self.client
        switch client.cacheLookup(request, cache: cache) {
        case .answer(let answer):
            driver.after(.zero, token: cancel, fire: {
                complete(Result { () throws(HTTPContentError) in
                    try client.replay(answer, request: request, handler: makeHandler())
                })
            }, cancel: {
                complete(.failure(HTTPContentError(.cancelled, "cancelled before the cache answered").about(request)))
            })
        case .send(let sent, let exchange):
            let finish = { (outcome: Result<Response<Any>, HTTPContentError>) in
                complete(Result { () throws(HTTPContentError) in
                    try client.cacheComplete(outcome, exchange: exchange, makeHandler: makeHandler)
                })
            }
            if client.needsLayers(sent) {
                addLayered(sent, restartable: restartable, makeHandler: { exchange.handler(makeHandler()) },
                           cancel: cancel, progress: progress, complete: finish)
            } else {
                addTransfer(sent, handler: exchange.handler(makeHandler()), cancel: cancel, progress: progress) { deliver in
                    finish(Result { () throws(HTTPContentError) in try deliver() })
                }
            }
        }
    }

    /// Whether `handler` is a resumable download, which may be sent again after its body
    /// started (asked only on the paths that may send again: not on a plain transfer's).
    static func resumes(_ handler: any ContentHandler) -> Bool {
        (handler as? File)?.options.resume == true
    }

    /// A `Response<Any>` outcome as the typed one of a generic `add` (the handler's own
    /// `finish` made the content, so only a handler that changes its content's type fails).
    static func typed<Content>(
        _ outcome: Result<Response<Any>, HTTPContentError>
    ) -> Result<Response<Content>, HTTPContentError> {
        outcome.flatMap { response in
            guard let content = response.content as? Content else {
                return .failure(HTTPContentError(.callback, "the handler's content changed type"))
            }
            return .success(Response(head: response.head, content: content, metrics: response.metrics))
        }
    }
}
