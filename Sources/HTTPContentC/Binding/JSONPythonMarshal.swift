#if canImport(Glibc)
import Glibc
#endif
import HTTPContent

/// Writes a `JSONValue` in the format of Python's `marshal` module (version-independent subset:
/// None `N`, `T`/`F`, int `i`/`l`, binary float `g`, strings `z`/`a`/`u`, list `[`, dict `{`…`0`,
/// and back-references `r` for repeated member names), for the Python binding:
/// `marshal.loads` builds the objects about three times faster than `json.loads` parses text,
/// and repeated member names become one shared `str` (as `json.loads`'s memo does).
///
/// The result is what `json.loads(serialized)` gives: ints exact, doubles bit for bit, member
/// order and duplicates as in the document (the last duplicate wins in the dict). `.number`
/// values (`keepNumberText`) are refused: Python wants `Decimal` for them, which marshal cannot
/// express. No recursion (an explicit stack); values nested deeper than Python's reader allows
/// (2000 levels; the parser's default `maxDepth` is 512) are refused.
public enum JSONPythonMarshal {
    /// The marshal bytes in a `malloc`'d buffer (`free` it), and their length.
    public static func encode(_ value: JSONValue) throws(HTTPContentError) -> (UnsafeMutablePointer<UInt8>, Int) {
        var w = Writer()
        do {
            try w.write(value)
        } catch {
            w.release()
            throw error
        }
        return w.take()
    }

    enum Open {
        case array(JSONArray, Int)
        case object(JSONObject, Int)
    }

    struct Writer {
        var buf: UnsafeMutablePointer<UInt8>
        var count = 0
        var capacity: Int
        /// Member names already written with the reference flag, and their reference numbers.
        var refs: [String: Int32] = [:]
        var nextRef: Int32 = 0

        init() {
            capacity = 1 << 16
            buf = malloc(capacity)!.assumingMemoryBound(to: UInt8.self)
        }

        func release() { free(buf) }

        func take() -> (UnsafeMutablePointer<UInt8>, Int) { (buf, count) }

        @inline(__always)
        mutating func reserve(_ n: Int) {
            if count + n <= capacity { return }
            var c = capacity * 2
            while c < count + n { c *= 2 }
            buf = realloc(buf, c)!.assumingMemoryBound(to: UInt8.self)
            capacity = c
        }

        @inline(__always)
        mutating func byte(_ b: UInt8) {
            reserve(1)
            buf[count] = b
            count += 1
        }

        @inline(__always)
        mutating func int32(_ v: Int32) {
            reserve(4)
            (UnsafeMutableRawPointer(buf) + count).storeBytes(of: v.littleEndian, as: Int32.self)
            count += 4
        }

        mutating func int(_ i: Int64) {
            if let small = Int32(exactly: i) {
                reserve(5)
                buf[count] = UInt8(ascii: "i")
                count += 1
                int32(small)
                return
            }
            // TYPE_LONG: digit count (negative for a negative number), then 15-bit digits,
            // least significant first.
            var magnitude = i.magnitude
            var digits: [UInt16] = []
            while magnitude != 0 {
                digits.append(UInt16(magnitude & 0x7FFF))
                magnitude >>= 15
            }
            byte(UInt8(ascii: "l"))
            int32(Int32(i < 0 ? -digits.count : digits.count))
            reserve(2 * digits.count)
            for d in digits {
                (UnsafeMutableRawPointer(buf) + count).storeBytes(of: d.littleEndian, as: UInt16.self)
                count += 2
            }
        }

