/// Builds `XMLElement` values from parser events: the whole document, or (inside a path
/// matcher) each matching element, handed to `onElement` once complete and then forgotten.
package final class XMLTreeBuilder: XMLStreamCapture {
    let options: XMLOptions
    private var stack: [XMLElement] = []
    private var pending: [UInt8] = []
    /// The last element completed at the outermost level (the document's root).
    private(set) var root: XMLElement?
    var onElement: ((Int, XMLElement) throws -> Void)?

    package init(options: XMLOptions, onElement: ((Int, XMLElement) throws -> Void)? = nil) {
        self.options = options
        self.onElement = onElement
    }

    private func flushText() {
        guard !pending.isEmpty, !stack.isEmpty else {
            pending.removeAll(keepingCapacity: true)
            return
        }
        stack[stack.count - 1].children.append(.text(String(decoding: pending, as: UTF8.self)))
        pending.removeAll(keepingCapacity: true)
    }

    package func start(_ tag: XMLStartTag, depth: Int) throws {
        flushText()
        stack.append(tag.element())
    }

    package func text(_ bytes: UnsafeBufferPointer<UInt8>, cdata: Bool) throws {
        guard !stack.isEmpty else { return }
        if cdata && options.keepCDATA {
            flushText()
            stack[stack.count - 1].children.append(.cdata(xmlString(bytes)))
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    package func comment(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        guard !stack.isEmpty else { return }
        flushText()
        stack[stack.count - 1].children.append(.comment(xmlString(bytes)))
    }

    package func end(depth: Int) throws {
        flushText()
        guard let element = stack.popLast() else { return }
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(.element(element))
        }
    }

    package func done(path: Int) throws {
        guard let root else { return }
        self.root = nil
        try onElement?(path, root)
    }

    /// Elements go to `onElement` one by one as they end: nothing waits for the chunk's end.
    package func chunkParsed() throws {}
}

/// One event of `XMLEventParser` / the `XMLEvents` handler. Text is delivered whole between two
/// tags (adjacent pieces and CDATA joined, unless `keepCDATA` keeps a CDATA section apart).
public enum XMLEvent: Sendable, Equatable {
    case startElement(name: String, namespace: String?, prefix: String?, attributes: [XMLAttribute])
    case text(String)
    case cdata(String)
    case comment(String)
    case endElement(name: String, namespace: String?)
}

/// Turns parser events into `XMLEvent`s for a caller's callback.
final class XMLEventEmitter: XMLEventSink {
    let options: XMLOptions
    private let onEvent: (XMLEvent, Int) throws -> Void
    private var names: [(String, String?)] = []
    private var pending: [UInt8] = []

    init(options: XMLOptions, onEvent: @escaping (XMLEvent, Int) throws -> Void) {
        self.options = options
        self.onEvent = onEvent
    }

    private func flushText() throws {
        guard !pending.isEmpty else { return }
        let text = String(decoding: pending, as: UTF8.self)
        pending.removeAll(keepingCapacity: true)
        try onEvent(.text(text), names.count)
    }

    func start(_ tag: XMLStartTag, depth: Int) throws {
        try flushText()
        let e = tag.element()
        names.append((e.name, e.namespace))
        try onEvent(.startElement(name: e.name, namespace: e.namespace, prefix: e.prefix, attributes: e.attributes), depth)
    }

    func text(_ bytes: UnsafeBufferPointer<UInt8>, cdata: Bool) throws {
        guard !names.isEmpty else { return }
        if cdata && options.keepCDATA {
            try flushText()
            try onEvent(.cdata(xmlString(bytes)), names.count)
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    func comment(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        try flushText()
        try onEvent(.comment(xmlString(bytes)), names.count)
    }

    func end(depth: Int) throws {
        try flushText()
        guard let (name, ns) = names.popLast() else { return }
        try onEvent(.endElement(name: name, namespace: ns), depth)
    }
}

// MARK: - Parsers without a transfer

/// An incremental XML parser that builds the document's root element: feed chunks as they
/// arrive (each is parsed at once), then `finish`.
public final class XMLStreamParser {
    public let options: XMLOptions
    private let builder: XMLTreeBuilder
    private let parser: XMLPushParser

    public init(options: XMLOptions = XMLOptions()) {
        self.options = options
        builder = XMLTreeBuilder(options: options)
        parser = XMLPushParser(options: options, sink: builder)
    }

    public var bytesReceived: Int { parser.bytesReceived }

    /// - Throws: `.decode` (line, column, `offset`, `body`) or `.tooLarge`.
    public func feed(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) { try parser.feed(chunk) }
    public func feed(_ chunk: [UInt8]) throws(HTTPContentError) { try parser.feed(chunk) }

    /// Ends the input and returns the root element.
    /// - Throws: `.decode` for an empty or incomplete document.
    public func finish() throws(HTTPContentError) -> XMLElement {
        try parser.finish()
        guard let root = builder.root else {
            throw HTTPContentError(.decode, "invalid XML: no root element", offset: parser.bytesFed)
        }
        return root
    }
}

/// What a path-streaming parse or transfer did.
public struct XMLElementsSummary: Sendable, Equatable {
    /// Elements delivered.
    public var count: Int
    /// True when it stopped before the end of the input (limit reached, or a callback threw
    /// `StopTransfer`).
    public var stoppedEarly: Bool

    package init(count: Int, stoppedEarly: Bool) {
        self.count = count
        self.stoppedEarly = stoppedEarly
    }
}

/// Path streaming without a transfer: each element matching one of `paths` is handed to
/// `onElement` (with the path's index) as soon as its end tag is parsed, then forgotten. Only the
/// element being built is held in memory.
public final class XMLElementParser {
    public let paths: [XMLPath]
    private let matcher: XMLPathMatcher
    private let parser: XMLPushParser

    /// - Parameters:
    ///   - paths: 1 to 64 element paths from the root element (`feed/entry`).
    ///   - options: the parser's limits (depth, sizes, entities).
    ///   - limit: stop after this many elements (nil: no limit).
    ///   - onElement: throw `StopTransfer` to stop, anything else to fail.
    /// - Throws: `.invalidArgument` for no paths, an empty path or a limit below 1.
    public convenience init(paths: [XMLPath], options: XMLOptions = XMLOptions(), limit: Int? = nil,
                            onElement: @escaping (Int, XMLElement) throws -> Void) throws(HTTPContentError) {
        try self.init(paths: paths, options: options, limit: limit,
                      capture: XMLTreeBuilder(options: options, onElement: onElement))
    }

    package init(paths: [XMLPath], options: XMLOptions, limit: Int?, capture: any XMLPathMatcher.Capture) throws(HTTPContentError) {
        self.paths = paths
        matcher = try XMLPathMatcher(paths: paths, limit: limit, capture: capture)
        parser = XMLPushParser(options: options, sink: matcher)
    }

    public var bytesReceived: Int { parser.bytesReceived }
    public var summary: XMLElementsSummary { XMLElementsSummary(count: matcher.delivered, stoppedEarly: parser.stopped) }

    /// - Returns: false once parsing has stopped early.
    @discardableResult
    public func feed(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) -> Bool { try parser.feed(chunk) }

    public func finish() throws(HTTPContentError) -> XMLElementsSummary {
        try parser.finish()
        return summary
    }
}

/// The events of a document, without a transfer.
public final class XMLEventParser {
    private let parser: XMLPushParser

    /// - Parameters:
    ///   - options: the parser's limits (depth, sizes, entities).
    ///   - onEvent: called with each event and the depth of the element it belongs to (the
    ///     element itself for start and end); throw `StopTransfer` to stop.
    public init(options: XMLOptions = XMLOptions(), onEvent: @escaping (XMLEvent, Int) throws -> Void) {
        parser = XMLPushParser(options: options, sink: XMLEventEmitter(options: options, onEvent: onEvent))
    }

    public var bytesReceived: Int { parser.bytesReceived }
    @discardableResult
    public func feed(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) -> Bool { try parser.feed(chunk) }
    public func finish() throws(HTTPContentError) { try parser.finish() }
}

extension XMLElement {
    /// Parses a complete XML document and returns its root element.
    /// - Throws: `HTTPContentError` `.decode` with line, column and offset.
    public init(parsing bytes: some Collection<UInt8>, options: XMLOptions = XMLOptions()) throws(HTTPContentError) {
        let parser = XMLStreamParser(options: options)
        try parser.feed(Array(bytes))
        self = try parser.finish()
    }

    public init(parsing text: String, options: XMLOptions = XMLOptions()) throws(HTTPContentError) {
        try self.init(parsing: Array(text.utf8), options: options)
    }
}
