/// The event stream over HTTP. Content: nothing (the events went to `onEvent`); stopping early
/// with `StopTransfer` ends the transfer with success. Empty bodies and acceptance: as `JSON`.
public final class JSONEvents: SelectiveHandler {
    public var acceptance: Acceptance
    public let allowEmpty: Bool
    private let parser: JSONEventParser
    private var head: ResponseHead?

    public init(options: JSONOptions = JSONOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = JSON.defaultAcceptance(),
                onEvent: @escaping (JSONEvent, JSONPath) throws -> Void) {
        parser = JSONEventParser(options: options, onEvent: onEvent)
        self.allowEmpty = allowEmpty
        self.acceptance = JSONAcceptance.adjusted(acceptance, options)
    }

    public func prepare(_ request: inout Request) throws {
        JSONAcceptance.prepare(&request)
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        if try !parser.feed(chunk) { throw StopTransfer() }
    }

    public func finish() throws {
        if parser.bytesReceived == 0 {
            try JSONAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, acceptance, head)
            return
        }
        try parser.finish()
    }
}
