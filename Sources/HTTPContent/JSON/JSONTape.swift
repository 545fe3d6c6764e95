#if canImport(Glibc)
import Glibc
#endif

/// A parsed JSON document in four flat buffers, the storage behind the arrays and objects the
/// parser builds: one 8-byte word per value, the bytes of every string and kept number text,
/// each container's children, and the odd value too wide for its word. Building
/// one costs a few stores per value instead of a Swift allocation per container; `JSONArray` and
/// `JSONObject` read it in place and copy out only when changed. Tearing it down frees four
/// buffers, however deep the document.
///
/// A word is a 4-bit tag and 60 bits of payload: the integer itself (60-bit range), a double whose
/// four low bits are zero (most short decimals), a string of up to 6 bytes itself (NUL-terminated
/// in the word), a longer string's length (24 bits) and byte offset
/// (36 bits), or a container's count (24 bits) and offset among the children. Anything larger goes
/// to the wide buffer and the word holds its index there. A container's children are 16-bit when
/// they fit (elements and member values as distances from the container's word, member names as
/// word indices below 65,536: names are shared, so most come early), 32-bit word indices if not.
///
/// Immutable once a value refers to it (the builder starts another before handing values out
/// of a shared one), hence Sendable.
final class JSONTape: @unchecked Sendable {
    /// What a value is.
    enum Kind: UInt8 {
        case null, bool, int, double, number, string, array, object
    }

    /// How a word stores its value (the low 4 bits).
    enum Tag: UInt64 {
        case null = 0, bool, int, wideInt, double, wideDouble, string, wideString, number, wideNumber, array, object
        /// A string of at most 6 bytes held in the word itself (bytes 1 to 6; byte 7 is its NUL).
        case inlineString
    }

    private(set) var storage: JSONTapeStorage
    /// False once the builder took the buffers back for another document.
    private var ownsStorage = true

    init(_ storage: JSONTapeStorage) { self.storage = storage }

    deinit { if ownsStorage { storage.free() } }

    /// Takes another document's buffers (a recycled tape, unreferenced, reused by the builder).
    func adopt(_ storage: JSONTapeStorage) {
        self.storage = storage
        ownsStorage = true
    }

    /// The buffers, emptied, for the builder's next document (this tape must be unreferenced).
    func recycle() -> JSONTapeStorage {
        ownsStorage = false
        var s = storage
        s.reset()
        return s
    }

    // The read side lives on the storage (`JSONTapeStorage`'s reading extension), so that a
    // reader holding only the buffers (the schema's tape validator) runs the same code.
    @inline(__always)
    func kind(_ node: UInt32) -> Kind { storage.kind(node) }

    /// Elements or members of a container, bytes of a string or number text.
    @inline(__always)
    func count(_ node: UInt32) -> Int { storage.count(node) }

    /// The node of element `i` of an array.
    @inline(__always)
    func element(_ node: UInt32, _ i: Int) -> UInt32 { storage.element(node, i) }

    @inline(__always)
    func memberKey(_ node: UInt32, _ i: Int) -> UInt32 { storage.memberKey(node, i) }

    @inline(__always)
    func memberValue(_ node: UInt32, _ i: Int) -> UInt32 { storage.memberValue(node, i) }

    /// A string or number text node's bytes (NUL-terminated in place; the count excludes it).
    @inline(__always)
    func text(_ node: UInt32) -> UnsafeRawBufferPointer { storage.text(node) }

    /// Whether a string node's bytes equal `key`'s UTF-8.
    func textEquals(_ node: UInt32, _ key: String) -> Bool {
        let t = text(node)
        let u = key.utf8
        // The length first (O(1) for native strings): most keys differ in it.
        guard u.count == t.count else { return false }
        if let equal = u.withContiguousStorageIfAvailable({ k -> Bool in
            guard let a = k.baseAddress, let b = t.baseAddress else { return true }
            return memcmp(a, b, k.count) == 0
        }) { return equal }
        return t.elementsEqual(u)
    }

    /// Whether a string node's bytes equal `bytes`.
    @inline(__always)
    func textEquals(_ node: UInt32, _ bytes: [UInt8]) -> Bool {
        let t = text(node)
        guard t.count == bytes.count else { return false }
        guard let b = t.baseAddress, !bytes.isEmpty else { return true }
        return bytes.withUnsafeBytes { memcmp($0.baseAddress!, b, t.count) == 0 }
    }

