import HTTPContent

// The record streams of the C ABI: lines, JSON records, Server-Sent Events (header section
// "Record streams"). Translation only: the parsing lives in Sources/HTTPContent/Records.

/// `hc_records_options`, field for field (version 1).
struct RecordsOptions {
    var version: UInt32
    var maxLineSize: Int
    var maxRecordSize: Int
    var framing: Int32
    var skipBadRecords: Int32
    var strict: Int32
    var reconnect: Int32
    var maxReconnects: UInt32
    var retryMs: UInt32
    var maxRetryMs: UInt32
    var batchBytes: Int
}

private let recordsOptionsVersion: UInt32 = 1

private func defaultRecordsOptions() -> RecordsOptions {
    RecordsOptions(version: recordsOptionsVersion, maxLineSize: Lines.defaultMaxLineSize, maxRecordSize: 16 << 20,
                   framing: Int32(JSONRecordOptions().framing.rawValue), skipBadRecords: 0, strict: 1, reconnect: 0, maxReconnects: 10, retryMs: 3000,
                   maxRetryMs: 30_000, batchBytes: 64 * 1024)
}

@_cdecl("hc_records_options_init")
public func hc_records_options_init(_ opts: UnsafeMutableRawPointer?, _ version: UInt32) -> Int32 {
    guard let opts else { return nullArgument("opts") }
    guard version == recordsOptionsVersion else {
        return fail(.invalidArgument, "hc_records_options_init: unknown version \(version) (this library has \(recordsOptionsVersion))")
    }
    opts.assumingMemoryBound(to: RecordsOptions.self).pointee = defaultRecordsOptions()
    return HC_OK
}

/// The caller's options (the defaults for NULL), checked.
func readRecordsOptions(_ opts: UnsafeRawPointer?) throws(HTTPContentError) -> RecordsOptions {
    guard let opts else { return defaultRecordsOptions() }
    let o = opts.assumingMemoryBound(to: RecordsOptions.self).pointee
    guard o.version == recordsOptionsVersion else {
        throw HTTPContentError(.invalidArgument, "hc_records_options: version \(o.version) is not \(recordsOptionsVersion) (call hc_records_options_init)")
    }
    guard JSONRecordFraming(rawValue: Int(o.framing)) != nil else {
        throw HTTPContentError(.invalidArgument, "hc_records_options: unknown framing \(o.framing)")
    }
    guard o.batchBytes >= 1, o.maxLineSize >= 0, o.maxRecordSize >= 0 else {
        throw HTTPContentError(.invalidArgument, "hc_records_options: a size is out of range")
    }
    return o
}

func limit(_ n: Int) -> Int? { n > 0 ? n : nil }

/// What a record handler's response holds: records (lines, events) delivered and skipped.
final class RecordsContent {
    let count: Int
    let skipped: Int
    init(count: Int, skipped: Int = 0) {
        self.count = count
        self.skipped = skipped
    }
}

/// The callback's verdict: 0 continues, HC_RECORDS_STOP (-1) stops with success, others abort.
func recordsVerdict(_ rc: Int32, _ what: String) throws {
    if rc == 0 { return }
    if rc == -1 { throw StopTransfer() }
    throw HTTPContentError(.callback, "the \(what) callback returned \(rc)")
}

func recordHandlerSpec(_ make: @escaping (Acceptance) throws(HTTPContentError) -> any ContentHandler,
                  acceptance: Acceptance) -> OpaquePointer? {
    do { _ = try make(acceptance) } catch { fail(error); return nil }
    let spec = HandlerSpec(acceptance: acceptance) { spec -> any ContentHandler in
        do { return try make(spec.acceptance) } catch { return FailingHandler(reason: error) }
    }
    return retainHandle(spec)
}

// MARK: - Lines

public typealias LineCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Int32
public typealias RecordsBatchCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int, Int) -> Int32

