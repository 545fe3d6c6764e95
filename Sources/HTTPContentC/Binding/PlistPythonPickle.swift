import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// Writes a `PlistValue` as a pickle (protocol 4) that `pickle.loads` turns into exactly what
/// `plistlib.loads` gives: dict, list, str, int, float, bool, bytes, naive UTC
/// `datetime.datetime`, `plistlib.UID`. Made here for the Python binding only: one C call and
/// one `pickle.loads` (C code) instead of a ctypes call per value. The bytes are ours, not the
/// server's: strings and data are length-prefixed, so no body content can become an opcode,
/// and the only globals named are `datetime.datetime` and `plistlib.UID` (the binding's
/// unpickler refuses any other).
struct PlistPythonPickle {
    private(set) var out: [UInt8] = []
    /// Which globals are memoized already: bit 0 datetime.datetime (memo 0), bit 1 plistlib.UID (memo 1).
    private var memoized: UInt8 = 0
    /// Dictionary keys and short strings recently written, and their memo slots (from 2): a
    /// repeated one is a memo get, one shared `str` in Python (as plistlib's binary reader shares
    /// the strings a binary plist stores once), instead of a new string decoded each time.
    /// Direct-mapped by an FNV-1a hash of the bytes (a Swift `Dictionary` hashes a String at
    /// several times the cost of what it saves); a collision just writes the string again.
    private var recent = [(hash: UInt64, text: String, slot: UInt32)](repeating: (0, "", 0), count: 4096)
    private var nextSlot: UInt32 = 2
    private static let memoLimit: UInt32 = 1 << 22
    private static let shortString = 16

    static func write(_ value: PlistValue) throws(HTTPContentError) -> [UInt8] {
        var w = PlistPythonPickle()
        w.out.reserveCapacity(4096)
        w.out += PlistPythonPickle.header
        try w.value(value)
        w.out.append(UInt8(ascii: "."))  // STOP
        let length = UInt64(w.out.count - header.count)
        for k in 0..<8 { w.out[3 + k] = UInt8(truncatingIfNeeded: length >> (8 * UInt64(k))) }
        return w.out
    }

    /// PROTO 4, then one FRAME (its 8-byte length patched by `setFrameLength`) holding the rest:
    /// an Unpickler reading a file (the binding's, which names the globals it allows) reads a
    /// frame with one `read` call, where without one it calls `read` for every opcode and
    /// argument (millions of Python calls for a 10 MB document).
    static let header: [UInt8] = [0x80, 4, 0x95, 0, 0, 0, 0, 0, 0, 0, 0]

    /// Writes the frame's length into the header of a pickle of `total` bytes at `out`.
    static func setFrameLength(_ out: UnsafeMutablePointer<UInt8>, _ total: Int) {
        let length = UInt64(total - header.count)
        for k in 0..<8 { out[3 + k] = UInt8(truncatingIfNeeded: length >> (8 * UInt64(k))) }
    }

