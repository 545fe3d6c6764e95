#if canImport(Glibc)
import Glibc
#endif

/// A parsed JSON document in three flat buffers, the storage behind the arrays and objects the
/// parser builds: one 16-byte node per value, the bytes of every string and kept number text,
/// and each container's children as node indices. Building one costs a few stores per value
/// instead of a Swift allocation per container; `JSONArray` and `JSONObject` read it in place and
/// copy out only when changed. Tearing it down frees three buffers, however deep the document.
///
/// Immutable once a value refers to it (the builder starts another before handing values out
/// of a shared one), hence Sendable.
final class JSONTape: @unchecked Sendable {
    /// What a node holds: `header` = kind | count or length << 8; `payload` = the integer, the
    /// double's bits, or the offset of the bytes or of the children.
    struct Node {
        var header: UInt64
        var payload: UInt64
    }

    enum Kind: UInt8 {
        case null, bool, int, double, number, string, array, object
    }

    private(set) var storage: JSONTapeStorage
    /// False once the builder took the buffers back for another document.
    private var ownsStorage = true

    init(_ storage: JSONTapeStorage) { self.storage = storage }

    deinit { if ownsStorage { storage.free() } }

    /// The buffers, emptied, for the builder's next document (this tape must be unreferenced).
    func recycle() -> JSONTapeStorage {
        ownsStorage = false
        var s = storage
        s.reset()
        return s
    }

    private var nodes: UnsafeMutablePointer<Node> { storage.nodes }
    private var bytes: UnsafeMutablePointer<UInt8> { storage.bytes }
    private var children: UnsafeMutablePointer<UInt32> { storage.children }
    var nodeCount: Int { storage.nodeCount }


    @inline(__always)
    func kind(_ node: UInt32) -> Kind {
        Kind(rawValue: UInt8(truncatingIfNeeded: nodes[Int(node)].header)) ?? .null
    }

    /// Elements or members of a container, bytes of a string or number text.
    @inline(__always)
    func count(_ node: UInt32) -> Int { Int(truncatingIfNeeded: nodes[Int(node)].header >> 8) }

    /// The node of element `i` of an array, or of member `i`'s value in an object.
    @inline(__always)
    func element(_ node: UInt32, _ i: Int) -> UInt32 {
        children[Int(truncatingIfNeeded: nodes[Int(node)].payload) + i]
    }

    @inline(__always)
    func memberKey(_ node: UInt32, _ i: Int) -> UInt32 {
        children[Int(truncatingIfNeeded: nodes[Int(node)].payload) + 2 * i]
    }

    @inline(__always)
    func memberValue(_ node: UInt32, _ i: Int) -> UInt32 {
        children[Int(truncatingIfNeeded: nodes[Int(node)].payload) + 2 * i + 1]
    }

    /// A string or number text node's bytes (NUL-terminated in place; the count excludes it).
    @inline(__always)
    func text(_ node: UInt32) -> UnsafeRawBufferPointer {
        let n = nodes[Int(node)]
        return UnsafeRawBufferPointer(start: bytes + Int(truncatingIfNeeded: n.payload),
                                      count: Int(truncatingIfNeeded: n.header >> 8))
    }

    /// Whether a string node's bytes equal `key`'s UTF-8.
    func textEquals(_ node: UInt32, _ key: String) -> Bool {
        let t = text(node)
        var key = key
        return key.withUTF8 { k in
            guard k.count == t.count else { return false }
            guard let a = k.baseAddress, let b = t.baseAddress else { return true }
            return memcmp(a, b, k.count) == 0
        }
    }

    func string(_ node: UInt32) -> String {
        String(decoding: text(node).bindMemory(to: UInt8.self), as: UTF8.self)
    }

    /// The value a node stands for: scalars are made, containers refer to this tape.
    func value(_ node: UInt32) -> JSONValue {
        let n = nodes[Int(node)]
        switch kind(node) {
        case .null: return .null
        case .bool: return .bool(n.payload != 0)
        case .int: return .int(Int64(bitPattern: n.payload))
        case .double: return .double(Double(bitPattern: n.payload))
        case .number: return .number(string(node))
        case .string: return .string(string(node))
        case .array: return .array(JSONArray(tape: self, node: node))
        case .object: return .object(JSONObject(tape: self, node: node))
        }
    }
}