@_cdecl("hc_handler_lines_new")
public func hc_handler_lines_new(_ cb: LineCallback?, _ userdata: UnsafeMutableRawPointer?,
                                 _ opts: UnsafeRawPointer?) -> OpaquePointer? {
    guard let cb else { nullArgument("cb"); return nil }
    let o: RecordsOptions
    do { o = try readRecordsOptions(opts) } catch { fail(error); return nil }
    return recordHandlerSpec({ acceptance in
        MappedHandler(Lines(strict: o.strict != 0, maxLineSize: limit(o.maxLineSize), acceptance: acceptance) { line in
            try recordsVerdict(cb(userdata, line.baseAddress?.assumingMemoryBound(to: CChar.self), line.count), "line")
        }) { RecordsContent(count: $0) }
    }, acceptance: Acceptance())
}

@_cdecl("hc_handler_lines_batches_new")
public func hc_handler_lines_batches_new(_ cb: RecordsBatchCallback?, _ userdata: UnsafeMutableRawPointer?,
                                         _ opts: UnsafeRawPointer?) -> OpaquePointer? {
    guard let cb else { nullArgument("cb"); return nil }
    let o: RecordsOptions
    do { o = try readRecordsOptions(opts) } catch { fail(error); return nil }
    return recordHandlerSpec({ acceptance in
        MappedHandler(Lines.batches(strict: o.strict != 0, maxLineSize: limit(o.maxLineSize), batchBytes: o.batchBytes,
                                    acceptance: acceptance) { text, n in
            try recordsVerdict(cb(userdata, text.baseAddress?.assumingMemoryBound(to: UInt8.self), text.count, n), "batch")
        }) { RecordsContent(count: $0) }
    }, acceptance: Acceptance())
}

// MARK: - JSON records

public typealias JSONRecordCallback = @convention(c) (UnsafeMutableRawPointer?, Int, OpaquePointer?) -> Int32
public typealias RecordSkipCallback = @convention(c) (UnsafeMutableRawPointer?, Int, Int64, UnsafePointer<CChar>?) -> Int32

func recordOptions(_ o: RecordsOptions) -> JSONRecordOptions {
    JSONRecordOptions(framing: JSONRecordFraming(rawValue: Int(o.framing)) ?? .lines, skipBadRecords: o.skipBadRecords != 0,
                      maxRecordSize: limit(o.maxRecordSize))
}

func skipper(_ cb: RecordSkipCallback?, _ userdata: UnsafeMutableRawPointer?) -> ((HTTPContentError) throws -> Void)? {
    guard let cb else { return nil }
    return { error in
        let rc = error.message.withCString { cb(userdata, error.recordIndex ?? 0, Int64(error.offset ?? -1), $0) }
        try recordsVerdict(rc, "skip")
    }
}

@_cdecl("hc_handler_json_lines_new")
public func hc_handler_json_lines_new(_ cb: JSONRecordCallback?, _ skip: RecordSkipCallback?,
                                      _ userdata: UnsafeMutableRawPointer?, _ opts: UnsafeRawPointer?) -> OpaquePointer? {
    guard let cb else { nullArgument("cb"); return nil }
    let o: RecordsOptions
    do { o = try readRecordsOptions(opts) } catch { fail(error); return nil }
    let base = recordOptions(o)
    // The schema (hc_handler_json_set_schema) and path (hc_handler_json_lines_set_path) are read
    // from the spec at each send.
    let record = JSONRecordSettings()
    let spec = HandlerSpec(acceptance: JSONLines.defaultAcceptance(), settings: record) { spec -> any ContentHandler in
        var options = base
        options.path = record.path
        options.skipInvalidRecords = record.skipInvalid
        // Integers beyond 64 bits stay exact (HC_JSON_NUMBER text; hc_json_double still reads them).
        options.json.exactIntegers = true
        var index = 0
        return MappedHandler(JSONLines(options: options, acceptance: spec.acceptance, validator: record.validator,
                                       onSkip: skipper(skip, userdata)) { value in
            let node = JSONNode(value)
            let rc = withExtendedLifetime(node) {
                cb(userdata, index, OpaquePointer(Unmanaged.passUnretained(node).toOpaque()))
            }
            index += 1
            try recordsVerdict(rc, "record")
        }) { RecordsContent(count: $0.records, skipped: $0.skipped) }
    }
    return retainHandle(spec)
}