    private mutating func value(_ v: PlistValue) throws(HTTPContentError) {
        switch v {
        case .dictionary(let members):
            out.append(UInt8(ascii: "}"))  // EMPTY_DICT
            guard !members.isEmpty else { return }
            out.append(UInt8(ascii: "("))  // MARK
            for m in members {
                shared(m.key)
                try value(m.value)
            }
            out.append(UInt8(ascii: "u"))  // SETITEMS
        case .array(let items):
            out.append(UInt8(ascii: "]"))  // EMPTY_LIST
            guard !items.isEmpty else { return }
            out.append(UInt8(ascii: "("))
            for item in items { try value(item) }
            out.append(UInt8(ascii: "e"))  // APPENDS
        case .string(let s): if s.utf8.count <= PlistPythonPickle.shortString { shared(s) } else { string(s) }
        case .int(let i): int(i)
        case .uint(let u):
            out += [0x8A, 9]  // LONG1, 9 bytes: little-endian, then a zero sign byte
            for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: u >> (8 * UInt64(k)))) }
            out.append(0)
        case .real(let d):
            out.append(UInt8(ascii: "G"))  // BINFLOAT, big-endian
            let bits = d.bitPattern
            for k in (0..<8).reversed() { out.append(UInt8(truncatingIfNeeded: bits >> (8 * UInt64(k)))) }
        case .bool(let b): out.append(b ? 0x88 : 0x89)  // NEWTRUE / NEWFALSE
        case .data(let bytes):
            if bytes.count < 256 {
                out += [UInt8(ascii: "C"), UInt8(bytes.count)]  // SHORT_BINBYTES
            } else {
                out.append(UInt8(ascii: "B"))  // BINBYTES (4-byte length; bodies are < 4 GiB)
                le32(UInt32(bytes.count))
            }
            out += bytes
        case .date(let d): try date(d)
        case .uid(let u):
            global("plistlib\nUID\n", memo: 1)
            if u <= UInt64(Int64.max) { int(Int64(u)) } else { try value(.uint(u)) }
            out += [0x85, UInt8(ascii: "R")]  // TUPLE1, REDUCE
        }
    }

    private mutating func le32(_ v: UInt32) {
        for k in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(k)))) }
    }

    private mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            if utf8.count < 256 {
                out += [0x8C, UInt8(utf8.count)]  // SHORT_BINUNICODE
            } else {
                out.append(UInt8(ascii: "X"))  // BINUNICODE
                le32(UInt32(utf8.count))
            }
            out.append(contentsOf: utf8)
        }
    }

    /// A string written once and memoized, then fetched from the memo while it stays cached.
    private mutating func shared(_ s: String) {
        var s = s
        let hash = s.withUTF8 { u -> UInt64 in
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for b in u { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            return h
        }
        let i = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & (recent.count - 1)
        if recent[i].hash == hash, recent[i].slot != 0, recent[i].text == s {
            let slot = recent[i].slot
            if slot < 256 {
                out += [UInt8(ascii: "h"), UInt8(slot)]  // BINGET
            } else {
                out.append(UInt8(ascii: "j"))  // LONG_BINGET
                le32(slot)
            }
            return
        }
        string(s)
        guard nextSlot < PlistPythonPickle.memoLimit else { return }
        if nextSlot < 256 {
            out += [UInt8(ascii: "q"), UInt8(nextSlot)]  // BINPUT
        } else {
            out.append(UInt8(ascii: "r"))  // LONG_BINPUT
            le32(nextSlot)
        }
        recent[i] = (hash, s, nextSlot)
        nextSlot += 1
    }

    private mutating func int(_ i: Int64) {
        if i >= 0, i < 256 {
            out += [UInt8(ascii: "K"), UInt8(i)]  // BININT1
        } else if i >= Int64(Int32.min), i <= Int64(Int32.max) {
            out.append(UInt8(ascii: "J"))  // BININT, little-endian signed
            le32(UInt32(bitPattern: Int32(i)))
        } else {
            out += [0x8A, 8]  // LONG1, 8 bytes two's complement little-endian
            for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: i >> (8 * Int64(k)))) }
        }
    }

    /// GLOBAL once, memoized (BINPUT), then BINGET.
    private mutating func global(_ name: String, memo: UInt8) {
        if memoized & (1 << memo) != 0 {
            out += [UInt8(ascii: "h"), memo]  // BINGET
            return
        }
        out.append(UInt8(ascii: "c"))  // GLOBAL
        out += Array(name.utf8)
        out += [UInt8(ascii: "q"), memo]  // BINPUT
        memoized |= 1 << memo
    }

    /// `datetime(2001, 1, 1) + timedelta(seconds=s)`, as plistlib computes it: microseconds
    /// rounded half to even, as timedelta rounds a float.
    private mutating func date(_ d: PlistDate) throws(HTTPContentError) {
        let state = try PlistPythonPickle.datetimeState(d)
        global("datetime\ndatetime\n", memo: 0)
        out += [UInt8(ascii: "C"), 10]  // SHORT_BINBYTES: datetime's own pickled state
        withUnsafeBytes(of: state) { out += $0 }
        out += [0x85, UInt8(ascii: "R")]  // TUPLE1, REDUCE
    }

    /// datetime's pickled state (10 bytes: year high, low, month, day, hour, minute, second,
    /// microsecond in 3 big-endian bytes) of `datetime(2001, 1, 1) + timedelta(seconds=s)`.
    static func datetimeState(_ d: PlistDate) throws(HTTPContentError) -> (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) {
        let s = d.secondsSince2001
        // datetime's years 1 to 9999, with a margin the exact check below refines.
        guard s.isFinite, abs(s) < 4e11 else { throw outOfRange(s) }
        let whole = s.rounded(.towardZero)
        let us = Int64(whole) * 1_000_000 + Int64(((s - whole) * 1_000_000).rounded(.toNearestOrEven))
        let unixUs = us + 978_307_200 * 1_000_000
        var days = unixUs / 86_400_000_000
        var rem = unixUs % 86_400_000_000
        if rem < 0 {
            rem += 86_400_000_000
            days -= 1
        }
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        guard year >= 1, year <= 9999 else { throw outOfRange(s) }
        let secOfDay = rem / 1_000_000, micro = rem % 1_000_000
        return (UInt8(year >> 8), UInt8(year & 0xFF), UInt8(month), UInt8(day),
                UInt8(secOfDay / 3600), UInt8(secOfDay / 60 % 60), UInt8(secOfDay % 60),
                UInt8(micro >> 16), UInt8(micro >> 8 & 0xFF), UInt8(micro & 0xFF))
    }

    private static func outOfRange(_ s: Double) -> HTTPContentError {
        HTTPContentError(.decode, "plist date \(s) seconds from 2001 is outside Python datetime's years 1 to 9999")
    }
}

