/// An incremental JSON parser that builds values: feed it chunks as they arrive (each is parsed
/// at once with `yajl_parse`), then call `finish`. Malformed input fails at the chunk holding the
/// bad byte.
///
///     let parser = JSONStreamParser()
///     try parser.feed(firstChunk)
///     try parser.feed(secondChunk)
///     let value = try parser.finish()
public final class JSONStreamParser {
    public let options: JSONOptions
    private let builder: JSONTreeBuilder
    private let parser: YajlParser

    public init(options: JSONOptions = JSONOptions()) {
        self.options = options
        builder = JSONTreeBuilder(options: options)
        parser = YajlParser(options: options, sink: builder)
    }

    /// Tells `check` of the containers and array elements it follows as they complete (see
    /// `JSONTreeBuilder.watch`: not retained, the caller keeps it alive); throwing fails the
    /// parse.
    func watch(_ check: (any JSONStreamingCheck)?) {
        builder.watch(check)
    }

    /// Bytes fed so far.
    public var bytesFed: Int { parser.bytesFed }
    /// Every byte received, including a chunk whose parse stopped early or failed.
    public var bytesReceived: Int { parser.bytesReceived }

    /// Parses `chunk`.
    /// - Throws: `HTTPContentError` `.decode` (with `offset` and `body`) or `.tooLarge`.
    public func feed(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) {
        do { try parser.feed(chunk) } catch { throw HTTPContentError.wrapping(error) }
    }

    public func feed(_ chunk: [UInt8]) throws(HTTPContentError) {
        do { try parser.feed(chunk) } catch { throw HTTPContentError.wrapping(error) }
    }

    /// Top-level values completed so far, taken out of the parser (with `allowMultipleValues`,
    /// to handle each document as soon as it is complete).
    public func takeDocuments() -> [JSONValue] {
        defer { builder.documents = [] }
        return builder.documents
    }

    /// Ends the input and returns every top-level value not yet taken (one, unless
    /// `allowMultipleValues`; none for empty input with `allowMultipleValues`).
    /// - Throws: `.decode` when the input is empty or ends inside a value.
    public func finishDocuments() throws(HTTPContentError) -> [JSONValue] {
        do { try parser.finish() } catch { throw HTTPContentError.wrapping(error) }
        if builder.isOpen {
            do { try builder.closeAll() } catch { throw HTTPContentError.wrapping(error) }
        }
        return takeDocuments()
    }

    /// Ends the input and returns the value: the document, or with `allowMultipleValues` an
    /// array of every document not yet taken.
    /// - Throws: `.decode` when the input is empty or ends inside a value.
    public func finish() throws(HTTPContentError) -> JSONValue {
        let documents = try finishDocuments()
        if options.allowMultipleValues { return .array(JSONArray(documents)) }
        guard let value = documents.first else {
            throw HTTPContentError(.decode, "invalid JSON at byte \(bytesFed): no value", offset: bytesFed)
        }
        return value
    }
}

extension JSONValue {
    /// Parses a complete JSON text.
    /// - Throws: `HTTPContentError` `.decode` with the offset of the first bad byte.
    public init(parsing bytes: some Collection<UInt8>, options: JSONOptions = JSONOptions()) throws(HTTPContentError) {
        let parser = JSONStreamParser(options: options)
        do {
            let done: Void? = try bytes.withContiguousStorageIfAvailable { buf in
                try parser.feed(UnsafeRawBufferPointer(buf))
            }
            if done == nil { try parser.feed(Array(bytes)) }
        } catch {
            throw HTTPContentError.wrapping(error)
        }
        self = try parser.finish()
    }

    /// Parses a complete JSON text given as a string.
    public init(parsing text: String, options: JSONOptions = JSONOptions()) throws(HTTPContentError) {
        try self.init(parsing: Array(text.utf8), options: options)
    }
}
