/// Record streams as `AsyncSequence`s, over the client's executor (no thread blocked): each
/// record is yielded as soon as it is parsed. Records wait in the stream's buffer until read, so
/// a consumer much slower than the server lets it grow. Ending the iteration (or cancelling its
/// task) ends the transfer; a failure ends the sequence with the error.
extension Client {
    /// Text lines of the response to `request` (see `Lines`).
    public func lines(_ request: Request, encoding: TextEncoding? = nil, strict: Bool = true,
                      maxLineSize: Int? = Lines.defaultMaxLineSize) -> AsyncThrowingStream<String, any Error> {
        recordStream(request) { yield in
            Lines(encoding: encoding, strict: strict, maxLineSize: maxLineSize) { line in
                if !yield(line) { throw StopTransfer() }
            }
        }
    }

    /// JSON records of the response to `request` (see `JSONLines`); with `skipBadRecords`, bad
    /// records are left out. With `options.path`, the value at that path in each record; with a
    /// `validator` (a `JSONSchemaCheck`), only valid ones (`skipInvalidRecords`) or an error.
    public func jsonLines(_ request: Request, options: JSONRecordOptions = JSONRecordOptions(),
                          validator: (any JSONValueValidator)? = nil) -> AsyncThrowingStream<JSONValue, any Error> {
        recordStream(request) { yield in
            JSONLines(options: options, validator: validator) { value in
                if !yield(value) { throw StopTransfer() }
            }
        }
    }

    private func recordStream<Element: Sendable, H: ContentHandler>(
        _ request: Request, _ makeHandler: @escaping @Sendable (@escaping (Element) -> Bool) -> H
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream()
        let task = Task {
            do {
                let handler = makeHandler { element in
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
