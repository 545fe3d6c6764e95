#if canImport(Glibc)
import Glibc
#endif

/// When and how often a failed request is sent again (opt-in: a client has none by default).
/// Every default is stated here once.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first one included. Default: 3.
    public var total: Int
    /// The base of the exponential backoff: before attempt n+1 the client waits a random time
    /// between 0 and min(cap, backoff * 2^(n-1)) ("full jitter"). Default: 100 ms.
    public var backoff: Duration
    /// The longest wait between two attempts, from backoff or Retry-After. A server asking
    /// (with Retry-After) for a longer wait than this ends the retries. Default: 30 s.
    public var cap: Duration
    /// Response statuses retried, when the handler rejects them. Default: 429, 502, 503, 504.
    public var statuses: Set<Int>
    /// Retry connection failures (refused, reset, truncated). Default: true.
    public var connectionErrors: Bool
    /// Retry timeouts. Default: true.
    public var timeouts: Bool
    /// Retry methods that are not idempotent (POST, PATCH) too. Default: false.
    public var allMethods: Bool
    /// Wait as a Retry-After header (seconds or HTTP-date) asks, up to `cap`. Default: true.
    public var respectRetryAfter: Bool

    public init(total: Int = 3, backoff: Duration = .milliseconds(100), cap: Duration = .seconds(30),
                statuses: Set<Int> = [429, 502, 503, 504], connectionErrors: Bool = true,
                timeouts: Bool = true, allMethods: Bool = false, respectRetryAfter: Bool = true) {
        self.total = total
        self.backoff = backoff
        self.cap = cap
        self.statuses = statuses
        self.connectionErrors = connectionErrors
        self.timeouts = timeouts
        self.allMethods = allMethods
        self.respectRetryAfter = respectRetryAfter
    }

    static let idempotent: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]

    /// Whether `error` (from attempt number `attempt`) is one to retry for `request`.
    func shouldRetry(_ error: HTTPContentError, request: Request, attempt: Int) -> Bool {
        guard attempt < total, allMethods || RetryPolicy.idempotent.contains(request.method),
              RetryPolicy.rewindable(request.body) else { return false }
        switch error.code {
        case .unacceptableStatus: return error.response.map { statuses.contains($0.status) } ?? false
        case .transport: return connectionErrors && error.curlCode != nil
        case .timeout: return timeouts
        default: return false
        }
    }

    /// A body that can be sent again from its start: bytes, multipart, a file, a seekable
    /// descriptor. A callback's bytes are gone once read.
    static func rewindable(_ body: RequestBody?) -> Bool {
        switch body {
        case nil, .bytes?, .multipart?: return true
        case .stream(let source, _)?:
            switch source {
            case .file: return true
            case .fileDescriptor(let fd, _): return lseek(fd, 0, SEEK_CUR) >= 0
            case .callback: return false
            }
        }
    }

    /// The wait before attempt `attempt + 1`, or nil when the server asks for more than `cap`.
    func delay(after error: HTTPContentError, attempt: Int) -> Duration? {
        if respectRetryAfter, let value = error.response?.headers["retry-after"],
           let seconds = RetryPolicy.retryAfterSeconds(value) {
            let asked = Duration.milliseconds(Int64(seconds * 1000))
            return asked > cap ? nil : asked
        }
        let exponent = min(attempt - 1, 30)
        let ceiling = min(cap, backoff * (1 << exponent))
        let ms = milliseconds(ceiling)
        return .milliseconds(ms > 0 ? Int.random(in: 0...ms) : 0)
    }

    /// Retry-After as seconds from now: a number of seconds, or an HTTP-date (RFC 9110).
    static func retryAfterSeconds(_ value: String, now: Double? = nil) -> Double? {
        let text = value.trimmingSpaces()
        if let seconds = Int(text) { return seconds >= 0 ? Double(seconds) : nil }
        guard let when = httpDate(text) else { return nil }
        var tv = timeval()
        gettimeofday(&tv, nil)
        let current = now ?? (Double(tv.tv_sec) + Double(tv.tv_usec) / 1e6)
        return max(0, when - current)
    }
}

/// An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 5.6.7) as seconds since 1970.
func httpDate(_ text: String) -> Double? {
    let parts = text.split(separator: " ")
    guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let year = Int(parts[3]) else { return nil }
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    guard let month = months.firstIndex(of: String(parts[2])) else { return nil }
    let clock = parts[4].split(separator: ":").compactMap { Int($0) }
    guard clock.count == 3, (1...31).contains(day), (1970...9999).contains(year) else { return nil }
    var t = tm()
    t.tm_year = Int32(year - 1900)
    t.tm_mon = Int32(month)
    t.tm_mday = Int32(day)
    t.tm_hour = Int32(clock[0])
    t.tm_min = Int32(clock[1])
    t.tm_sec = Int32(clock[2])
    return Double(timegm(&t))
}
