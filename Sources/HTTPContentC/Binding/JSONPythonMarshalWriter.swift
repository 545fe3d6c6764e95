#if canImport(Glibc)
import Glibc
#endif
import HTTPContent

/// Writes Python marshal bytes straight from yajl's events, with no tree: the whole-document
/// path of the Python binding (`hc.JSON()`). The result equals `JSONPythonMarshal.encode` of the
/// tree the `JSON` handler would build with the same options (numbers, with `pythonNumbers`, as
/// `json.loads` makes them: integers exact at any size, others `float(text)`, strings validated or repaired alike, `removeNulls` applied, multiple values as a
/// list of documents, open containers closed with `allowPartialValues`). `keepNumberText` is
/// not supported (the handler refuses it).
final class JSONPythonMarshalWriter: JSONEventSink {
    // Written at every parse event: no dynamic exclusivity checks (a tenth of a record
    // stream's instructions went to them; nothing here is reentered).
    @exclusivity(unchecked) private var w = JSONPythonMarshal.Writer()
    private let removeNulls: Bool
    private let strictUTF8: Bool
    private let multiple: Bool
    /// Numbers as Python's json module reads their text (batches, which used to be JSON text
    /// for json.loads): integers exact at any size, other numbers `float(text)` (inf beyond
    /// range). Otherwise as the tree makes them (`JSONNumberText.value`).
    private let pythonNumbers: Bool
    private struct Frame {
        var isObject: Bool
        /// Arrays: where the element count goes, and the count so far.
        var countAt: Int
        var count: Int32
    }
    @exclusivity(unchecked) private var frames: [Frame] = []
    @exclusivity(unchecked) private var inObject = false
    @exclusivity(unchecked) private var documents: Int32 = 0
    @exclusivity(unchecked) private var rootCountAt = 0
    /// The member name just written, not yet followed by its value: where it starts, and the
    /// reference slot it registered (to undo both when removeNulls drops the member).
    @exclusivity(unchecked) private var keyAt = -1
    @exclusivity(unchecked) private var keySlot = -1
    private let keys = KeyRefs()
    /// Where each member name written with the reference flag starts and ends, in reference
    /// order: a value carried into a new list (`carry`) has them defined again first.
    @exclusivity(unchecked) private var definitions: [(start: Int, end: Int)] = []
    /// 1 when the list starts with the tuple of definitions `carry` wrote (not a value).
    @exclusivity(unchecked) private(set) var carriedNames: Int32 = 0
    private var taken = false

    /// - Parameter list: write every top-level value into one list (multiple values; batches).
    init(options: JSONOptions, list: Bool? = nil, pythonNumbers: Bool = false) {
        self.pythonNumbers = pythonNumbers
        removeNulls = options.removeNulls
        strictUTF8 = options.strictUTF8
        multiple = list ?? options.allowMultipleValues
        if multiple {
            w.byte(UInt8(ascii: "["))
            rootCountAt = w.count
            w.int32(0)
        }
    }

    deinit { if !taken { w.release() } }

    /// Every value is counted in its array (or among the documents).
    @inline(__always)
    private func beginValue() {
        if inObject {
            keyAt = -1
            return
        }
        if frames.isEmpty {
            documents &+= 1
        } else {
            frames[frames.count - 1].count &+= 1
        }
    }

    func null() {
        if inObject, removeNulls, keyAt >= 0 {
            w.count = keyAt
            if keySlot >= 0 { undefine() }
            keyAt = -1
            return
        }
        beginValue()
        w.byte(UInt8(ascii: "N"))
    }

    func bool(_ value: Bool) {
        beginValue()
        w.byte(value ? UInt8(ascii: "T") : UInt8(ascii: "F"))
    }

