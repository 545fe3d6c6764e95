/// Splits a byte stream into lines ended by CR, LF or CRLF, however the stream is cut into
/// chunks: a CR at the end of one chunk and the LF at the start of the next are one terminator
/// (the case `requests`' `iter_lines` gets wrong). Lines are handed over without their
/// terminator; a line lying wholly inside a chunk is lent in place (no copy), only a line
/// spanning chunks is gathered. Used on UTF-8 (CR and LF never occur inside a multibyte
/// character).
public struct LineSplitter: Sendable {
    /// The longest line accepted, in bytes; a longer one fails with `.tooLarge`. nil: no limit.
    public let maxLineSize: Int?
    /// The start of the current line when it spans chunks.
    private var partial: [UInt8] = []
    /// Whether the current line already has bytes (possibly none gathered yet: see `partial`).
    private var inLine = false
    /// The last chunk ended with CR: an LF at the start of the next belongs to it.
    private var pendingCR = false
    /// Lines handed over.
    public private(set) var lineCount = 0

    public init(maxLineSize: Int? = nil) {
        self.maxLineSize = maxLineSize
    }

    /// Splits `chunk`, calling `onLine` with each line it completes (valid during the call).
    public mutating func feed(_ chunk: UnsafeRawBufferPointer,
                              _ onLine: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let n = chunk.count
        var i = 0
        if pendingCR {
            pendingCR = false
            if bytes[0] == 0x0A { i = 1 }
        }
        var start = i
        while i < n {
            // Eight bytes at a time while none is below 0x0E (so neither CR nor LF): a line's
            // bytes cost a fraction of an instruction each.
            if i + 8 <= n {
                let w = UnsafeRawPointer(bytes + i).loadUnaligned(as: UInt64.self)
                if (w &- 0x0E0E_0E0E_0E0E_0E0E) & ~w & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                    continue
                }
            }
            let b = bytes[i]
            if b > 0x0D || (b != 0x0A && b != 0x0D) {
                i += 1
                continue
            }
            // A terminator at i: the line is partial + bytes[start..<i].
            try emit(UnsafeRawBufferPointer(start: base + start, count: i - start), onLine)
            if b == 0x0D {
                if i + 1 < n {
                    if bytes[i + 1] == 0x0A { i += 1 }
                } else {
                    pendingCR = true
                }
            }
            i += 1
            start = i
        }
        if start < n {
            let rest = n - start
            if let maxLineSize, partial.count + rest > maxLineSize {
                throw HTTPContentError(.tooLarge, "a line exceeds the limit of \(maxLineSize) bytes")
            }
            partial.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: rest))
            inLine = true
        }
    }

    /// Ends the stream: an unterminated last line with any bytes is handed over.
    /// - Returns: whether there was one.
    @discardableResult
    public mutating func finish(_ onLine: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard inLine else { return false }
        try emit(UnsafeRawBufferPointer(start: nil, count: 0), onLine)
        return true
    }

    /// Whether bytes of an unterminated line are held.
    public var hasPartialLine: Bool { inLine }

    @inline(__always)
    private mutating func emit(_ tail: UnsafeRawBufferPointer,
                               _ onLine: (UnsafeRawBufferPointer) throws -> Void) throws {
        if let maxLineSize, partial.count + tail.count > maxLineSize {
            throw HTTPContentError(.tooLarge, "a line exceeds the limit of \(maxLineSize) bytes")
        }
        lineCount += 1
        if !inLine {
            try onLine(tail)
            return
        }
        partial.append(contentsOf: tail)
        inLine = false
        defer { partial.removeAll(keepingCapacity: partial.capacity <= 1 << 16) }
        try partial.withUnsafeBytes { try onLine($0) }
    }
}
