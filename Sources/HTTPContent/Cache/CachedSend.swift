/// The cache at the client's request-execution level, around the transfer, in two phases
/// every execution path shares (the blocking send here, the `async` send and batches in
/// `CachedPaths.swift`): `cacheLookup` answers the request from the store (the stored head and
/// body replayed through its handler, in the chunks a transfer would deliver) or says what to
/// send — a conditional request to validate, the request as it is — and with which handler
/// wrapper; `cacheComplete` takes the network's outcome (a 304 turned into the stored response,
/// stale-if-error, invalidation by unsafe methods). `CachePolicy` decides; this file only acts.
extension Client {
    /// The chunk size a replay feeds handlers: libcurl's largest write (CURL_MAX_WRITE_SIZE).
    static let replayChunk = 16 << 10

    /// Whether `request` goes through `cache` at all: a request with a Range, or with
    /// preconditions of its own (If-Match, If-Unmodified-Since, If-Range), is the caller's
    /// business, and sent as it is. (If-None-Match and If-Modified-Since are answered from a
    /// fresh stored response, RFC 9111 §4.3.2.)
    static func cacheApplies(_ request: borrowing Request) -> Bool {
        let h = request.headers
        return !(h.contains("range") || h.contains("if-match") || h.contains("if-unmodified-since") || h.contains("if-range"))
    }

    /// Sends `request` through `cache` on the calling thread.
    /// - Parameters:
    ///   - makeHandler: the handler for the request (called once per attempt, as for the
    ///     session layers).
    ///   - network: the uncached send, with a handler maker.
    func cachedSend(
        _ request: Request, cache: HTTPCache, makeHandler: @escaping () -> any ContentHandler,
        network: (Request, @escaping () -> any ContentHandler) throws(HTTPContentError) -> Response<Any>
    ) throws(HTTPContentError) -> Response<Any> {
        switch cacheLookup(request, cache: cache) {
        case .answer(let answer):
            return try replay(answer, request: request, handler: makeHandler())
        case .send(let sent, let exchange):
            let outcome = Result { () throws(HTTPContentError) in
                try network(sent, { exchange.handler(makeHandler()) })
            }
            return try cacheComplete(outcome, exchange: exchange, makeHandler: makeHandler)
        }
    }

    // MARK: - The two phases

    /// The first phase: answers `request` from the store, or says what to send and how.
    /// Nothing is sent here; a `stale-while-revalidate` answer starts its background check.
    func cacheLookup(_ request: Request, cache: HTTPCache) -> CacheStep {
        let method = request.method
        if CachePolicy.isUnsafe(method) {
            return .send(request, CacheExchange(cache: cache, role: .invalidate, original: request, stored: nil, requestTime: 0))
        }
        let directives = CachePolicy.requestDirectives(request.headers)
        guard method == "GET" || method == "HEAD", !directives.noStore else {
            return .send(request, CacheExchange(cache: cache, role: .pass, original: request, stored: nil, requestTime: 0))
        }
        let now = CachePolicy.now()
        let variants = (try? cache.store.variants(of: request.url)) ?? []
        let stored = variants.first { CachePolicy.varyMatches($0.entry, request: request.headers) }
        if let stored {
            switch CachePolicy.decide(stored.entry, request: request.headers, now: now, shared: cache.shared) {
            case .serve(let stale):
                return .answer(Client.storedAnswer(stored, cache: cache, request: request, status: stale ? .stale : .hit, now: now))
            case .serveAndRevalidate:
                revalidateInBackground(request)
                return .answer(Client.storedAnswer(stored, cache: cache, request: request, status: .stale, now: now))
            case .validate:
                break
            }
        }
        if directives.onlyIfCached {
            // RFC 9111 §5.2.1.7: nothing usable stored, and the request forbids asking the origin.
            let head = ResponseHead(status: 504, reason: "Gateway Timeout", headers: ["Content-Length": "0"],
                                    url: request.url, method: method)
            return .answer(CacheAnswer(cache: cache, stored: nil, head: head, status: .miss))
        }
        // HEAD is only ever answered from a stored GET; otherwise it goes out as it is, and its
        // answer may update the stored GET's fields (§4.3.5).
        guard method == "GET" else {
            return .send(request, CacheExchange(cache: cache, role: stored == nil ? .pass : .updateFields,
                                                original: request, stored: stored, requestTime: now))
        }
        if CachePolicy.hasOwnValidation(request.headers) {
            // It validates a copy of the caller's: sent as it is (a full answer may be stored).
            return .send(request, CacheExchange(cache: cache, role: .store, original: request, stored: nil, requestTime: now))
        }
        var sent = request
        if let stored {
            for (name, value) in CachePolicy.conditionalHeaders(stored.entry) { sent.headers.add(name, value) }
        }
        return .send(sent, CacheExchange(cache: cache, role: .store, original: request, stored: stored, requestTime: now))
    }