    func string(_ node: UInt32) -> String {
        String(decoding: text(node).bindMemory(to: UInt8.self), as: UTF8.self)
    }

    /// The value a node stands for: scalars are made, containers refer to this tape.
    func value(_ node: UInt32) -> JSONValue {
        if let scalar = storage.scalar(node) { return scalar }
        return storage.word(node) & 0xF == Tag.array.rawValue ? .array(JSONArray(tape: self, node: node))
            : .object(JSONObject(tape: self, node: node))
    }
}

/// The buffers of a `JSONTape`, filled in place by `JSONTreeBuilder` (a struct it holds, so the
/// hot path touches no class) and handed to a `JSONTape` when the document is complete.
struct JSONTapeStorage {
    typealias Kind = JSONTape.Kind
    typealias Tag = JSONTape.Tag
    private(set) var wordBuffer: JSONTapeBuffer<UInt64>
    /// String and number bytes, each followed by a NUL (so C can borrow them as they are).
    private(set) var byteBuffer: JSONTapeBuffer<UInt8>
    /// Per container: the element word indices (objects: key, value per member), 16 or 32 bits
    /// each (see `close`); a count too large for the container's word comes first.
    private(set) var childBuffer: JSONTapeBuffer<UInt16>
    /// Values too wide for their word: integers beyond 60 bits, doubles with low bits set, the
    /// offset and length of very long or far strings.
    private(set) var wideBuffer: JSONTapeBuffer<UInt64>

    init() {
        wordBuffer = JSONTapeBuffer(capacity: 64)
        byteBuffer = JSONTapeBuffer(capacity: 512)
        childBuffer = JSONTapeBuffer(capacity: 256)
        wideBuffer = JSONTapeBuffer(capacity: 16)
    }

    /// Buffers filled elsewhere (a tape read back from the cache, `JSONTapeProduct`).
    init(words: JSONTapeBuffer<UInt64>, bytes: JSONTapeBuffer<UInt8>, children: JSONTapeBuffer<UInt16>,
         wide: JSONTapeBuffer<UInt64>) {
        wordBuffer = words
        byteBuffer = bytes
        childBuffer = children
        wideBuffer = wide
    }

    var words: UnsafeMutablePointer<UInt64> { wordBuffer.base }
    var nodeCount: Int { wordBuffer.count }
    var bytes: UnsafeMutablePointer<UInt8> { byteBuffer.base }
    var children: UnsafeMutablePointer<UInt16> { childBuffer.base }
    var wide: UnsafeMutablePointer<UInt64> { wideBuffer.base }

    /// A short text word: tag, 24-bit length, 36-bit byte offset.
    static let shortLengthMask: UInt64 = (1 << 24) - 1
    static let offsetShift: UInt64 = 28
    static let maxShortOffset = 1 << 36
    /// A container word: tag, 16-bit flag (bit 4), 24-bit count (all ones: the count is in the
    /// children, first), offset among the children in 16-bit units (35 bits).
    static let countMask: UInt64 = (1 << 24) - 1
    static let childOffsetShift: UInt64 = 29
    static let maxChildOffset = 1 << 35