    func number(_ token: UnsafeRawBufferPointer) throws {
        if pythonNumbers {
            beginValue()
            if let i = JSONNumberText.integer(token) {
                w.int(i)
            } else if !token.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }) {
                // Python's own limit on integer texts (sys.int_info.default_max_str_digits):
                // json.loads refuses longer ones, and converting them costs quadratic time.
                if token.count - (token.first == UInt8(ascii: "-") ? 1 : 0) > 4300 {
                    throw HTTPContentError(.decode, "an integer of more than 4300 digits (Python's limit for int())")
                }
                w.bigInt(text: token)
            } else {
                w.double(JSONNumberText.fastDouble(token) ?? JSONNumberText.strtod(token))
            }
            return
        }
        let v = try JSONNumberText.value(token, keep: false)
        beginValue()
        switch v {
        case .int(let i): w.int(i)
        case .double(let d): w.double(d)
        default: break
        }
    }

    func string(_ bytes: UnsafeRawBufferPointer) throws {
        try writeString(bytes)
        beginValue()
    }

    /// A string value whose bytes are known to be ASCII (no check).
    @inline(__always)
    func asciiString(_ bytes: UnsafeRawBufferPointer) {
        w.string(bytes: bytes, ascii: true)
        beginValue()
    }

    /// An integer value already read.
    @inline(__always)
    func integer(_ value: Int64) {
        beginValue()
        w.int(value)
    }

    /// A number with a fraction or an exponent, already read (`float(text)`).
    @inline(__always)
    func double(_ value: Double) {
        beginValue()
        w.double(value)
    }

    private func writeString(_ bytes: UnsafeRawBufferPointer, flag: UInt8 = 0) throws(HTTPContentError) {
        if JSONStrings.isASCII(bytes) {
            w.string(bytes: bytes, flag: flag)
        } else if strictUTF8 {
            try JSONStrings.validate(bytes)
            w.string(bytes: bytes, flag: flag)
        } else {
            // Invalid bytes become U+FFFD, as the tree's strings do.
            w.string(JSONStrings.repaired(bytes), flag: flag)
        }
    }

    func mapKey(_ bytes: UnsafeRawBufferPointer) throws {
        try mapKey(bytes, ascii: false)
    }

    /// A member name; `ascii`: its bytes are known to be ASCII (no check).
    @inline(__always)
    func mapKey(_ bytes: UnsafeRawBufferPointer, ascii: Bool) throws {
        keyAt = w.count
        keySlot = -1
        if let r = keys.lookup(bytes) {
            w.ref(r)
            return
        }
        if bytes.count <= 16, let slot = keys.slot(for: bytes) {
            if ascii { w.string(bytes: bytes, ascii: true, flag: 0x80) } else { try writeString(bytes, flag: 0x80) }
            keys.remember(slot, bytes, ref: w.nextRef)
            definitions.append((keyAt, w.count))
            keySlot = slot
            w.nextRef += 1
        } else if ascii {
            w.string(bytes: bytes, ascii: true)
        } else {
            try writeString(bytes)
        }
    }

    func startMap() throws {
        try checkDepth()
        beginValue()
        w.byte(UInt8(ascii: "{"))
        frames.append(Frame(isObject: true, countAt: 0, count: 0))
        inObject = true
    }

    func endMap() {
        dropPendingKey()
        w.byte(UInt8(ascii: "0"))
        frames.removeLast()
        inObject = frames.last?.isObject ?? false
    }

    func startArray() throws {
        try checkDepth()
        beginValue()
        w.byte(UInt8(ascii: "["))
        frames.append(Frame(isObject: false, countAt: w.count, count: 0))
        w.int32(0)
        inObject = false
    }

    func endArray() {
        let f = frames.removeLast()
        w.patch(f.count, at: f.countAt)
        inObject = frames.last?.isObject ?? false
    }

    @inline(__always)
    private func checkDepth() throws(HTTPContentError) {
        if frames.count >= 1998 {
            throw HTTPContentError(.decode, "JSON nested deeper than 1999 levels cannot be written for Python's marshal")
        }
    }

    /// A member name with no value (input cut short inside an object) is dropped, as the tree does.
    private func dropPendingKey() {
        if inObject, keyAt >= 0 {
            w.count = keyAt
            if keySlot >= 0 { undefine() }
            keyAt = -1
        }
    }

    /// Takes back the member name just defined (its member was dropped).
    private func undefine() {
        w.nextRef -= 1
        keys.forget(keySlot)
        definitions.removeLast()
    }

    // MARK: List mode, for batches

    /// Values completed in the list, and the bytes written.
    var listCount: Int32 { documents }
    var byteCount: Int { w.count }

    /// The list of the values written so far, cut at `bytes` (a point where `count` values
    /// were complete); valid until the next write.
    func listBytes(count: Int32, bytes: Int) -> UnsafeRawBufferPointer {
        w.patch(count, at: rootCountAt)
        return UnsafeRawBufferPointer(start: w.buf, count: bytes)
    }

    /// Member-name references handed out so far in the list.
    var refCount: Int32 { w.nextRef }

    /// Cuts the list back to a point where `count` values were complete in `bytes` bytes with
    /// `refs` references (a record stream dropping a bad record). Names remembered for
    /// references are forgotten (later ones are written in full again).
    func rollback(bytes: Int, count: Int32, refs: Int32) {
        w.count = max(bytes, rootCountAt + 4)
        w.nextRef = refs
        definitions.removeSubrange(min(Int(refs), definitions.count)...)
        documents = count
        frames.removeAll(keepingCapacity: true)
        inObject = false
        keyAt = -1
        keySlot = -1
        keys.clear()
    }

    /// Starts a new, empty list (references start over: each list is its own marshal.loads).
    func resetList() {
        w.count = rootCountAt + 4
        w.nextRef = 0
        definitions.removeAll(keepingCapacity: true)
        carriedNames = 0
        documents = 0
        frames.removeAll(keepingCapacity: true)
        inObject = false
        keyAt = -1
        keySlot = -1
        keys.clear()
    }

    /// After the values before `start` were handed over: starts a new list holding what was
    /// written from `start` on (a value still open, `open` top-level values in all), so that it
    /// continues there. The first `refs` member-name references were defined before `start`,
    /// in the values handed over, and the bytes kept may refer to them: the new list first
    /// defines them again, in order, in a tuple (`carriedNames` is then 1; the Python side
    /// skips a batch's leading tuple, which no JSON value is), so every reference keeps its
    /// number and nothing kept is rewritten. Returns where the kept bytes now start.
    func carry(from start: Int, refs: Int32, open: Int32) -> Int {
        let head = rootCountAt + 4
        let defined = Int(min(refs, Int32(definitions.count)))
        var tupleBytes = 0
        if defined > 0 {
            tupleBytes = 5
            for d in definitions[..<defined] { tupleBytes += d.end - d.start }
        }
        let newStart = head + tupleBytes
        let kept = w.count - start
        // The definitions, copied out before the kept bytes may move over them.
        var tuple = [UInt8]()
        if defined > 0 {
            tuple.reserveCapacity(tupleBytes)
            tuple.append(UInt8(ascii: "("))
            withUnsafeBytes(of: Int32(defined).littleEndian) { tuple.append(contentsOf: $0) }
            for d in definitions[..<defined] {
                tuple.append(contentsOf: UnsafeBufferPointer(start: w.buf + d.start, count: d.end - d.start))
            }
        }
        if newStart + kept > w.count { w.reserve(newStart + kept - w.count) }
        memmove(w.buf + newStart, w.buf + start, kept)
        tuple.withUnsafeBytes { t in
            if let b = t.baseAddress { memcpy(w.buf + head, b, t.count) }
        }
        w.count = newStart + kept
        let delta = newStart - start
        var moved: [(start: Int, end: Int)] = []
        moved.reserveCapacity(definitions.count)
        var at = head + 5
        for d in definitions[..<defined] {
            moved.append((at, at + d.end - d.start))
            at += d.end - d.start
        }
        for d in definitions[defined...] { moved.append((d.start + delta, d.end + delta)) }
        definitions = moved
        for i in frames.indices where !frames[i].isObject { frames[i].countAt += delta }
        if keyAt >= 0 { keyAt += delta }
        carriedNames = defined > 0 ? 1 : 0
        documents = carriedNames + open
        return newStart
    }

    /// Closes what is open (partial values), finishes the list of documents, and hands the
    /// bytes over (malloc'd; the caller frees them). nil when no value was written.
    func take() -> (UnsafeMutablePointer<UInt8>, Int)? {
        while let f = frames.last {
            if f.isObject { endMap() } else { endArray() }
        }
        if multiple {
            w.patch(documents, at: rootCountAt)
        } else if documents == 0 {
            return nil
        }
        taken = true
        return w.take()
    }
}

