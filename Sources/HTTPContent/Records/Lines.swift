/// Text lines, as they arrive: the body is decoded (the charset given, else the Content-Type's,
/// else UTF-8; a UTF-8 byte order mark is dropped) and split at CR, LF or CRLF however it is cut
/// into chunks. Each line goes to `onLine` without its terminator; empty lines are kept, and a
/// last line without a terminator is kept too. Only the line being gathered is held.
///
///     let handler = Lines { line in print(line) }
///     try client.get(url, handler: handler)
///
/// Content: the number of lines delivered. Throwing `StopTransfer` from `onLine` ends the
/// transfer early with success. Default acceptance: status 200–299, any type.
public final class Lines: SelectiveHandler {
    /// A line's UTF-8 bytes (valid only during the call).
    public typealias OnLineBytes = (UnsafeRawBufferPointer) throws -> Void

    public var acceptance: Acceptance
    /// The longest line accepted in decoded bytes (`.tooLarge` beyond). Default 1 MiB.
    public let maxLineSize: Int?
    /// Forces this encoding whatever the response says. Default nil.
    public let encoding: TextEncoding?
    /// Invalid bytes fail with `.decode` (true, the default) or become U+FFFD.
    public let strict: Bool
    /// The encoding used, once known.
    public private(set) var chosenEncoding: TextEncoding?

    public static let defaultMaxLineSize = 1 << 20

    private let onLine: OnLineBytes
    private var splitter: LineSplitter
    private var decoder: StreamingTextDecoder?
    private var bomChecked = false
    private var head: ResponseHead?

    /// - Parameters: see the properties; `onLine` gets each line's UTF-8 bytes.
    public init(encoding: TextEncoding? = nil, strict: Bool = true, maxLineSize: Int? = Lines.defaultMaxLineSize,
                acceptance: Acceptance = Acceptance(), onLineBytes: @escaping OnLineBytes) {
        self.encoding = encoding
        self.strict = strict
        self.maxLineSize = maxLineSize
        self.acceptance = acceptance
        self.onLine = onLineBytes
        splitter = LineSplitter(maxLineSize: maxLineSize)
    }

