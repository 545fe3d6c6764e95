/// Builds `JSONValue`s from parse events with an explicit stack (no recursion), appending each
/// completed top-level value to `documents`.
final class JSONTreeBuilder: JSONEventSink {
    private struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [JSONMember] = []
        var key = ""
    }

    private let removeNulls: Bool
    private let keepNumberText: Bool
    private let strictUTF8: Bool
    /// The container being filled. At the bottom of the stack is the root frame, an array that
    /// collects completed top-level values.
    @exclusivity(unchecked) private var top = Frame(isObject: false)
    @exclusivity(unchecked) private var parents: [Frame] = []
    /// Member names repeat across the objects of a document: short ones are made once.
    private let keyCache = KeyCache()

    init(options: JSONOptions) {
        removeNulls = options.removeNulls
        keepNumberText = options.keepNumberText
        strictUTF8 = options.strictUTF8
    }

    /// True while a value is being built.
    var isOpen: Bool { !parents.isEmpty }

    /// Completed top-level values, in order.
    var documents: [JSONValue] {
        get { parents.isEmpty ? top.elements : parents[0].elements }
        set {
            if parents.isEmpty { top.elements = newValue } else { parents[0].elements = newValue }
        }
    }

    @inline(__always)
    private func add(_ value: JSONValue) {
        if top.isObject {
            if removeNulls, case .null = value { return }
            top.members.append(JSONMember(key: top.key, value: value))
        } else {
            top.elements.append(value)
        }
    }

    func null() { add(.null) }
    func bool(_ value: Bool) { add(.bool(value)) }
    func number(_ token: UnsafeRawBufferPointer) throws {
        add(try JSONNumberText.value(token, keep: keepNumberText))
    }
    func string(_ bytes: UnsafeRawBufferPointer) throws {
        add(.string(try JSONStrings.make(bytes, strict: strictUTF8)))
    }
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws {
        top.key = try keyCache.string(bytes, strict: strictUTF8)
    }

    func startMap() {
        var frame = Frame(isObject: true)
        // Most objects are small: one allocation instead of three growth steps up to four.
        frame.members.reserveCapacity(4)
        push(frame)
    }
    func startArray() {
        var frame = Frame(isObject: false)
        frame.elements.reserveCapacity(4)
        push(frame)
    }
    func endMap() { pop() }
    func endArray() { pop() }

    @inline(__always)
    private func push(_ frame: Frame) {
        parents.append(top)
        top = frame
    }

    @inline(__always)
    private func pop() {
        guard let parent = parents.popLast() else { return }
        let done = top
        top = parent
        add(done.isObject ? .object(JSONObject(done.members)) : .array(JSONArray(done.elements)))
    }

    /// Closes every open container (for partial input), completing the top-level value.
    func closeAll() {
        while !parents.isEmpty { pop() }
    }

    /// Drops half-built values iteratively (after an error, or at teardown).
    func discard() {
        var pending: [JSONValue] = []
        while let parent = parents.popLast() {
            pending.append(contentsOf: top.elements)
            pending.append(contentsOf: top.members.map(\.value))
            top = parent
        }
        pending.append(contentsOf: top.elements)
        top = Frame(isObject: false)
        JSONTeardown.dismantle(&pending)
    }

    deinit { discard() }
}

/// Strings for member names of up to 16 bytes, remembered in a small direct-mapped table (a hit
/// costs two word compares instead of decoding and validating the bytes again). Only names that
/// were valid when made are kept, so a hit is valid too.
private final class KeyCache {
    private struct Slot {
        var w0: UInt64 = 0
        var w1: UInt64 = 0
        var length = -1
        var string = ""
    }

    private static let slotCount = 64
    private let slots: UnsafeMutablePointer<Slot>

    init() {
        slots = .allocate(capacity: KeyCache.slotCount)
        slots.initialize(repeating: Slot(), count: KeyCache.slotCount)
    }

    deinit {
        slots.deinitialize(count: KeyCache.slotCount)
        slots.deallocate()
    }

    @inline(__always)
    func string(_ bytes: UnsafeRawBufferPointer, strict: Bool) throws(HTTPContentError) -> String {
        let n = bytes.count
        guard n <= 16, let base = bytes.baseAddress else { return try JSONStrings.make(bytes, strict: strict) }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.baseAddress!.copyMemory(from: base, byteCount: n) }
        let hash = (words.0 &* 0x9E37_79B9_7F4A_7C15) ^ (words.1 &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(n)
        let slot = slots + Int(truncatingIfNeeded: (hash >> 32) & UInt64(KeyCache.slotCount - 1))
        if slot.pointee.length == n, slot.pointee.w0 == words.0, slot.pointee.w1 == words.1 {
            return slot.pointee.string
        }
        let s = try JSONStrings.make(bytes, strict: strict)
        slot.pointee = Slot(w0: words.0, w1: words.1, length: n, string: s)
        return s
    }
}
