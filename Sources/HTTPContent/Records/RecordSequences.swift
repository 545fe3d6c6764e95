/// Record streams as `AsyncSequence`s, over the client's executor (no thread blocked): each
/// record is yielded as soon as it is parsed (see `itemStream`: records wait in the stream's
/// buffer until read). Ending the iteration (or cancelling its task) ends the transfer; a
/// failure ends the sequence with the error.
extension Client {
    /// Text lines of the response to `request` (see `Lines`).
    public func lines(_ request: Request, encoding: TextEncoding? = nil, strict: Bool = true,
                      maxLineSize: Int? = Lines.defaultMaxLineSize) -> AsyncThrowingStream<String, any Error> {
        itemStream(request) { yield in
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
        itemStream(request) { yield in
            JSONLines(options: options, validator: validator) { value in
                if !yield(value) { throw StopTransfer() }
            }
        }
    }
}
