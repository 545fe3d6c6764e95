/// The (program node, tape node) pairs a streaming check proved valid: containers only (a
/// scalar is quicker to check again than to look up), for the runs over the same tape after.
///
/// Looked up at every container a run meets, so it is an open-addressing table of its own
/// (multiplicative hash, linear probing) rather than a `Set`: SipHash and the dynamic
/// exclusivity checks of a class's `Set` were most of a streaming check's cost.
final class SchemaTapeProven {
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
        if place(SchemaTapeProven.key(p, v), in: slots) { count += 1 }
    }

    @inline(__always) func contains(_ p: Int32, _ v: UInt32) -> Bool {
        if count == 0 { return false }
        let k = SchemaTapeProven.key(p, v)
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
