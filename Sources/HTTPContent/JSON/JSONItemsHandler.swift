/// Path streaming over HTTP (ijson's `items`): each complete value under the prefixes is handed
/// to `onItem` as soon as its last byte arrives, keeping at most one such value in memory.
///
///     let handler = try JSONItems(prefix: "results.item") { item in print(item.value) }
///     try client.get(url, handler: handler)
///
/// Content: a summary (values delivered, whether it stopped early). Stopping early (a `limit`,
/// `stopWhenPrefixCloses`, or `onItem` throwing `StopTransfer`) ends the transfer with success.
/// Empty bodies follow the `JSON` handler's rule. Default acceptance: as `JSON`.
public final class JSONItems: SelectiveHandler {
    public var acceptance: Acceptance
    /// An empty body gives no items instead of a decode error.
    public let allowEmpty: Bool
    private let parser: JSONItemParser
    private var head: ResponseHead?

    /// - Parameters:
    ///   - prefixes: ijson-style prefixes, 1 to 64, none inside another.
    ///   - options: the parser's limits and leniencies.
    ///   - limit: stop after this many values (nil: no limit).
    ///   - stopWhenPrefixCloses: stop once every prefix has closed (no further value can match).
    ///   - requirePrefix: a prefix with no value (and, for `…item`, no array) is a decode error.
    ///   - allowEmpty: an empty body gives no items instead of a decode error (as `JSON`).
    ///   - acceptance: the statuses and media types taken (default: as `JSON`).
    ///   - validator: checks each value before `onItem` sees it (a `JSONSchema`); an invalid
    ///     value fails the transfer with its `.decode` error, or is skipped with `skipInvalid`.
    ///   - skipInvalid: skip a value the validator refuses instead of failing.
    ///   - onItem: called with each value; throw `StopTransfer` to stop, anything else to fail.
    /// - Throws: `.invalidArgument` for bad prefixes or limit.
    public init(prefixes: [JSONPrefix], options: JSONOptions = JSONOptions(), limit: Int? = nil,
                stopWhenPrefixCloses: Bool = false, requirePrefix: Bool = false, allowEmpty: Bool = false,
                acceptance: Acceptance = JSON.defaultAcceptance(),
                validator: (any JSONValueValidator)? = nil, skipInvalid: Bool = false,
                onItem: @escaping (JSONItem) throws -> Void) throws(HTTPContentError) {
        var deliver = onItem
        if let validator {
            deliver = { item in
                do {
                    try validator.check(item.value)
                } catch {
                    if skipInvalid { return }
                    var e = HTTPContentError.wrapping(error)
                    e.message = "item under \"\(item.prefix)\": " + e.message
                    throw e
                }
                try onItem(item)
            }
        }
        parser = try JSONItemParser(prefixes: prefixes, options: options, limit: limit,
                                    stopWhenPrefixCloses: stopWhenPrefixCloses, requirePrefix: requirePrefix,
                                    onItem: deliver)
        self.allowEmpty = allowEmpty
        self.acceptance = JSONAcceptance.adjusted(acceptance, options)
    }

    /// Path streaming that lends each value to `lend` instead of handing over a `JSONItem` (the
    /// C ABI swaps it into the node it passes, and back, so no value is copied per item). No
    /// validator: the ABI uses the `onItem` form when a schema is set.
    package init(prefixes: [JSONPrefix], options: JSONOptions, limit: Int?, stopWhenPrefixCloses: Bool,
                 requirePrefix: Bool, allowEmpty: Bool, acceptance: Acceptance,
                 lendingItems lend: @escaping JSONItemLender) throws(HTTPContentError) {
        parser = try JSONItemParser(prefixes: prefixes, options: options, limit: limit,
                                    stopWhenPrefixCloses: stopWhenPrefixCloses, requirePrefix: requirePrefix,
                                    capture: TreeCapture(options: options, prefixes: prefixes, lend: lend))
        self.allowEmpty = allowEmpty
        self.acceptance = JSONAcceptance.adjusted(acceptance, options)
    }

    /// Items under one `prefix` (ijson's syntax: `item`, `results.item`), each passed to
    /// `onItem` as soon as it is complete.
    public convenience init(prefix: JSONPrefix, options: JSONOptions = JSONOptions(), limit: Int? = nil,
                            stopWhenPrefixCloses: Bool = false, requirePrefix: Bool = false,
                            onItem: @escaping (JSONItem) throws -> Void) throws(HTTPContentError) {
        try self.init(prefixes: [prefix], options: options, limit: limit, stopWhenPrefixCloses: stopWhenPrefixCloses,
                      requirePrefix: requirePrefix, onItem: onItem)
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

    public func finish() throws -> JSONItemsSummary {
        if parser.bytesReceived == 0 {
            try JSONAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, acceptance, head)
            return parser.summary
        }
        return try parser.finish()
    }
}

