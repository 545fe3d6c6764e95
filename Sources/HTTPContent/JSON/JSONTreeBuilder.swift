#if canImport(Glibc)
import Glibc
#endif

/// Builds `JSONValue`s from parse events onto a `JSONTape` (no recursion, no allocation per
/// container), appending each completed top-level value to `documents`.
///
/// A container's children are collected on a pending stack while it is open and copied to the
/// tape when it closes. Every document gets a tape of its own unless the last one is no longer
/// referenced, in which case its buffers are reused (path streaming builds many small values).
final class JSONTreeBuilder: JSONEventSink {
    private struct Frame {
        var node: UInt32
        /// Where this container's entries start on the pending stack.
        var start: Int
        var isObject: Bool
        /// `check` follows this container.
        var watched = false
    }

    private let removeNulls: Bool
    private let keepNumberText: Bool
    private let exactIntegers: Bool
    private let strictUTF8: Bool

    /// The document being built (valid while `haveBuffers`).
    @exclusivity(unchecked) private var t: JSONTapeStorage
    @exclusivity(unchecked) private var haveBuffers = true
    /// The tape of the last document handed out: its buffers are reused once nothing refers to it.
    @exclusivity(unchecked) private var last: JSONTape?
    /// Whether `last` was recycled (nothing referred to it, its buffers are `t` now): the next
    /// document takes it again, without allocating and without retain/release traffic.
    @exclusivity(unchecked) private var lastRecycled = false
    /// Open containers, outermost first.
    @exclusivity(unchecked) private var frames: UnsafeMutablePointer<Frame>
    @exclusivity(unchecked) private var depth = 0
    @exclusivity(unchecked) private var frameCapacity = 32
    /// Whether the innermost open container is an object.
    @exclusivity(unchecked) private var inObject = false
    /// The key node of the member whose value comes next.
    @exclusivity(unchecked) private var key: UInt32 = 0
    /// Children of the open containers, innermost last (objects: key, value pairs).
    @exclusivity(unchecked) private var pending: UnsafeMutablePointer<UInt32>
    @exclusivity(unchecked) private var pendingCount = 0
    @exclusivity(unchecked) private var pendingCapacity = 256
    /// Member names repeat across the objects of a document: short ones get one node per tape.
    private let keyCache = KeyCache()
    /// Off for path streaming (a tape per small item, where the cache is emptied at every item):
    /// names of up to 6 bytes then go straight into their word.
    private let shareShortKeys: Bool

    /// Completed top-level values, in order (but see `holdsClosedContainer`).
    @exclusivity(unchecked) var documents: [JSONValue] = []
    /// Path streaming's lending mode: a completed top-level container is not appended to
    /// `documents` but waits for `takeClosedContainer`, so handing over an item costs no value
    /// built, stored and moved back out of an array (a few hundred instructions per item).
    var holdsClosedContainer = false
    /// A completed top-level container on `last` waits for `takeClosedContainer`.
    @exclusivity(unchecked) private(set) var hasClosedContainer = false
    @exclusivity(unchecked) private var closedNode: UInt32 = 0
    @exclusivity(unchecked) private var closedIsObject = false

    /// Told of the containers it follows as they open and close, and of the scalar elements of
    /// those that are arrays, at any depth (a schema's check while the tree is built, see
    /// `JSON`): the tape being built (its buffers are only valid during the call), the node,
    /// where it is in its parent. Throwing stops the parse with that error. Not retained (no
    /// retain and release per value): whoever sets it keeps it alive for as long as this
    /// builder parses (the `JSON` handler does).
    @exclusivity(unchecked) private unowned(unsafe) var check: (any JSONStreamingCheck)?
    @exclusivity(unchecked) private var watching = false

    func watch(_ check: (any JSONStreamingCheck)?) {
        self.check = check
        watching = check != nil
    }