    @inline(__always)
    static func load32(_ p: UnsafePointer<UInt16>) -> UInt32 {
        UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)
    }

    @inline(__always)
    static func store32(_ p: UnsafeMutablePointer<UInt16>, _ v: UInt32) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: UInt32.self)
    }

    /// Frees the buffers (the owner calls this once).
    func free() {
        wordBuffer.free()
        byteBuffer.free()
        childBuffer.free()
        wideBuffer.free()
    }

    /// Empties the tape for the next document, keeping its buffers.
    mutating func reset() {
        wordBuffer.count = 0
        byteBuffer.count = 0
        childBuffer.count = 0
        wideBuffer.count = 0
    }

    /// Gives back what the growth left unused (large documents only).
    @inline(__always)
    mutating func shrink() {
        wordBuffer.shrink()
        byteBuffer.shrink()
        childBuffer.shrink()
        wideBuffer.shrink()
    }

    // MARK: - Building

    /// Word indices are 32-bit: a document of more than 4 billion values is refused.
    static let maxNodes = Int(UInt32.max)

    /// Appends a value's word; `payload` is the integer's or double's bit pattern, or 1/0 for a
    /// bool (containers get theirs in `close`).
    @inline(__always)
    mutating func append(_ kind: Kind, _ count: Int, _ payload: UInt64) throws(HTTPContentError) -> UInt32 {
        let w: UInt64
        switch kind {
        case .null, .array, .object: w = 0
        case .bool: w = Tag.bool.rawValue | payload << 4
        case .int:
            let v = Int64(bitPattern: payload)
            if v >= -(1 << 59), v < 1 << 59 {
                w = Tag.int.rawValue | UInt64(bitPattern: v) << 4
            } else {
                w = Tag.wideInt.rawValue | UInt64(wideBuffer.count) << 4
                appendWide(payload)
            }
        case .double:
            if payload & 0xF == 0 {
                w = Tag.double.rawValue | payload
            } else {
                w = Tag.wideDouble.rawValue | UInt64(wideBuffer.count) << 4
                appendWide(payload)
            }
        case .string, .number: preconditionFailure("texts are appended with appendBytes")
        }
        return try appendWord(w)
    }

    @inline(__always)
    private mutating func appendWord(_ w: UInt64) throws(HTTPContentError) -> UInt32 {
        let i = wordBuffer.count
        if i == wordBuffer.ready {
            guard i < JSONTapeStorage.maxNodes else {
                throw HTTPContentError(.tooLarge, "JSON document has more than \(JSONTapeStorage.maxNodes) values")
            }
            wordBuffer.makeRoom(1)
        }
        wordBuffer.base[i] = w
        wordBuffer.count = i + 1
        return UInt32(truncatingIfNeeded: i)
    }

    private mutating func appendWide(_ value: UInt64) {
        let i = wideBuffer.count
        if i == wideBuffer.ready { wideBuffer.makeRoom(1) }
        wideBuffer.base[i] = value
        wideBuffer.count = i + 1
    }

    /// The word of a text at `offset` with `n` bytes.
    @inline(__always)
    private mutating func textWord(_ kind: Kind, _ offset: Int, _ n: Int) throws(HTTPContentError) -> UInt32 {
        if n <= Int(JSONTapeStorage.shortLengthMask), offset < JSONTapeStorage.maxShortOffset {
            let tag = kind == .string ? Tag.string : Tag.number
            return try appendWord(tag.rawValue | UInt64(n) << 4 | UInt64(offset) << JSONTapeStorage.offsetShift)
        }
        let tag = kind == .string ? Tag.wideString : Tag.wideNumber
        let w = tag.rawValue | UInt64(wideBuffer.count) << 4
        appendWide(UInt64(offset))
        appendWide(UInt64(n))
        return try appendWord(w)
    }

    /// Appends a string or number-text node holding a copy of `source` (plus a NUL).
    @inline(__always)
    mutating func appendBytes(_ kind: Kind, _ source: UnsafeRawBufferPointer) throws(HTTPContentError) -> UInt32 {
        let n = source.count
        if n <= 16 { return try appendShort(kind, ShortBytes(source), n) }
        let offset = byteBuffer.count
        if offset + n + 1 > byteBuffer.ready { byteBuffer.makeRoom(n + 1) }
        if let base = source.baseAddress { memcpy(byteBuffer.base + offset, base, n) }
        byteBuffer.base[offset + n] = 0
        byteBuffer.count = offset + n + 1
        return try textWord(kind, offset, n)
    }

    /// The same for at most 16 bytes, stored as two words (the zeros past the text are its NUL).
    @inline(__always)
    mutating func appendShort(_ kind: Kind, _ text: ShortBytes, _ n: Int) throws(HTTPContentError) -> UInt32 {
        if n <= 6, kind == .string { return try appendWord(Tag.inlineString.rawValue | UInt64(n) << 4 | text.w0 << 8) }
        let offset = byteBuffer.count
        if offset + 17 > byteBuffer.ready { byteBuffer.makeRoom(17) }
        let dest = UnsafeMutableRawPointer(byteBuffer.base + offset)
        dest.storeBytes(of: text.w0, as: UInt64.self)
        dest.storeBytes(of: text.w1, toByteOffset: 8, as: UInt64.self)
        byteBuffer.base[offset + n] = 0
        byteBuffer.count = offset + n + 1
        return try textWord(kind, offset, n)
    }

    /// Sets a container node's children: `source` holds `entries` word indices (two per object
    /// member, name first). Written 16-bit when every element or value lies within 65,535 words
    /// after the container and every name below word 65,536; 32-bit otherwise.
    /// Inlined into every callback that ends a container: the room check comes first (its rare
    /// call out of line, before anything else is live) and the sums wrap (`entries` is at most
    /// the pending stack's size, `start` below `maxChildOffset`), so the common case is a short
    /// straight run and one loop.
    @inline(__always)
    mutating func close(_ node: UInt32, isObject: Bool, count: Int, _ source: UnsafePointer<UInt32>,
                        entries: Int) throws(HTTPContentError) {
        // Room for the wide form and a leading count; the narrow one is tried first, in the same
        // pass as the check.
        if childBuffer.count &+ 2 &* entries &+ 2 > childBuffer.ready { try makeChildRoom(2 &* entries &+ 2) }
        let start = childBuffer.count
        let bigCount = UInt64(truncatingIfNeeded: count) >= JSONTapeStorage.countMask
        let out = childBuffer.base + start + (bigCount ? 2 : 0)
        if bigCount { JSONTapeStorage.store32(childBuffer.base + start, UInt32(truncatingIfNeeded: count)) }
        var narrow = true
        var k = 0
        if isObject {
            while k < entries {
                let name = source[k], distance = source[k &+ 1] &- node
                if name | distance > 0xFFFF { narrow = false; break }
                out[k] = UInt16(truncatingIfNeeded: name)
                out[k &+ 1] = UInt16(truncatingIfNeeded: distance)
                k &+= 2
            }
        } else {
            while k < entries {
                let distance = source[k] &- node
                if distance > 0xFFFF { narrow = false; break }
                out[k] = UInt16(truncatingIfNeeded: distance)
                k &+= 1
            }
        }
        if !narrow {
            for k in 0..<entries { JSONTapeStorage.store32(out + 2 &* k, source[k]) }
        }
        let units = (narrow ? entries : 2 &* entries) &+ (bigCount ? 2 : 0)
        let word = (isObject ? Tag.object : Tag.array).rawValue | (narrow ? 1 << 4 : 0)
            | (bigCount ? JSONTapeStorage.countMask : UInt64(truncatingIfNeeded: count)) << 5
            | UInt64(truncatingIfNeeded: start) << JSONTapeStorage.childOffsetShift
        wordBuffer.base[Int(node)] = word
        childBuffer.count = start &+ units
    }

    /// Makes room for `most` more children, refusing a document whose children would not fit
    /// the container word's offset. Checked only when growing: with at most `maxNodes` words
    /// (each value a child once, each member adding its name) the children stay far below it.
    @inline(never)
    private mutating func makeChildRoom(_ most: Int) throws(HTTPContentError) {
        guard childBuffer.count + most <= JSONTapeStorage.maxChildOffset else {
            throw HTTPContentError(.tooLarge, "JSON document too large for the tape (children)")
        }
        childBuffer.makeRoom(most)
    }
}

