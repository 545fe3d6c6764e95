/// Parses the body as XML while it arrives (libxml2's push parser, each chunk parsed at once: a
/// malformed, hostile or oversized document fails at the chunk holding the bad byte) and
/// produces the root element.
///
/// Encoding: the Content-Type charset when the response has one, else the byte order mark or the
/// XML declaration, else UTF-8. Content: the root; nil for an empty body on a 204, 205 or 304
/// response, a HEAD request, or (with `allowEmpty`) any empty body.
/// Default acceptance: status 200–299; types `application/xml`, `text/xml`, `*/*+xml`. Sends
/// `Accept: application/xml, text/xml` unless the request sets one.
public final class XML: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: XMLOptions
    /// An empty body on any status gives nil instead of a decode error. Default: false.
    public let allowEmpty: Bool
    private var head: ResponseHead?
    private var parser: XMLStreamParser?

    public init(options: XMLOptions = XMLOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = XML.defaultAcceptance()) {
        self.options = options
        self.allowEmpty = allowEmpty
        self.acceptance = acceptance
    }

    /// The process-wide default status codes with the XML media types.
    public static func defaultAcceptance() -> Acceptance {
        Acceptance(statusCodes: Acceptance().statusCodes, contentTypes: XMLOptions.defaultContentTypes)
    }

    public func prepare(_ request: inout Request) throws { XMLAcceptance.prepare(&request) }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try XMLAcceptance.check(head, acceptance, options)
        self.head = head
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        let parser = self.parser ?? XMLStreamParser(options: XMLAcceptance.options(options, head))
        self.parser = parser
        try parser.feed(chunk)
    }

    public func finish() throws -> XMLElement? {
        guard let parser, parser.bytesReceived > 0 else {
            try XMLAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, head)
            return nil
        }
        return try parser.finish()
    }

    public func cleanup(failed: Bool) { parser = nil }
}

/// Path streaming over HTTP: each element matching one of `paths` is handed to `onElement`,
/// complete, as soon as its end tag arrives, then forgotten: memory stays flat however long the
/// feed (like `ElementTree.iterparse` plus `clear()`, without the tree around it).
///
///     let handler = try XMLElements(paths: ["rss/channel/item"]) { _, item in print(item.first("title")?.text ?? "") }
///
/// Content: a summary. Stopping early (a `limit`, or `onElement` throwing `StopTransfer`) ends
/// the transfer with success. Empty bodies, encoding and acceptance: as `XML`.
public final class XMLElements: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: XMLOptions
    public let allowEmpty: Bool
    public let paths: [XMLPath]
    private let limit: Int?
    private let makeCapture: (XMLOptions) -> any XMLStreamCapture
    private var capture: (any XMLStreamCapture)?
    private var parser: XMLElementParser?
    private var head: ResponseHead?
    /// The capture stopped the transfer between two chunks (outside the parser).
    private var stoppedByCapture = false

    /// - Throws: `.invalidArgument` for no paths (or more than 64), an empty path, a limit below 1.
    public convenience init(paths: [XMLPath], options: XMLOptions = XMLOptions(), limit: Int? = nil,
                            allowEmpty: Bool = false, acceptance: Acceptance = XML.defaultAcceptance(),
                            onElement: @escaping (Int, XMLElement) throws -> Void) throws(HTTPContentError) {
        try self.init(paths: paths, options: options, limit: limit, allowEmpty: allowEmpty, acceptance: acceptance) {
            XMLTreeBuilder(options: $0, onElement: onElement)
        }
    }

    /// The same streaming into a capture of one's own instead of `XMLElement` values (the Python
    /// binding writes pickles): `makeCapture` is called once per transfer with the options for
    /// the response.
    package init(paths: [XMLPath], options: XMLOptions, limit: Int?, allowEmpty: Bool, acceptance: Acceptance,
                 makeCapture: @escaping (XMLOptions) -> any XMLStreamCapture) throws(HTTPContentError) {
        _ = try XMLPathMatcher(paths: paths, limit: limit, capture: XMLTreeBuilder(options: options))
        self.paths = paths
        self.options = options
        self.limit = limit
        self.allowEmpty = allowEmpty
        self.acceptance = acceptance
        self.makeCapture = makeCapture
    }

    public func prepare(_ request: inout Request) throws { XMLAcceptance.prepare(&request) }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try XMLAcceptance.check(head, acceptance, options)
        self.head = head
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        let parser: XMLElementParser
        if let p = self.parser {
            parser = p
        } else {
            let o = XMLAcceptance.options(options, head)
            let c = makeCapture(o)
            parser = try XMLElementParser(paths: paths, options: o, limit: limit, capture: c)
            capture = c
            self.parser = parser
        }
        let more: Bool
        do {
            more = try parser.feed(chunk)
        } catch {
            try? capture?.chunkParsed()  // what is complete goes before the error
            throw error
        }
        try chunkParsed()
        if !more { throw StopTransfer() }
    }

    private func chunkParsed() throws {
        do {
            try capture?.chunkParsed()
        } catch is StopTransfer {
            stoppedByCapture = true
            throw StopTransfer()
        }
    }

    public func finish() throws -> XMLElementsSummary {
        guard let parser, parser.bytesReceived > 0 else {
            try XMLAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, head)
            return XMLElementsSummary(count: 0, stoppedEarly: false)
        }
        if stoppedByCapture { return XMLElementsSummary(count: parser.summary.count, stoppedEarly: true) }
        let summary = try parser.finish()
        do { try chunkParsed() } catch is StopTransfer { return XMLElementsSummary(count: summary.count, stoppedEarly: true) }
        return summary
    }

    public func cleanup(failed: Bool) {
        parser = nil
        capture = nil
    }
}

