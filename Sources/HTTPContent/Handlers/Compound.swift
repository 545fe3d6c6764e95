/// The content of a compound handler: which of its handlers took the body, and what it made.
public struct CompoundContent {
    public let index: Int
    public let content: Any
}

/// Offers the response to several handlers in order; the first that accepts it handles the
/// body (AFNetworking's compound serializer). When none accepts, the first one's rejection is
/// the error. Acceptance is the union of theirs.
public final class Compound: ContentHandler {
    /// The handlers offered the response, in order.
    public let handlers: [any ContentHandler]
    private var chosen: Int?

    /// Offers each response to `handlers` in order; the first that accepts it takes the body.
    public init(_ handlers: [any ContentHandler]) {
        self.handlers = handlers
    }

    public func prepare(_ request: inout Request) throws {
        for handler in handlers { try handler.prepare(&request) }
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        var firstError: (any Error)?
        for (i, handler) in handlers.enumerated() {
            do {
                if try handler.accept(head) {
                    chosen = i
                    return true
                }
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return false
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        try handlers[chosen!].consume(chunk)
    }

    public func finish() throws -> CompoundContent {
        guard let chosen else {
            throw HTTPContentError(.unacceptableStatus, "no handler of the compound accepted the response")
        }
        func open<H: ContentHandler>(_ h: H) throws -> Any { try h.finish() }
        return CompoundContent(index: chosen, content: try open(handlers[chosen]))
    }

    public func cleanup(failed: Bool) {
        for (i, handler) in handlers.enumerated() {
            handler.cleanup(failed: failed || i != chosen)
        }
    }
}