    /// The second phase: what the request gives once the network's `outcome` is known (the
    /// transfer ran through `exchange.handler`). A stale answer to an error replays the stored
    /// response through a new handler from `makeHandler`.
    func cacheComplete(
        _ outcome: Result<Response<Any>, HTTPContentError>, exchange: CacheExchange,
        makeHandler: () -> any ContentHandler
    ) throws(HTTPContentError) -> Response<Any> {
        switch exchange.role {
        case .pass:
            return try outcome.get()
        case .updateFields:
            let response = try outcome.get()
            if let stored = exchange.stored, CachePolicy.headUpdates(response.head, stored.entry) {
                let merged = CachePolicy.merge304(stored.entry, with: response.head, requestTime: exchange.requestTime,
                                                  responseTime: CachePolicy.now())
                try? exchange.cache.store.updateHead(stored, merged)
            }
            return response
        case .invalidate:
            switch outcome {
            case .success(let response):
                invalidate(exchange.cache, url: exchange.original.url, head: response.head)
                return response
            case .failure(let error):
                if let head = error.response { invalidate(exchange.cache, url: exchange.original.url, head: head) }
                throw error
            }
        case .store:
            switch outcome {
            case .success(var response):
                response.setHead(exchange.servedHead ?? response.head, status: exchange.status)
                return response
            case .failure(var error):
                if let stored = exchange.stored, error.response == nil || (500...599).contains(error.response!.status),
                   CachePolicy.mayServeOnError(stored.entry, request: exchange.request, now: CachePolicy.now(),
                                               shared: exchange.cache.shared) {
                    return try replay(CacheAnswer(cache: exchange.cache, stored: stored, head: nil, status: .stale),
                                      request: exchange.original, handler: makeHandler())
                }
                if var head = error.response {
                    head.cacheStatus = exchange.status
                    error.response = head
                }
                throw error
            }
        }
    }

    /// Removes what an unsafe request's non-error response makes stale (RFC 9111 §4.4).
    private func invalidate(_ cache: HTTPCache, url: String, head: ResponseHead) {
        for target in CachePolicy.invalidatedURLs(target: url, head: head) { try? cache.store.remove(url: target) }
    }

    /// A stored response as the answer to `request`: the 304 of §4.3.2 when the request's own
    /// conditional fields find it not modified, else the stored response itself.
    static func storedAnswer(_ stored: StoredResponse, cache: HTTPCache, request: Request, status: CacheStatus,
                             now: Double) -> CacheAnswer {
        guard CachePolicy.hasOwnValidation(request.headers), CachePolicy.notModified(stored.entry, request: request.headers) else {
            return CacheAnswer(cache: cache, stored: stored, head: nil, status: status)
        }
        var headers = CachePolicy.notModifiedHeaders(stored.entry)
        headers.set("Age", String(Int(CachePolicy.currentAge(stored.entry, now: now))))
        let head = ResponseHead(status: 304, reason: "Not Modified", httpVersion: stored.entry.httpVersion,
                                headers: headers, url: stored.entry.url, method: request.method)
        return CacheAnswer(cache: cache, stored: nil, head: head, status: status)
    }

    /// `stale-while-revalidate`: a conditional request on a background task updates the store
    /// (the cache's own conditional fields, not the caller's).
    private func revalidateInBackground(_ request: Request) {
        var fresh = Request("GET", request.url, headers: request.headers, options: request.options)
        fresh.headers.remove("if-none-match")
        fresh.headers.remove("if-modified-since")
        fresh.headers.set("Cache-Control", "max-age=0")
        Task.detached { [self] in _ = try? self.send(fresh, anyHandler: Discard(acceptance: .anything)) }
    }

