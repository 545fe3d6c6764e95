#if canImport(Glibc)
import Glibc
#endif

/// Memory for the tape's buffers: malloc and realloc (glibc gives large blocks a mapping of their
/// own and grows them with `mremap`, without copying), plus `MADV_POPULATE_WRITE` on the part a
/// large buffer just grew by: the tape is written from start to end, so those pages are mapped in
/// one call instead of one page fault each (several microseconds apiece on a virtual machine).
enum JSONTapeMemory {
    /// Buffers from this size on are populated as they grow.
    static let populateFrom = 1 << 20
    private static let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// `madvise` advice (Linux 5.14); older kernels refuse it and pages fault in as usual.
    private static let populateWrite: Int32 = 23

    static func allocate<T>(_ count: Int) -> UnsafeMutablePointer<T> {
        guard let p = malloc(count * MemoryLayout<T>.stride) else { fatalError("JSONTape: out of memory") }
        return p.assumingMemoryBound(to: T.self)
    }

    /// Resizes a buffer of `oldCount` elements to `newCount`, keeping the contents.
    static func resize<T>(_ p: UnsafeMutablePointer<T>, _ oldCount: Int, _ newCount: Int) -> UnsafeMutablePointer<T> {
        let stride = MemoryLayout<T>.stride
        let oldBytes = oldCount * stride, newBytes = newCount * stride
        guard let q = realloc(p, newBytes) else { fatalError("JSONTape: out of memory") }
        if newBytes > oldBytes, newBytes >= populateFrom {
            // Whole pages inside the new part only: the rest are mapped already or shared.
            let start = (Int(bitPattern: q) + oldBytes + page - 1) / page * page
            let end = (Int(bitPattern: q) + newBytes) / page * page
            if end > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, populateWrite) }
        }
        return q.assumingMemoryBound(to: T.self)
    }

    /// Whether shrinking a buffer from `oldCount` to `newCount` elements gives back enough to matter.
    static func worthShrinking<T>(_ type: T.Type, _ oldCount: Int, _ newCount: Int) -> Bool {
        let stride = MemoryLayout<T>.stride
        return oldCount * stride >= populateFrom && newCount < oldCount - oldCount / 4
    }

    static func free<T>(_ p: UnsafeMutablePointer<T>, _ count: Int) {
        Glibc.free(p)
    }
}