    init(options: JSONOptions, shareShortKeys: Bool = true) {
        self.shareShortKeys = shareShortKeys
        removeNulls = options.removeNulls
        keepNumberText = options.keepNumberText
        exactIntegers = options.exactIntegers
        strictUTF8 = options.strictUTF8
        t = JSONTapeStorage()
        pending = .allocate(capacity: pendingCapacity)
        frames = .allocate(capacity: frameCapacity)
    }

    deinit {
        pending.deallocate()
        frames.deallocate()
        if haveBuffers { t.free() }
    }

    /// True while a value is being built.
    var isOpen: Bool { depth > 0 }

    // MARK: - Events
    // Inlined into yajl's callbacks (each table's closure calls one directly): an event costs
    // no call of its own, which is a good part of path streaming's cost per event.

    @inline(__always)
    func null() throws {
        if depth == 0 { return documents.append(.null) }
        if removeNulls, inObject { return }
        try attach(try t.append(.null, 0, 0))
    }

    @inline(__always)
    func bool(_ value: Bool) throws {
        if depth == 0 { return documents.append(.bool(value)) }
        try attach(try t.append(.bool, 0, value ? 1 : 0))
    }

    @inline(__always)
    func number(_ token: UnsafeRawBufferPointer) throws {
        if depth == 0 {
            return documents.append(try JSONNumberText.value(token, keep: keepNumberText, exactIntegers: exactIntegers))
        }
        if keepNumberText { return try attach(try t.appendBytes(.number, token)) }
        // Past 18 digits an integer may not fit Int64: kept as text rather than rounded.
        if exactIntegers, token.count > 18, JSONNumberText.integer(token) == nil, JSONNumberText.isIntegerLiteral(token) {
            return try attach(try t.appendBytes(.number, token))
        }
        // The fast paths inline, the rest out of line: `scalar` as a whole was too big to be
        // inlined into yajl's number callback, and cost a call per number.
        let n: (isInteger: Bool, bits: UInt64)
        if let fast = JSONNumberText.fastScalar(token) { n = fast } else { n = try JSONNumberText.slowScalar(token) }
        try attach(try t.append(n.isInteger ? .int : .double, 0, n.bits))
    }

    @inline(__always)
    func string(_ bytes: UnsafeRawBufferPointer) throws {
        if depth == 0 { return documents.append(.string(try JSONStrings.make(bytes, strict: strictUTF8))) }
        let n = bytes.count
        if n <= 16 {
            let text = ShortBytes(bytes)
            if strictUTF8, !text.isASCII { try JSONStrings.validate(bytes) }
            try attach(try t.appendShort(.string, text, n))
        } else {
            if strictUTF8 { try JSONStrings.validate(bytes) }
            try attach(try t.appendBytes(.string, bytes))
        }
    }

    @inline(__always)
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws {
        let n = bytes.count
        guard n <= 16 else {
            if strictUTF8 { try JSONStrings.validate(bytes) }
            key = try t.appendBytes(.string, bytes)
            return
        }
        let text = ShortBytes(bytes)
        if !shareShortKeys, n <= 6 {
            if strictUTF8, !text.isASCII { try JSONStrings.validate(bytes) }
            key = try t.appendShort(.string, text, n)
            return
        }
        if let node = keyCache.node(text, n) {
            key = node
            return
        }
        if strictUTF8, !text.isASCII { try JSONStrings.validate(bytes) }
        key = try t.appendShort(.string, text, n)
        keyCache.remember(text, n, key)
    }

    @inline(__always)
    func startMap() throws { try open(.object) }
    @inline(__always)
    func startArray() throws { try open(.array) }
    @inline(__always)
    func endMap() throws { try close() }
    @inline(__always)
    func endArray() throws { try close() }

    // MARK: - Building

    /// Records a complete scalar as the next child of the innermost container.
    @inline(__always)
    private func attach(_ node: UInt32) throws {
        attachChild(node)
        if watching && !inObject && frames[depth - 1].watched { try elementDone(node) }
    }

