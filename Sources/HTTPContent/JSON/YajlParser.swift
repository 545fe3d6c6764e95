import CYajl
#if canImport(Glibc)
import Glibc
#endif

/// What the yajl callbacks deliver. Byte buffers are yajl's, valid only during the call.
/// Throwing stops the parse; the parser rethrows the error from `feed` or `finish`.
package protocol JSONEventSink: AnyObject {
    func null() throws
    func bool(_ value: Bool) throws
    func number(_ token: UnsafeRawBufferPointer) throws
    func string(_ bytes: UnsafeRawBufferPointer) throws
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws
    func startMap() throws
    func endMap() throws
    func startArray() throws
    func endArray() throws
}

/// One yajl parse: feeds chunks to `yajl_parse`, ends with `yajl_complete_parse`, enforces the
/// options yajl lacks (depth, size, form feed) and turns failures into decode errors carrying
/// the byte offset, yajl's reason and the first bytes of the input.
package final class YajlParser {
    let options: JSONOptions
    let sink: any JSONEventSink
    /// The sink when it is the tree builder (unretained: `sink` keeps it): its own callback table
    /// calls it directly, without the protocol's dynamic dispatch.
    fileprivate let tree: Unmanaged<JSONTreeBuilder>?
    /// The same when the sink is a path-streaming matcher.
    fileprivate let matcher: Unmanaged<JSONPrefixMatcher>?
    /// The matcher's tree builder when it builds the captured values (path streaming with trees):
    /// while one is being built, yajl calls it through `captureCallbacks`, past the matcher.
    fileprivate let captureTree: Unmanaged<JSONTreeBuilder>?
    /// This parser's own callbacks table when it has a `captureTree`: yajl reads the table at each
    /// event, so its entries are switched between the matcher's and the capture's while parsing.
    private let ownTable: UnsafeMutablePointer<yajl_callbacks>?
    /// The matcher's and the capture's tables, read once here: the globals' lazy initialization
    /// check would otherwise run at every switch (twice per captured value).
    fileprivate let matcherTable: UnsafeMutablePointer<yajl_callbacks>
    fileprivate let captureTable: UnsafeMutablePointer<yajl_callbacks>
    /// nil only if yajl could not allocate (then every feed fails).
    private var handle: yajl_handle?
    /// Bytes given to yajl before the current `feed`.
    package private(set) var bytesFed = 0
    /// Every byte received, including a chunk whose parse stopped or failed.
    package private(set) var bytesReceived = 0
    @exclusivity(unchecked) private(set) var depth = 0
    /// An error thrown inside a callback (our own limits or the sink's), reported instead of
    /// yajl's "client cancelled".
    @exclusivity(unchecked) private var callbackError: (any Error)?
    private var failed: (any Error)?
    private var finished = false
    /// Set once a sink stopped parsing early with `StopTransfer` (see `feedUntilStopped`).
    fileprivate(set) var stopped = false
    /// Whether any event was delivered (an empty stream of multiple values is no error).
    @exclusivity(unchecked) private var sawEvent = false
    /// The first `options.errorBodyLimit` bytes, for the error's `body`; dropped on success.
    private var head: [UInt8] = []

    package init(options: JSONOptions, sink: any JSONEventSink) {
        self.options = options
        self.sink = sink
        tree = (sink as? JSONTreeBuilder).map { Unmanaged.passUnretained($0) }
        let matcherSink = sink as? JSONPrefixMatcher
        matcher = matcherSink.map { Unmanaged.passUnretained($0) }
        captureTree = matcherSink?.tree
        matcherTable = matcherCallbacks
        captureTable = captureCallbacks
        // yajl keeps the callbacks pointer: a process-lifetime table, or this parser's own (freed
        // after the handle). The context is this parser, unretained (the parser owns the handle).
        if captureTree != nil {
            let own = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
            own.initialize(to: matcherTable.pointee)
            ownTable = own
        } else {
            ownTable = nil
        }
        let table = tree != nil ? treeCallbacks : ownTable ?? (matcher != nil ? matcherCallbacks : yajlCallbacks)
        handle = yajl_alloc(table, nil, Unmanaged.passUnretained(self).toOpaque())
        guard let handle else { return }
        _ = hc_yajl_config(handle, yajl_allow_comments, options.allowComments ? 1 : 0)
        _ = hc_yajl_config(handle, yajl_dont_validate_strings, options.strictUTF8 ? 0 : 1)
        _ = hc_yajl_config(handle, yajl_allow_multiple_values, options.allowMultipleValues ? 1 : 0)
        _ = hc_yajl_config(handle, yajl_allow_trailing_garbage, options.allowTrailingGarbage ? 1 : 0)
        _ = hc_yajl_config(handle, yajl_allow_partial_values, options.allowPartialValues ? 1 : 0)
    }

    deinit {
        if let handle { yajl_free(handle) }
        ownTable?.deallocate()
    }

    // MARK: - Feeding

    /// Parses one chunk. Events for every value completed in it have been delivered on return.
    package func feed(_ chunk: UnsafeRawBufferPointer) throws {
        if let failed { throw failed }
        guard let handle else { throw fail(HTTPContentError(.decode, "yajl could not allocate a parser")) }
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        if let maxSize = options.maxSize, bytesFed + chunk.count > maxSize {
            throw fail(HTTPContentError(.tooLarge, "JSON body exceeds the limit of \(maxSize) bytes",
                                        offset: maxSize))
        }
        bytesReceived += chunk.count
        keepHead(chunk)
        // RFC 8259 has no form feed outside strings, and a raw one inside a string is invalid
        // too; yajl takes it for whitespace, so any 0x0C byte ends the parse here.
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var length = chunk.count
        var formFeedAt: Int? = nil
        if let ff = memchr(base, 0x0C, chunk.count) {
            let at = base.distance(to: UnsafeRawPointer(ff))
            formFeedAt = at
            length = at
        }
        if length > 0 {
            let status = yajl_parse(handle, bytes, length)
            if status != yajl_status_ok {
                throw fail(parseError(handle, status, consumed: Int(yajl_get_bytes_consumed(handle))))
            }
        }
        if let at = formFeedAt {
            // The offset is the bad byte's index in the body, as for every decode error.
            let offset = bytesFed + at
            throw fail(HTTPContentError(.decode,
                "invalid JSON at byte \(offset): lexical error: form feed (0x0C) is not allowed in JSON text (RFC 8259)",
                body: head, offset: offset))
        }
        bytesFed += chunk.count
    }

    func feed(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try feed($0) }
    }

    /// Ends the input: an unfinished document is a decode error (unless partial values are allowed).
    package func finish() throws {
        if let failed { throw failed }
        guard !finished else { return }
        guard let handle else { throw fail(HTTPContentError(.decode, "yajl could not allocate a parser")) }
        finished = true
        let status = yajl_complete_parse(handle)
        if status != yajl_status_ok, !(options.allowMultipleValues && !sawEvent && callbackError == nil) {
            throw fail(parseError(handle, status, consumed: nil))
        }
        head = []
    }

    // MARK: - Errors

    private func keepHead(_ chunk: UnsafeRawBufferPointer) {
        let room = options.errorBodyLimit - head.count
        if room > 0 { head.append(contentsOf: chunk.prefix(room)) }
    }

    @discardableResult
    private func fail(_ error: any Error) -> any Error {
        failed = error
        return error
    }

    private func parseError(_ handle: yajl_handle, _ status: yajl_status, consumed: Int?) -> any Error {
        // yajl counts the bytes consumed through the offending one; report that byte's index, so
        // every decode error's offset (JSON, text) means the same thing.
        let offset = bytesFed + max((consumed ?? 0) - 1, 0)
        if status == yajl_status_client_canceled, let error = callbackError {
            // Our limits and the sink's decode errors get the offset and body here.
            guard var own = error as? HTTPContentError, own.code == .decode else { return error }
            if own.offset == nil {
                own.offset = offset
                // A schema violation found while streaming is not bad JSON: its message stays
                // the one whole-document validation gives.
                if own.violations.isEmpty { own.message = "invalid JSON at byte \(offset): \(own.message)" }
            }
            if own.body.isEmpty { own.body = head }
            return own
        }
        var reason = "parse error"
        if let text = yajl_get_error(handle, 0, nil, 0) {
            reason = String(cString: text)
            yajl_free_error(handle, text)
        }
        while let last = reason.last, last == "\n" || last == " " { reason.removeLast() }
        let at = consumed == nil ? bytesFed : offset
        return HTTPContentError(.decode, "invalid JSON at byte \(at): \(reason)", body: head, offset: at)
    }

    // MARK: - Callback entry points

    @inline(__always)
    fileprivate func deliver(_ event: () throws -> Void) -> Int32 {
        sawEvent = true
        do {
            try event()
            return 1
        } catch {
            callbackError = error
            return 0
        }
    }

    @inline(__always)
    fileprivate func open(_ event: () throws -> Void) -> Int32 {
        descend() ? deliver(event) : 0
    }

    /// One level deeper; false (the error set) past the maximum depth.
    @inline(__always)
    fileprivate func descend() -> Bool {
        depth += 1
        if depth > options.maxDepth {
            callbackError = HTTPContentError(.decode,
                "nesting deeper than the maximum depth of \(options.maxDepth)")
            return false
        }
        return true
    }

    @inline(__always)
    fileprivate func close(_ event: () throws -> Void) -> Int32 {
        depth -= 1
        return deliver(event)
    }

    // MARK: - Capturing past the matcher

    /// After the matcher handled a container's start: when that began a captured value, yajl
    /// calls the tree builder directly (`captureCallbacks`) until the value is complete.
    @inline(__always)
    fileprivate func enterCaptureIfStarted() {
        guard let ownTable, let matcher, matcher._withUnsafeGuaranteedRef({ $0.capturingTree != nil }) else { return }
        ownTable.pointee = captureTable.pointee
    }

    /// An event of a captured value, straight to the tree builder (as the matcher would pass it).
    @inline(__always)
    fileprivate func captured(_ event: (JSONTreeBuilder) throws -> Void) -> Int32 {
        do {
            try captureTree.unsafelyUnwrapped._withUnsafeGuaranteedRef(event)
            return 1
        } catch {
            callbackError = error
            return 0
        }
    }

    @inline(__always)
    fileprivate func openCaptured(_ event: (JSONTreeBuilder) throws -> Void) -> Int32 {
        descend() ? captured(event) : 0
    }

    /// A container of a captured value closes; when that completes the value, the matcher takes
    /// the events again and delivers it.
    @inline(__always)
    fileprivate func closeCaptured(_ event: (JSONTreeBuilder) throws -> Void) -> Int32 {
        depth -= 1
        do {
            let tree = captureTree.unsafelyUnwrapped
            try tree._withUnsafeGuaranteedRef(event)
            if !tree._withUnsafeGuaranteedRef({ $0.isOpen }) {
                ownTable.unsafelyUnwrapped.pointee = matcherTable.pointee
                try matcher.unsafelyUnwrapped._withUnsafeGuaranteedRef { try $0.capturedValueClosed() }
            }
            return 1
        } catch {
            callbackError = error
            return 0
        }
    }
}