/// A JSON lines handler's settings: its schema (hc_handler_json_set_schema) and the key path handed
/// over of each record (hc_handler_json_lines_set_path), which share the skip-invalid choice.
final class JSONRecordSettings: JSONSchemaSettings {
    @exclusivity(unchecked) var path: String?
}

@_cdecl("hc_handler_json_lines_set_path")
public func hc_handler_json_lines_set_path(_ handler: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                                           _ skipInvalid: Int32) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard let record = spec.settings(JSONRecordSettings.self) else {
        return fail(.invalidArgument, "hc_handler_json_lines_set_path: the handler is not a JSON lines handler (hc_handler_json_lines_new)")
    }
    record.path = string(path)
    record.skipInvalid = skipInvalid != 0
    return HC_OK
}

// MARK: - Server-Sent Events

public typealias SSEEventCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int,
                                                    UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?, Int, Int64) -> Int32
public typealias SSECommentCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Int32

private func eventCallback(_ cb: SSEEventCallback, _ userdata: UnsafeMutableRawPointer?) -> (ServerSentEvent) throws -> Void {
    { event in
        var type = event.event, data = event.data, id = event.id
        let rc = type.withUTF8 { t in
            data.withUTF8 { d in
                id.withUTF8 { i in
                    // withUTF8 of a native String is NUL-terminated storage; copy to be sure.
                    withNulTerminated(t) { tp in withNulTerminated(d) { dp in withNulTerminated(i) { ip in
                        cb(userdata, tp, t.count, dp, d.count, ip, i.count, Int64(event.retry ?? -1))
                    } } }
                }
            }
        }
        try recordsVerdict(rc, "event")
    }
}

/// `bytes` as a NUL-terminated C string for the duration of `body`.
private func withNulTerminated<R>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafePointer<CChar>) -> R) -> R {
    let copy = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
    defer { copy.deallocate() }
    if let base = bytes.baseAddress {
        UnsafeMutableRawPointer(copy).copyMemory(from: base, byteCount: bytes.count)
    }
    copy[bytes.count] = 0
    return body(copy)
}

private func commentCallback(_ cb: SSECommentCallback?, _ userdata: UnsafeMutableRawPointer?) -> ((String) throws -> Void)? {
    guard let cb else { return nil }
    return { text in
        var text = text
        let rc = text.withUTF8 { t in withNulTerminated(t) { cb(userdata, $0, t.count) } }
        try recordsVerdict(rc, "comment")
    }
}

@_cdecl("hc_handler_sse_new")
public func hc_handler_sse_new(_ cb: SSEEventCallback?, _ comment: SSECommentCallback?,
                               _ userdata: UnsafeMutableRawPointer?, _ opts: UnsafeRawPointer?) -> OpaquePointer? {
    guard let cb else { nullArgument("cb"); return nil }
    let o: RecordsOptions
    do { o = try readRecordsOptions(opts) } catch { fail(error); return nil }
    return recordHandlerSpec({ acceptance in
        MappedHandler(SSE(maxLineSize: limit(o.maxLineSize), maxEventSize: limit(o.maxRecordSize), acceptance: acceptance,
                          onComment: commentCallback(comment, userdata), onEvent: eventCallback(cb, userdata))) {
            RecordsContent(count: $0)
        }
    }, acceptance: SSE.defaultAcceptance())
}

func eventSourceOptions(_ o: RecordsOptions) -> EventSourceOptions {
    EventSourceOptions(reconnect: o.reconnect != 0, maxReconnects: Int(o.maxReconnects), retryMs: Int(o.retryMs),
                       maxRetryMs: Int(o.maxRetryMs), maxLineSize: limit(o.maxLineSize), maxEventSize: limit(o.maxRecordSize))
}