    /// A scalar element of a followed array is complete.
    private func elementDone(_ node: UInt32) throws {
        try check.unsafelyUnwrapped.element(t, node, pendingCount - frames[depth - 1].start - 1)
    }

    /// Whether `check` follows the container just opened at `depth` (its node attached to its
    /// parent, when it has one).
    private func follows(_ isObject: Bool) -> Bool {
        let check = check.unsafelyUnwrapped
        if depth > 0 && !frames[depth - 1].watched {
            guard t.nodeCount >= check.reofferAt, reoffer(check) else { return false }
        }
        guard depth > 0 else { return check.enter(t, isObject: isObject, key: 0, index: -1, parentIsObject: false) }
        let parent = frames[depth - 1]
        if parent.isObject {
            return check.enter(t, isObject: isObject, key: pending[pendingCount - 2], index: (pendingCount - parent.start) / 2 - 1,
                               parentIsObject: true)
        }
        return check.enter(t, isObject: isObject, key: 0, index: pendingCount - parent.start - 1, parentIsObject: false)
    }

    /// Offers `check` again the open containers below the innermost one it follows, outermost
    /// first (each one's place in its parent read back from the pending stack, as `follows` read
    /// it when it opened); whether it now follows them all.
    private func reoffer(_ check: any JSONStreamingCheck) -> Bool {
        var i = depth - 1
        while i >= 0 && !frames[i].watched { i -= 1 }
        guard i >= 0 else { return false }
        for j in (i + 1)..<depth {
            let parent = frames[j - 1], start = frames[j].start
            let followed = parent.isObject
                ? check.enter(t, isObject: frames[j].isObject, key: pending[start - 2], index: (start - parent.start) / 2 - 1,
                              parentIsObject: true)
                : check.enter(t, isObject: frames[j].isObject, key: 0, index: start - parent.start - 1, parentIsObject: false)
            guard followed else { return false }
            frames[j].watched = true
        }
        return true
    }

    /// Records a value node as the next child of the innermost container.
    @inline(__always)
    private func attachChild(_ node: UInt32) {
        if pendingCount + 2 > pendingCapacity { growPending() }
        if inObject {
            pending[pendingCount] = key
            pending[pendingCount + 1] = node
            pendingCount += 2
        } else {
            pending[pendingCount] = node
            pendingCount += 1
        }
    }

    private func growPending() { JSONTreeBuilder.double(&pending, count: pendingCount, capacity: &pendingCapacity) }

    /// Doubles a stack's capacity, keeping its `count` elements.
    private static func double<T>(_ p: inout UnsafeMutablePointer<T>, count: Int, capacity: inout Int) {
        let bigger = UnsafeMutablePointer<T>.allocate(capacity: capacity * 2)
        bigger.moveInitialize(from: p, count: count)
        p.deallocate()
        p = bigger
        capacity *= 2
    }

    @inline(__always)
    private func open(_ kind: JSONTape.Kind) throws {
        if depth == 0 { beginDocument() }
        let node = try t.append(kind, 0, 0)
        if depth > 0 { attachChild(node) }
        if depth == frameCapacity { growFrames() }
        let watched = watching && follows(kind == .object)
        frames[depth] = Frame(node: node, start: pendingCount, isObject: kind == .object, watched: watched)
        depth += 1
        inObject = kind == .object
    }

    private func growFrames() { JSONTreeBuilder.double(&frames, count: depth, capacity: &frameCapacity) }

    @inline(__always)
    private func close() throws {
        guard depth > 0 else { return }
        depth -= 1
        let frame = frames[depth]
        let entries = pendingCount &- frame.start
        try t.close(frame.node, isObject: frame.isObject, count: frame.isObject ? entries &>> 1 : entries,
                    pending + frame.start, entries: entries)
        pendingCount = frame.start
        inObject = depth > 0 && frames[depth - 1].isObject
        if frame.watched { try check.unsafelyUnwrapped.leave(t, frame.node) }
        if depth == 0 { documentClosed(frame.node, isObject: frame.isObject) }
    }