// MARK: - The callbacks table (non-capturing C functions; the parser travels as ctx)

/// Runs `body` with the parser behind `ctx`, without retaining it (yajl only calls back from
/// inside `yajl_parse`/`yajl_complete_parse`, while the parser is alive and busy).
@inline(__always)
private func withParser(_ ctx: UnsafeMutableRawPointer?, _ body: (YajlParser) -> Int32) -> Int32 {
    guard let ctx else { return 0 }
    return Unmanaged<YajlParser>.fromOpaque(ctx)._withUnsafeGuaranteedRef(body)
}

@inline(__always)
private func buffer(_ p: UnsafePointer<UInt8>?, _ n: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: p, count: n)
}

nonisolated(unsafe) private let yajlCallbacks: UnsafeMutablePointer<yajl_callbacks> = {
    let table = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    table.initialize(to: yajl_callbacks(
        yajl_null: { ctx in
            withParser(ctx) { me in me.deliver { try me.sink.null() } }
        },
        yajl_boolean: { ctx, b in
            withParser(ctx) { me in me.deliver { try me.sink.bool(b != 0) } }
        },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { ctx, p, n in
            withParser(ctx) { me in me.deliver { try me.sink.number(UnsafeRawBufferPointer(start: p, count: n)) } }
        },
        yajl_string: { ctx, p, n in
            withParser(ctx) { me in me.deliver { try me.sink.string(buffer(p, n)) } }
        },
        yajl_start_map: { ctx in
            withParser(ctx) { me in me.open { try me.sink.startMap() } }
        },
        yajl_map_key: { ctx, p, n in
            withParser(ctx) { me in me.deliver { try me.sink.mapKey(buffer(p, n)) } }
        },
        yajl_end_map: { ctx in
            withParser(ctx) { me in me.close { try me.sink.endMap() } }
        },
        yajl_start_array: { ctx in
            withParser(ctx) { me in me.open { try me.sink.startArray() } }
        },
        yajl_end_array: { ctx in
            withParser(ctx) { me in me.close { try me.sink.endArray() } }
        }))
    return table
}()