        /// An integer token of any length (TYPE_LONG from its decimal digits).
        mutating func bigInt(text token: UnsafeRawBufferPointer) {
            let negative = token.first == UInt8(ascii: "-")
            var dec = token.dropFirst(negative ? 1 : 0).map { UInt32($0 &- 0x30) }
            var digits: [UInt16] = []
            var start = 0
            while start < dec.count, dec[start] == 0 { start += 1 }
            while start < dec.count {
                var rem: UInt32 = 0
                for i in start..<dec.count {
                    let cur = rem * 10 + dec[i]
                    dec[i] = cur >> 15
                    rem = cur & 0x7FFF
                }
                digits.append(UInt16(rem))
                while start < dec.count, dec[start] == 0 { start += 1 }
            }
            byte(UInt8(ascii: "l"))
            int32(Int32(negative ? -digits.count : digits.count))
            reserve(2 * digits.count)
            for d in digits {
                (UnsafeMutableRawPointer(buf) + count).storeBytes(of: d.littleEndian, as: UInt16.self)
                count += 2
            }
        }

        @inline(__always)
        mutating func double(_ d: Double) {
            reserve(9)
            buf[count] = UInt8(ascii: "g")
            (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: d.bitPattern.littleEndian, as: UInt64.self)
            count += 9
        }

        @inline(__always)
        mutating func string(_ s: String, flag: UInt8 = 0) {
            var s = s
            s.withUTF8 { string(bytes: UnsafeRawBufferPointer($0), flag: flag) }
        }

        /// A string from UTF-8 bytes known to be valid.
        @inline(__always)
        mutating func string(bytes: UnsafeRawBufferPointer, flag: UInt8 = 0) {
            string(bytes: bytes, ascii: JSONStrings.isASCII(bytes), flag: flag)
        }

        /// A string from UTF-8 bytes known to be valid, and to be ASCII or not.
        @inline(__always)
        mutating func string(bytes: UnsafeRawBufferPointer, ascii: Bool, flag: UInt8 = 0) {
            let n = bytes.count
            reserve(n + 5)
            if ascii, n < 256 {
                buf[count] = UInt8(ascii: "z") | flag
                buf[count + 1] = UInt8(n)
                count += 2
            } else {
                buf[count] = (ascii ? UInt8(ascii: "a") : UInt8(ascii: "u")) | flag
                (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: Int32(n).littleEndian, as: Int32.self)
                count += 5
            }
            if let base = bytes.baseAddress { (UnsafeMutableRawPointer(buf) + count).copyMemory(from: base, byteCount: n) }
            count += n
        }

        @inline(__always)
        mutating func ref(_ r: Int32) {
            reserve(5)
            buf[count] = UInt8(ascii: "r")
            (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: r.littleEndian, as: Int32.self)
            count += 5
        }

        @inline(__always)
        func patch(_ v: Int32, at offset: Int) {
            (UnsafeMutableRawPointer(buf) + offset).storeBytes(of: v.littleEndian, as: Int32.self)
        }

        /// A member name: short ones are written once and referenced after.
        @inline(__always)
        mutating func key(_ k: String) {
            guard k.utf8.count <= 64 else { return string(k) }
            if let r = refs[k] {
                reserve(5)
                buf[count] = UInt8(ascii: "r")
                (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: r.littleEndian, as: Int32.self)
                count += 5
                return
            }
            if refs.count < 65536 {
                // FLAG_REF: the reader keeps the object as reference number nextRef.
                refs[k] = nextRef
                nextRef += 1
                string(k, flag: 0x80)
            } else {
                string(k)
            }
        }

        /// Writes a scalar, or the header of a container (returned to be opened).
        @inline(__always)
        mutating func scalarOrOpen(_ v: JSONValue) throws(HTTPContentError) -> Open? {
            switch v {
            case .null: byte(UInt8(ascii: "N"))
            case .bool(let b): byte(b ? UInt8(ascii: "T") : UInt8(ascii: "F"))
            case .int(let i): int(i)
            case .double(let d): double(d)
            case .string(let s): string(s)
            case .number:
                throw HTTPContentError(.invalidArgument,
                    "numbers kept as text (keepNumberText) cannot be written for Python's marshal")
            case .array(let a):
                byte(UInt8(ascii: "["))
                int32(Int32(truncatingIfNeeded: a.count))
                return .array(a, 0)
            case .object(let o):
                byte(UInt8(ascii: "{"))
                return .object(o, 0)
            }
            return nil
        }

