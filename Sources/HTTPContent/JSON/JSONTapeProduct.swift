#if canImport(Glibc)
import Glibc
#endif

/// The JSON tree handler's product for the HTTP cache (`CacheProductHandler`): the document's
/// tape as it is, four buffers written one after another. A hit then copies them back instead of
/// parsing the body again: a few memcpy calls and one pass that checks every offset, against
/// yajl and the tree builder over every byte.
///
/// Layout (native byte order: the cache file never leaves the machine that wrote it, and a product
/// that does not read back is dropped and the body replayed): five 64-bit fields (the root node,
/// then the counts of words, wide values, 16-bit children and bytes), then those four buffers in
/// that order.
enum JSONTapeProduct {
    /// Bump when the tape's word layout or this layout changes: it is part of the fingerprint.
    static let version = 1
    private static let headerFields = 5

    /// Calls `body` with the product of the document `value` (nil for a scalar or an array of
    /// documents, which live on no single tape: those are replayed).
    static func write(_ value: JSONValue, _ body: (UnsafeRawBufferPointer) -> Void) {
        let tape: JSONTape, root: UInt32
        switch value {
        case .array(let a):
            guard let t = a.tape else { return }
            tape = t; root = a.node
        case .object(let o):
            guard let t = o.tape else { return }
            tape = t; root = o.node
        default: return
        }
        let s = tape.storage
        let parts: [(UnsafeRawPointer, Int)] = [
            (UnsafeRawPointer(s.words), s.wordBuffer.count * 8), (UnsafeRawPointer(s.wide), s.wideBuffer.count * 8),
            (UnsafeRawPointer(s.children), s.childBuffer.count * 2), (UnsafeRawPointer(s.bytes), s.byteBuffer.count),
        ]
        let header = [UInt64(root), UInt64(s.wordBuffer.count), UInt64(s.wideBuffer.count),
                      UInt64(s.childBuffer.count), UInt64(s.byteBuffer.count)]
        let size = headerFields * 8 + parts.reduce(0) { $0 + $1.1 }
        guard let out = malloc(size) else { return }
        defer { free(out) }
        header.withUnsafeBytes { _ = memcpy(out, $0.baseAddress!, $0.count) }
        var at = headerFields * 8
        for (p, n) in parts where n > 0 {
            memcpy(out + at, p, n)
            at += n
        }
        body(UnsafeRawBufferPointer(start: out, count: size))
    }

    /// The document a product holds, on a tape of its own; nil when `bytes` are not a
    /// well-formed product (wrong size, an offset or child out of bounds, a text without its NUL).
    static func read(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        guard bytes.count >= headerFields * 8, let base = bytes.baseAddress else { return nil }
        var field = [Int](repeating: 0, count: headerFields)
        for i in 0..<headerFields {
            let v = base.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)
            guard v <= UInt64(UInt32.max) else { return nil }
            field[i] = Int(v)
        }
        let root = field[0], nWords = field[1], nWide = field[2], nChildren = field[3], nBytes = field[4]
        guard nWords * 8 + nWide * 8 + nChildren * 2 + nBytes == bytes.count - headerFields * 8 else { return nil }
        var at = base + headerFields * 8
        let words = JSONTapeBuffer<UInt64>(copying: at, count: nWords)
        at += nWords * 8
        let wide = JSONTapeBuffer<UInt64>(copying: at, count: nWide)
        at += nWide * 8
        let children = JSONTapeBuffer<UInt16>(copying: at, count: nChildren)
        at += nChildren * 2
        let text = JSONTapeBuffer<UInt8>(copying: at, count: nBytes)
        let storage = JSONTapeStorage(words: words, bytes: text, children: children, wide: wide)
        guard storage.isWellFormed(root: root) else {
            storage.free()
            return nil
        }
        return JSONTape(storage).value(UInt32(root))
    }
}