/// Runs `body` with the tree builder of the parser behind `ctx` (unretained, as `withParser`).
@inline(__always)
private func withTree(_ ctx: UnsafeMutableRawPointer?, _ step: TreeStep, _ body: (JSONTreeBuilder) throws -> Void) -> Int32 {
    withParser(ctx) { me in
        let event = { try me.tree.unsafelyUnwrapped._withUnsafeGuaranteedRef { try body($0) } }
        switch step {
        case .value: return me.deliver(event)
        case .open: return me.open(event)
        case .close: return me.close(event)
        }
    }
}

private enum TreeStep { case value, open, close }

/// The same table for the tree builder, called without dynamic dispatch.
nonisolated(unsafe) private let treeCallbacks: UnsafeMutablePointer<yajl_callbacks> = {
    let table = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    table.initialize(to: yajl_callbacks(
        yajl_null: { ctx in withTree(ctx, .value) { try $0.null() } },
        yajl_boolean: { ctx, b in withTree(ctx, .value) { try $0.bool(b != 0) } },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { ctx, p, n in
            withTree(ctx, .value) { try $0.number(UnsafeRawBufferPointer(start: p, count: n)) }
        },
        yajl_string: { ctx, p, n in withTree(ctx, .value) { try $0.string(buffer(p, n)) } },
        yajl_start_map: { ctx in withTree(ctx, .open) { try $0.startMap() } },
        yajl_map_key: { ctx, p, n in withTree(ctx, .value) { try $0.mapKey(buffer(p, n)) } },
        yajl_end_map: { ctx in withTree(ctx, .close) { try $0.endMap() } },
        yajl_start_array: { ctx in withTree(ctx, .open) { try $0.startArray() } },
        yajl_end_array: { ctx in withTree(ctx, .close) { try $0.endArray() } }))
    return table
}()