@_cdecl("hc_plist_pypickle")
public func hc_plist_pypickle(_ value: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                              _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = nil
    len.pointee = 0
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    do {
        let bytes = try PlistPythonPickle.write(node.value)
        guard let p = mallocCopy(bytes) else { return fail(.invalidArgument, "hc_plist_pypickle: out of memory") }
        data.pointee = p
        len.pointee = bytes.count
        return HC_OK
    } catch {
        return fail(error)
    }
}

// MARK: - Straight from a binary plist

/// The pickle `PlistPythonPickle` writes, written by `PlistBinaryReader` as it reads a binary
/// plist, with no tree in between. A string or data object the document refers to more than
/// once is written once and memoized by its object number (what plistlib's reader shares), then
/// fetched from the memo.
struct PlistBinaryPickle: PlistBinaryVisitor {
    var out = PickleBuffer()
    /// The memo slot of each shared object once written (0: not yet); slots 0 and 1 are the
    /// globals datetime.datetime and plistlib.UID.
    private var slots: [UInt32] = []
    private var nextSlot: UInt32 = 2
    private var globals: UInt8 = 0

    init() { out += PlistPythonPickle.header }

    /// The finished pickle's bytes (STOP written, frame length set); the caller frees them.
    mutating func finish() -> (UnsafeMutablePointer<UInt8>, Int) {
        out.append(UInt8(ascii: "."))  // STOP
        PlistPythonPickle.setFrameLength(out.base, out.count)
        return (out.base, out.count)
    }

    mutating func repeated(_ object: Int) -> Bool {
        guard object < slots.count, slots[object] != 0 else { return false }
        let slot = slots[object]
        if slot < 256 {
            out.put(UInt8(ascii: "h"), UInt8(slot))  // BINGET
        } else {
            out.append(UInt8(ascii: "j"))  // LONG_BINGET
            le32(slot)
        }
        return true
    }

    private mutating func memoize(_ object: Int) {
        if slots.count <= object {
            slots.append(contentsOf: repeatElement(0, count: max(object + 1 - slots.count, slots.count)))
        }
        let slot = nextSlot
        nextSlot += 1
        slots[object] = slot
        if slot < 256 {
            out.put(UInt8(ascii: "q"), UInt8(slot))  // BINPUT
        } else {
            out.append(UInt8(ascii: "r"))  // LONG_BINPUT
            le32(slot)
        }
    }

