#if canImport(Glibc)
import Glibc
#endif

/// How `EventSource` reconnects. Every default is in the initializer.
public struct EventSourceOptions: Sendable, Equatable {
    /// Reconnect when the stream ends or breaks (a transport error or timeout). Default false.
    public var reconnect: Bool
    /// At most this many reconnections; then the stream's end (or its error) is the outcome.
    /// Default 10.
    public var maxReconnects: Int
    /// Wait before reconnecting, in milliseconds, until the server sets one with `retry`.
    /// Default 3000.
    public var retryMs: Int
    /// The longest wait, whatever the server asks. Default 30 000.
    public var maxRetryMs: Int
    /// Up to this fraction of the wait is added at random (so clients do not come back in step).
    /// Default 0.1.
    public var jitter: Double
    /// Limits, as `SSEParser`. Defaults 1 MiB and 16 MiB.
    public var maxLineSize: Int?
    public var maxEventSize: Int?

    public init(reconnect: Bool = false, maxReconnects: Int = 10, retryMs: Int = 3000, maxRetryMs: Int = 30_000,
                jitter: Double = 0.1, maxLineSize: Int? = 1 << 20, maxEventSize: Int? = 16 << 20) {
        self.reconnect = reconnect
        self.maxReconnects = maxReconnects
        self.retryMs = retryMs
        self.maxRetryMs = maxRetryMs
        self.jitter = jitter
        self.maxLineSize = maxLineSize
        self.maxEventSize = maxEventSize
    }

    public func validate() throws(HTTPContentError) {
        guard maxReconnects >= 0, retryMs >= 0, maxRetryMs >= 0, jitter >= 0, jitter <= 1 else {
            throw HTTPContentError(.invalidArgument, "event source options out of range")
        }
    }
}

/// What an event source did.
public struct EventSourceSummary: Sendable, Equatable {
    /// Events dispatched over every connection.
    public var events: Int
    /// Reconnections made.
    public var reconnects: Int
    /// The last event ID (sent as `Last-Event-ID` on each reconnection).
    public var lastEventId: String
}

/// The reconnection decisions of one event stream, apart from how its connections are sent:
/// `EventSource.run` blocks a thread, `EventSource.events` awaits, and a binding may drive the
/// connections from its own event loop (the C `hc_event_source_*`). Send each connection with
/// the handler `connection()` gives (it shares one parser, so `Last-Event-ID` and the server's
/// `retry` carry over), then ask `next(after:)` what to do.
public final class EventSourceState {
    public let options: EventSourceOptions
    public let parser: SSEParser
    public private(set) var reconnects = 0
    private var current: SSE?

    public init(options: EventSourceOptions, onComment: ((String) throws -> Void)? = nil,
                onEvent: @escaping (ServerSentEvent) throws -> Void) throws(HTTPContentError) {
        try options.validate()
        self.options = options
        parser = SSEParser(maxLineSize: options.maxLineSize, maxEventSize: options.maxEventSize,
                           onComment: onComment, onEvent: onEvent)
    }

    /// The handler for the next connection.
    public func connection(acceptance: Acceptance = SSE.defaultAcceptance()) -> SSE {
        let handler = SSE(parser: parser, acceptance: acceptance)
        current = handler
        return handler
    }

    /// After a connection ended, without error (nil) or with `error`: the wait in milliseconds
    /// before the next connection, or nil when the stream is over (a 204, a callback stopped
    /// it, or no reconnection asked for or left).
    /// - Throws: `error` when the stream cannot go on: not a transport error or timeout, or no
    ///   reconnection left.
    public func next(after error: HTTPContentError?) throws(HTTPContentError) -> Int? {
        if let error, error.code != .transport, error.code != .timeout { throw error }
        if let current, current.noContent || current.stopped { return nil }
        guard options.reconnect, reconnects < options.maxReconnects else {
            if let error { throw error }
            return nil
        }
        reconnects += 1
        return EventSource.delayMs(options, parser)
    }

    public var summary: EventSourceSummary {
        EventSourceSummary(events: parser.dispatched, reconnects: reconnects, lastEventId: parser.lastEventId)
    }
}

/// An event stream that reconnects (WHATWG `EventSource`, by option): when a stream ends, or
/// breaks with a transport error or timeout, it waits the reconnection time (the server's last
/// `retry`, else `retryMs`; at most `maxRetryMs`; plus jitter) and asks again with
/// `Last-Event-ID`. A 204 stops it; another status or type is an error as for any handler (no
/// reconnection); so are the limits, a callback's error, and cancellation.
public enum EventSource {
    /// Runs the stream on this thread until it ends for good.
    /// - Throws: `HTTPContentError`; a transport error only when no reconnection is left.
    @discardableResult
    public static func run(client: Client, request: Request, options: EventSourceOptions = EventSourceOptions(),
                           acceptance: Acceptance = SSE.defaultAcceptance(), cancel: CancelToken? = nil,
                           onComment: ((String) throws -> Void)? = nil,
                           onEvent: @escaping (ServerSentEvent) throws -> Void) throws(HTTPContentError) -> EventSourceSummary {
        let state = try EventSourceState(options: options, onComment: onComment, onEvent: onEvent)
        while true {
            var broken: HTTPContentError?
            do {
                _ = try client.send(request, handler: state.connection(acceptance: acceptance), cancel: cancel)
            } catch {
                broken = error
            }
            guard let delay = try state.next(after: broken) else { return state.summary }
            try wait(delay, cancel: cancel)
        }
    }

    /// The wait before the next connection, in milliseconds.
    public static func delayMs(_ options: EventSourceOptions, _ parser: SSEParser) -> Int {
        let base = min(parser.reconnectionTime ?? options.retryMs, options.maxRetryMs)
        let extra = options.jitter > 0 && base > 0 ? Int.random(in: 0...Int(Double(base) * options.jitter)) : 0
        return min(base + extra, options.maxRetryMs)
    }

    /// Sleeps in short steps, so a cancellation is noticed within ~50 ms.
    private static func wait(_ ms: Int, cancel: CancelToken?) throws(HTTPContentError) {
        var left = ms
        while left > 0 {
            if cancel?.isCancelled == true { throw HTTPContentError(.cancelled, "the event stream was cancelled") }
            let step = min(left, 50)
            usleep(useconds_t(step * 1000))
            left -= step
        }
        if cancel?.isCancelled == true { throw HTTPContentError(.cancelled, "the event stream was cancelled") }
    }

    /// The events as an `AsyncSequence`, over the client's executor (no thread blocked). The
    /// events wait in the stream's buffer until read: a consumer much slower than the server
    /// lets it grow. Ending the iteration (or cancelling its task) ends the transfer.
    public static func events(client: Client, request: Request, options: EventSourceOptions = EventSourceOptions(),
                              acceptance: Acceptance = SSE.defaultAcceptance()) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ServerSentEvent, any Error>.makeStream()
        let task = Task {
            do {
                let state = try EventSourceState(options: options) { event in
                    if case .terminated = continuation.yield(event) { throw StopTransfer() }
                }
                while true {
                    var broken: HTTPContentError?
                    do {
                        _ = try await client.send(request, handler: state.connection(acceptance: acceptance))
                    } catch let error as HTTPContentError {
                        broken = error
                    }
                    guard let delay = try state.next(after: broken), !Task.isCancelled else { break }
                    try await Task.sleep(for: .milliseconds(delay))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

extension Client {
    /// Server-Sent Events from `request` as an `AsyncSequence` (see `EventSource.events`).
    public func events(_ request: Request, options: EventSourceOptions = EventSourceOptions()) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        EventSource.events(client: self, request: request, options: options)
    }
}