// MARK: - Reading

extension JSONTapeStorage {
    @inline(__always)
    func word(_ node: UInt32) -> UInt64 { words[Int(node)] }

    /// A scalar node's value; nil for a container (whose value refers to a `JSONTape`).
    @inline(__always)
    func scalar(_ node: UInt32) -> JSONValue? {
        let w = word(node)
        switch Tag(rawValue: w & 0xF) ?? .null {
        case .null: return .null
        case .bool: return .bool(w >> 4 != 0)
        case .int: return .int(Int64(bitPattern: w) >> 4)
        case .wideInt: return .int(Int64(bitPattern: wide[payload(w)]))
        case .double: return .double(Double(bitPattern: w & ~0xF))
        case .wideDouble: return .double(Double(bitPattern: wide[payload(w)]))
        case .number, .wideNumber: return .number(String(decoding: text(node).bindMemory(to: UInt8.self), as: UTF8.self))
        case .string, .wideString, .inlineString: return .string(String(decoding: text(node).bindMemory(to: UInt8.self), as: UTF8.self))
        case .array, .object: return nil
        }
    }

    @inline(__always)
    private func payload(_ w: UInt64) -> Int { Int(truncatingIfNeeded: w >> 4) }

    @inline(__always)
    func kind(_ node: UInt32) -> Kind {
        switch Tag(rawValue: word(node) & 0xF) ?? .null {
        case .null: return .null
        case .bool: return .bool
        case .int, .wideInt: return .int
        case .double, .wideDouble: return .double
        case .string, .wideString, .inlineString: return .string
        case .number, .wideNumber: return .number
        case .array: return .array
        case .object: return .object
        }
    }

