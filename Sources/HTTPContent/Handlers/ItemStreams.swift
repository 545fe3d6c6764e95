/// Items of a body (records, XML elements) as an `AsyncSequence`, over the client's executor (no
/// thread blocked): the handler hands each item over as soon as it is complete, and the stream
/// yields it. Items wait in the stream's buffer until read, so a consumer much slower than the
/// server lets it grow. Ending the iteration (or cancelling its task) cancels the transfer; a
/// failure ends the sequence with the error.
extension Client {
    /// The stream of what the handler `makeHandler(yield)` makes passes to `yield` while the
    /// response to `request` arrives. `yield` returns false once the consumer has gone: the
    /// handler then throws `StopTransfer`. An error thrown by `makeHandler` ends the stream.
    func itemStream<Element: Sendable, H: ContentHandler>(
        _ request: Request, _ makeHandler: @escaping @Sendable (@escaping (Element) -> Bool) throws -> H
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream()
        let task = Task {
            do {
                let handler = try makeHandler { element in
                    if case .terminated = continuation.yield(element) { return false }
                    return true
                }
                _ = try await self.send(request, handler: handler)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
