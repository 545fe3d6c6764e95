import HTTPContent

// JSON records for the Python binding (hc_handler_json_lines_pymarshal_new, declared in
// include/httpcontent_binding.h): the records of a JSON record stream written, as they are
// parsed, into lists in Python's marshal format, one marshal.loads per batch.


/// Forwards the parse to a list-mode marshal writer, noting where the last complete top-level
/// value ended (a record may still be open after it).
private final class MarshalRecordSink: JSONEventSink {
    let writer: JSONPythonMarshalWriter
    // Updated at every parse event: no dynamic exclusivity checks.
    @exclusivity(unchecked) private var depth = 0
    @exclusivity(unchecked) private(set) var completeBytes: Int
    @exclusivity(unchecked) private(set) var completeCount: Int32 = 0
    @exclusivity(unchecked) private(set) var completeRefs: Int32 = 0

    init(_ writer: JSONPythonMarshalWriter) {
        self.writer = writer
        completeBytes = writer.byteCount
        completeCount = writer.listCount
        completeRefs = writer.refCount
    }

    @inline(__always) private func done() {
        if depth == 0 {
            completeBytes = writer.byteCount
            completeCount = writer.listCount
            completeRefs = writer.refCount
        }
    }

    /// The list was carried on (`JSONPythonMarshalWriter.carry`): the bytes kept moved by
    /// `delta`, and the `handed` entries before them went (`carried` entries stand first now).
    func carried(delta: Int, handed: Int32, carried: Int32) {
        completeBytes += delta
        completeCount = completeCount - handed + carried
    }

    /// Back to the last complete value (or to a reset list).
    func resetMarks() {
        depth = 0
        completeBytes = writer.byteCount
        completeCount = writer.listCount
        completeRefs = writer.refCount
    }

    func null() throws { writer.null(); done() }
    func bool(_ value: Bool) throws { writer.bool(value); done() }
    func number(_ token: UnsafeRawBufferPointer) throws { try writer.number(token); done() }
    func string(_ bytes: UnsafeRawBufferPointer) throws { try writer.string(bytes); done() }
    /// A whole top-level value was written to `writer` directly.
    func valueDone() {
        depth = 0
        done()
    }
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws { try writer.mapKey(bytes) }
    func startMap() throws { depth += 1; try writer.startMap() }
    func endMap() throws { writer.endMap(); depth -= 1; done() }
    func startArray() throws { depth += 1; try writer.startArray() }
    func endArray() throws { writer.endArray(); depth -= 1; done() }
}

/// An integer token of at most 18 digits (so no overflow), read; nil for a longer one.
@inline(__always)
private func smallInteger(_ text: UnsafeRawBufferPointer) -> Int64? {
    guard let base = text.baseAddress else { return nil }
    let p = base.assumingMemoryBound(to: UInt8.self)
    let negative = p[0] == 0x2D
    var i = negative ? 1 : 0
    guard text.count - i <= 18 else { return nil }
    var v: Int64 = 0
    while i < text.count {
        v = v &* 10 &+ Int64(p[i] &- 0x30)
        i += 1
    }
    return negative ? -v : v
}

/// Records written into marshal lists (what `json.loads` of each record gives), handed over when
/// a list reaches `batchBytes` and at the end of each chunk (a record half written then is
/// carried into the next list).
final class MarshalRecordTarget: JSONRecordTarget {
    typealias Deliver = (UnsafeRawBufferPointer, Int) throws -> Void
    private let sink: MarshalRecordSink
    private let tape = JSONLineTape()
    private let batchBytes: Int
    private let deliver: Deliver
    @exclusivity(unchecked) private var committedBytes: Int
    @exclusivity(unchecked) private var committedCount: Int32 = 0
    @exclusivity(unchecked) private var committedRefs: Int32 = 0

    init(options: JSONOptions, batchBytes: Int, deliver: @escaping Deliver) {
        sink = MarshalRecordSink(JSONPythonMarshalWriter(options: options, list: true, pythonNumbers: true))
        self.batchBytes = max(1, batchBytes)
        self.deliver = deliver
        committedBytes = sink.writer.byteCount
    }

    func makeSink() -> any JSONEventSink {
        sink.resetMarks()
        return sink
    }

    /// Set once libcurl's rounds of reads are reported (`BatchedRecords.receivePaused`): from
    /// then on a batch goes at the end of each round, not of each 16 KiB piece of it.
    @exclusivity(unchecked) var flushesWhenPaused = false

    func chunkEnded() throws {
        if !flushesWhenPaused { try flush() }
    }

    var pending: Int { Int(sink.completeCount - committedCount) }

    func commit() throws {
        committedBytes = sink.completeBytes
        committedCount = sink.completeCount
        committedRefs = sink.completeRefs
        if committedBytes >= batchBytes { try flush() }
    }

    func drop() {
        sink.writer.rollback(bytes: committedBytes, count: committedCount, refs: committedRefs)
        sink.resetMarks()
    }

