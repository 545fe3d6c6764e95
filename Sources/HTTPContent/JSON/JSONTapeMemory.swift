#if canImport(Glibc)
import Glibc
#endif

/// Memory for the tape's buffers: malloc and realloc (glibc gives large blocks a mapping of their
/// own and grows them with `mremap`, without copying). A large buffer is populated ahead of the
/// writes with `MADV_POPULATE_WRITE`, a step at a time: the tape is written from start to end, so
/// those pages are mapped in one call instead of one page fault each (several microseconds apiece
/// on a virtual machine), and the unused part of a doubling is never touched.
enum JSONTapeMemory {
    /// Buffers from this size on are populated a step at a time.
    static let populateFrom = 1 << 20
    static let populateStep = 2 << 20
    private static let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// `madvise` advice (Linux 5.14); older kernels refuse it and pages fault in as usual.
    private static let populateWrite: Int32 = 23

    static func allocate<T>(_ count: Int) -> UnsafeMutablePointer<T> {
        guard let p = malloc(count * MemoryLayout<T>.stride) else { fatalError("JSONTape: out of memory") }
        return p.assumingMemoryBound(to: T.self)
    }

    /// Resizes a buffer to `newCount` elements, keeping the contents that fit.
    static func resize<T>(_ p: UnsafeMutablePointer<T>, _ newCount: Int) -> UnsafeMutablePointer<T> {
        guard let q = realloc(p, newCount * MemoryLayout<T>.stride) else { fatalError("JSONTape: out of memory") }
        return q.assumingMemoryBound(to: T.self)
    }

    /// Populates the elements from `from` on: at least up to `atLeast`, a step ahead for large
    /// buffers; returns the new limit (the capacity for small buffers).
    static func populate<T>(_ p: UnsafeMutablePointer<T>, from: Int, atLeast: Int, capacity: Int) -> Int {
        let stride = MemoryLayout<T>.stride
        guard capacity * stride >= populateFrom else { return capacity }
        let limit = min(capacity, max(atLeast, from + populateStep / stride))
        // Whole pages only: a page partly written already is mapped.
        let start = (Int(bitPattern: p) + from * stride + page - 1) / page * page
        let end = (Int(bitPattern: p) + limit * stride + page - 1) / page * page
        let stop = min(end, (Int(bitPattern: p) + capacity * stride) / page * page)
        if stop > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), stop - start, populateWrite) }
        return limit
    }

    /// Whether shrinking a buffer from `oldCount` to `newCount` elements gives back enough to matter.
    @inline(__always)
    static func worthShrinking<T>(_ type: T.Type, _ oldCount: Int, _ newCount: Int) -> Bool {
        oldCount * MemoryLayout<T>.stride >= populateFrom && newCount < oldCount - oldCount / 4
    }
}
