/// The text encodings the Text handler decodes, and the streaming decoder behind it.
public enum TextEncoding: String, Sendable, CaseIterable {
    case utf8 = "utf-8"
    case utf16LE = "utf-16le"
    case utf16BE = "utf-16be"
    case isoLatin1 = "iso-8859-1"
    case ascii = "us-ascii"
    case windows1252 = "windows-1252"

    /// The encoding an IANA charset name (any case, common aliases) stands for, or nil.
    /// `utf-16` alone maps to big-endian, which a byte order mark may then correct.
    public init?(charset: String) {
        switch asciiLowercased(charset.trimmingSpaces()) {
        case "utf-8", "utf8", "unicode-1-1-utf-8": self = .utf8
        case "utf-16le": self = .utf16LE
        case "utf-16be", "utf-16": self = .utf16BE
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1", "cp819", "ibm819":
            self = .isoLatin1
        case "us-ascii", "ascii", "iso646-us", "ansi_x3.4-1968": self = .ascii
        case "windows-1252", "cp1252", "x-cp1252": self = .windows1252
        default: return nil
        }
    }
}

/// Decodes bytes to UTF-8 as they arrive, carrying incomplete sequences across chunk
/// boundaries. Strict mode stops at the first invalid byte with its offset; lenient mode
/// substitutes U+FFFD.
/// Public so custom handlers (and the fuzz targets in `fuzz/`) can decode a stream as `Text` does.
public struct StreamingTextDecoder: Sendable {
    public let encoding: TextEncoding
    public let strict: Bool
    /// The decoded text so far, as UTF-8.
    public private(set) var output: [UInt8] = []
    /// Bytes of an incomplete sequence held over from the previous chunk.
    private var pending: [UInt8] = []
    /// Offset in the body of the first byte of `pending` (or of the next chunk).
    private var offset = 0
    /// A high surrogate waiting for its low half (UTF-16).
    private var highSurrogate: UInt16?
    private var highSurrogateOffset = 0

    public init(encoding: TextEncoding, strict: Bool) {
        self.encoding = encoding
        self.strict = strict
    }

    /// Reserves room for `n` bytes of output.
    public mutating func reserve(_ n: Int) { output.reserveCapacity(n) }

    /// Counts `count` bytes of the body as read without decoding them (a byte order mark the
    /// caller dropped), so error offsets stay offsets in the whole body. Only before decoding.
    public mutating func skip(_ count: Int) {
        precondition(pending.isEmpty && highSurrogate == nil && output.isEmpty, "skip(_:) after decoding began")
        offset += count
    }

    /// Decodes the next chunk of the body (any size; sequences may span chunks).
    public mutating func decode(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) {
        switch encoding {
        case .utf8: try decodeUTF8(chunk, final: false)
        case .utf16LE, .utf16BE: try decodeUTF16(chunk, final: false)
        case .isoLatin1, .ascii, .windows1252: try decodeSingleByte(chunk)
        }
    }

    /// Lends the text decoded so far to `body`, then forgets it: for consumers that pass the
    /// text on as it arrives (record streams) and keep nothing.
    public mutating func drainOutput(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard !output.isEmpty else { return }
        defer { output.removeAll(keepingCapacity: output.capacity <= 1 << 20) }
        try output.withUnsafeBytes { try body($0) }
    }

    /// Flushes what is held over; an incomplete sequence at the end of the body is invalid.
    public mutating func finish() throws(HTTPContentError) {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        switch encoding {
        case .utf8: try decodeUTF8(empty, final: true)
        case .utf16LE, .utf16BE: try decodeUTF16(empty, final: true)
        default: break
        }
    }

    private mutating func invalid(at position: Int, _ what: String) throws(HTTPContentError) {
        if strict {
            throw HTTPContentError(.decode, "invalid \(encoding.rawValue) at byte \(position): \(what)",
                                   offset: position)
        }
        output.append(contentsOf: [0xEF, 0xBF, 0xBD])
    }

