/// A batch's completions kept by key instead of delivered by callback: the caller's loop takes
/// every completion since its last turn in one call, in completion order, and cancels a request
/// by its key. Nothing is called back per request, which is what an interpreter's event loop
/// (asyncio through the C front's hc_batch_step) pays most for. Use it on the batch's thread.
public final class BatchCompletions<Value> {
    /// The batch the requests run on.
    public let batch: Batch
    /// Completions not yet taken, oldest first from `head` (the array is reused, not shifted;
    /// a taken entry's outcome is set to nil so its value goes at once).
    private var completed: [(key: UInt64, outcome: Result<Value, HTTPContentError>?)] = []
    private var head = 0
    /// The token of each request still running, by key (`cancel(_:)`).
    private var tokens: [UInt64: CancelToken] = [:]

    /// Completions for requests the caller adds to `batch`.
    public init(batch: Batch) { self.batch = batch }

    /// The token to add the request under `key` with, so `cancel(key)` finds it: linked to the
    /// request's own token when it has one (set from any thread, so it must be polled), else one
    /// that costs nothing until `cancel(key)` sets it (`Batch.cancelToken()`).
    /// - Parameters:
    ///   - key: the caller's, unique among the requests not yet taken.
    ///   - own: the request's own token, if any.
    /// - Returns: the token to pass to `Batch.add`.
    public func token(for key: UInt64, linkedTo own: CancelToken? = nil) -> CancelToken {
        let token = own.map { CancelToken(linkedTo: $0) } ?? batch.cancelToken()
        tokens[key] = token
        return token
    }

    /// Queues the outcome of the request under `key`; its token is forgotten.
    /// - Parameters:
    ///   - key: the request's key.
    ///   - outcome: what the request gave.
    public func complete(_ key: UInt64, _ outcome: Result<Value, HTTPContentError>) {
        tokens[key] = nil
        completed.append((key, outcome))
    }

    /// Cancels the request under `key` (it completes with `.cancelled` at the batch's next
    /// step); nothing if it completed already.
    /// - Parameter key: the request's key.
    public func cancel(_ key: UInt64) {
        if let token = tokens[key] { batch.cancel(token) }
    }

    /// Whether completions wait to be taken.
    public var hasWaiting: Bool { head < completed.count }

    /// Hands up to `capacity` waiting completions to `body`, oldest first.
    /// - Parameters:
    ///   - capacity: the most to hand over in this call.
    ///   - body: called with each completion's key and outcome, in completion order.
    /// - Returns: how many were handed over; when it equals `capacity`, more may wait.
    @discardableResult
    public func take(upTo capacity: Int, _ body: (UInt64, Result<Value, HTTPContentError>) -> Void) -> Int {
        var taken = 0
        while taken < capacity, head < completed.count {
            let (key, outcome) = completed[head]
            completed[head].outcome = nil
            head += 1
            if let outcome { body(key, outcome) }
            taken += 1
        }
        if head == completed.count {
            completed.removeAll(keepingCapacity: true)
            head = 0
        }
        return taken
    }
}
