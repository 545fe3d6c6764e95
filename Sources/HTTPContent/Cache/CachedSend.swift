/// The cache at the client's request-execution level, around the transfer: a request is
/// answered from the store (the stored head and body replayed through its handler, in the
/// chunks a transfer would deliver), validated with a conditional request (a 304 replays the
/// stored body), or sent, its body teed into the store while the handler gets it. Unsafe
/// methods invalidate what they touch. `CachePolicy` decides; this file only acts.
extension Client {
    /// The chunk size a replay feeds handlers: libcurl's largest write (CURL_MAX_WRITE_SIZE).
    static let replayChunk = 16 << 10

    /// Whether `request` goes through `cache` at all: a request with a Range or conditional
    /// fields of its own is the caller's business, and sent as it is.
    static func cacheApplies(_ request: borrowing Request) -> Bool {
        let h = request.headers
        return !(h.contains("range") || h.contains("if-none-match") || h.contains("if-modified-since")
                 || h.contains("if-match") || h.contains("if-unmodified-since") || h.contains("if-range"))
    }

    /// Sends `request` through `cache`.
    /// - Parameters:
    ///   - makeHandler: the handler for the request (called once per attempt, as for the
    ///     session layers).
    ///   - network: the uncached send, with a handler maker.
    func cachedSend(
        _ request: Request, cache: HTTPCache, makeHandler: @escaping () -> any ContentHandler,
        network: (Request, @escaping () -> any ContentHandler) throws(HTTPContentError) -> Response<Any>
    ) throws(HTTPContentError) -> Response<Any> {
        let method = request.method
        let url = request.url
        if CachePolicy.isUnsafe(method) {
            do {
                let response = try network(request, makeHandler)
                invalidate(cache, url: url, head: response.head)
                return response
            } catch {
                if let head = error.response { invalidate(cache, url: url, head: head) }
                throw error
            }
        }
        let directives = CachePolicy.requestDirectives(request.headers)
        guard method == "GET" || method == "HEAD", !directives.noStore else { return try network(request, makeHandler) }
        let now = CachePolicy.now()
        let variants = (try? cache.store.variants(of: url)) ?? []
        let stored = variants.first { CachePolicy.varyMatches($0.entry, request: request.headers) }
        if let stored {
            switch CachePolicy.decide(stored.entry, request: request.headers, now: now, shared: cache.shared) {
            case .serve(let stale):
                return try replay(stored, cache: cache, request: request, status: stale ? .stale : .hit, handler: makeHandler())
            case .serveAndRevalidate:
                revalidateInBackground(request)
                return try replay(stored, cache: cache, request: request, status: .stale, handler: makeHandler())
            case .validate:
                break
            }
        }
        if directives.onlyIfCached {
            // RFC 9111 §5.2.1.7: nothing usable stored, and the request forbids asking the origin.
            let head = ResponseHead(status: 504, reason: "Gateway Timeout", headers: ["Content-Length": "0"],
                                    url: url, method: method)
            return try replay(nil, head: head, cache: cache, request: request, status: .miss, handler: makeHandler())
        }
        // HEAD is only ever answered from a stored GET; otherwise it goes out as it is.
        guard method == "GET" else { return try network(request, makeHandler) }
        var sent = request
        if let stored {
            for (name, value) in CachePolicy.conditionalHeaders(stored.entry) { sent.headers.add(name, value) }
        }
        let exchange = CacheExchange(cache: cache, request: request.headers, stored: stored, requestTime: now)
        do {
            var response = try network(sent, { CacheTee(inner: makeHandler(), exchange: exchange) })
            response.setHead(exchange.servedHead ?? response.head, status: exchange.status)
            return response
        } catch {
            var error = error
            if let stored, error.response == nil || (500...599).contains(error.response!.status),
               CachePolicy.mayServeOnError(stored.entry, request: request.headers, now: CachePolicy.now(), shared: cache.shared) {
                return try replay(stored, cache: cache, request: request, status: .stale, handler: makeHandler())
            }
            if var head = error.response {
                head.cacheStatus = exchange.status
                error.response = head
            }
            throw error
        }
    }

    /// Removes what an unsafe request's non-error response makes stale (RFC 9111 §4.4).
    private func invalidate(_ cache: HTTPCache, url: String, head: ResponseHead) {
        for target in CachePolicy.invalidatedURLs(target: url, head: head) { try? cache.store.remove(url: target) }
    }

