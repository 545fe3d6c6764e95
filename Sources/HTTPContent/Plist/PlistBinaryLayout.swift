/// A binary plist's (`bplist00`) trailer and offset table, read once and checked by
/// `PlistScan.binary`, then read by `PlistBinaryReader`: where the objects are, how large
/// an offset and a reference are, and how a marker's length is written.
struct PlistBinaryLayout {
    let b: UnsafePointer<UInt8>
    /// The document's length.
    let n: Int
    let offSize: Int, refSize: Int
    /// Objects in the offset table, the top object's number, the table's position.
    let count: Int, top: Int, table: Int

    /// Reads and checks the trailer: sizes 1 to 8, the object count, top object and table in
    /// range, the table before the trailer, and at most `maxObjects` objects.
    init(checking bytes: UnsafeRawBufferPointer, _ options: PlistOptions) throws(HTTPContentError) {
        n = bytes.count
        guard n >= 8 + 32, let base = bytes.baseAddress else {
            throw PlistBinaryLayout.malformed("\(bytes.count) bytes is shorter than its header and trailer")
        }
        b = base.assumingMemoryBound(to: UInt8.self)
        let t = n - 32
        offSize = Int(b[t + 6])
        refSize = Int(b[t + 7])
        let count64 = PlistBinaryLayout.uint(b + t + 8, 8), top64 = PlistBinaryLayout.uint(b + t + 16, 8)
        let table64 = PlistBinaryLayout.uint(b + t + 24, 8)
        guard (1...8).contains(offSize), (1...8).contains(refSize) else {
            throw PlistBinaryLayout.malformed("offset size \(offSize) or reference size \(refSize) is not 1 to 8")
        }
        guard count64 >= 1, count64 <= UInt64(n), top64 < count64, table64 >= 8, table64 < UInt64(t) else {
            throw PlistBinaryLayout.malformed("the trailer's object count, top object or offset table position is out of range")
        }
        count = Int(count64)
        top = Int(top64)
        table = Int(table64)
        guard count <= (t - table) / offSize else { throw PlistBinaryLayout.malformed("the offset table runs past the trailer") }
        if count > options.maxObjects {
            throw HTTPContentError(.tooLarge, "binary plist holds \(count) objects, more than the limit of \(options.maxObjects)")
        }
    }

    static func malformed(_ why: String) -> HTTPContentError {
        HTTPContentError(.decode, "malformed binary plist: \(why)")
    }

    /// A big-endian unsigned integer of `size` bytes at `p`.
    @inline(__always) static func uint(_ p: UnsafePointer<UInt8>, _ size: Int) -> UInt64 {
        switch size {
        case 1: return UInt64(p[0])
        case 2: return UInt64(p[0]) << 8 | UInt64(p[1])
        case 4: return UInt64(UInt32(bigEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)))
        case 8: return UInt64(bigEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
        default:
            var v: UInt64 = 0
            for i in 0..<size { v = v << 8 | UInt64(p[i]) }
            return v
        }
    }

    /// Object `i`'s position as the table gives it, unchecked; -1 for an entry too large for
    /// an Int.
    @inline(__always) func offset(_ i: Int) -> Int {
        let o = PlistBinaryLayout.uint(b + table + i * offSize, offSize)
        return o <= UInt64(Int.max) ? Int(o) : -1
    }

    /// Whether a position lies in the object area (after the header, before the table).
    @inline(__always) func inObjects(_ o: Int) -> Bool { o >= 8 && o < table }

    /// A container's or string's length after its marker at `p`: the low nibble, or 0xF and
    /// an integer object; with the position after it. nil when the integer is malformed; the
    /// length is as written (the caller checks it against the document).
    @inline(__always) func lengthField(_ marker: UInt8, at p: Int) -> (UInt64, Int)? {
        let low = marker & 0xF
        if low != 0xF { return (UInt64(low), p) }
        guard p < table, b[p] >> 4 == 1, b[p] & 0xF <= 3 else { return nil }
        let size = 1 << Int(b[p] & 0xF)
        guard p + 1 + size <= table else { return nil }
        return (PlistBinaryLayout.uint(b + p + 1, size), p + 1 + size)
    }

    /// `lengthField`, nil also when the length exceeds the document's.
    @inline(__always) func length(_ marker: UInt8, at p: Int) -> (Int, Int)? {
        guard let (l, next) = lengthField(marker, at: p), l <= UInt64(n) else { return nil }
        return (Int(l), next)
    }
}
