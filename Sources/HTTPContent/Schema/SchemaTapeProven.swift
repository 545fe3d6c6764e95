#if canImport(Glibc)
import Glibc
#endif

/// The (program node, tape node) pairs a streaming check proved valid: containers only (a
/// scalar is quicker to check again than to look up), for the runs over the same tape after.
///
/// Looked up at every container a run meets. Most tape nodes are proved under one program, so
/// the first program proved at a node sits in a dense array indexed by the node: nodes proved
/// and looked up together lie close together on the tape, so these reads hit the cache. A hash
/// table over the whole document missed it on most lookups (70 % of a streaming check's own
/// time, 100 MiB document). A second program proved at the same node goes to a table.
final class SchemaTapeProven {
    /// Per tape node: the program proved there plus one (0: none), up to `used`.
    @exclusivity(unchecked) private var dense: UnsafeMutablePointer<Int32>
    @exclusivity(unchecked) private var capacity: Int
    /// One past the highest node written: what `removeAll` clears.
    @exclusivity(unchecked) private var used = 0
    @exclusivity(unchecked) private var others = SchemaTapeProvenPairs()
    @exclusivity(unchecked) private(set) var isEmpty = true

    init() {
        capacity = 1024
        guard let p = calloc(capacity, MemoryLayout<Int32>.stride) else { fatalError("SchemaTapeProven: out of memory") }
        dense = p.assumingMemoryBound(to: Int32.self)
    }

    deinit { free(dense) }

    func insert(_ p: Int32, _ v: UInt32) {
        let i = Int(v)
        if i >= capacity { grow(i + 1) }
        isEmpty = false
        let d = dense[i]
        if d == 0 {
            dense[i] = p &+ 1
            if i >= used { used = i + 1 }
        } else if d != p &+ 1 {
            others.insert(p, v)
        }
    }

    @inline(__always) func contains(_ p: Int32, _ v: UInt32) -> Bool {
        let i = Int(v)
        if i < used && dense[i] == p &+ 1 { return true }
        return !others.isEmpty && others.contains(p, v)
    }

    /// Empties the table, keeping its room for the next document.
    func removeAll() {
        guard !isEmpty else { return }
        dense.update(repeating: 0, count: used)
        used = 0
        others.removeAll()
        isEmpty = true
    }

    private func grow(_ atLeast: Int) {
        let n = max(atLeast, capacity * 2)
        guard let p = realloc(dense, n * MemoryLayout<Int32>.stride) else { fatalError("SchemaTapeProven: out of memory") }
        dense = p.assumingMemoryBound(to: Int32.self)
        (dense + capacity).initialize(repeating: 0, count: n - capacity)
        capacity = n
    }
}

/// The pairs proved at a node that already holds another program: an open-addressing table
/// (multiplicative hash, linear probing) rather than a `Set`, whose SipHash and dynamic
/// exclusivity checks were most of a streaming check's cost.
final class SchemaTapeProvenPairs {
    /// Keys stored plus one, so that 0 marks an empty slot.
    @exclusivity(unchecked) private var slots: UnsafeMutablePointer<UInt64>
    /// A power of two.
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var shift: UInt64
    @exclusivity(unchecked) private var count = 0

    init() {
        let room = 64
        capacity = room
        shift = 64 - 6
        slots = .allocate(capacity: room)
        slots.initialize(repeating: 0, count: room)
    }

    deinit { slots.deallocate() }

    var isEmpty: Bool { count == 0 }

    func insert(_ p: Int32, _ v: UInt32) {
        if (count + 1) * 2 > capacity { grow() }
        if place(SchemaTapeProvenPairs.key(p, v), in: slots) { count += 1 }
    }

    @inline(__always) func contains(_ p: Int32, _ v: UInt32) -> Bool {
        if count == 0 { return false }
        let k = SchemaTapeProvenPairs.key(p, v)
        let mask = capacity &- 1
        var i = slot(k)
        while true {
            let s = slots[i]
            if s == k { return true }
            if s == 0 { return false }
            i = (i &+ 1) & mask
        }
    }

    /// Empties the table, keeping its room for the next document.
    func removeAll() {
        guard count > 0 else { return }
        slots.update(repeating: 0, count: capacity)
        count = 0
    }

    // MARK: - Table

    /// Program nodes are non-negative, so the sum never wraps to the empty mark.
    @inline(__always) private static func key(_ p: Int32, _ v: UInt32) -> UInt64 {
        (UInt64(UInt32(bitPattern: p)) << 32 | UInt64(v)) &+ 1
    }

    @inline(__always) private func slot(_ k: UInt64) -> Int {
        Int(truncatingIfNeeded: (k &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// Stores `k` unless present; whether it was added.
    private func place(_ k: UInt64, in table: UnsafeMutablePointer<UInt64>) -> Bool {
        let mask = capacity &- 1
        var i = slot(k)
        while true {
            let s = table[i]
            if s == k { return false }
            if s == 0 {
                table[i] = k
                return true
            }
            i = (i &+ 1) & mask
        }
    }

    private func grow() {
        let old = slots, oldCapacity = capacity
        capacity *= 2
        shift -= 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: 0, count: capacity)
        for i in 0..<oldCapacity where old[i] != 0 { _ = place(old[i], in: slots) }
        old.deallocate()
    }
}
