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
        try RecordStep.run(head, onStop: { stopped = true }) { try parser.feed(chunk) }
    }

    public func finish() throws -> Int {
        if !stopped {
            do { try parser.finish() } catch is StopTransfer { stopped = true }
        }
        return parser.dispatched
    }
}