    @inline(__always) private mutating func le32(_ v: UInt32) {
        out.put(UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8),
                UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 24))
    }

    @inline(__always) private mutating func le64(_ v: UInt64) {
        le32(UInt32(truncatingIfNeeded: v))
        le32(UInt32(truncatingIfNeeded: v >> 32))
    }

    mutating func beginDictionary(count: Int) {
        if count == 0 { out.append(UInt8(ascii: "}")) } else { out.put(UInt8(ascii: "}"), UInt8(ascii: "(")) }  // EMPTY_DICT, MARK
    }

    mutating func endDictionary(count: Int) { if count > 0 { out.append(UInt8(ascii: "u")) } }  // SETITEMS

    mutating func beginArray(count: Int) {
        if count == 0 { out.append(UInt8(ascii: "]")) } else { out.put(UInt8(ascii: "]"), UInt8(ascii: "(")) }  // EMPTY_LIST, MARK
    }

    mutating func endArray(count: Int) { if count > 0 { out.append(UInt8(ascii: "e")) } }  // APPENDS

    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>, object: Int, shared: Bool) {
        if utf8.count < 256 {
            out.put(0x8C, UInt8(utf8.count))  // SHORT_BINUNICODE
        } else {
            out.append(UInt8(ascii: "X"))  // BINUNICODE
            le32(UInt32(utf8.count))
        }
        out.append(contentsOf: utf8)
        if shared { memoize(object) }
    }

    mutating func data(_ bytes: UnsafeBufferPointer<UInt8>, object: Int, shared: Bool) {
        if bytes.count < 256 {
            out.put(UInt8(ascii: "C"), UInt8(bytes.count))  // SHORT_BINBYTES
        } else {
            out.append(UInt8(ascii: "B"))  // BINBYTES (4-byte length; bodies are < 4 GiB)
            le32(UInt32(bytes.count))
        }
        out.append(contentsOf: bytes)
        if shared { memoize(object) }
    }

    mutating func integer(_ i: Int64) {
        if i >= 0, i < 256 {
            out.put(UInt8(ascii: "K"), UInt8(i))  // BININT1
        } else if i >= Int64(Int32.min), i <= Int64(Int32.max) {
            out.append(UInt8(ascii: "J"))  // BININT, little-endian signed
            le32(UInt32(bitPattern: Int32(i)))
        } else {
            out.put(0x8A, 8)  // LONG1, 8 bytes two's complement little-endian
            le64(UInt64(bitPattern: i))
        }
    }

    mutating func unsignedInteger(_ u: UInt64) {
        out.put(0x8A, 9)  // LONG1, 9 bytes: little-endian, then a zero sign byte
        le64(u)
        out.append(0)
    }

    mutating func real(_ d: Double) {
        out.append(UInt8(ascii: "G"))  // BINFLOAT, big-endian
        let bits = d.bitPattern
        le32(UInt32(truncatingIfNeeded: bits >> 32).byteSwapped)
        le32(UInt32(truncatingIfNeeded: bits).byteSwapped)
    }

    mutating func bool(_ b: Bool) { out.append(b ? 0x88 : 0x89) }  // NEWTRUE / NEWFALSE

    /// GLOBAL once, memoized (BINPUT), then BINGET.
    private mutating func global(_ name: StaticString, memo: UInt8) {
        if globals & (1 << memo) != 0 {
            out.put(UInt8(ascii: "h"), memo)  // BINGET
            return
        }
        out.append(UInt8(ascii: "c"))  // GLOBAL
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.put(UInt8(ascii: "q"), memo)  // BINPUT
        globals |= 1 << memo
    }

    mutating func date(_ d: PlistDate) throws(HTTPContentError) {
        let s = try PlistPythonPickle.datetimeState(d)
        global("datetime\ndatetime\n", memo: 0)
        out.put(UInt8(ascii: "C"), 10, s.0, s.1)  // SHORT_BINBYTES: datetime's own pickled state
        out.put(s.2, s.3, s.4, s.5)
        out.put(s.6, s.7, s.8, s.9)
        out.put(0x85, UInt8(ascii: "R"))  // TUPLE1, REDUCE
    }

    mutating func uid(_ u: UInt64) {
        global("plistlib\nUID\n", memo: 1)
        if u <= UInt64(Int64.max) { integer(Int64(u)) } else { unsignedInteger(u) }
        out.put(0x85, UInt8(ascii: "R"))  // TUPLE1, REDUCE
    }
}