    /// The head a stored response is served with: its stored fields, `Age` set to its current age.
    static func servedHead(_ stored: StoredResponse, method: String, status: CacheStatus, now: Double) -> ResponseHead {
        var headers = stored.entry.headers
        headers.set("Age", String(Int(CachePolicy.currentAge(stored.entry, now: now))))
        var head = ResponseHead(status: stored.entry.status, reason: stored.entry.reason,
                                httpVersion: stored.entry.httpVersion, headers: headers,
                                url: stored.entry.url, method: method)
        head.cacheStatus = status
        if stored.entry.bodySize == 0 { head.bodyEnded = true }
        return head
    }

    /// Runs `handler` over a stored response as a transfer would: prepare, accept, the body in
    /// chunks, finish, cleanup. A rejection is the error a transfer would give.
    /// Nothing is sent: this is how every path answers a request from the store.
    func replay(_ answer: CacheAnswer, request: Request,
                handler: any ContentHandler) throws(HTTPContentError) -> Response<Any> {
        let stored = answer.stored
        let cache = answer.cache
        var head = answer.head ?? Client.servedHead(stored!, method: request.method, status: answer.status, now: CachePolicy.now())
        head.cacheStatus = answer.status
        var prepared = request
        var metrics = TransferMetrics()
        do {
            try handler.prepare(&prepared)
            var rejection: HTTPContentError?
            do {
                if try !handler.accept(head) {
                    rejection = .unacceptableStatus(head, detail: "(rejected by the handler)")
                }
            } catch {
                rejection = HTTPContentError.wrapping(error)
            }
            if var rejection {
                // As a transfer does: the refused body, capped, kept in the error.
                var rejected: [UInt8] = []
                if let stored, !head.hasNoBodyByDefinition {
                    try? cache.store.readBody(stored) { chunk in
                        rejected += chunk.prefix(max(0, configuration.rejectedBodyLimit - rejected.count))
                    }
                }
                if rejection.response == nil { rejection.response = head }
                rejection.addBody(rejected)
                throw rejection
            }
            var replayed = false
            if let stored, !head.hasNoBodyByDefinition {
                metrics.decodedBytes = stored.entry.bodySize
                // What the handler made of this body before (CacheProduct), else the body again.
                if let content = cache.productContent(stored, handler: handler) {
                    cache.store.touch(stored)
                    handler.cleanup(failed: false)
                    return Response(head: head, content: content, metrics: metrics)
                }
                metrics.decodedBytes = try cache.store.replayBody(stored, into: handler)
                cache.store.touch(stored)
                replayed = true
            }
            let content = try handler.finish()
            if replayed, let stored { cache.keepProduct(stored, handler: handler) }
            handler.cleanup(failed: false)
            return Response(head: head, content: content as Any, metrics: metrics)
        } catch {
            handler.cleanup(failed: true)
            var wrapped = HTTPContentError.wrapping(error)
            if wrapped.response == nil { wrapped.response = head }
            throw wrapped.about(request)
        }
    }
}

extension CacheStore {
    /// Feeds the stored body of `stored` to `handler` in the pieces a transfer delivers (at most
    /// `Client.replayChunk` bytes); a `StopTransfer` from the handler ends the feeding early.
    /// - Returns: the bytes handed to the handler.
    func replayBody(_ stored: StoredResponse, into handler: any ContentHandler) throws(HTTPContentError) -> Int64 {
        var stopped = false
        var count: Int64 = 0
        try readBody(stored) { chunk in
            var rest = chunk
            while !rest.isEmpty, !stopped {
                let piece = UnsafeRawBufferPointer(rebasing: rest.prefix(Client.replayChunk))
                do { try handler.consume(piece) } catch is StopTransfer { stopped = true }
                count += Int64(piece.count)
                rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(piece.count))
            }
        }
        return count
    }
}

extension Response {
    /// The same response with the head the cache served it with.
    mutating func setHead(_ head: ResponseHead, status: CacheStatus) {
        var head = head
        head.cacheStatus = status
        self = Response(head: head, content: content, metrics: metrics)
    }
}
