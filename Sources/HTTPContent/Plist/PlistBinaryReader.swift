#if canImport(Glibc)
import Glibc
#endif

/// What `PlistBinaryReader` reports, in document order (a dictionary's members as key, value,
/// key, value...). `object` is a value's number in the document's object table: a binary plist
/// stores a repeated string (a dictionary key, most often) once and refers to it from every
/// place it appears, so a visitor can write it once and refer back to it.
public protocol PlistBinaryVisitor {
    /// Asked before a string or data object the document refers to more than once: true when the
    /// visitor has written `object` already (and has referred back to it), so it is not read again.
    mutating func repeated(_ object: Int) -> Bool
    mutating func beginDictionary(count: Int)
    mutating func endDictionary(count: Int)
    mutating func beginArray(count: Int)
    mutating func endArray(count: Int)
    /// A string or a dictionary key, in UTF-8; `shared` when the document refers to it more than once.
    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>, object: Int, shared: Bool)
    /// Data bytes; `shared` as for strings.
    mutating func data(_ bytes: UnsafeBufferPointer<UInt8>, object: Int, shared: Bool)
    /// An integer that fits `Int64`.
    mutating func integer(_ value: Int64)
    /// An integer above `Int64.max`.
    mutating func unsignedInteger(_ value: UInt64)
    mutating func real(_ value: Double)
    mutating func bool(_ value: Bool)
    mutating func date(_ value: PlistDate) throws(HTTPContentError)
    mutating func uid(_ value: UInt64)
}

/// Reads a binary property list (`bplist00`) straight from its bytes, in one pass from its top
/// object, reporting each value to a `PlistBinaryVisitor`: nothing is built in between. For a
/// binding that writes the document in its own form (Python's pickle): libplist's tree and a
/// `PlistValue` cost several allocations per value, most of a binary plist's decoding time.
///
/// It reads what Apple's writers and plistlib produce, value for value as `PlistParser` gives
/// them. Whatever else (null or fill objects, sets, one- or two-byte reals, integers beyond 64
/// bits, ASCII strings holding bytes above 0x7F, lone UTF-16 surrogates, keys that are not
/// strings, a value running past the object area) it leaves to `PlistParser`: `read` returns
/// false and the caller parses the document there, so both paths give the same values and errors.
public enum PlistBinaryReader {
    /// Checks the document as `PlistParser.parse` does (size, structure, depth, values), then
    /// reports it to `visitor`.
    /// - Returns: true when the whole document was reported; false when it holds something this
    ///   reader leaves to `PlistParser` (the visitor has then seen part of it: discard that).
    /// - Throws: what `PlistParser.parse` throws for a document over the limits or malformed in
    ///   its structure, and what the visitor throws.
    public static func read<V: PlistBinaryVisitor>(_ bytes: UnsafeRawBufferPointer, options: PlistOptions,
                                                   into visitor: inout V) throws(HTTPContentError) -> Bool {
        try options.validate()
        guard bytes.count <= options.maxSize else {
            throw HTTPContentError(.tooLarge, "plist of \(bytes.count) bytes exceeds the limit of \(options.maxSize) bytes")
        }
        guard bytes.count > 0 else {
            throw HTTPContentError(.decode, "the body is empty, which is not a property list", offset: 0)
        }
        guard PlistFormat.sniff(bytes) == .binary else { return false }
        // Trailer, offset table, references, cycles, depth, value count and NULs in strings:
        // everything after relies on what this scan proved about the containers it reached.
        var reader = Walk(try PlistScan.binary(bytes, options))
        defer { reader.close() }
        return try reader.run(&visitor)
    }

    /// One document's walk. Positions are byte offsets into the document.
    private struct Walk {
        /// The trailer `PlistScan.binary` checked; its fields copied below for the reads.
        let layout: PlistBinaryLayout
        let b: UnsafePointer<UInt8>
        let n: Int
        let offSize: Int, refSize: Int
        let count: Int, top: Int, table: Int
        /// How many references each object has, saturated at 2 (so: shared or not).
        var refs: UnsafeMutablePointer<UInt8>
        /// UTF-16 strings converted to UTF-8.
        var scratch: UnsafeMutablePointer<UInt8>
        var scratchCapacity = 256