extension PlistPythonPickle {
    /// A whole document as the pickle: a binary plist read straight by `PlistBinaryReader`, any
    /// other (XML, or what that reader leaves to libplist) parsed by `PlistParser` and written
    /// from its value. The caller frees the bytes.
    static func document(_ raw: UnsafeRawBufferPointer, _ options: PlistOptions) throws(HTTPContentError) -> (UnsafeMutablePointer<UInt8>, Int) {
        var visitor = PlistBinaryPickle()
        do throws(HTTPContentError) {
            if try PlistBinaryReader.read(raw, options: options, into: &visitor) { return visitor.finish() }
        } catch {
            visitor.out.release()
            throw error
        }
        visitor.out.release()
        let bytes = try write(try PlistParser.parse(raw, options: options))
        guard let p = mallocCopy(bytes) else { throw HTTPContentError(.invalidArgument, "plist pickle: out of memory") }
        return (p, bytes.count)
    }
}

/// A pickle handler's content: the pickle's bytes (malloc'd, freed with it), nil for an empty
/// body. Each handler has its own subclass, so a response's accessor tells its handler's apart.
class PickleBytes {
    let bytes: UnsafeMutablePointer<UInt8>?
    let count: Int
    init(_ pickle: (UnsafeMutablePointer<UInt8>, Int)?) {
        bytes = pickle?.0
        count = pickle?.1 ?? 0
    }
    deinit { free(bytes) }
}

/// The content of hc_handler_plist_pypickle_new.
final class PlistPickleContent: PickleBytes {}

/// Lends a response's pickle (hc_response_plist_pypickle, hc_response_xml_pypickle): borrowed for as
/// long as the response; NULL and 0 for an empty body.
func lendPickle<C: PickleBytes>(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                _ len: UnsafeMutablePointer<Int>?, as type: C.Type, _ mismatch: String) -> Int32 {
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = nil
    len.pointee = 0
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let content = content(box, as: type) else { return fail(.invalidArgument, mismatch) }
    guard let bytes = content.bytes else { return HC_OK }
    data.pointee = UnsafePointer(bytes)
    len.pointee = content.count
    return HC_OK
}

/// The `Plist` handler's acceptance, limits and errors, with the body written as the pickle.
final class PlistPythonPickleHandler: SelectiveHandler {
    private let plist: Plist
    var acceptance: Acceptance {
        get { plist.acceptance }
        set { plist.acceptance = newValue }
    }

    init(_ plist: Plist) { self.plist = plist }

    func prepare(_ request: inout Request) throws { try plist.prepare(&request) }
    func accept(_ head: ResponseHead) throws -> Bool { try plist.accept(head) }
    func consume(_ chunk: UnsafeRawBufferPointer) throws { try plist.consume(chunk) }
    func finish() throws -> PlistPickleContent {
        PlistPickleContent(try plist.finish(decoding: PlistPythonPickle.document))
    }
    func cleanup(failed: Bool) { plist.cleanup(failed: failed) }
}

@_cdecl("hc_handler_plist_pypickle_new")
public func hc_handler_plist_pypickle_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    let o = plistSnapshot(opts)
    let spec = HandlerSpec(acceptance: Plist.defaultAcceptance()) { spec -> any ContentHandler in
        var options = o.options
        if spec.maxSize > 0 { options.maxSize = min(spec.maxSize, Int(UInt32.max)) }
        do {
            return PlistPythonPickleHandler(try Plist(options: options, allowEmpty: o.allowEmpty, acceptance: spec.acceptance))
        } catch {
            return FailingHandler(reason: error)
        }
    }
    return retainHandle(spec)
}

@_cdecl("hc_response_plist_pypickle")
public func hc_response_plist_pypickle(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                     _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    lendPickle(response, data, len, as: PlistPickleContent.self, "hc_response_plist_pypickle: the response's handler is not a pickle plist handler")
}
