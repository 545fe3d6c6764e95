#if canImport(Glibc)
import Glibc
#endif

/// The layers a client puts around one transfer, in Alamofire's RequestInterceptor order:
/// adapt (the custom auth hook sets its headers), send, then decide whether to send again
/// (a 401 refreshes the hook once; the retry policy retries what it covers, waiting between
/// attempts). Requests that need none of this go straight to the transfer.
///
/// The handler is reused by every attempt (its prepare runs each time: a resumable download
/// continues its part file). Only the calling thread's `send` retries; batches and `async`
/// requests are sent once.
extension Client {
    /// The retry policy of `request`: its own, else the client's.
    func retryPolicy(for request: borrowing Request) -> RetryPolicy? {
        request.options.retry ?? configuration.retry
    }

    /// Whether `request` needs the layer loop (a custom auth hook or a retry policy).
    func needsLayers(_ request: borrowing Request) -> Bool {
        retryPolicy(for: request) != nil || (request.options.auth ?? configuration.auth)?.hook != nil
    }

    /// Runs `once` for each attempt until it succeeds or the layers give up. `once` says whether
    /// the failed attempt's handler received body bytes; such an attempt is sent again only when
    /// `restartable` (a new handler per attempt, or a download that resumes).
    func layered<R>(_ request: consuming Request, cancel: CancellationToken?, restartable: Bool,
                    _ once: (consuming Request, inout Bool) throws(HTTPContentError) -> R) throws(HTTPContentError) -> R {
        let original = consume request
        let hook = (original.options.auth ?? configuration.auth)?.hook
        let policy = retryPolicy(for: original)
        var refreshed = false
        var attempt = 0
        while true {
            attempt += 1
            var adapted = original
            var bodyStarted = false
            do throws(HTTPContentError) {
                if let hook {
                    do { try hook.apply(&adapted, refreshed) } catch { throw HTTPContentError.wrapping(error) }
                }
                return try once(adapted, &bodyStarted)
            } catch {
                var error = error
                let again = restartable || !bodyStarted
                if hook != nil, !refreshed, again, error.response?.status == 401, RetryPolicy.rewindable(original.body) {
                    refreshed = true
                    continue
                }
                guard again, let policy, policy.shouldRetry(error, request: original, attempt: attempt),
                      let wait = policy.delay(after: error, attempt: attempt) else {
                    if attempt > 1 {
                        error.attempts = attempt
                        error.message += " (after \(attempt) attempts)"
                    }
                    throw error
                }
                try Client.sleep(wait, cancel: cancel)
            }
        }
    }

    /// Waits, in slices of at most 50 ms so that a cancel token is noticed.
    static func sleep(_ wait: Duration, cancel: CancellationToken?) throws(HTTPContentError) {
        var left = milliseconds(wait)
        while left > 0 {
            if cancel?.isCancelled == true { throw HTTPContentError(.cancelled, "cancelled while waiting to retry") }
            let slice = min(left, 50)
            usleep(UInt32(slice * 1000))
            left -= slice
        }
        if cancel?.isCancelled == true { throw HTTPContentError(.cancelled, "cancelled while waiting to retry") }
    }
}