    /// Elements or members of a container, bytes of a string or number text.
    @inline(__always)
    func count(_ node: UInt32) -> Int {
        let w = word(node)
        switch Tag(rawValue: w & 0xF) ?? .null {
        case .array, .object: return entries(w).count
        case .string, .number: return Int(truncatingIfNeeded: (w >> 4) & Self.shortLengthMask)
        case .inlineString: return Int(truncatingIfNeeded: (w >> 4) & 0xF)
        case .wideString, .wideNumber: return Int(truncatingIfNeeded: wide[payload(w) + 1])
        default: return 0
        }
    }

    /// A container word's children: 16-bit or not, how many, and where.
    @inline(__always)
    private func entries(_ w: UInt64) -> (narrow: Bool, count: Int, at: UnsafeMutablePointer<UInt16>) {
        var count = Int(truncatingIfNeeded: (w >> 5) & Self.countMask)
        var at = children + Int(truncatingIfNeeded: w >> Self.childOffsetShift)
        if count == Int(Self.countMask) {
            count = Int(Self.load32(at))
            at += 2
        }
        return ((w >> 4) & 1 == 1, count, at)
    }

    /// The node of element `i` of an array.
    @inline(__always)
    func element(_ node: UInt32, _ i: Int) -> UInt32 {
        let e = entries(word(node))
        return e.narrow ? node &+ UInt32(e.at[i]) : Self.load32(e.at + 2 * i)
    }

    @inline(__always)
    func memberKey(_ node: UInt32, _ i: Int) -> UInt32 {
        let e = entries(word(node))
        return e.narrow ? UInt32(e.at[2 * i]) : Self.load32(e.at + 4 * i)
    }

    @inline(__always)
    func memberValue(_ node: UInt32, _ i: Int) -> UInt32 {
        let e = entries(word(node))
        return e.narrow ? node &+ UInt32(e.at[2 * i + 1]) : Self.load32(e.at + 4 * i + 2)
    }

    /// A string or number text node's bytes (NUL-terminated in place; the count excludes it).
    @inline(__always)
    func text(_ node: UInt32) -> UnsafeRawBufferPointer {
        let w = word(node)
        if w & 0xF == Tag.inlineString.rawValue {
            return UnsafeRawBufferPointer(start: UnsafeRawPointer(words + Int(node)) + 1, count: Int(truncatingIfNeeded: (w >> 4) & 0xF))
        }
        let offset: Int, length: Int
        if w & 0xF == Tag.wideString.rawValue || w & 0xF == Tag.wideNumber.rawValue {
            offset = Int(truncatingIfNeeded: wide[payload(w)])
            length = Int(truncatingIfNeeded: wide[payload(w) + 1])
        } else {
            length = Int(truncatingIfNeeded: (w >> 4) & Self.shortLengthMask)
            offset = Int(truncatingIfNeeded: w >> Self.offsetShift)
        }
        return UnsafeRawBufferPointer(start: bytes + offset, count: length)
    }
}

/// One growable buffer of the tape. `ready` is how far it may be written without calling
/// `makeRoom`: the capacity for small buffers; for large ones the part populated so far (see
/// `JSONTapeMemory`), so only pages about to be written are mapped, not the whole doubling.
struct JSONTapeBuffer<T> {
    private(set) var base: UnsafeMutablePointer<T>
    var count = 0
    private(set) var ready: Int
    private var capacity: Int

    init(capacity: Int) {
        base = JSONTapeMemory.allocate(capacity)
        self.capacity = capacity
        ready = capacity
    }