/// The document's events over HTTP, for handlers of one's own: start element (name, namespace,
/// attributes), text, end element (and comments with `keepComments`). Content: nothing; stopping
/// with `StopTransfer` ends the transfer with success. Empty bodies, encoding, acceptance: as `XML`.
public final class XMLEvents: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: XMLOptions
    public let allowEmpty: Bool
    private let onEvent: (XMLEvent, Int) throws -> Void
    private var parser: XMLEventParser?
    private var head: ResponseHead?

    public init(options: XMLOptions = XMLOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = XML.defaultAcceptance(),
                onEvent: @escaping (XMLEvent, Int) throws -> Void) {
        self.options = options
        self.allowEmpty = allowEmpty
        self.acceptance = acceptance
        self.onEvent = onEvent
    }

    public func prepare(_ request: inout Request) throws { XMLAcceptance.prepare(&request) }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try XMLAcceptance.check(head, acceptance, options)
        self.head = head
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        let parser = self.parser ?? XMLEventParser(options: XMLAcceptance.options(options, head), onEvent: onEvent)
        self.parser = parser
        if try !parser.feed(chunk) { throw StopTransfer() }
    }

    public func finish() throws {
        guard let parser, parser.bytesReceived > 0 else {
            try XMLAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, head)
            return
        }
        try parser.finish()
    }

    public func cleanup(failed: Bool) { parser = nil }
}

/// What every XML handler does at header time and with an empty body.
package enum XMLAcceptance {
    package static func prepare(_ request: inout Request) {
        if !request.headers.contains("Accept") { request.headers.add("Accept", "application/xml, text/xml") }
    }

    package static func check(_ head: ResponseHead, _ acceptance: Acceptance, _ options: XMLOptions) throws {
        try acceptance.check(head)
        if let maxSize = options.maxSize, let length = head.contentLength, length > Int64(maxSize),
           !head.hasNoBodyByDefinition {
            throw HTTPContentError(.tooLarge, "XML body of \(length) bytes exceeds the limit of \(maxSize) bytes",
                                   response: head)
        }
    }

    /// The options for this response: its Content-Type charset, unless the caller set an encoding.
    package static func options(_ options: XMLOptions, _ head: ResponseHead?) -> XMLOptions {
        guard options.encoding == nil, let charset = head?.contentType?.charset, !charset.isEmpty else { return options }
        var o = options
        o.encoding = charset
        return o
    }

    package static func acceptEmptyBody(allowEmpty: Bool, _ head: ResponseHead?) throws(HTTPContentError) {
        if allowEmpty || head?.hasNoBodyByDefinition == true { return }
        throw HTTPContentError(.decode, "the body is empty, which is not XML (allowEmpty accepts it)",
                               response: head, offset: 0)
    }
}