/// Member names already written with marshal's reference flag, by their bytes (up to 16), in a
/// small direct-mapped table: a repeated name is written as a 5-byte reference, and Python
/// shares one `str` for it. A slot that is reused simply stops being referenced.
private final class KeyRefs {
    private struct Slot {
        var w0: UInt64 = 0
        var w1: UInt64 = 0
        var length = -1
        var ref: Int32 = 0
    }
    private static let slotCount = 256
    private let slots: UnsafeMutablePointer<Slot>

    init() {
        slots = .allocate(capacity: KeyRefs.slotCount)
        slots.initialize(repeating: Slot(), count: KeyRefs.slotCount)
    }

    deinit { slots.deallocate() }

    /// The bytes (at most 16) as two words, one way for each length (the length is compared
    /// too): overlapping loads within the bytes, no copy.
    @inline(__always)
    private func words(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64, Int) {
        var words: (UInt64, UInt64) = (0, 0)
        let n = bytes.count
        if let base = bytes.baseAddress {
            if n >= 8 {
                words = (base.loadUnaligned(as: UInt64.self), base.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
            } else if n >= 4 {
                words.0 = UInt64(base.loadUnaligned(as: UInt32.self))
                    | UInt64(base.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)) << 32
            } else if n > 0 {
                let b = base.assumingMemoryBound(to: UInt8.self)
                words.0 = UInt64(b[0]) | UInt64(b[n / 2]) << 8 | UInt64(b[n - 1]) << 16
            }
        }
        let hash = (words.0 &* 0x9E37_79B9_7F4A_7C15) ^ (words.1 &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(bytes.count)
        return (words.0, words.1, Int(truncatingIfNeeded: (hash >> 32) & UInt64(KeyRefs.slotCount - 1)))
    }

    @inline(__always)
    func lookup(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        guard bytes.count <= 16 else { return nil }
        let (w0, w1, i) = words(bytes)
        let s = slots[i]
        return s.length == bytes.count && s.w0 == w0 && s.w1 == w1 ? s.ref : nil
    }

    func slot(for bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count <= 16 else { return nil }
        return words(bytes).2
    }

    func remember(_ slot: Int, _ bytes: UnsafeRawBufferPointer, ref: Int32) {
        let (w0, w1, _) = words(bytes)
        slots[slot] = Slot(w0: w0, w1: w1, length: bytes.count, ref: ref)
    }

    func forget(_ slot: Int) { slots[slot].length = -1 }

    func clear() {
        for i in 0..<KeyRefs.slotCount { slots[i].length = -1 }
    }
}