    /// A buffer holding a copy of `count` elements read from `source` (a stored tape's).
    init(copying source: UnsafeRawPointer, count: Int) {
        let n = max(count, 1)
        base = JSONTapeMemory.allocate(n)
        if count > 0 { memcpy(base, source, count * MemoryLayout<T>.stride) }
        self.count = count
        capacity = n
        ready = n
    }

    func free() { Glibc.free(base) }

    /// Makes `ready` at least `count + n`, growing (doubling) and populating as needed.
    mutating func makeRoom(_ n: Int) {
        let need = count + n
        if need > capacity {
            let grown = max(capacity * 2, need)
            base = JSONTapeMemory.resize(base, grown)
            capacity = grown
        }
        ready = JSONTapeMemory.populate(base, from: ready, atLeast: need, capacity: capacity)
    }

    @inline(__always)
    mutating func shrink() {
        guard JSONTapeMemory.worthShrinking(T.self, capacity, count) else { return }
        let n = max(count, 1)
        base = JSONTapeMemory.resize(base, n)
        capacity = n
        ready = n
    }
}

/// Up to 16 bytes as two little-endian words, zero beyond the text, read without touching a byte
/// past its end (overlapping loads instead of a byte loop or a call to memcpy).
struct ShortBytes {
    var w0: UInt64 = 0
    var w1: UInt64 = 0

    @inline(__always)
    init(_ source: UnsafeRawBufferPointer) {
        let n = source.count
        guard n > 0, let p = source.baseAddress else { return }
        if n >= 8 {
            w0 = p.loadUnaligned(as: UInt64.self)
            if n > 8 {
                // The last 8 bytes, shifted so the ones already in w0 drop out.
                let tail = p.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
                w1 = tail &>> UInt64((16 - n) * 8)
            }
        } else if n >= 4 {
            let lo = UInt64(p.loadUnaligned(as: UInt32.self))
            let hi = UInt64(p.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            w0 = lo | (hi &<< UInt64((n - 4) * 8))
        } else {
            let b0 = UInt64(p.load(as: UInt8.self))
            let b1 = UInt64(p.load(fromByteOffset: n >> 1, as: UInt8.self))
            let b2 = UInt64(p.load(fromByteOffset: n - 1, as: UInt8.self))
            w0 = b0 | (b1 &<< UInt64((n >> 1) * 8)) | (b2 &<< UInt64((n - 1) * 8))
        }
    }

    @inline(__always)
    var isASCII: Bool { (w0 | w1) & 0x8080_8080_8080_8080 == 0 }
}

// MARK: - Lending text to front ends

extension JSONTape {
    /// A string or number text node's bytes when they read back unchanged as UTF-8 (always,
    /// unless parsed with `strictUTF8` off), NUL-terminated in place; nil for other nodes.
    func lendableText(_ node: UInt32) -> UnsafeRawBufferPointer? {
        switch kind(node) {
        case .string, .number:
            let t = text(node)
            if JSONStrings.isASCII(t) { return t }
            do { try JSONStrings.validate(t) } catch { return nil }
            return t
        default: return nil
        }
    }
}

extension JSONArray {
    /// Element `i`'s text bytes (a string or kept number text) when they live on a parsed
    /// document's tape: valid as long as this array's storage, NUL-terminated. For front ends
    /// that lend text without copying it.
    package func lendableText(at i: Int) -> UnsafeRawBufferPointer? {
        guard let tape, i >= 0, i < tape.count(node) else { return nil }
        return tape.lendableText(tape.element(node, i))
    }
}

extension JSONObject {
    /// Member `i`'s value text, as `JSONArray.lendableText(at:)`.
    package func lendableText(at i: Int) -> UnsafeRawBufferPointer? {
        guard let tape, i >= 0, i < tape.count(node) else { return nil }
        return tape.lendableText(tape.memberValue(node, i))
    }

    /// Member `i`'s name bytes, as `JSONArray.lendableText(at:)`.
    package func lendableKey(at i: Int) -> UnsafeRawBufferPointer? {
        guard let tape, i >= 0, i < tape.count(node) else { return nil }
        return tape.lendableText(tape.memberKey(node, i))
    }
}