/// Runs `body` with the matcher of the parser behind `ctx` (unretained, as `withParser`).
@inline(__always)
private func withMatcher(_ ctx: UnsafeMutableRawPointer?, _ step: TreeStep,
                         _ body: (JSONPrefixMatcher) throws -> Void) -> Int32 {
    withParser(ctx) { me in
        let event = { try me.matcher.unsafelyUnwrapped._withUnsafeGuaranteedRef { try body($0) } }
        switch step {
        case .value: return me.deliver(event)
        case .open:
            let rc = me.open(event)
            if rc == 1 { me.enterCaptureIfStarted() }
            return rc
        case .close: return me.close(event)
        }
    }
}

/// A scalar or member name for the matcher: straight to the tree builder while a value is being
/// captured (most events of path streaming), through the matcher otherwise.
@inline(__always)
private func withMatcherValue(_ ctx: UnsafeMutableRawPointer?, _ direct: (JSONTreeBuilder) throws -> Void,
                              _ body: (JSONPrefixMatcher) throws -> Void) -> Int32 {
    withParser(ctx) { me in
        me.deliver {
            try me.matcher.unsafelyUnwrapped._withUnsafeGuaranteedRef { matcher in
                if let tree = matcher.capturingTree { return try tree._withUnsafeGuaranteedRef(direct) }
                try body(matcher)
            }
        }
    }
}

