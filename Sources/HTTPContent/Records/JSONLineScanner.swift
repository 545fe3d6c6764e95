/// The fast path of JSON Lines: one whole line (a record without its LF) scanned in memory into
/// a tape of tokens, for the common record only (ASCII strings without escapes, numbers,
/// literals, nesting up to 64 levels). Anything else, including every error, is "unusual": the
/// caller gives the line to yajl, which decides, as it does for every other record (so yajl's
/// errors, offsets and options stay the only ones). Nothing is sent anywhere before the whole
/// line is known to be usual; a target then replays the tape into its own sink with direct calls.
package enum JSONLineScanner {
    /// Scans `line` (no LF in it) into `tape` (cleared first).
    /// - Returns: the number of tokens on the tape when the line held exactly one value (0: only
    ///   whitespace); nil when it is unusual.
    package static func scan(_ line: UnsafeRawBufferPointer, maxDepth: Int, into tape: JSONLineTape) -> Int? {
        var count = 0
        let ok = scanTokens(line, maxDepth: maxDepth, into: tape.entries, &count)
        tape.count = count
        return ok ? count : nil
    }

    /// The scan, writing tokens at `entries[t]` (t counting up, at most `JSONLineTape.capacity`).
    private static func scanTokens(_ line: UnsafeRawBufferPointer, maxDepth: Int, into entries: UnsafeMutablePointer<UInt64>,
                                   _ t: inout Int) -> Bool {
        let capacity = JSONLineTape.capacity
        guard let raw = line.baseAddress else { return true }
        let p = raw.assumingMemoryBound(to: UInt8.self)
        let n = line.count
        guard n < JSONLineTape.maxOffset else { return false }
        let depthLimit = min(maxDepth, 64)
        // One bit per open container, the innermost lowest: 1 an object, 0 an array.
        var kinds: UInt64 = 0
        var depth = 0
        // After `{` or `,` in an object: a member name, then its value.
        var expectKey = false

        var i = skipSpace(p, 0, n)
        if i == n { return true }  // a blank line
        while true {
            if i >= n { return false }
            if expectKey {
                guard p[i] == 0x22, let end = stringEnd(p, i + 1, n) else { return false }
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(.key, i + 1, end)
                t += 1
                i = skipSpace(p, end + 1, n)
                guard i < n, p[i] == 0x3A else { return false }  // :
                i = skipSpace(p, i + 1, n)
                if i >= n { return false }
                expectKey = false
            }
            let c = p[i]
            switch c {
            case 0x7B, 0x5B:  // { [
                depth += 1
                if depth > depthLimit { return false }
                let isObject = c == 0x7B
                kinds = kinds << 1 | (isObject ? 1 : 0)
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(isObject ? .startMap : .startArray, i, i)
                t += 1
                i = skipSpace(p, i + 1, n)
                if i < n, p[i] == (isObject ? 0x7D : 0x5D) {
                    guard t < capacity else { return false }
                    entries[t] = JSONLineTape.pack(isObject ? .endMap : .endArray, i, i)
                    t += 1
                    i += 1
                    depth -= 1
                    kinds >>= 1
                } else {
                    expectKey = isObject
                    continue
                }
            case 0x22:  // "
                guard let end = stringEnd(p, i + 1, n) else { return false }
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(.string, i + 1, end)
                t += 1
                i = end + 1
            case 0x74:  // true
                guard literal(p, i, n, 0x6575_7274) else { return false }
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(.true, i, i + 4)
                t += 1
                i += 4
            case 0x66:  // false
                guard i + 5 <= n, literal(p, i + 1, n, 0x6573_6C61) else { return false }
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(.false, i, i + 5)
                t += 1
                i += 5
            case 0x6E:  // null
                guard literal(p, i, n, 0x6C6C_756E) else { return false }
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(.null, i, i + 4)
                t += 1
                i += 4
            default:
                guard let (end, integer) = numberEnd(p, i, n) else { return false }
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(integer ? .integer : .number, i, end)
                t += 1
                i = end
            }
            // What follows a value: closers, then a comma or the end of the line.
            while true {
                i = skipSpace(p, i, n)
                if depth == 0 { return i == n }
                if i >= n { return false }
                let d = p[i]
                let inObject = kinds & 1 == 1
                if d == 0x2C {  // ,
                    i = skipSpace(p, i + 1, n)
                    expectKey = inObject
                    break
                }
                guard d == (inObject ? 0x7D : 0x5D) else { return false }
                guard t < capacity else { return false }
                entries[t] = JSONLineTape.pack(inObject ? .endMap : .endArray, i, i)
                t += 1
                i += 1
                depth -= 1
                kinds >>= 1
            }
        }
    }

    /// The index of the first byte from `from` that is not JSON whitespace (no LF on a line).
    @inline(__always)
    static func skipSpace(_ p: UnsafePointer<UInt8>, _ from: Int, _ n: Int) -> Int {
        if from < n, p[from] > 0x20 { return from }  // mostly
        var j = from
        while j < n {
            let c = p[j]
            guard c == 0x20 || c == 0x09 || c == 0x0D else { return j }
            j += 1
        }
        return j
    }

    /// The index of the closing quote of a string whose bytes start at `from`; nil when it is
    /// unusual (an escape, a control character, a non-ASCII byte) or not closed on the line.
    @inline(__always)
    static func stringEnd(_ p: UnsafePointer<UInt8>, _ from: Int, _ n: Int) -> Int? {
        var j = from
        // Eight bytes at a time: the lowest byte that is a quote, a backslash, below 0x20 or
        // from 0x80 up (each test exact for the lowest byte it flags).
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while j + 8 <= n {
            let w = UnsafeRawPointer(p + j).loadUnaligned(as: UInt64.self)
            let quote = w ^ (ones &* 0x22), backslash = w ^ (ones &* 0x5C)
            let flagged = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash
                           | (w &- ones &* 0x20) & ~w | w) & highs
            if flagged == 0 {
                j += 8
                continue
            }
            j += (UInt64(littleEndian: flagged).trailingZeroBitCount >> 3)
            return p[j] == 0x22 ? j : nil
        }
        while j < n {
            let c = p[j]
            if c == 0x22 { return j }
            // Below 0x20 or from 0x80 up (wrapping), or a backslash.
            if c &- 0x20 >= 0x60 || c == 0x5C { return nil }
            j += 1
        }
        return nil
    }

    /// Whether the four bytes at `at` are `word` (little-endian).
    @inline(__always)
    static func literal(_ p: UnsafePointer<UInt8>, _ at: Int, _ n: Int, _ word: UInt32) -> Bool {
        guard at + 4 <= n else { return false }
        return UnsafeRawPointer(p + at).loadUnaligned(as: UInt32.self) == word.littleEndian
    }

    /// The end of a number token starting at `from` in RFC 8259's grammar
    /// (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`), and whether it is an integer
    /// (no fraction, no exponent); nil when it is not one.
    @inline(__always)
    static func numberEnd(_ p: UnsafePointer<UInt8>, _ from: Int, _ n: Int) -> (Int, Bool)? {
        var j = from
        if j < n, p[j] == 0x2D { j += 1 }  // -
        guard j < n, p[j] &- 0x30 < 10 else { return nil }
        if p[j] == 0x30 {
            j += 1
        } else {
            j = digitsEnd(p, j, n)
        }
        var integer = true
        if j < n, p[j] == 0x2E {  // .
            integer = false
            j += 1
            guard j < n, p[j] &- 0x30 < 10 else { return nil }
            j = digitsEnd(p, j, n)
        }
        if j < n, p[j] | 0x20 == 0x65 {  // e E
            integer = false
            j += 1
            if j < n, p[j] == 0x2B || p[j] == 0x2D { j += 1 }
            guard j < n, p[j] &- 0x30 < 10 else { return nil }
            j = digitsEnd(p, j, n)
        }
        return (j, integer)
    }

    @inline(__always)
    static func digitsEnd(_ p: UnsafePointer<UInt8>, _ from: Int, _ n: Int) -> Int {
        var j = from
        while j < n, p[j] &- 0x30 < 10 { j += 1 }
        return j
    }
}

