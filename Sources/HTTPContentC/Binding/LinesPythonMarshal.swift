import HTTPContent

// Text lines for the Python binding (hc_handler_lines_pymarshal_new, declared in
// include/httpcontent_binding.h): each batch of lines is one list of str in Python's marshal
// format, so one marshal.loads makes every line's str in C, with no per-line split in Python.

/// Gathers lines (valid UTF-8, from `Lines`) into a marshal list of `str`: `[`, the count, then
/// each line as TYPE_UNICODE (`u`, its UTF-8 length, its bytes; marshal.loads decodes pure ASCII
/// with a word-at-a-time copy). Handed over when the list reaches `batchBytes` and whenever
/// `flush` is called (the end of each received chunk).
final class PythonMarshalLineBatcher {
    typealias OnBatch = (UnsafeRawBufferPointer, Int) throws -> Void
    private let batchBytes: Int
    private let onBatch: OnBatch
    // Touched for every line: no dynamic exclusivity checks (nothing here is reentered).
    @exclusivity(unchecked) private var w = JSONPythonMarshal.Writer()
    @exclusivity(unchecked) private var lines: Int32 = 0

    init(batchBytes: Int, onBatch: @escaping OnBatch) {
        self.batchBytes = max(1, batchBytes)
        self.onBatch = onBatch
        w.byte(UInt8(ascii: "["))
        w.int32(0)
    }

    deinit { w.release() }

    /// Adds a line.
    func add(_ line: UnsafeRawBufferPointer) throws {
        let n = line.count
        guard n <= Int(Int32.max) else {
            throw HTTPContentError(.tooLarge, "a line of \(n) bytes cannot be written for Python's marshal")
        }
        w.reserve(n + 5)
        w.buf[w.count] = UInt8(ascii: "u")
        (UnsafeMutableRawPointer(w.buf) + w.count + 1).storeBytes(of: Int32(n).littleEndian, as: Int32.self)
        w.count += 5
        if let base = line.baseAddress { (UnsafeMutableRawPointer(w.buf) + w.count).copyMemory(from: base, byteCount: n) }
        w.count += n
        lines += 1
        if w.count >= batchBytes { try flush() }
    }

    /// Hands over the lines gathered, if any.
    func flush() throws {
        guard lines > 0 else { return }
        let n = lines
        w.patch(n, at: 1)
        lines = 0
        defer { w.count = 5 }
        try onBatch(UnsafeRawBufferPointer(start: w.buf, count: w.count), Int(n))
    }
}

@_cdecl("hc_handler_lines_pymarshal_new")
public func hc_handler_lines_pymarshal_new(_ cb: RecordsBatchCallback?, _ userdata: UnsafeMutableRawPointer?,
                                           _ opts: UnsafeRawPointer?) -> OpaquePointer? {
    guard let cb else { nullArgument("cb"); return nil }
    let o: RecordsOptions
    do { o = try readRecordsOptions(opts) } catch { fail(error); return nil }
    return recordHandlerSpec({ acceptance in
        let batcher = PythonMarshalLineBatcher(batchBytes: o.batchBytes) { bytes, n in
            try recordsVerdict(cb(userdata, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, n), "batch")
        }
        let lines = Lines(strict: o.strict != 0, maxLineSize: limit(o.maxLineSize), acceptance: acceptance,
                          onLineBytes: batcher.add)
        return MappedHandler(BatchedLines(lines, flush: batcher.flush)) { RecordsContent(count: $0) }
    }, acceptance: Acceptance())
}