    private mutating func appendScalar(_ v: UInt32) {
        switch v {
        case 0..<0x80: output.append(UInt8(v))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | (v >> 6)))
            output.append(UInt8(0x80 | (v & 0x3F)))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | (v >> 12)))
            output.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (v & 0x3F)))
        default:
            output.append(UInt8(0xF0 | (v >> 18)))
            output.append(UInt8(0x80 | ((v >> 12) & 0x3F)))
            output.append(UInt8(0x80 | ((v >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (v & 0x3F)))
        }
    }

    // MARK: - UTF-8

    private mutating func decodeUTF8(_ chunk: UnsafeRawBufferPointer, final: Bool) throws(HTTPContentError) {
        // Work on held-over bytes + chunk; only the tail of an incomplete sequence is copied.
        var bytes: UnsafeRawBufferPointer = chunk
        var joined: UnsafeMutableRawBufferPointer?
        defer { joined?.deallocate() }
        if !pending.isEmpty {
            let j = UnsafeMutableRawBufferPointer.allocate(byteCount: pending.count + chunk.count, alignment: 1)
            pending.withUnsafeBytes { j.copyMemory(from: $0) }
            if chunk.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: j[pending.count...]).copyMemory(from: chunk)
            }
            pending.removeAll()
            joined = j
            bytes = UnsafeRawBufferPointer(j)
        }
        var i = 0
        let n = bytes.count
        var runStart = 0
        // An invalid sequence is replaced per "maximal subpart" (Unicode §3.9, WHATWG): the lead
        // byte and the continuation bytes that could still have completed it become one U+FFFD,
        // and decoding resumes at the first byte that broke it. So the result never depends on
        // where chunks split, and equals String(decoding:as: UTF8.self).
        decoding: while i < n {
            // ASCII, 32 then eight bytes at a time.
            if i + 32 <= n, (bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                             | bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                             | bytes.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)
                             | bytes.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) & 0x8080_8080_8080_8080 == 0 {
                i += 32
                continue
            }
            if i + 8 <= n, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let need: Int
            // The range of the first continuation byte, which depends on the lead byte
            // (this rules out overlong forms, surrogates and scalars above U+10FFFF).
            let low: UInt8, high: UInt8
            switch b {
            case 0xC2...0xDF: need = 1; (low, high) = (0x80, 0xBF)
            case 0xE0: need = 2; (low, high) = (0xA0, 0xBF)
            case 0xED: need = 2; (low, high) = (0x80, 0x9F)
            case 0xE1...0xEF: need = 2; (low, high) = (0x80, 0xBF)
            case 0xF0: need = 3; (low, high) = (0x90, 0xBF)
            case 0xF4: need = 3; (low, high) = (0x80, 0x8F)
            case 0xF1...0xF3: need = 3; (low, high) = (0x80, 0xBF)
            default:
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<i]))
                try invalid(at: offset + i, "byte 0x\(String(b, radix: 16)) cannot start a sequence")
                i += 1
                runStart = i
                continue
            }
            var valid = 0 // continuation bytes seen so far that fit
            while valid < need {
                let k = i + 1 + valid
                if k >= n {
                    if !final { break decoding } // incomplete at the chunk's end: wait for more
                    break
                }
                let c = bytes[k]
                let fits = valid == 0 ? (low...high).contains(c) : (0x80...0xBF).contains(c)
                if !fits { break }
                valid += 1
            }
            if valid < need {
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<i]))
                try invalid(at: offset + i, i + 1 + valid >= n ? "truncated sequence" : "malformed sequence")
                i += 1 + valid
                runStart = i
                continue
            }
            i += need + 1
        }
        output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<i]))
        if i < n { pending = Array(UnsafeRawBufferPointer(rebasing: bytes[i..<n])) }
        offset += i
    }

    // MARK: - UTF-16

    private mutating func decodeUTF16(_ chunk: UnsafeRawBufferPointer, final: Bool) throws(HTTPContentError) {
        var i = 0
        let little = encoding == .utf16LE
        func unit(_ a: UInt8, _ b: UInt8) -> UInt16 {
            little ? UInt16(a) | UInt16(b) << 8 : UInt16(a) << 8 | UInt16(b)
        }
        var units: [(UInt16, Int)] = []
        if let held = pending.first, chunk.count > 0 {
            units.append((unit(held, chunk[0]), offset - 1))
            pending.removeAll()
            i = 1
        }
        while i + 1 < chunk.count {
            units.append((unit(chunk[i], chunk[i + 1]), offset + i))
            i += 2
        }
        if i < chunk.count { pending = [chunk[i]] }
        offset += chunk.count
        for (u, at) in units {
            if let high = highSurrogate {
                highSurrogate = nil
                if (0xDC00...0xDFFF).contains(u) {
                    appendScalar(0x10000 + (UInt32(high - 0xD800) << 10) + UInt32(u - 0xDC00))
                    continue
                }
                try invalid(at: highSurrogateOffset, "unpaired high surrogate")
            }
            switch u {
            case 0xD800...0xDBFF:
                highSurrogate = u
                highSurrogateOffset = at
            case 0xDC00...0xDFFF: try invalid(at: at, "unpaired low surrogate")
            default: appendScalar(UInt32(u))
            }
        }
        if final {
            if highSurrogate != nil {
                highSurrogate = nil
                try invalid(at: highSurrogateOffset, "unpaired high surrogate at the end")
            }
            if !pending.isEmpty {
                pending.removeAll()
                try invalid(at: offset - 1, "odd number of bytes")
            }
        }
    }

    // MARK: - Single-byte encodings

    private mutating func decodeSingleByte(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) {
        for (k, b) in chunk.enumerated() {
            if b < 0x80 {
                output.append(b)
                continue
            }
            switch encoding {
            case .ascii: try invalid(at: offset + k, "byte 0x\(String(b, radix: 16)) is not ASCII")
            case .windows1252 where b < 0xA0:
                let v = windows1252High[Int(b - 0x80)]
                if v == 0 { try invalid(at: offset + k, "byte 0x\(String(b, radix: 16)) is undefined") } else { appendScalar(UInt32(v)) }
            default: appendScalar(UInt32(b))
            }
        }
        offset += chunk.count
    }
}

/// Windows-1252 0x80–0x9F; 0 marks the five undefined bytes.
private let windows1252High: [UInt16] = [
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
]