    /// - Parameters:
    ///   - encoding: forces this encoding whatever the response says (nil: the response decides).
    ///   - strict: an invalid byte fails with `.decode`; lenient replaces it with U+FFFD.
    ///   - maxLineSize: the longest line accepted in decoded bytes, `.tooLarge` beyond (nil: no limit).
    ///   - acceptance: the statuses and media types taken.
    ///   - onLine: called with each line as a `String`.
    public convenience init(encoding: TextEncoding? = nil, strict: Bool = true,
                            maxLineSize: Int? = Lines.defaultMaxLineSize, acceptance: Acceptance = Acceptance(),
                            onLine: @escaping (String) throws -> Void) {
        self.init(encoding: encoding, strict: strict, maxLineSize: maxLineSize, acceptance: acceptance) { bytes in
            try onLine(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// Lines delivered so far.
    public var count: Int { splitter.lineCount }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        var chosen = encoding ?? .utf8
        if encoding == nil, let charset = head.contentType?.charset {
            guard let named = TextEncoding(charset: charset) else {
                throw HTTPContentError(.decode, "unsupported charset \"\(charset)\"", response: head)
            }
            chosen = named
        }
        chosenEncoding = chosen
        decoder = StreamingTextDecoder(encoding: chosen, strict: strict)
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        if decoder == nil { decoder = StreamingTextDecoder(encoding: encoding ?? .utf8, strict: strict) }
        do {
            try decoder!.decode(chunk)
            try split()
        } catch let error as HTTPContentError {
            throw withResponse(error)
        }
    }

    public func finish() throws -> Int {
        if decoder == nil { return 0 }
        do {
            try decoder!.finish()
            try split()
            try splitter.finish(onLine)
        } catch let error as HTTPContentError {
            throw withResponse(error)
        } catch is StopTransfer {
        }
        return splitter.lineCount
    }

    private func split() throws {
        try decoder!.drainOutput { text in
            var text = text
            if !bomChecked {
                bomChecked = true
                if chosenEncoding == .utf8 || chosenEncoding == nil,
                   text.count >= 3, text[0] == 0xEF, text[1] == 0xBB, text[2] == 0xBF {
                    text = UnsafeRawBufferPointer(rebasing: text[3...])
                }
            }
            try splitter.feed(text, onLine)
        }
    }

    private func withResponse(_ error: HTTPContentError) -> HTTPContentError { error.attaching(head) }
}

/// Gathers lines into batches for callers that cross a slow boundary per call (Python through
/// ctypes): the lines' UTF-8 joined with LF (a line never contains CR or LF, so splitting the
/// batch at LF gives them back exactly), handed over when the batch reaches `batchBytes` and at
/// the end of every received chunk, so no line is held back waiting for more data.
public final class LineBatcher {
    /// A batch: the joined UTF-8 text (valid only during the call) and the number of lines.
    public typealias OnBatch = (UnsafeRawBufferPointer, Int) throws -> Void
    private let batchBytes: Int
    private let onBatch: OnBatch
    // Touched for every line: no dynamic exclusivity checks (nothing here is reentered).
    @exclusivity(unchecked) private var text: [UInt8] = []
    @exclusivity(unchecked) private var lines = 0

    public init(batchBytes: Int = 64 * 1024, onBatch: @escaping OnBatch) {
        self.batchBytes = max(1, batchBytes)
        self.onBatch = onBatch
    }

    /// Adds a line.
    public func add(_ line: UnsafeRawBufferPointer) throws {
        if lines > 0 { text.append(0x0A) }
        text.append(contentsOf: line)
        lines += 1
        if text.count >= batchBytes { try flush() }
    }

    /// Hands over what is gathered.
    public func flush() throws {
        guard lines > 0 else { return }
        let n = lines
        lines = 0
        defer { text.removeAll(keepingCapacity: true) }
        try text.withUnsafeBytes { try onBatch($0, n) }
    }
}

extension Lines {
    /// `Lines` in batches (see `LineBatcher`); the content is the number of lines.
    public static func batches(encoding: TextEncoding? = nil, strict: Bool = true,
                               maxLineSize: Int? = Lines.defaultMaxLineSize, batchBytes: Int = 64 * 1024,
                               acceptance: Acceptance = Acceptance(),
                               onBatch: @escaping LineBatcher.OnBatch) -> BatchedLines {
        let batcher = LineBatcher(batchBytes: batchBytes, onBatch: onBatch)
        return BatchedLines(Lines(encoding: encoding, strict: strict, maxLineSize: maxLineSize,
                                  acceptance: acceptance, onLineBytes: batcher.add), flush: batcher.flush)
    }
}

/// `Lines` whose lines go to a batcher (`LineBatcher`, or a binding's own), flushed when libcurl
/// has read all there is for now (`receivePaused`), so a batch spans the 16 KiB pieces of one
/// read instead of one each (each batch costs the Python binding a thread handoff). Until the
/// first such call (a transfer makes one on accepting the body; a caller feeding chunks itself
/// makes none), flushed at the end of each chunk.
public final class BatchedLines: ContentHandler, ReceivePauseHandler {
    public let lines: Lines
    private let flush: () throws -> Void
    private var stopped = false
    private var paused = false

    /// - Parameters:
    ///   - lines: the handler, its `onLineBytes` adding each line to the batcher.
    ///   - flush: hands over what the batcher holds.
    package init(_ lines: Lines, flush: @escaping () throws -> Void) {
        self.lines = lines
        self.flush = flush
    }

    public func accept(_ head: ResponseHead) throws -> Bool { try lines.accept(head) }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        do {
            try lines.consume(chunk)
        } catch {
            // Lines completed before a failure are delivered first; after a stop, nothing more.
            if error is StopTransfer { stopped = true } else { try? flush() }
            throw error
        }
        if !paused { try flushing() }
    }

    public func receivePaused() throws {
        paused = true
        if !stopped { try flushing() }
    }

    private func flushing() throws {
        do { try flush() } catch is StopTransfer { stopped = true; throw StopTransfer() }
    }

    public func finish() throws -> Int {
        if stopped { return lines.count }
        let n: Int
        do {
            n = try lines.finish()
        } catch {
            try? flush()
            throw error
        }
        do { try flush() } catch is StopTransfer {}
        return n
    }
}