@_cdecl("hc_client_events")
public func hc_client_events(_ client: OpaquePointer?, _ request: OpaquePointer?, _ cb: SSEEventCallback?,
                             _ comment: SSECommentCallback?, _ userdata: UnsafeMutableRawPointer?,
                             _ opts: UnsafeRawPointer?, _ events: UnsafeMutablePointer<Int>?) -> Int32 {
    events?.pointee = 0
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    guard let req = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let cb else { return nullArgument("cb") }
    do {
        let o = try readRecordsOptions(opts)
        let options = eventSourceOptions(o)
        var counted = 0
        let summary = try EventSource.run(client: box.client, request: req.request, options: options,
                                          acceptance: SSE.defaultAcceptance(),
                                          cancel: req.cancel, onComment: commentCallback(comment, userdata)) { event in
            counted += 1
            events?.pointee = counted
            try eventCallback(cb, userdata)(event)
        }
        events?.pointee = summary.events
        return HC_OK
    } catch {
        return fail(error)
    }
}

// MARK: - Event sources driven by the caller

/// `hc_event_source`: one event stream's reconnection state (EventSourceState) for a caller that
/// sends the connections itself (a batch on its own event loop).
final class EventSourceBox {
    let state: EventSourceState
    init(_ state: EventSourceState) { self.state = state }
}

@_cdecl("hc_event_source_new")
public func hc_event_source_new(_ cb: SSEEventCallback?, _ comment: SSECommentCallback?,
                                _ userdata: UnsafeMutableRawPointer?, _ opts: UnsafeRawPointer?) -> OpaquePointer? {
    guard let cb else { nullArgument("cb"); return nil }
    do {
        let state = try EventSourceState(options: eventSourceOptions(try readRecordsOptions(opts)),
                                         onComment: commentCallback(comment, userdata),
                                         onEvent: eventCallback(cb, userdata))
        return retainHandle(EventSourceBox(state))
    } catch {
        fail(error)
        return nil
    }
}

@_cdecl("hc_event_source_free")
public func hc_event_source_free(_ source: OpaquePointer?) {
    releaseHandle(source, as: EventSourceBox.self)
}

@_cdecl("hc_event_source_handler")
public func hc_event_source_handler(_ source: OpaquePointer?) -> OpaquePointer? {
    guard let box = borrowHandle(source, as: EventSourceBox.self) else { nullArgument("source"); return nil }
    let state = box.state
    return retainHandle(HandlerSpec(acceptance: SSE.defaultAcceptance()) { spec -> any ContentHandler in
        MappedHandler(state.connection(acceptance: spec.acceptance)) { RecordsContent(count: $0) }
    })
}

@_cdecl("hc_event_source_next")
public func hc_event_source_next(_ source: OpaquePointer?, _ outcome: Int32,
                                 _ delayMs: UnsafeMutablePointer<Int64>?) -> Int32 {
    delayMs?.pointee = -1
    guard let box = borrowHandle(source, as: EventSourceBox.self) else { return nullArgument("source") }
    guard let delayMs else { return nullArgument("delay_ms") }
    var error: HTTPContentError?
    if outcome != HC_OK {
        guard let code = HTTPContentError.Code(rawValue: outcome) else {
            return fail(.invalidArgument, "hc_event_source_next: \(outcome) is not an hc_code")
        }
        error = HTTPContentError(code, "the connection failed")
    }
    do {
        delayMs.pointee = try box.state.next(after: error).map(Int64.init) ?? -1
        return HC_OK
    } catch {
        return outcome  // that connection's own error: the caller has its detail
    }
}

// MARK: - Responses

@_cdecl("hc_response_records")
public func hc_response_records(_ response: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?,
                                _ skipped: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let content = content(box, as: RecordsContent.self) else {
        return fail(.invalidArgument, "hc_response_records: the response's handler is not a record handler")
    }
    count?.pointee = content.count
    skipped?.pointee = content.skipped
    return HC_OK
}

@_cdecl("hc_error_record_index")
public func hc_error_record_index(_ err: OpaquePointer?) -> Int64 {
    borrowHandle(err, as: ErrorBox.self)?.error.recordIndex.map(Int64.init) ?? -1
}