        init(_ layout: PlistBinaryLayout) {
            self.layout = layout
            b = layout.b
            n = layout.n
            offSize = layout.offSize
            refSize = layout.refSize
            count = layout.count
            top = layout.top
            table = layout.table
            refs = .allocate(capacity: count)
            refs.initialize(repeating: 0, count: count)
            scratch = .allocate(capacity: 256)
        }

        func close() {
            refs.deallocate()
            scratch.deallocate()
        }

        /// Object `i`'s position (the scan checked it for every object it reached); -1 for an
        /// entry too large for an Int, which only an object the scan did not reach can hold
        /// (countReferences skips it).
        @inline(__always) func offset(_ i: Int) -> Int { layout.offset(i) }

        @inline(__always) func length(_ marker: UInt8, at p: Int) -> (Int, Int)? { layout.length(marker, at: p) }

        /// Counts references (saturated at 2) over every container the table holds; a container
        /// the scan did not reach may be malformed: its bad entries are skipped.
        mutating func countReferences() {
            for object in 0..<count {
                let o = offset(object)
                guard o >= 8, o < table else { continue }
                let marker = b[o], kind = marker >> 4
                guard kind == 0xA || kind == 0xD else { continue }
                guard let (items, start) = length(marker, at: o + 1) else { continue }
                let total = kind == 0xD ? 2 * items : items
                guard total <= (table - start) / refSize else { continue }
                var p = start
                for _ in 0..<total {
                    let r = PlistBinaryLayout.uint(b + p, refSize)
                    p += refSize
                    if r < UInt64(count), refs[Int(r)] < 2 { refs[Int(r)] += 1 }
                }
            }
            if refs[top] < 2 { refs[top] += 1 }
        }

        struct Frame {
            var start: Int
            var items: Int
            var next: Int
            var dictionary: Bool
        }

        mutating func run<V: PlistBinaryVisitor>(_ visitor: inout V) throws(HTTPContentError) -> Bool {
            countReferences()
            var stack: [Frame] = []
            stack.reserveCapacity(64)
            guard let first = try value(top, key: false, &visitor) else { return false }
            if let first { stack.append(first) }
            while !stack.isEmpty {
                let i = stack.count - 1
                let f = stack[i]
                let total = f.dictionary ? 2 * f.items : f.items
                if f.next == total {
                    stack.removeLast()
                    if f.dictionary { visitor.endDictionary(count: f.items) } else { visitor.endArray(count: f.items) }
                    continue
                }
                stack[i].next = f.next + 1
                let slot = f.dictionary ? (f.next & 1 == 0 ? f.next >> 1 : f.items + (f.next >> 1)) : f.next
                let child = Int(PlistBinaryLayout.uint(b + f.start + slot * refSize, refSize))
                guard let pushed = try value(child, key: f.dictionary && f.next & 1 == 0, &visitor) else { return false }
                if let pushed { stack.append(pushed) }
            }
            return true
        }

