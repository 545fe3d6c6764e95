import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Many requests at once on the calling thread: add them, then `run()` (or step with
/// `perform()`/`wait()` from an event loop you own). Completions are called on that thread as
/// transfers finish, and may add more requests. A batch is used by one thread at a time.
public final class Batch {
    public let client: Client
    let driver: MultiDriver

    /// - Parameters:
    ///   - client: the client whose settings and connections the transfers use.
    ///   - maxConcurrent: most transfers in flight; more wait their turn (0: no limit).
    ///   - maxPerHost: most connections to one host (0: no limit; nil: the client's
    ///     `maxConnectionsPerHost`, so that one setting limits every batch of the client).
    public init(client: Client, maxConcurrent: Int = 0, maxPerHost: Int? = nil) {
        self.client = client
        driver = MultiDriver(maxConcurrent: maxConcurrent,
                             maxPerHost: maxPerHost ?? client.configuration.maxConnectionsPerHost)
    }

    public var maxConcurrent: Int {
        get { driver.maxConcurrent }
        set { driver.maxConcurrent = max(0, newValue) }
    }

    public func setMaxPerHost(_ n: Int) { driver.setMaxPerHost(max(0, n)) }

    /// Requests added and not yet completed.
    public var pending: Int { driver.pending }

    /// Queues `request`; `completion` is called once, on the driving thread, when it is done.
    /// A request that fails before starting (invalid, or its handler's prepare failed) completes
    /// at once, during this call.
    public func add<Handler: ContentHandler>(
        _ request: consuming Request, handler: Handler, cancel: CancelToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil,
        completion: @escaping (Result<Response<Handler.Content>, HTTPContentError>) -> Void
    ) {
        // One handler for every attempt, as in `Client.send`.
        if addAround(request, makeHandler: { handler }, restartable: Batch.resumes(handler), cancel: cancel,
                     progress: progress, complete: { completion(Batch.typed($0)) }) {
            return
        }
        let transfer: Transfer
        do {
            transfer = try client.start(request, handler: handler, cancel: cancel, progress: progress)
        } catch {
            completion(.failure(error))
            return
        }
        let handles = client.handles
        driver.add(transfer) { code in
            let outcome = Result { () throws(HTTPContentError) in
                try Client.deliver(transfer, handler: handler, code: code)
            }
            handles.put(transfer)
            completion(outcome)
        }
    }

    /// `add` for a handler known only at run time: the content comes back as `Any`. Not
    /// generic, so no type metadata is looked up per request.
    public func add(
        _ request: consuming Request, anyHandler handler: any ContentHandler, cancel: CancelToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil,
        completion: @escaping (Result<Response<Any>, HTTPContentError>) -> Void
    ) {
        add(request, anyHandler: handler, cancel: cancel, progress: progress) { deliver in
            completion(Result { () throws(HTTPContentError) in try deliver() })
        }
    }

    /// `add` for the C front: `finished` is called once, on the driving thread, with a function
    /// that delivers the response or throws the request's error, so the response goes where the
    /// caller keeps it without being copied out of a `Result`. The handle goes back to the pool
    /// as `deliver` returns (a request added from `finished` can reuse it); if `finished` does
    /// not call `deliver`, it is called, and its outcome dropped, once `finished` returns.
    package func add(
        _ request: consuming Request, anyHandler handler: any ContentHandler, cancel: CancelToken? = nil,
        progress: ((TransferProgress) -> Void)? = nil,
        finished: @escaping (_ deliver: () throws(HTTPContentError) -> Response<Any>) -> Void
    ) {
        if addAround(request, makeHandler: { handler }, restartable: Batch.resumes(handler), cancel: cancel,
                     progress: progress, complete: Batch.delivering(finished)) {
            return
        }
        addTransfer(request, handler: handler, cancel: cancel, progress: progress, finished: finished)
    }

    /// One transfer on the driver, no cache or session layer around it: `finished` as above.
    func addTransfer(
        _ request: consuming Request, handler: any ContentHandler, cancel: CancelToken?,
        progress: ((TransferProgress) -> Void)?,
        finished: @escaping (_ deliver: () throws(HTTPContentError) -> Response<Any>) -> Void
    ) {
        let transfer: Transfer
        do {
            transfer = try client.start(request, handler: handler, cancel: cancel, progress: progress)
        } catch {
            finished { () throws(HTTPContentError) in throw error }
            return
        }
        let handles = client.handles
        driver.add(transfer) { code in
            var delivered = false
            func deliver() throws(HTTPContentError) -> Response<Any> {
                delivered = true
                defer { handles.put(transfer) }
                return try Client.deliverAny(transfer, code: code)
            }
            finished(deliver)
            if !delivered { _ = try? deliver() }
        }
    }

    /// `add` for the C front with a handler made per attempt (a retry policy or an auth hook may
    /// send the request more than once); without session layers, one handler, as above.
    package func add(
        _ request: consuming Request, makeHandler: @escaping () -> any ContentHandler,
        cancel: CancelToken? = nil, progress: ((TransferProgress) -> Void)? = nil,
        finished: @escaping (_ deliver: () throws(HTTPContentError) -> Response<Any>) -> Void
    ) {
        if addAround(request, makeHandler: makeHandler, restartable: true, cancel: cancel,
                     progress: progress, complete: Batch.delivering(finished)) {
            return
        }
        addTransfer(request, handler: makeHandler(), cancel: cancel, progress: progress, finished: finished)
    }

    /// The cache's way in, then the session layers', for every `add`: whether `request` went
    /// one of them (false: it needs neither, and the caller starts a plain transfer).
    private func addAround(
        _ request: borrowing Request, makeHandler: @escaping () -> any ContentHandler, restartable: Bool,
        cancel: CancelToken?, progress: ((TransferProgress) -> Void)?,
        complete: @escaping (Result<Response<Any>, HTTPContentError>) -> Void
    ) -> Bool {
        if let cache = client.configuration.cache, Client.cacheApplies(request) {
            addCached(copy request, cache: cache, makeHandler: makeHandler, restartable: restartable,
                      cancel: cancel, progress: progress, complete: complete)
            return true
        }
        if client.needsLayers(request) {
            addLayered(copy request, restartable: restartable, makeHandler: makeHandler, cancel: cancel,
                       progress: progress, complete: complete)
            return true
        }
        return false
    }

    /// A `Result` completion as the `finished` of the C front's `add`s.
    private static func delivering(
        _ finished: @escaping (_ deliver: () throws(HTTPContentError) -> Response<Any>) -> Void
    ) -> (Result<Response<Any>, HTTPContentError>) -> Void {
        { outcome in finished { () throws(HTTPContentError) in try outcome.get() } }
    }

    /// Runs until every request added, including those added by completions, has completed.
    public func run() { driver.run() }

    /// Makes progress without blocking; returns how many requests are still pending.
    @discardableResult
    public func perform() -> Int { driver.perform() }

    /// Blocks until there is something to do or `timeoutMs` passes.
    public func wait(timeoutMs: Int32) { driver.wait(timeoutMs: timeoutMs) }

    /// How long an event loop may wait before calling `perform` again (-1: no timer set). While
    /// a transfer has a cancellation token, at most a second (a token set from another thread
    /// wakes no one), and 0 once one is set.
    public var timeoutMs: Int { driver.timeoutMs }

    /// The sockets libcurl waits on, for an event loop you own (see curl_multi_fdset).
    public func fdset(read: UnsafeMutablePointer<fd_set>?, write: UnsafeMutablePointer<fd_set>?,
                      except: UnsafeMutablePointer<fd_set>?) -> Int32 {
        var maxFd: Int32 = -1
        curl_multi_fdset(driver.multi, read, write, except, &maxFd)
        return maxFd
    }

    // MARK: - Driven by the caller's event loop, socket by socket

    /// What libcurl asks of an event loop (asyncio, libuv, epoll): watch `fd` for `SocketWatch`
    /// events, or stop watching it; call back after a timer.
    public enum SocketWatch: Int32, Sendable {
        case readable = 1, writable = 2, both = 3, remove = 4
    }

    /// Hands the watching of sockets and of libcurl's timer to the caller's event loop, before
    /// any request is added: `socket(fd, what)` says what to watch (or to stop), `timer(ms)`
    /// asks for `socketAction(fd: nil)` after `ms` milliseconds (-1: cancel the timer, 0: as
    /// soon as the loop turns; never call `socketAction` from inside either callback). From then
    /// on, drive the batch with `socketAction` only (not `run`, `perform` or `wait`). Each
    /// transfer then costs nothing until its socket is ready, however many are in flight.
    public func watch(socket: @escaping (_ fd: Int32, _ what: SocketWatch) -> Void,
                      timer: @escaping (_ milliseconds: Int) -> Void) {
        driver.watch(MultiDriver.Watchers(socket: { fd, what in
            if let w = SocketWatch(rawValue: what) { socket(fd, w) }
        }, timer: timer))
    }

    /// Tells the batch that `fd` is ready (`readable`/`writable`/`error`), or with `fd` nil that
    /// the timer expired. Completions of finished requests run during the call. Returns how
    /// many requests remain. After setting a request's cancellation token, call it with nil: a
    /// token wakes no one.
    @discardableResult
    public func socketAction(fd: Int32?, readable: Bool = false, writable: Bool = false, error: Bool = false) -> Int {
        driver.socketAction(fd: fd, events: (readable ? 1 : 0) | (writable ? 2 : 0) | (error ? 4 : 0))
    }

    // MARK: - Polling its own sockets: the caller's loop watches one descriptor

    /// Has the batch watch its own sockets (an epoll set) and returns the one descriptor an
    /// event loop then watches for reading: readable when any transfer's socket is ready. Call
    /// it before adding requests, instead of `watch`; from then on drive the batch with `step`
    /// (when the descriptor is readable, when `stepTimeoutMs` has passed, and soon after
    /// adding requests or setting a token), not `run`, `perform`, `wait` or `socketAction`.
    /// Returns nil where there is no epoll (then use `watch`). Calling it again returns the
    /// same descriptor, which the batch closes when it goes.
    public func pollDescriptor() -> Int32? {
        guard driver.poller != nil || driver.watchers == nil else { return nil }
        return driver.pollOwnSockets()
    }

    /// Whether `pollDescriptor` made the batch poll its own sockets.
    public var pollsOwnSockets: Bool { driver.poller != nil }

    /// Whether `watch` handed the sockets to the caller's loop.
    public var handsSocketsToCaller: Bool { driver.watchers != nil && driver.poller == nil }

    /// Tells libcurl about every ready socket and its timer if due, in one call; completions
    /// of finished requests run during it, and requests they add start. Returns how many
    /// requests remain. Without `pollDescriptor`, the same as `perform`.
    @discardableResult
    public func step() -> Int { driver.step() }

    /// Milliseconds after which `step` must be called even if the descriptor stays quiet
    /// (-1: no timer; 0: at once, as after adding requests).
    public var stepTimeoutMs: Int { driver.timerMs }

    /// A token for a request of this batch that only `cancel(_:)` sets, on the batch's thread:
    /// unlike a plain token, nothing polls it while the request runs (no progress callback, no
    /// look at each step), so a request that has one costs nothing more.
    public func cancelToken() -> CancelToken { .unpolled() }

    /// Sets `token` (one of `cancelToken()`'s, or any other) and has the next `step`, `perform`
    /// or `socketAction` complete its request as cancelled. Call it on the batch's thread.
    public func cancel(_ token: CancelToken) {
        token.cancel()
        driver.cancelled()
    }

    /// Completes every pending request with `.cancelled`.
    public func cancelAll() { driver.cancelAll() }
}