extension JSONTapeStorage {
    /// Whether every word of this tape reads inside its buffers, every text ends with its NUL
    /// (C borrows texts as C strings), every member name is a string, and every element and member
    /// value comes after its container (as the builder writes them: no value can contain itself),
    /// with `root` a container. What a product read back from a file must pass before any value
    /// refers to it; a tape the parser built always does.
    func isWellFormed(root: Int) -> Bool {
        let n = nodeCount, nBytes = byteBuffer.count, nChildren = childBuffer.count, nWide = wideBuffer.count
        guard root < n else { return false }
        let rootTag = words[root] & 0xF
        guard rootTag == Tag.array.rawValue || rootTag == Tag.object.rawValue else { return false }
        func textEnds(_ offset: Int, _ length: Int) -> Bool {
            offset < nBytes && length < nBytes - offset && bytes[offset + length] == 0
        }
        func isName(_ node: Int) -> Bool {
            guard node < n else { return false }
            let tag = words[node] & 0xF
            return tag == Tag.string.rawValue || tag == Tag.wideString.rawValue || tag == Tag.inlineString.rawValue
        }
        for i in 0..<n {
            let w = words[i]
            let payload = Int(truncatingIfNeeded: w >> 4)
            guard let tag = Tag(rawValue: w & 0xF) else { return false }
            switch tag {
            case .null, .bool, .int, .double: continue
            case .wideInt, .wideDouble:
                guard payload < nWide else { return false }
            case .inlineString:
                guard (w >> 4) & 0xF <= 6, w >> 56 == 0 else { return false }
            case .string, .number:
                guard textEnds(Int(truncatingIfNeeded: w >> Self.offsetShift),
                               Int(truncatingIfNeeded: (w >> 4) & Self.shortLengthMask)) else { return false }
            case .wideString, .wideNumber:
                guard payload < nWide - 1, wide[payload] <= UInt64(Int.max), wide[payload + 1] <= UInt64(Int.max),
                      textEnds(Int(wide[payload]), Int(wide[payload + 1])) else { return false }
            case .array, .object:
                var count = Int(truncatingIfNeeded: (w >> 5) & Self.countMask)
                var at = Int(truncatingIfNeeded: w >> Self.childOffsetShift)
                guard at <= nChildren else { return false }
                if count == Int(Self.countMask) {
                    guard nChildren - at >= 2 else { return false }
                    count = Int(Self.load32(children + at))
                    at += 2
                }
                let narrow = (w >> 4) & 1 == 1, isObject = tag == .object
                let units = (isObject ? 2 : 1) * (narrow ? 1 : 2)
                guard count <= (nChildren - at) / units else { return false }
                let c = children + at
                for k in 0..<count {
                    let valueAt = isObject ? 2 * k + 1 : k
                    let value = narrow ? i + Int(c[valueAt]) : Int(Self.load32(c + 2 * valueAt))
                    guard value > i, value < n else { return false }
                    if isObject {
                        let name = narrow ? Int(c[2 * k]) : Int(Self.load32(c + 4 * k))
                        guard isName(name) else { return false }
                    }
                }
            }
        }
        return true
    }
}

/// The tree handler keeps its tape in the HTTP cache: a hit is one read of the tape and a check
/// of its offsets, and gives the value a replay of the body would give.
extension JSON: CacheProductHandler {
    /// The parse options' fingerprint; none with a validator (its check must run on every response).
    public var cacheProductFingerprint: String? {
        guard validator == nil else { return nil }
        return options.cacheFingerprint("json-tape/\(JSONTapeProduct.version)", allowEmpty: allowEmpty)
    }

    public func withCacheProduct(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard let value = lastValue else { return }
        JSONTapeProduct.write(value, body)
    }

    public func finish(fromProduct bytes: UnsafeRawBufferPointer) -> JSONValue?? {
        JSONTapeProduct.read(bytes).map { .some($0) }
    }
}

/// A decoding handler keeps the same tape (same fingerprint: the bytes are the tree's); a hit
/// decodes `T` from the tree read back. A tree that does not decode is left to the replay, which
/// reports why.
extension DecodedJSON: CacheProductHandler {
    public var cacheProductFingerprint: String? { json.cacheProductFingerprint }
    public func withCacheProduct(_ body: (UnsafeRawBufferPointer) -> Void) { json.withCacheProduct(body) }
    public func finish(fromProduct bytes: UnsafeRawBufferPointer) -> T? {
        guard let value = json.finish(fromProduct: bytes) else { return nil }
        return try? (value ?? .null).decode(T.self)
    }
}