        /// Reports object `i`, or begins it and returns its frame for a container; nil (outer)
        /// when it is something left to `PlistParser`.
        mutating func value<V: PlistBinaryVisitor>(_ i: Int, key: Bool, _ visitor: inout V) throws(HTTPContentError) -> Frame?? {
            let o = offset(i)
            let marker = b[o]
            let kind = marker >> 4
            if key && kind != 0x5 && kind != 0x6 { return nil }
            switch kind {
            case 0x0:
                guard marker == 0x08 || marker == 0x09 else { return nil }
                visitor.bool(marker == 0x09)
            case 0x1:
                let size = 1 << Int(marker & 0xF)
                guard size <= 16, o + 1 + size <= table else { return nil }
                switch size {
                case 1, 2, 4: visitor.integer(Int64(PlistBinaryLayout.uint(b + o + 1, size)))
                case 8: visitor.integer(Int64(bitPattern: PlistBinaryLayout.uint(b + o + 1, 8)))
                default:
                    // 128 bits, as plistlib writes integers above Int64.max: only the upper
                    // half zero is read here (libplist keeps the lower half of any other).
                    guard PlistBinaryLayout.uint(b + o + 1, 8) == 0 else { return nil }
                    let low = PlistBinaryLayout.uint(b + o + 9, 8)
                    if low > UInt64(Int64.max) { visitor.unsignedInteger(low) } else { visitor.integer(Int64(low)) }
                }
            case 0x2:
                switch marker & 0xF {
                case 2:
                    guard o + 5 <= table else { return nil }
                    visitor.real(Double(Float(bitPattern: UInt32(PlistBinaryLayout.uint(b + o + 1, 4)))))
                case 3:
                    guard o + 9 <= table else { return nil }
                    visitor.real(Double(bitPattern: PlistBinaryLayout.uint(b + o + 1, 8)))
                default: return nil
                }
            case 0x3:
                guard marker == 0x33, o + 9 <= table else { return nil }
                try visitor.date(PlistDate(secondsSince2001: Double(bitPattern: PlistBinaryLayout.uint(b + o + 1, 8))))
            case 0x4:
                let shared = refs[i] > 1
                if shared && visitor.repeated(i) { return .some(nil) }
                guard let (len, p) = length(marker, at: o + 1), len <= table - p else { return nil }
                visitor.data(UnsafeBufferPointer(start: b + p, count: len), object: i, shared: shared)
            case 0x5:
                let shared = refs[i] > 1
                if shared && visitor.repeated(i) { return .some(nil) }
                guard let (len, p) = length(marker, at: o + 1), len <= table - p else { return nil }
                // ASCII: plistlib refuses other bytes, libplist keeps them; PlistParser decides.
                var k = 0
                while k + 8 <= len {
                    if UnsafeRawPointer(b + p + k).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return nil }
                    k += 8
                }
                while k < len {
                    if b[p + k] >= 0x80 { return nil }
                    k += 1
                }
                visitor.string(UnsafeBufferPointer(start: b + p, count: len), object: i, shared: shared)
            case 0x6:
                let shared = refs[i] > 1
                if shared && visitor.repeated(i) { return .some(nil) }
                // libplist refuses an empty UTF-16 string (a fuzzer's find): left to it.
                guard let (units, p) = length(marker, at: o + 1), units > 0, units <= (table - p) / 2 else { return nil }
                guard let written = utf8(utf16: p, units: units) else { return nil }
                visitor.string(UnsafeBufferPointer(start: scratch, count: written), object: i, shared: shared)
            case 0x8:
                let size = Int(marker & 0xF) + 1
                guard size <= 8, o + 1 + size <= table else { return nil }
                // libplist refuses a UID above UInt32.max (a fuzzer's find): left to it.
                let uid = PlistBinaryLayout.uint(b + o + 1, size)
                guard uid <= UInt64(UInt32.max) else { return nil }
                visitor.uid(uid)
            case 0xA, 0xD:
                // The scan checked the count and that the references lie in the object area.
                guard let (items, start) = length(marker, at: o + 1) else { return nil }
                if kind == 0xD {
                    visitor.beginDictionary(count: items)
                } else {
                    visitor.beginArray(count: items)
                }
                return .some(Frame(start: start, items: items, next: 0, dictionary: kind == 0xD))
            default:
                return nil
            }
            return .some(nil)
        }