        mutating func write(_ value: JSONValue) throws(HTTPContentError) {
            guard let first = try scalarOrOpen(value) else { return }
            var stack: [Open] = [first]
            while let top = stack.popLast() {
                switch top {
                case .array(let a, let i):
                    guard i < a.count else { continue }
                    stack.append(.array(a, i + 1))
                    if let open = try scalarOrOpen(a[i]) { try push(open, &stack) }
                case .object(let o, let i):
                    guard i < o.count else {
                        byte(UInt8(ascii: "0"))
                        continue
                    }
                    stack.append(.object(o, i + 1))
                    let m = o[i]
                    key(m.key)
                    if let open = try scalarOrOpen(m.value) { try push(open, &stack) }
                }
            }
        }

        @inline(__always)
        func push(_ open: Open, _ stack: inout [Open]) throws(HTTPContentError) {
            if stack.count >= 1999 {
                throw HTTPContentError(.invalidArgument,
                    "JSON nested deeper than 1999 levels cannot be written for Python's marshal")
            }
            stack.append(open)
        }
    }
}

// MARK: - Straight from the parse events

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

/// The bytes of a whole JSON document in Python's marshal format (`JSONPythonMarshalHandler`):
/// owns a malloc'd buffer.
public final class JSONPythonMarshalBytes: @unchecked Sendable {
    public let pointer: UnsafeMutablePointer<UInt8>
    public let count: Int
    init(_ pointer: UnsafeMutablePointer<UInt8>, _ count: Int) {
        self.pointer = pointer
        self.count = count
    }
    /// `value` written in marshal's format (`JSONPythonMarshal.encode`).
    public convenience init(encoding value: JSONValue) throws(HTTPContentError) {
        let (p, n) = try JSONPythonMarshal.encode(value)
        self.init(p, n)
    }
    deinit { free(pointer) }
}

/// The `JSON` handler for Python: the same parse, options (except `keepNumberText`, refused),
/// errors, empty-body rules and acceptance, but the content is the document written in Python's
/// marshal format while it is parsed, with no tree in between (nil for an empty body where
/// `JSON` gives nil).
public final class JSONPythonMarshalHandler: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: JSONOptions
    public let allowEmpty: Bool
    private var head: ResponseHead?
    private var parser: YajlParser?
    private var writer: JSONPythonMarshalWriter?

    public init(options: JSONOptions = JSONOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = JSON.defaultAcceptance()) throws(HTTPContentError) {
        if options.keepNumberText {
            throw HTTPContentError(.invalidArgument, "Python marshal output cannot keep number texts (keepNumberText)")
        }
        self.options = options
        self.allowEmpty = allowEmpty
        self.acceptance = acceptance
    }

    public func prepare(_ request: inout Request) throws {
        JSONAcceptance.prepare(&request)
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try JSONAcceptance.check(head, acceptance, options)
        self.head = head
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        let parser: YajlParser
        if let p = self.parser {
            parser = p
        } else {
            // Numbers as json.loads reads them: integers exact at any size (the tree would
            // make a double of one beyond 64 bits), others float(text).
            let writer = JSONPythonMarshalWriter(options: options, pythonNumbers: true)
            self.writer = writer
            parser = YajlParser(options: options, sink: writer)
            self.parser = parser
        }
        do { try parser.feed(chunk) } catch { throw HTTPContentError.wrapping(error) }
    }

    public func finish() throws -> JSONPythonMarshalBytes? {
        guard let parser, let writer, parser.bytesReceived > 0 else {
            try JSONAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, acceptance, head)
            return nil
        }
        do { try parser.finish() } catch { throw HTTPContentError.wrapping(error) }
        guard let (p, n) = writer.take() else {
            throw HTTPContentError(.decode, "invalid JSON at byte \(parser.bytesFed): no value", offset: parser.bytesFed)
        }
        return JSONPythonMarshalBytes(p, n)
    }

    public func cleanup(failed: Bool) {
        parser = nil
        writer = nil
    }
}