    /// The top-level container closed: its tape becomes a document (kept out of line: `close` is
    /// inlined into every callback that ends a container).
    @inline(never)
    private func documentClosed(_ node: UInt32, isObject: Bool) {
        t.shrink()
        if lastRecycled {
            last.unsafelyUnwrapped.adopt(t)
            lastRecycled = false
        } else {
            last = JSONTape(t)
        }
        haveBuffers = false
        if holdsClosedContainer {
            closedNode = node
            closedIsObject = isObject
            hasClosedContainer = true
            return
        }
        documents.append(last.unsafelyUnwrapped.value(node))
    }

    /// The top-level container that closed last (lending mode, after `hasClosedContainer`),
    /// made straight from its node.
    @inline(__always)
    func takeClosedContainer() -> JSONValue {
        hasClosedContainer = false
        let tape = last.unsafelyUnwrapped
        return closedIsObject ? .object(JSONObject(tape: tape, node: closedNode))
            : .array(JSONArray(tape: tape, node: closedNode))
    }

    /// Buffers for the next top-level container: the last document's, emptied, if nothing refers
    /// to it any more.
    private func beginDocument() {
        hasClosedContainer = false
        if haveBuffers {
            if t.nodeCount == 0 { return }
            t.reset()
        } else {
            if last != nil, isKnownUniquelyReferenced(&last) {
                t = last.unsafelyUnwrapped.recycle()
                lastRecycled = true
            } else {
                t = JSONTapeStorage()
                last = nil
            }
            haveBuffers = true
        }
        keyCache.forget()
    }

    /// Closes every open container (for partial input), completing the top-level value.
    func closeAll() throws {
        while depth > 0 { try close() }
    }

    /// Drops a half-built value (after an error).
    func discard() {
        depth = 0
        pendingCount = 0
        inObject = false
        if haveBuffers { t.reset() }
        keyCache.forget()
    }
}

/// The key nodes of member names up to 16 bytes long, remembered in a small direct-mapped table
/// for the current tape (a hit costs two word compares instead of validating and copying the
/// bytes again). Only names that were valid when added are kept, so a hit is valid too.
private final class KeyCache {
    private struct Slot {
        var w0: UInt64 = 0
        var w1: UInt64 = 0
        var length = -1
        var node: UInt32 = 0
        /// The `generation` the slot was filled in; older ones are empty.
        var generation: UInt32 = 0
    }

    private var generation: UInt32 = 1

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

    /// Empties the table (its nodes belong to a tape that is gone or emptied).
    func forget() {
        generation &+= 1
        if generation == 0 {
            // Wrapped around: clear for real once every 4 billion documents.
            for i in 0..<KeyCache.slotCount { slots[i].length = -1 }
            generation = 1
        }
    }

    @inline(__always)
    private func slot(_ text: ShortBytes, _ n: Int) -> UnsafeMutablePointer<Slot> {
        let hash = (text.w0 &* 0x9E37_79B9_7F4A_7C15) ^ (text.w1 &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(n)
        return slots + Int(truncatingIfNeeded: (hash >> 32) & UInt64(KeyCache.slotCount - 1))
    }

    /// The node of a name seen before in this tape, or nil.
    @inline(__always)
    func node(_ text: ShortBytes, _ n: Int) -> UInt32? {
        let s = slot(text, n)
        guard s.pointee.length == n, s.pointee.w0 == text.w0, s.pointee.w1 == text.w1,
              s.pointee.generation == generation else { return nil }
        return s.pointee.node
    }

    /// Remembers a valid name's node (replacing whatever shared its slot).
    @inline(__always)
    func remember(_ text: ShortBytes, _ n: Int, _ node: UInt32) {
        slot(text, n).pointee = Slot(w0: text.w0, w1: text.w1, length: n, node: node, generation: generation)
    }
}
