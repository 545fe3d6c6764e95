#if canImport(Glibc)
import Glibc
#endif

/// The layers a client puts around one transfer, in Alamofire's RequestInterceptor order:
/// adapt (the custom auth hook sets its headers), send, then decide whether to send again
/// (a 401 refreshes the hook once; the retry policy retries what it covers, waiting between
/// attempts). Requests that need none of this go straight to the transfer.
///
/// The calling thread's `send` waits between attempts; a `Batch` (C hc_batch, Python `map`
/// and `amap`) re-adds the transfer after the wait without blocking the others; an `async`
/// send sleeps its task.
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
    func layered<R>(_ request: consuming Request, cancel: CancelToken?, restartable: Bool,
                    _ once: (consuming Request, inout Bool) throws(HTTPContentError) -> R) throws(HTTPContentError) -> R {
        var attempts = SessionAttempts(request, client: self, restartable: restartable)
        while true {
            var bodyStarted = false
            do throws(HTTPContentError) {
                return try once(try attempts.next(), &bodyStarted)
            } catch {
                switch attempts.after(error, bodyStarted: bodyStarted) {
                case .fail(let final): throw final
                case .again(let wait): try Client.sleep(wait, cancel: cancel)
                }
            }
        }
    }

    /// Waits, in slices of at most 50 ms so that a cancel token is noticed.
    static func sleep(_ wait: Duration, cancel: CancelToken?) throws(HTTPContentError) {
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

/// The state of one request sent through the session layers: which attempt this is, whether the
/// auth hook has refreshed, and what to do after a failure. Shared by the blocking `send` and
/// by batches, which wait differently.
struct SessionAttempts {
    /// What to do after a failed attempt.
    enum Decision {
        /// Send again after `wait` (zero: at once, as after a 401 the hook refreshes for).
        case again(wait: Duration)
        /// Give up with this error (its `attempts` set when there were several).
        case fail(HTTPContentError)
    }

    let original: Request
    let hook: AuthHook?
    let policy: RetryPolicy?
    /// Whether an attempt whose handler saw body bytes may be sent again (a new handler per
    /// attempt, or a download that resumes).
    let restartable: Bool
    private(set) var attempt = 0
    private var refreshed = false

    init(_ request: consuming Request, client: Client, restartable: Bool) {
        original = request
        hook = (original.options.auth ?? client.configuration.auth)?.hook
        policy = client.retryPolicy(for: original)
        self.restartable = restartable
    }

    /// The request of the next attempt, adapted by the auth hook.
    mutating func next() throws(HTTPContentError) -> Request {
        attempt += 1
        var adapted = original
        if let hook {
            do { try hook.apply(&adapted, refreshed) } catch { throw HTTPContentError.wrapping(error) }
        }
        return adapted
    }

    /// After attempt `attempt` failed with `error`: a 401 refreshes the hook once, the retry
    /// policy retries what it covers after its backoff (or Retry-After), the rest fails.
    mutating func after(_ error: HTTPContentError, bodyStarted: Bool) -> Decision {
        var error = error
        let again = restartable || !bodyStarted
        if hook != nil, !refreshed, again, error.code == .unacceptableStatus, error.response?.status == 401, RetryPolicy.rewindable(original.body) {
            refreshed = true
            return .again(wait: .zero)
        }
        guard again, let policy, policy.shouldRetry(error, request: original, attempt: attempt),
              let wait = policy.delay(after: error, attempt: attempt) else {
            if attempt > 1 {
                error.attempts = attempt
                error.message += " (after \(attempt) attempts)"
            }
            return .fail(error)
        }
        return .again(wait: wait)
    }
}