    /// `stale-while-revalidate`: a conditional request on a background task updates the store.
    private func revalidateInBackground(_ request: Request) {
        var fresh = Request("GET", request.url, headers: request.headers, options: request.options)
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
    private func replay(_ stored: StoredResponse?, head given: ResponseHead? = nil, cache: HTTPCache,
                        request: Request, status: CacheStatus,
                        handler: any ContentHandler) throws(HTTPContentError) -> Response<Any> {
        var head = given ?? Client.servedHead(stored!, method: request.method, status: status, now: CachePolicy.now())
        head.cacheStatus = status
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

/// What one cached exchange learnt while its transfer ran: shared by the tees of every attempt.
final class CacheExchange: @unchecked Sendable {
    let cache: HTTPCache
    let request: Headers
    let stored: StoredResponse?
    let requestTime: Double
    /// Set by a tee: the head the response is served with (the stored one after a 304 or a
    /// stale answer to an error); nil: the transfer's own.
    var servedHead: ResponseHead?
    var status: CacheStatus = .miss
    /// The stored body replaces what the transfer received (304, or stale on a 5xx).
    var replaysStored = false

    init(cache: HTTPCache, request: Headers, stored: StoredResponse?, requestTime: Double) {
        self.cache = cache
        self.request = request
        self.stored = stored
        self.requestTime = requestTime
    }
}

/// Between the transfer and the request's handler: passes everything on, tees an accepted,
/// storable body into the store, and turns a 304 (or a 5xx `stale-if-error` covers) into the
/// stored response.
final class CacheTee: ContentHandler {
    let inner: any ContentHandler
    let exchange: CacheExchange
    private var writer: (any CacheBodyWriter)?

    init(inner: any ContentHandler, exchange: CacheExchange) {
        self.inner = inner
        self.exchange = exchange
    }

    func prepare(_ request: inout Request) throws { try inner.prepare(&request) }

    func accept(_ head: ResponseHead) throws -> Bool {
        let ex = exchange
        let now = CachePolicy.now()
        ex.replaysStored = false
        ex.servedHead = nil
        ex.status = .miss
        if let stored = ex.stored, head.status == 304, CachePolicy.validates(head, stored.entry) {
            var updated = stored
            updated.entry = CachePolicy.merge304(stored.entry, with: head, requestTime: ex.requestTime, responseTime: now)
            try? ex.cache.store.updateHead(stored, updated.entry)
            return try serveStored(updated, status: .revalidated, now: now)
        }
        if let stored = ex.stored, (500...599).contains(head.status),
           CachePolicy.mayServeOnError(stored.entry, request: ex.request, now: now, shared: ex.cache.shared) {
            return try serveStored(stored, status: .stale, now: now)
        }
        guard try inner.accept(head) else { return false }
        if CachePolicy.isStorable(method: head.method, requestHeaders: ex.request, head: head, shared: ex.cache.shared) {
            var headers = head.headers
            for name in CachePolicy.hopByHop(head.headers) where headers.contains(name) { headers.remove(name) }
            // The stored body is the decoded one: it no longer has the wire's coding or length.
            if headers.contains("content-encoding") {
                headers.remove("content-encoding")
                headers.remove("content-length")
            }
            let entry = CacheEntry(url: head.url, status: head.status, reason: head.reason, httpVersion: head.httpVersion,
                                   headers: headers,
                                   varyValues: CachePolicy.varyValues(varyHeader: head.headers.values(for: "vary"), request: ex.request),
                                   requestTime: ex.requestTime, responseTime: now)
            writer = try? ex.cache.store.beginStore(entry)
        }
        return true
    }

    private func serveStored(_ stored: StoredResponse, status: CacheStatus, now: Double) throws -> Bool {
        let served = Client.servedHead(stored, method: "GET", status: status, now: now)
        exchange.servedHead = served
        exchange.status = status
        exchange.replaysStored = true
        return try inner.accept(served)
    }

    func consume(_ chunk: UnsafeRawBufferPointer) throws {
        if exchange.replaysStored { return }  // a 5xx body replaced by the stored one
        do {
            try inner.consume(chunk)
        } catch {
            writer?.abort()  // an early stop leaves the body incomplete: not stored
            writer = nil
            throw error
        }
        if let writer {
            do { try writer.write(chunk) } catch {
                writer.abort()
                self.writer = nil
            }
        }
    }

    func finish() throws -> Any {
        if exchange.replaysStored, let stored = exchange.stored {
            if let content = exchange.cache.productContent(stored, handler: inner) { return content }
            _ = try exchange.cache.store.replayBody(stored, into: inner)
            let content = try inner.finish()
            exchange.cache.keepProduct(stored, handler: inner)
            return content
        }
        let content = try inner.finish()
        if let writer { HTTPCache.attachProduct(writer, handler: inner) }
        try? writer?.commit()
        writer = nil
        return content
    }

    func cleanup(failed: Bool) {
        writer?.abort()
        writer = nil
        inner.cleanup(failed: failed)
    }
}
