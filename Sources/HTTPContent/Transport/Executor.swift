import CCurl
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One background thread that runs a client's `async` requests on a libcurl multi handle, so
/// a thousand requests in flight cost a thousand transfers, not a thousand threads.
final class Executor: @unchecked Sendable {
    private let driver: MultiDriver
    private let handles: HandlePool
    private let inbox = Locked<(jobs: [@Sendable (MultiDriver) -> Void], stopping: Bool)>(([], false))
    private var thread = pthread_t()
    private var started = false
    /// `async` requests between their start and their outcome, counted from any thread.
    private let inFlight = Atomic<Int>(0)

    init(handles: HandlePool, maxConcurrent: Int, maxPerHost: Int) {
        self.handles = handles
        driver = MultiDriver(maxConcurrent: maxConcurrent, maxPerHost: maxPerHost)
        let me = Unmanaged.passRetained(self).toOpaque()
        started = pthread_create(&thread, nil, { raw in
            let executor = Unmanaged<Executor>.fromOpaque(raw!).takeRetainedValue()
            executor.loop()
            return nil
        }, me) == 0
        if !started { Unmanaged<Executor>.fromOpaque(me).release() }
    }

    /// Queues work to run on the executor thread (adding a transfer), and wakes it.
    func submit(_ job: @escaping @Sendable (MultiDriver) -> Void) -> Bool {
        let accepted = inbox.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { driver.wake() }
        return accepted
    }

    /// Counts a request in; true when it is the only one in flight: it then gets the buffers of
    /// a request sent alone (256 KiB: a 64 MiB body took 20 % less CPU than with libcurl's
    /// 16 KiB, bench/swift.sh), while many in flight keep smaller ones (128 KiB,
    /// `TransferBuffers.multiDefault`).
    func enter() -> Bool { inFlight.wrappingAdd(1, ordering: .relaxed).oldValue == 0 }

    func leave() { inFlight.wrappingSubtract(1, ordering: .relaxed) }

    /// Wakes the thread so it notices a cancellation promptly.
    func poke() { driver.wake() }

    func shutdown() {
        inbox.withLock { $0.stopping = true }
        driver.wake()
        if started, pthread_equal(pthread_self(), thread) == 0 {
            pthread_join(thread, nil)
        } else if started {
            pthread_detach(thread)
        }
    }

    private func loop() {
        while true {
            let (jobs, stopping) = inbox.withLock { state in
                defer { state.jobs.removeAll() }
                return (state.jobs, state.stopping)
            }
            for job in jobs { job(driver) }
            if stopping {
                driver.cancelAll()
                return
            }
            driver.perform()
            if driver.completedByLastPerform == 0 { driver.wait(timeoutMs: 1000) }
        }
    }
}

/// Carries a value the type system cannot prove Sendable across to the executor thread and
/// back. Sound here because the value is used by one thread at a time: handed over, then back.
struct Handover<Value>: @unchecked Sendable {
    var value: Value
}

extension Client {
    /// Sends `request` without blocking a thread: the transfer runs on the client's executor
    /// (libcurl multi), the handler is driven there, and the task resumes with the outcome.
    /// Cancelling the task cancels the transfer (a download's partial file is removed).
    /// The session layers apply as in the blocking `send`: the task sleeps between attempts.
    /// The client's cache answers or validates first, as in the blocking `send`.
    public func send<Handler: ContentHandler>(
        _ request: Request, handler: Handler, progress: ((TransferProgress) -> Void)? = nil
    ) async throws(HTTPContentError) -> Response<Handler.Content> {
        if let cache = configuration.cache, Client.cacheApplies(request) {
            let response = try await cachedSend(request, cache: cache, handler: handler,
                                                restartable: Batch.resumes(handler), progress: progress)
            // The handler's own finish made the content: it is of its type.
            return response.map { $0 as! Handler.Content }
        }
        return try await sendUncached(request, handler: handler, progress: progress)
    }

