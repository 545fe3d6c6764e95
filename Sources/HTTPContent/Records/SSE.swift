#if canImport(Glibc)
import Glibc
#endif

/// Server-Sent Events (`text/event-stream`) parsed as they arrive (`SSEParser`): each event goes
/// to `onEvent` as soon as its blank line arrives, comments (keep-alives) to `onComment`.
///
///     try client.get(url, handler: SSE { event in print(event.event, event.data) })
///
/// Content: the number of events dispatched. Throwing `StopTransfer` from a callback ends the
/// transfer with success. Sends `Accept: text/event-stream` (unless the request sets an Accept)
/// and `Last-Event-ID` when the parser has one. Default acceptance: status 200 and
/// `text/event-stream`, plus 204 (no events: the server asks the client not to reconnect).
/// For reconnection, see `EventSource`.
public final class SSE: SelectiveHandler {
    public var acceptance: Acceptance
    public let parser: SSEParser
    /// The response was a 204: the server wants no (more) events.
    public private(set) var noContent = false
    /// A callback stopped the stream (`StopTransfer`).
    public private(set) var stopped = false
    private var head: ResponseHead?

    public static func defaultAcceptance() -> Acceptance {
        Acceptance(statusCodes: [200...200, 204...204], contentTypes: ["text/event-stream"])
    }

    public convenience init(maxLineSize: Int? = 1 << 20, maxEventSize: Int? = 16 << 20, lastEventId: String = "",
                            acceptance: Acceptance = SSE.defaultAcceptance(),
                            onComment: ((String) throws -> Void)? = nil,
                            onEvent: @escaping (ServerSentEvent) throws -> Void) {
        self.init(parser: SSEParser(maxLineSize: maxLineSize, maxEventSize: maxEventSize, lastEventId: lastEventId,
                                    onComment: onComment, onEvent: onEvent),
                  acceptance: acceptance)
    }

    /// A handler feeding `parser` (shared by the connections of one `EventSource`).
    public init(parser: SSEParser, acceptance: Acceptance = SSE.defaultAcceptance()) {
        self.parser = parser
        self.acceptance = acceptance
    }

    public func prepare(_ request: inout Request) throws {
        if !request.headers.contains("Accept") { request.headers.add("Accept", "text/event-stream") }
        if !parser.lastEventId.isEmpty { request.headers.set("Last-Event-ID", parser.lastEventId) }
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        noContent = head.status == 204
        parser.restart()
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        do {
            try parser.feed(chunk)
        } catch is StopTransfer {
            stopped = true
            throw StopTransfer()
        } catch var error as HTTPContentError {
            if error.response == nil { error.response = head }
            throw error
        }
    }

    public func finish() throws -> Int {
        if !stopped {
            do { try parser.finish() } catch is StopTransfer { stopped = true }
        }
        return parser.dispatched
    }
}

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
                           acceptance: Acceptance = SSE.defaultAcceptance(), cancel: CancellationToken? = nil,
                           onComment: ((String) throws -> Void)? = nil,
                           onEvent: @escaping (ServerSentEvent) throws -> Void) throws(HTTPContentError) -> EventSourceSummary {
        try options.validate()
        let parser = SSEParser(maxLineSize: options.maxLineSize, maxEventSize: options.maxEventSize,
                               onComment: onComment, onEvent: onEvent)
        var reconnects = 0
        while true {
            let handler = SSE(parser: parser, acceptance: acceptance)
            var broken: HTTPContentError?
            do {
                _ = try client.send(request, handler: handler, cancel: cancel)
            } catch where error.code == .transport || error.code == .timeout {
                broken = error
            }
            let summary = EventSourceSummary(events: parser.dispatched, reconnects: reconnects,
                                             lastEventId: parser.lastEventId)
            if handler.noContent || handler.stopped { return summary }
            guard options.reconnect, reconnects < options.maxReconnects else {
                if let broken { throw broken }
                return summary
            }
            reconnects += 1
            try wait(delayMs(options, parser), cancel: cancel)
        }
    }

    /// The wait before the next connection, in milliseconds.
    public static func delayMs(_ options: EventSourceOptions, _ parser: SSEParser) -> Int {
        let base = min(parser.reconnectionTime ?? options.retryMs, options.maxRetryMs)
        let extra = options.jitter > 0 && base > 0 ? Int.random(in: 0...Int(Double(base) * options.jitter)) : 0
        return min(base + extra, options.maxRetryMs)
    }

    /// Sleeps in short steps, so a cancellation is noticed within ~50 ms.
    private static func wait(_ ms: Int, cancel: CancellationToken?) throws(HTTPContentError) {
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
                try options.validate()
                let parser = SSEParser(maxLineSize: options.maxLineSize, maxEventSize: options.maxEventSize) { event in
                    if case .terminated = continuation.yield(event) { throw StopTransfer() }
                }
                var reconnects = 0
                while true {
                    let handler = SSE(parser: parser, acceptance: acceptance)
                    var broken: HTTPContentError?
                    do {
                        _ = try await client.send(request, handler: handler)
                    } catch let error as HTTPContentError where error.code == .transport || error.code == .timeout {
                        broken = error
                    }
                    if handler.noContent || handler.stopped || Task.isCancelled { break }
                    guard options.reconnect, reconnects < options.maxReconnects else {
                        if let broken { throw broken }
                        break
                    }
                    reconnects += 1
                    try await Task.sleep(for: .milliseconds(delayMs(options, parser)))
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