    func scanLine(_ line: UnsafeRawBufferPointer, options: JSONOptions) -> Bool {
        guard let count = JSONLineScanner.scan(line, maxDepth: options.maxDepth, into: tape) else { return false }
        guard let base = line.baseAddress else { return true }
        // The tape replayed into the sink, with direct calls, read in place (its layout is
        // JSONLineTape's: kind in bits 0-7 (Kind's raw values, written out: the getter is a call
        // from this module), start in 8-35, end from 36). Its strings are ASCII.
        // The writer is called directly (the sink's per-event bookkeeping is done once, after).
        let writer = sink.writer
        let entries = tape.entries
        do {
            for t in 0..<count {
                let e = entries[t]
                let start = Int(truncatingIfNeeded: (e >> 8) & 0xFFF_FFFF), end = Int(truncatingIfNeeded: e >> 36)
                let text = UnsafeRawBufferPointer(start: base + start, count: end - start)
                switch UInt8(truncatingIfNeeded: e) {
                case 0 /* .startMap */: try writer.startMap()
                case 1 /* .endMap */: writer.endMap()
                case 2 /* .startArray */: try writer.startArray()
                case 3 /* .endArray */: writer.endArray()
                case 4 /* .key */: try writer.mapKey(text, ascii: true)
                case 5 /* .string */: writer.asciiString(text)
                case 10 /* .integer */:
                    if let v = smallInteger(text) { writer.integer(v) } else { try writer.number(text) }
                case 7 /* .true */: writer.bool(true)
                case 8 /* .false */: writer.bool(false)
                case 9 /* .null */: writer.null()
                default: writer.double(JSONNumberText.fastDouble(text) ?? JSONNumberText.strtod(text))
                }
            }
            if count > 0 { sink.valueDone() }
        } catch {
            // A value the writer refuses: undone, for yajl to read and judge.
            drop()
            return false
        }
        return true
    }

    func flush() throws {
        let writer = sink.writer
        let n = committedCount - writer.carriedNames
        guard n > 0 else { return }
        let bytes = writer.listBytes(count: committedCount, bytes: committedBytes)
        // Started over (or carried on) even when the callback stops or fails: a record is
        // never delivered twice.
        defer {
            if writer.byteCount == committedBytes {
                writer.resetList()
                sink.resetMarks()
                committedBytes = writer.byteCount
                committedCount = 0
                committedRefs = 0
            } else {
                // A record half written: it goes on in the next list (references keep their numbers).
                let start = writer.carry(from: committedBytes, refs: committedRefs,
                                         open: writer.listCount - committedCount)
                sink.carried(delta: start - committedBytes, handed: committedCount, carried: writer.carriedNames)
                committedBytes = start
                committedCount = writer.carriedNames
            }
        }
        try deliver(bytes, Int(n))
    }
}

/// The marshal record handler, handing its batch over when libcurl has read all there is for
/// now (`ReceivePauseHandler`, as `BatchedLines`): a batch spans a round of reads, not one 16 KiB
/// piece of it, and still goes before the transfer waits for more.
final class BatchedRecords: ContentHandler, ReceivePauseHandler {
    let records: JSONLines
    private let target: MarshalRecordTarget

    fileprivate init(_ records: JSONLines, _ target: MarshalRecordTarget) {
        self.records = records
        self.target = target
    }

    func prepare(_ request: inout Request) throws { try records.prepare(&request) }
    func accept(_ head: ResponseHead) throws -> Bool { try records.accept(head) }
    func consume(_ chunk: UnsafeRawBufferPointer) throws { try records.consume(chunk) }
    func finish() throws -> JSONRecordsSummary { try records.finish() }
    func cleanup(failed: Bool) { records.cleanup(failed: failed) }

    func receivePaused() throws {
        target.flushesWhenPaused = true
        try target.flush()
    }
}

extension JSONLines {
    /// For the Python binding: the records written, as they are parsed, into lists in Python's
    /// marshal format (one `marshal.loads` per batch gives what `json.loads` gives for each
    /// record: integers exact at any size, other numbers `float(text)`). `keepNumberText` is
    /// refused (`.invalidArgument`).
    static func pythonMarshalBatches(options: JSONRecordOptions = JSONRecordOptions(), batchBytes: Int = 64 * 1024,
                                            acceptance: Acceptance = JSONLines.defaultAcceptance(),
                                            onSkip: ((HTTPContentError) throws -> Void)? = nil,
                                            onBatch: @escaping (UnsafeRawBufferPointer, Int) throws -> Void) throws(HTTPContentError) -> BatchedRecords {
        if options.json.keepNumberText {
            throw HTTPContentError(.invalidArgument, "Python marshal output cannot keep number texts (keepNumberText)")
        }
        let target = MarshalRecordTarget(options: options.json, batchBytes: batchBytes, deliver: onBatch)
        return BatchedRecords(JSONLines(options: options, acceptance: acceptance, target: target, onSkip: onSkip), target)
    }
}

@_cdecl("hc_handler_json_lines_pymarshal_new")
public func hc_handler_json_lines_pymarshal_new(_ cb: RecordsBatchCallback?, _ skip: RecordSkipCallback?,
                                                _ userdata: UnsafeMutableRawPointer?, _ opts: UnsafeRawPointer?) -> OpaquePointer? {
    guard let cb else { nullArgument("cb"); return nil }
    let o: RecordsOptions
    do { o = try readRecordsOptions(opts) } catch { fail(error); return nil }
    let options = recordOptions(o)
    return recordHandlerSpec({ acceptance throws(HTTPContentError) in
        MappedHandler(try JSONLines.pythonMarshalBatches(options: options, batchBytes: o.batchBytes, acceptance: acceptance,
                                                         onSkip: skipper(skip, userdata)) { bytes, n in
            try recordsVerdict(cb(userdata, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, n), "batch")
        }) { RecordsContent(count: $0.records, skipped: $0.skipped) }
    }, acceptance: JSONLines.defaultAcceptance())
}
