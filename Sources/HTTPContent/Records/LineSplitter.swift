#if canImport(Glibc)
import Glibc
#endif

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
        // Up to the next CR, lines end at LF only, and memchr (vectorized) finds each one: most
        // text has no CR at all, and its bytes then cost a fraction of an instruction each.
        var cr = Self.find(0x0D, bytes, from: i, to: n)
        while i < n {
            if i < cr {
                guard let lf = memchr(bytes + i, 0x0A, cr - i) else {
                    i = cr
                    continue
                }
                let at = UnsafeRawPointer(lf) - UnsafeRawPointer(bytes)
                try emit(UnsafeRawBufferPointer(start: base + start, count: at - start), onLine)
                i = at + 1
                start = i
                continue
            }
            // A CR at i ends the line; an LF right after it belongs to it.
            try emit(UnsafeRawBufferPointer(start: base + start, count: i - start), onLine)
            if i + 1 < n {
                if bytes[i + 1] == 0x0A { i += 1 }
            } else {
                pendingCR = true
            }
            i += 1
            start = i
            cr = Self.find(0x0D, bytes, from: i, to: n)
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

    /// The offset of the first `byte` in bytes[from..<to], or `to`.
    @inline(__always)
    private static func find(_ byte: Int32, _ bytes: UnsafePointer<UInt8>, from: Int, to: Int) -> Int {
        guard from < to, let p = memchr(bytes + from, byte, to - from) else { return to }
        return UnsafeRawPointer(p) - UnsafeRawPointer(bytes)
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