        /// The UTF-16BE string at `p` in `scratch` as UTF-8: its length, nil for a lone surrogate.
        mutating func utf8(utf16 p: Int, units: Int) -> Int? {
            if units * 3 > scratchCapacity {
                scratch.deallocate()
                scratchCapacity = max(units * 3, scratchCapacity * 2)
                scratch = .allocate(capacity: scratchCapacity)
            }
            var out = 0
            var k = 0
            while k < units {
                let u = UInt32(b[p + 2 * k]) << 8 | UInt32(b[p + 2 * k + 1])
                k += 1
                if u < 0x80 {
                    scratch[out] = UInt8(u)
                    out += 1
                } else if u < 0x800 {
                    scratch[out] = UInt8(0xC0 | u >> 6)
                    scratch[out + 1] = UInt8(0x80 | u & 0x3F)
                    out += 2
                } else if u & 0xF800 != 0xD800 {
                    scratch[out] = UInt8(0xE0 | u >> 12)
                    scratch[out + 1] = UInt8(0x80 | u >> 6 & 0x3F)
                    scratch[out + 2] = UInt8(0x80 | u & 0x3F)
                    out += 3
                } else {
                    // A high surrogate followed by a low one; anything else is refused.
                    guard u < 0xDC00, k < units else { return nil }
                    let l = UInt32(b[p + 2 * k]) << 8 | UInt32(b[p + 2 * k + 1])
                    guard l & 0xFC00 == 0xDC00 else { return nil }
                    k += 1
                    let c = 0x10000 + ((u - 0xD800) << 10 | (l - 0xDC00))
                    scratch[out] = UInt8(0xF0 | c >> 18)
                    scratch[out + 1] = UInt8(0x80 | c >> 12 & 0x3F)
                    scratch[out + 2] = UInt8(0x80 | c >> 6 & 0x3F)
                    scratch[out + 3] = UInt8(0x80 | c & 0x3F)
                    out += 4
                }
            }
            return out
        }
    }
}

/// Builds a `PlistValue` from `PlistBinaryReader`'s reports: what the reader read, in the form
/// `PlistParser` gives, so the two can be compared (tests, fuzzing).
public struct PlistValueBuilder: PlistBinaryVisitor {
    private var stack: [[PlistValue]] = [[]]
    private var written: [Int: PlistValue] = [:]
    /// How many times a shared object was referred back to instead of read again.
    public private(set) var repeats = 0
    /// False once a container was reported with another number of items than it announced, or a
    /// dictionary with a key that is not a string.
    public private(set) var consistent = true
    /// The value read (nil until the top object is complete).
    public var result: PlistValue? { stack[0].first }

    public init() {}

    private mutating func add(_ v: PlistValue) { stack[stack.count - 1].append(v) }
    public mutating func repeated(_ object: Int) -> Bool {
        guard let v = written[object] else { return false }
        repeats += 1
        add(v)
        return true
    }
    public mutating func beginDictionary(count: Int) { stack.append([]) }
    public mutating func endDictionary(count: Int) {
        let items = stack.removeLast()
        let keys = stride(from: 0, to: items.count - 1, by: 2).map { items[$0].stringValue }
        if items.count != 2 * count || keys.contains(nil) { consistent = false }
        add(.dictionary(stride(from: 0, to: items.count - 1, by: 2).map { PlistMember(key: keys[$0 / 2] ?? "", value: items[$0 + 1]) }))
    }
    public mutating func beginArray(count: Int) { stack.append([]) }
    public mutating func endArray(count: Int) {
        let items = stack.removeLast()
        if items.count != count { consistent = false }
        add(.array(items))
    }
    public mutating func string(_ utf8: UnsafeBufferPointer<UInt8>, object: Int, shared: Bool) {
        let v = PlistValue.string(String(decoding: utf8, as: UTF8.self))
        if shared { written[object] = v }
        add(v)
    }
    public mutating func data(_ bytes: UnsafeBufferPointer<UInt8>, object: Int, shared: Bool) {
        let v = PlistValue.data(Array(bytes))
        if shared { written[object] = v }
        add(v)
    }
    public mutating func integer(_ value: Int64) { add(.int(value)) }
    public mutating func unsignedInteger(_ value: UInt64) { add(.uint(value)) }
    public mutating func real(_ value: Double) { add(.real(value)) }
    public mutating func bool(_ value: Bool) { add(.bool(value)) }
    public mutating func date(_ value: PlistDate) throws(HTTPContentError) { add(.date(value)) }
    public mutating func uid(_ value: UInt64) { add(.uid(value)) }
}