/// Path streaming in batches, for callers that cross a slow boundary per call (Python through
/// ctypes): matched values are written, without building trees, into one JSON array text
/// `[v1,v2,...]` per batch, handed to `onBatch` when it reaches `batchBytes`, when the prefix
/// changes, and at the end of every received chunk (so values are never held back waiting for
/// more data). Numbers keep their exact text. Values nested deeper than 127 levels cannot be
/// batched (yajl_gen's limit).
///
/// Content, acceptance and stopping: as `JSONItems`; `limit` counts values.
public final class JSONItemBatches: SelectiveHandler {
    /// A batch: the prefix index, the array text (valid only during the call) and its length.
    public typealias OnBatch = (_ prefixIndex: Int, _ json: UnsafeRawBufferPointer, _ count: Int) throws -> Void

    public var acceptance: Acceptance
    public let allowEmpty: Bool
    private let capture: any JSONBatchWriter
    private let parser: JSONItemParser
    private var head: ResponseHead?
    /// `onBatch` threw `StopTransfer` while a batch was handed over between chunks.
    private var stoppedByCallback = false

    /// - Parameters:
    ///   - prefixes: ijson-style prefixes, 1 to 64, none inside another.
    ///   - options: the parser's limits and leniencies.
    ///   - limit: stop after this many values (nil: no limit).
    ///   - stopWhenPrefixCloses: stop once every prefix has closed (no further value can match).
    ///   - requirePrefix: a prefix with no value (and, for `…item`, no array) is a decode error.
    ///   - allowEmpty: an empty body gives no items instead of a decode error (as `JSON`).
    ///   - acceptance: the statuses and media types taken (default: as `JSON`).
    ///   - batchBytes: hand a batch over once its text reaches this size. Default 64 KiB.
    ///   - onBatch: called with each batch; throw `StopTransfer` to stop, anything else to fail.
    public convenience init(prefixes: [JSONPrefix], options: JSONOptions = JSONOptions(), limit: Int? = nil,
                stopWhenPrefixCloses: Bool = false, requirePrefix: Bool = false, allowEmpty: Bool = false,
                batchBytes: Int = 64 * 1024, acceptance: Acceptance = JSON.defaultAcceptance(),
                onBatch: @escaping OnBatch) throws(HTTPContentError) {
        try self.init(prefixes: prefixes, options: options, limit: limit, stopWhenPrefixCloses: stopWhenPrefixCloses,
                      requirePrefix: requirePrefix, allowEmpty: allowEmpty, acceptance: acceptance,
                      capture: BatchCapture(options: options, batchBytes: batchBytes, deliver: onBatch))
    }

    /// With a batch writer of the caller's (the bindings' layer writes Python's marshal format).
    package init(prefixes: [JSONPrefix], options: JSONOptions, limit: Int?, stopWhenPrefixCloses: Bool,
                 requirePrefix: Bool, allowEmpty: Bool, acceptance: Acceptance,
                 capture: any JSONBatchWriter) throws(HTTPContentError) {
        self.capture = capture
        parser = try JSONItemParser(prefixes: prefixes, options: options, limit: limit,
                                    stopWhenPrefixCloses: stopWhenPrefixCloses, requirePrefix: requirePrefix,
                                    capture: capture)
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
        let more: Bool
        do {
            more = try parser.feed(chunk)
        } catch {
            // The values completed before the bad byte are delivered first, as `JSONItems` does.
            try? capture.flushCompleted()
            throw error
        }
        try flush()
        if !more { throw StopTransfer() }
    }

    public func finish() throws -> JSONItemsSummary {
        if stoppedByCallback { return JSONItemsSummary(count: parser.summary.count, stoppedEarly: true) }
        if parser.bytesReceived == 0 {
            try JSONAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, acceptance, head)
            return parser.summary
        }
        let summary: JSONItemsSummary
        do {
            summary = try parser.finish()
        } catch {
            try? capture.flushCompleted()
            throw error
        }
        do { try flush() } catch is StopTransfer { return JSONItemsSummary(count: summary.count, stoppedEarly: true) }
        return summary
    }

    private func flush() throws {
        do {
            try capture.flush()
        } catch is StopTransfer {
            stoppedByCallback = true
            throw StopTransfer()
        } catch {
            throw HTTPContentError.wrapping(error)
        }
    }
}
