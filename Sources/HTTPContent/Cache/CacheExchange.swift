/// The types the cache's two phases hand between them (`CachedSend.swift`): the lookup's
/// decision, a stored answer, the exchange a transfer shares with its completion, and the tee
/// between a transfer and the request's handler.

/// What the cache's first phase decided for one request (`Client.cacheLookup`).
/// `indirect`: the two payloads differ in size, and the compiler's copy of a multi-payload enum
/// reads the shorter case's unused bytes, which valgrind (CI's harden step) reports as
/// uninitialised; boxed, the enum is one reference, fully written.
indirect enum CacheStep {
    /// Answered from the store, nothing sent: `Client.replay` runs it through the handler.
    case answer(CacheAnswer)
    /// Goes to the origin: this request (conditional fields added when it validates a stored
    /// response), each attempt's handler wrapped by `exchange.handler(_:)`, the outcome handed
    /// to `Client.cacheComplete`.
    case send(Request, CacheExchange)
}

/// A response the store answers with: a stored one, or a made-up head (the 504 of
/// `only-if-cached`), and how the cache answered.
struct CacheAnswer: @unchecked Sendable {
    let cache: HTTPCache
    let stored: StoredResponse?
    let head: ResponseHead?
    let status: CacheStatus
}

/// What one cached exchange learnt while its transfer ran: shared by the tees of every attempt,
/// and read by the completion phase.
final class CacheExchange: @unchecked Sendable {
    /// What the completion phase does with the network's outcome.
    enum Role {
        /// Nothing: the request is outside the cache's business (no-store, HEAD, other safe methods).
        case pass
        /// A HEAD sent while a GET response is stored: its 200 may update the stored fields.
        case updateFields
        /// An unsafe method: a non-error response removes what it makes stale.
        case invalidate
        /// A GET the store may answer or keep: teed, 304 and stale-if-error handled.
        case store
    }

    let cache: HTTPCache
    let role: Role
    /// The request as the caller made it (no conditional fields of the cache's).
    let original: Request
    let request: Headers
    let stored: StoredResponse?
    let requestTime: Double
    /// Set by a tee: the head the response is served with (the stored one after a 304 or a
    /// stale answer to an error); nil: the transfer's own.
    var servedHead: ResponseHead?
    var status: CacheStatus = .miss
    /// The stored body replaces what the transfer received (304, or stale on a 5xx).
    var replaysStored = false

    init(cache: HTTPCache, role: Role, original: Request, stored: StoredResponse?, requestTime: Double) {
        self.cache = cache
        self.role = role
        self.original = original
        request = original.headers
        self.stored = stored
        self.requestTime = requestTime
    }

    /// The handler a transfer of this exchange feeds: `inner` behind a `CacheTee` when the
    /// response may be stored or replace a stored one, else `inner` itself.
    func handler(_ inner: any ContentHandler) -> any ContentHandler {
        role == .store ? CacheTee(inner: inner, exchange: self) : inner
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
