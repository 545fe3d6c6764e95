/// One value found by path streaming.
public struct JSONItem: Sendable {
    /// Which of the given prefixes it was found under (index into the prefixes).
    public var prefixIndex: Int
    public var prefix: JSONPrefix
    public var value: JSONValue
}

/// What a path-streaming parse or transfer did.
public struct JSONItemsSummary: Sendable, Equatable {
    /// Values delivered.
    public var count: Int
    /// True when it stopped before the end of the input (limit reached, prefixes closed, or a
    /// callback threw `StopTransfer`).
    public var stoppedEarly: Bool
}

/// Path streaming without a transfer: feed chunks, and each complete value found under the
/// prefixes is handed to `onItem` as soon as its last byte is parsed. Only the value being built
/// is held in memory.
public final class JSONItemParser {
    public let prefixes: [JSONPrefix]
    public let options: JSONOptions
    private let matcher: JSONPrefixMatcher
    private let parser: YajlParser

    /// - Parameters:
    ///   - prefixes: ijson-style prefixes, 1 to 64, none inside another.
    ///   - options: the parser's limits and leniencies.
    ///   - limit: stop after this many values (nil: no limit).
    ///   - stopWhenPrefixCloses: stop once every prefix has closed (no further value can match).
    ///   - requirePrefix: a prefix with no value (and, for `…item`, no array) is a decode error.
    ///   - onItem: called with each value; throw `StopTransfer` to stop, anything else to fail.
    /// - Throws: `.invalidArgument` for bad prefixes or limit.
    public convenience init(prefixes: [JSONPrefix], options: JSONOptions = JSONOptions(), limit: Int? = nil,
                stopWhenPrefixCloses: Bool = false, requirePrefix: Bool = false,
                onItem: @escaping (JSONItem) throws -> Void) throws(HTTPContentError) {
        let capture = TreeCapture(options: options, prefixes: prefixes, onItem: onItem)
        try self.init(prefixes: prefixes, options: options, limit: limit, stopWhenPrefixCloses: stopWhenPrefixCloses,
                      requirePrefix: requirePrefix, capture: capture)
    }

    init(prefixes: [JSONPrefix], options: JSONOptions, limit: Int?, stopWhenPrefixCloses: Bool,
         requirePrefix: Bool, capture: any JSONPrefixMatcher.Capture) throws(HTTPContentError) {
        self.prefixes = prefixes
        self.options = options
        matcher = try JSONPrefixMatcher(prefixes: prefixes, capture: capture,
                                        multipleValues: options.allowMultipleValues, limit: limit,
                                        stopWhenClosed: stopWhenPrefixCloses, requirePrefixes: requirePrefix)
        parser = YajlParser(options: options, sink: matcher)
    }

    public var bytesFed: Int { parser.bytesFed }
    /// Every byte received, including a chunk whose parse stopped early or failed.
    public var bytesReceived: Int { parser.bytesReceived }
    public var summary: JSONItemsSummary { JSONItemsSummary(count: matcher.delivered, stoppedEarly: parser.stopped) }

    /// Parses a chunk, delivering the values it completes.
    /// - Returns: false once parsing has stopped early (further chunks are ignored).
    /// - Throws: `.decode`/`.tooLarge` for bad input, or what `onItem` threw (wrapped as
    ///   `.callback` unless it is an `HTTPContentError`).
    @discardableResult
    public func feed(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) -> Bool {
        try parser.feedUntilStopped(chunk)
    }

    @discardableResult
    public func feed(_ chunk: [UInt8]) throws(HTTPContentError) -> Bool {
        try parser.feedUntilStopped(chunk)
    }

    /// Ends the input (nothing to check if parsing stopped early).
    public func finish() throws(HTTPContentError) -> JSONItemsSummary {
        try parser.finishUntilStopped()
        if !parser.stopped { try matcher.finish() }
        return summary
    }
}