    /// The `async` send through the session layers, without the cache. `restartable`: an
    /// attempt whose handler saw body bytes may be sent again (nil: when `handler` is a
    /// resumable download).
    func sendUncached<Handler: ContentHandler>(
        _ request: Request, handler: Handler, restartable: Bool? = nil, progress: ((TransferProgress) -> Void)?
    ) async throws(HTTPContentError) -> Response<Handler.Content> {
        guard needsLayers(request) else {
            return try await sendOnce(request, handler: handler, progress: progress).outcome.get()
        }
        // One handler for every attempt, as in the blocking `send`.
        var attempts = SessionAttempts(request, client: self, restartable: restartable ?? Batch.resumes(handler))
        while true {
            let sent = await sendOnce(try attempts.next(), handler: handler, progress: progress)
            let error: HTTPContentError
            switch sent.outcome {
            case .success(let response): return response
            case .failure(let failure): error = failure
            }
            switch attempts.after(error, bodyStarted: sent.bodyStarted) {
            case .fail(let final):
                throw final
            case .again(let wait):
                do {
                    if wait > .zero { try await Task.sleep(for: wait) }
                    try Task.checkCancellation()
                } catch {
                    var stopped = HTTPContentError(.cancelled, "cancelled while waiting to retry", response: sent.head)
                    stopped.attempts = attempts.attempt
                    throw stopped.about(request)
                }
            }
        }
    }

    /// One attempt of the `async` send: its outcome, whether the handler saw body bytes, and
    /// the response head when the failure had one.
    private func sendOnce<Handler: ContentHandler>(
        _ request: Request, handler: Handler, progress: ((TransferProgress) -> Void)?
    ) async -> (outcome: Result<Response<Handler.Content>, HTTPContentError>, bodyStarted: Bool, head: ResponseHead?) {
        let token = CancelToken()
        let executor = sharedExecutor
        // A handler whose consumer may fall behind is held back a chunk at a time: libcurl's
        // small buffer bounds what one pause lets through, alone or not.
        let counted = executor.enter()
        defer { executor.leave() }
        let alone = counted && (handler is Bytes || !(handler is any ReceiveThrottled))
        let transfer: Transfer
        do {
            transfer = try start(request, handler: handler, cancel: token, progress: progress, alone: alone)
        } catch {
            return (.failure(error), false, nil)
        }
        typealias Outcome = (Result<Response<Handler.Content>, HTTPContentError>, Bool)
        if transfer.throttled != nil {
            // A handler whose consumer may fall behind resumes reading through the executor.
            transfer.onDrivingThread = { job in _ = executor.submit { _ in job() } }
        }
        let handover = Handover(value: (transfer, handler))
        let handles = self.handles
        let result: Handover<Outcome> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let submitted = executor.submit { driver in
                    let (transfer, handler) = handover.value
                    driver.add(transfer) { code in
                        let outcome = Result { () throws(HTTPContentError) in
                            try Client.deliver(transfer, handler: handler, code: code)
                        }
                        let bodyStarted = transfer.decodedBytes > 0
                        handles.put(transfer)
                        continuation.resume(returning: Handover(value: (outcome, bodyStarted)))
                    }
                }
                if !submitted {
                    let (transfer, handler) = handover.value
                    handler.cleanup(failed: true)
                    handles.put(transfer)
                    let stopped = HTTPContentError(.cancelled, "the client is shutting down")
                    continuation.resume(returning: Handover(value: (.failure(stopped), false)))
                }
            }
        } onCancel: {
            token.cancel()
            executor.poke()
        }
        let (outcome, bodyStarted) = result.value
        if case .failure(let error) = outcome { return (outcome, bodyStarted, error.response) }
        return (outcome, bodyStarted, nil)
    }

    /// `async` send for a handler known only at run time.
    public func send(
        _ request: Request, anyHandler handler: any ContentHandler, progress: ((TransferProgress) -> Void)? = nil
    ) async throws(HTTPContentError) -> Response<Any> {
        func open<H: ContentHandler>(_ h: H) async throws(HTTPContentError) -> Response<Any> {
            try await send(request, handler: h, progress: progress).map { $0 as Any }
        }
        return try await open(handler)
    }
}