/// Path streaming batches in Python's marshal format (the writer given to `JSONItemBatches`
/// by hc_handler_json_batches_pymarshal_new): each batch is one marshal list of the values, for one
/// `marshal.loads` in Python, giving what `json.loads` gives for the JSON text batch (numbers
/// read from their text as Python's json module does); handed over under the same rules as
/// `BatchCapture`'s JSON texts: at `batchBytes`, when the prefix changes, and at the end of
/// every received chunk, when the values completed so far go at once even if another one is
/// still open (it is carried into the next list: `JSONPythonMarshalWriter.carry`).
final class PythonMarshalBatchCapture: JSONBatchWriter {
    typealias Deliver = JSONBatchDeliver

    private let writer: JSONPythonMarshalWriter
    private let batchBytes: Int
    private let deliver: Deliver
    @exclusivity(unchecked) private var batchPrefix = -1
    @exclusivity(unchecked) private var inItem = false
    /// Bytes, list entries and name references at the end of the last complete item.
    @exclusivity(unchecked) private var completedBytes = 0
    @exclusivity(unchecked) private var completedCount: Int32 = 0
    @exclusivity(unchecked) private var completedRefs: Int32 = 0

    init(options: JSONOptions, batchBytes: Int, deliver: @escaping Deliver) throws(HTTPContentError) {
        writer = JSONPythonMarshalWriter(options: options, list: true, pythonNumbers: true)
        self.batchBytes = max(batchBytes, 1)
        self.deliver = deliver
        completedBytes = writer.byteCount
    }

    /// Items in the list (not the carried names' tuple).
    private var items: Int32 { writer.listCount - writer.carriedNames }

    func begin(prefix: Int) throws {
        if items > 0, prefix != batchPrefix { try flush() }
        batchPrefix = prefix
        inItem = true
    }

    func end() throws {
        inItem = false
        completedBytes = writer.byteCount
        completedCount = writer.listCount
        completedRefs = writer.refCount
        if completedBytes >= batchBytes { try flush() }
    }

    /// Hands over the items completed so far; one still open is carried into the next list.
    func flush() throws {
        if inItem {
            let n = completedCount - writer.carriedNames
            guard n > 0 else { return }
            let bytes = writer.listBytes(count: completedCount, bytes: completedBytes)
            // Carried over even when the callback stops or fails: nothing is delivered twice.
            defer {
                completedBytes = writer.carry(from: completedBytes, refs: completedRefs,
                                              open: writer.listCount - completedCount)
                completedCount = writer.carriedNames   // references keep their numbers
            }
            return try deliver(batchPrefix, bytes, Int(n))
        }
        let n = items
        guard n > 0 else { return }
        let bytes = writer.listBytes(count: writer.listCount, bytes: writer.byteCount)
        defer {
            writer.resetList()
            completedBytes = writer.byteCount
            completedCount = 0
            completedRefs = 0
        }
        try deliver(batchPrefix, bytes, Int(n))
    }

    func flushCompleted() throws {
        guard inItem else { return try flush() }
        inItem = false
        let n = completedCount - writer.carriedNames
        let all = completedCount
        defer {
            writer.resetList()
            completedBytes = writer.byteCount
            completedCount = 0
            completedRefs = 0
        }
        guard n > 0 else { return }
        try deliver(batchPrefix, writer.listBytes(count: all, bytes: completedBytes), Int(n))
    }

    func null() throws { writer.null() }
    func bool(_ value: Bool) throws { writer.bool(value) }
    func number(_ token: UnsafeRawBufferPointer) throws { try writer.number(token) }
    func string(_ bytes: UnsafeRawBufferPointer) throws { try writer.string(bytes) }
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws { try writer.mapKey(bytes) }
    func startMap() throws { try writer.startMap() }
    func endMap() throws { writer.endMap() }
    func startArray() throws { try writer.startArray() }
    func endArray() throws { writer.endArray() }
}