/// The same table for path streaming's matcher, called without dynamic dispatch.
nonisolated(unsafe) private let matcherCallbacks: UnsafeMutablePointer<yajl_callbacks> = {
    let table = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    table.initialize(to: yajl_callbacks(
        yajl_null: { ctx in withMatcherValue(ctx, { try $0.null() }, { try $0.null() }) },
        yajl_boolean: { ctx, b in withMatcherValue(ctx, { try $0.bool(b != 0) }, { try $0.bool(b != 0) }) },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { ctx, p, n in
            let token = UnsafeRawBufferPointer(start: p, count: n)
            return withMatcherValue(ctx, { try $0.number(token) }, { try $0.number(token) })
        },
        yajl_string: { ctx, p, n in withMatcherValue(ctx, { try $0.string(buffer(p, n)) }, { try $0.string(buffer(p, n)) }) },
        yajl_start_map: { ctx in withMatcher(ctx, .open) { try $0.startMap() } },
        yajl_map_key: { ctx, p, n in withMatcherValue(ctx, { try $0.mapKey(buffer(p, n)) }, { try $0.mapKey(buffer(p, n)) }) },
        yajl_end_map: { ctx in withMatcher(ctx, .close) { try $0.endMap() } },
        yajl_start_array: { ctx in withMatcher(ctx, .open) { try $0.startArray() } },
        yajl_end_array: { ctx in withMatcher(ctx, .close) { try $0.endArray() } }))
    return table
}()

/// The table while a captured value is being built (see `YajlParser.enterCaptureIfStarted`):
/// every event goes to the tree builder, containers through the depth limit.
nonisolated(unsafe) private let captureCallbacks: UnsafeMutablePointer<yajl_callbacks> = {
    let table = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    table.initialize(to: yajl_callbacks(
        yajl_null: { ctx in withParser(ctx) { me in me.captured { try $0.null() } } },
        yajl_boolean: { ctx, b in withParser(ctx) { me in me.captured { try $0.bool(b != 0) } } },
        yajl_integer: nil,
        yajl_double: nil,
        yajl_number: { ctx, p, n in
            withParser(ctx) { me in me.captured { try $0.number(UnsafeRawBufferPointer(start: p, count: n)) } }
        },
        yajl_string: { ctx, p, n in withParser(ctx) { me in me.captured { try $0.string(buffer(p, n)) } } },
        yajl_start_map: { ctx in withParser(ctx) { me in me.openCaptured { try $0.startMap() } } },
        yajl_map_key: { ctx, p, n in withParser(ctx) { me in me.captured { try $0.mapKey(buffer(p, n)) } } },
        yajl_end_map: { ctx in withParser(ctx) { me in me.closeCaptured { try $0.endMap() } } },
        yajl_start_array: { ctx in withParser(ctx) { me in me.openCaptured { try $0.startArray() } } },
        yajl_end_array: { ctx in withParser(ctx) { me in me.closeCaptured { try $0.endArray() } } }))
    return table
}()

// MARK: - Stopping early

extension YajlParser {
    /// Feeds a chunk, treating a sink's `StopTransfer` as the end of parsing with success.
    /// - Returns: false once stopped (later chunks are ignored).
    func feedUntilStopped(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) -> Bool {
        guard !stopped else { return false }
        do {
            try feed(chunk)
        } catch is StopTransfer {
            stopped = true
            return false
        } catch {
            throw HTTPContentError.wrapping(error)
        }
        return true
    }

    func feedUntilStopped(_ bytes: [UInt8]) throws(HTTPContentError) -> Bool {
        do {
            return try bytes.withUnsafeBytes { raw throws(HTTPContentError) in try feedUntilStopped(raw) }
        } catch {
            throw HTTPContentError.wrapping(error)
        }
    }

    /// Ends the input unless parsing already stopped; a `StopTransfer` here stops it too.
    func finishUntilStopped() throws(HTTPContentError) {
        guard !stopped else { return }
        do {
            try finish()
        } catch is StopTransfer {
            stopped = true
        } catch {
            throw HTTPContentError.wrapping(error)
        }
    }
}
