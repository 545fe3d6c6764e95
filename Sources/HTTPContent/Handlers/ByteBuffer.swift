#if canImport(Glibc)
import Glibc
#endif

/// A growable byte buffer in one malloc'd block, whose storage address stays valid and unchanged
/// once filling is over, so the C ABI can lend it out without copying a large body.
public final class ByteBuffer: @unchecked Sendable, RandomAccessCollection {
    // One thread at a time fills or reads a buffer (it is lent out only once filled): the
    // per-access exclusivity checks would cost more than the appends themselves.
    @exclusivity(unchecked) public private(set) var baseAddress: UnsafeMutablePointer<UInt8>?
    @exclusivity(unchecked) public private(set) var count = 0
    @exclusivity(unchecked) private var capacity = 0
    /// Memory lent by the caller (see `init(lending:capacity:release:)`): not ours to free.
    @exclusivity(unchecked) private var lent = false
    @exclusivity(unchecked) private var release: (() -> Void)?

    public init(capacity: Int = 0) {
        if capacity > 0 { reserve(capacity) }
    }

    /// A buffer that fills `capacity` bytes of the caller's memory, so a body of known length
    /// lands where the caller wants it with no copy. Should more arrive, the buffer moves to
    /// memory of its own. `release` is called once the buffer no longer uses the memory.
    public init(lending memory: UnsafeMutableRawPointer, capacity: Int, release: (() -> Void)? = nil) {
        baseAddress = memory.assumingMemoryBound(to: UInt8.self)
        self.capacity = capacity
        self.release = release
        lent = true
    }

    public convenience init(_ bytes: some Sequence<UInt8>) {
        self.init()
        for b in bytes { append(b) }
    }

    deinit {
        if lent { release?() } else { free(baseAddress) }
    }

    /// `baseAddress` and `count` in one read, for other modules: `@exclusivity(unchecked)` holds
    /// only inside this one, so the C ABI reading the stored properties directly paid a dynamic
    /// exclusivity check (swift_beginAccess) for each, on every fetch.
    public var contents: (base: UnsafePointer<UInt8>?, count: Int) { (UnsafePointer(baseAddress), count) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "ByteBuffer index out of range")
        return baseAddress![position]
    }

    /// Ensures room for `total` bytes in all.
    public func reserve(_ total: Int) {
        guard total > capacity else { return }
        if lent {
            guard let own = malloc(total) else { fatalError("httpcontent: out of memory for \(total) bytes") }
            if let baseAddress, count > 0 { own.copyMemory(from: baseAddress, byteCount: count) }
            baseAddress = own.assumingMemoryBound(to: UInt8.self)
            capacity = total
            lent = false
            release?()
            release = nil
            return
        }
        guard let grown = realloc(baseAddress, total) else {
            fatalError("httpcontent: out of memory growing a buffer to \(total) bytes")
        }
        baseAddress = grown.assumingMemoryBound(to: UInt8.self)
        capacity = total
    }

    public func append(_ chunk: UnsafeRawBufferPointer) {
        guard let src = chunk.baseAddress, chunk.count > 0 else { return }
        if count + chunk.count > capacity { reserve(Swift.max(count + chunk.count, capacity * 2, 4096)) }
        (baseAddress! + count).update(from: src.assumingMemoryBound(to: UInt8.self), count: chunk.count)
        count += chunk.count
    }

    public func append(_ byte: UInt8) {
        Swift.withUnsafeBytes(of: byte) { append($0) }
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: baseAddress, count: count))
    }

    /// A copy as a Swift array.
    public var array: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The bytes as UTF-8 text, invalid sequences replaced by U+FFFD.
    public var utf8String: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