/// The buffers of a `JSONTape`, filled in place by `JSONTreeBuilder` (a struct it holds, so the
/// hot path touches no class) and handed to a `JSONTape` when the document is complete.
struct JSONTapeStorage {
    typealias Node = JSONTape.Node
    typealias Kind = JSONTape.Kind
    private(set) var nodeBuffer = JSONTapeBuffer<Node>(capacity: 64)
    /// String and number bytes, each followed by a NUL (so C can borrow them as they are).
    private(set) var byteBuffer = JSONTapeBuffer<UInt8>(capacity: 512)
    /// Array: the element node indices. Object: key node, value node, per member.
    private(set) var childBuffer = JSONTapeBuffer<UInt32>(capacity: 128)

    var nodes: UnsafeMutablePointer<Node> { nodeBuffer.base }
    var nodeCount: Int { nodeBuffer.count }
    var bytes: UnsafeMutablePointer<UInt8> { byteBuffer.base }
    var children: UnsafeMutablePointer<UInt32> { childBuffer.base }

    /// Frees the buffers (the owner calls this once).
    func free() {
        nodeBuffer.free()
        byteBuffer.free()
        childBuffer.free()
    }

    /// Empties the tape for the next document, keeping its buffers.
    mutating func reset() {
        nodeBuffer.count = 0
        byteBuffer.count = 0
        childBuffer.count = 0
    }

    /// Gives back what the growth left unused (large documents only).
    mutating func shrink() {
        nodeBuffer.shrink()
        byteBuffer.shrink()
        childBuffer.shrink()
    }

    // MARK: - Building

    /// Node indices are 32-bit: a document of more than 4 billion values is refused.
    static let maxNodes = Int(UInt32.max)

    @inline(__always)
    mutating func append(_ kind: Kind, _ count: Int, _ payload: UInt64) throws(HTTPContentError) -> UInt32 {
        let i = nodeBuffer.count
        if i == nodeBuffer.ready {
            guard i < JSONTapeStorage.maxNodes else {
                throw HTTPContentError(.tooLarge, "JSON document has more than \(JSONTapeStorage.maxNodes) values")
            }
            nodeBuffer.makeRoom(1)
        }
        nodeBuffer.base[i] = Node(header: UInt64(kind.rawValue) | UInt64(truncatingIfNeeded: count) << 8, payload: payload)
        nodeBuffer.count = i + 1
        return UInt32(truncatingIfNeeded: i)
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
        return try append(kind, n, UInt64(offset))
    }

    /// The same for at most 16 bytes, stored as two words (the zeros past the text are its NUL).
    @inline(__always)
    mutating func appendShort(_ kind: Kind, _ text: ShortBytes, _ n: Int) throws(HTTPContentError) -> UInt32 {
        let offset = byteBuffer.count
        if offset + 17 > byteBuffer.ready { byteBuffer.makeRoom(17) }
        let dest = UnsafeMutableRawPointer(byteBuffer.base + offset)
        dest.storeBytes(of: text.w0, as: UInt64.self)
        dest.storeBytes(of: text.w1, toByteOffset: 8, as: UInt64.self)
        byteBuffer.base[offset + n] = 0
        byteBuffer.count = offset + n + 1
        return try append(kind, n, UInt64(offset))
    }

    /// Sets a container node's children: `source` holds `entries` indices (two per object member).
    @inline(__always)
    mutating func close(_ node: UInt32, _ kind: Kind, count: Int, _ source: UnsafePointer<UInt32>, entries: Int) {
        let offset = childBuffer.count
        if offset + entries > childBuffer.ready { childBuffer.makeRoom(entries) }
        if entries > 0 { (childBuffer.base + offset).update(from: source, count: entries) }
        nodeBuffer.base[Int(node)] = Node(header: UInt64(kind.rawValue) | UInt64(count) << 8, payload: UInt64(offset))
        childBuffer.count = offset + entries
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

    func free() { JSONTapeMemory.free(base) }

    /// Makes `ready` at least `count + n`, growing (doubling) and populating as needed.
    mutating func makeRoom(_ n: Int) {
        let need = count + n
        if need > capacity {
            let grown = max(capacity * 2, need)
            base = JSONTapeMemory.resize(base, capacity, grown)
            capacity = grown
        }
        ready = JSONTapeMemory.populate(base, from: ready, atLeast: need, capacity: capacity)
    }

    mutating func shrink() {
        guard JSONTapeMemory.worthShrinking(T.self, capacity, count) else { return }
        let n = max(count, 1)
        base = JSONTapeMemory.resize(base, capacity, n)
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