/// The tokens of a line scanned by `JSONLineScanner`, in order: each a kind and the byte range of
/// its text in the line (a string's or member name's between its quotes: ASCII, no escapes).
/// Reused line after line. A token is one `UInt64` in `entries`: the kind's raw value in bits
/// 0-7, the start in bits 8-35, the end from bit 36 (read in place by a target's replay loop:
/// `token(_:)` spells it out).
package final class JSONLineTape {
    package enum Kind: UInt8 {
        case startMap = 0, endMap, startArray, endArray, key, string, number, `true`, `false`, null
        /// A number without fraction or exponent.
        case integer
    }
    /// Offsets are packed in 28 bits each: a longer line is unusual.
    static let maxOffset = 1 << 28
    /// A line with more tokens is unusual.
    package static let capacity = 4096
    /// The tokens (a `let`: read from another module with no dynamic exclusivity check).
    package let entries: UnsafeMutablePointer<UInt64>
    @exclusivity(unchecked) package fileprivate(set) var count = 0

    package init() {
        entries = .allocate(capacity: JSONLineTape.capacity)
    }

    deinit { entries.deallocate() }

    /// A token as stored.
    @inline(__always)
    fileprivate static func pack(_ kind: Kind, _ start: Int, _ end: Int) -> UInt64 {
        UInt64(kind.rawValue) | UInt64(truncatingIfNeeded: start) << 8 | UInt64(truncatingIfNeeded: end) << 36
    }

    /// Token `i`: its kind, and where its text starts and ends in the line.
    @inline(__always)
    package func token(_ i: Int) -> (kind: Kind, start: Int, end: Int) {
        let e = entries[i]
        return (Kind(rawValue: UInt8(truncatingIfNeeded: e)) ?? .null, Int(truncatingIfNeeded: (e >> 8) & 0xFFF_FFFF),
                Int(truncatingIfNeeded: e >> 36))
    }
}
