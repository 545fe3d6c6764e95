import Testing
@testable import HTTPContent

/// `SchemaTapeProven`, the streaming check's table of containers proven valid: a pair is found
/// exactly when it was inserted, through the table's growth and after it is emptied.
@Suite("JSON Schema proven containers")
struct SchemaTapeProvenTests {
    @Test func findsExactlyTheInsertedPairsThroughGrowth() {
        let proven = SchemaTapeProven()
        #expect(proven.isEmpty)
        #expect(!proven.contains(0, 0))
        // Pair (0, 0) is the smallest key; many pairs make the table double several times.
        var inserted: [(Int32, UInt32)] = [(0, 0)]
        for v in stride(from: UInt32(1), to: 30_000, by: 3) { inserted.append((Int32(v % 7), v)) }
        inserted.append((Int32.max, UInt32.max))
        for (p, v) in inserted { proven.insert(p, v) }
        // Inserting again changes nothing.
        for (p, v) in inserted.prefix(100) { proven.insert(p, v) }
        #expect(!proven.isEmpty)
        #expect(inserted.allSatisfy { proven.contains($0.0, $0.1) })
        // The same tape nodes under other program nodes, and nodes never inserted, are absent.
        #expect(!inserted.dropFirst().dropLast().contains { proven.contains($0.0 + 1, $0.1) })
        #expect(!stride(from: UInt32(2), to: 30_000, by: 3).contains { proven.contains(Int32($0 % 7), $0) })
        #expect(!proven.contains(0, 1) && !proven.contains(1, 0) && !proven.contains(Int32.max, 0))

        proven.removeAll()
        #expect(proven.isEmpty)
        #expect(!inserted.contains { proven.contains($0.0, $0.1) })
        proven.insert(3, 9)
        #expect(proven.contains(3, 9) && !proven.contains(0, 0))
    }
}
