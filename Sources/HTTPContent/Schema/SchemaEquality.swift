/// JSON Schema's equality (enum, const, uniqueItems): numbers by value (1 == 1.0), objects
/// without regard to member order, everything else structurally.
enum SchemaEquality {
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        // Code points, not Swift's canonical equivalence ("é" and "e\u{301}" differ in JSON).
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.int(let x), .int(let y)): return x == y
        case (.int, _), (.double, _), (.number, _):
            guard b.isNumber else { return false }
            return SchemaNumbers.compare(a, b) == 0
        case (.array(let x), .array(let y)):
            guard x.count == y.count else { return false }
            for i in 0..<x.count where !equal(x[i], y[i]) { return false }
            return true
        case (.object(let x), .object(let y)):
            let xm = members(x), ym = members(y)
            guard xm.count == ym.count else { return false }
            for (key, value) in xm {
                guard let other = ym[key], equal(value, other) else { return false }
            }
            return true
        default: return false
        }
    }

    /// Members by key (the last of duplicates, as lookup does).
    private static func members(_ o: JSONObject) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for m in o { out[m.key] = m.value }
        return out
    }

    /// A hash consistent with `equal`.
    static func hash(_ v: JSONValue, into h: inout Hasher) {
        switch v {
        case .null: h.combine(0)
        case .bool(let b): h.combine(b)
        case .int, .double, .number:
            let d = v.doubleValue ?? 0
            h.combine(d == 0 ? 0 : d)
        case .string(let s): h.combine(s)
        case .array(let a):
            h.combine(a.count)
            for e in a { hash(e, into: &h) }
        case .object(let o):
            var sum = 0
            for (k, value) in members(o) {
                var m = Hasher()
                m.combine(k)
                hash(value, into: &m)
                sum &+= m.finalize()
            }
            h.combine(sum)
        }
    }

    /// The first pair of equal items, or nil when all are unique.
    static func firstDuplicate(_ a: JSONArray) -> (Int, Int)? {
        let n = a.count
        if n < 2 { return nil }
        if n <= 16 {
            for i in 0..<n { for j in (i + 1)..<n where equal(a[i], a[j]) { return (i, j) } }
            return nil
        }
        var buckets: [Int: [Int]] = [:]
        for i in 0..<n {
            var h = Hasher()
            hash(a[i], into: &h)
            let key = h.finalize()
            if let list = buckets[key] {
                for j in list where equal(a[j], a[i]) { return (j, i) }
            }
            buckets[key, default: []].append(i)
        }
        return nil
    }
}

/// Numeric comparisons across `.int`, `.double` and `.number` (exact for two integers).
enum SchemaNumbers {
    static func compare(_ a: JSONValue, _ b: JSONValue) -> Int {
        if case .int(let x) = a, case .int(let y) = b { return x < y ? -1 : (x > y ? 1 : 0) }
        if case .int(let x) = a, case .number(let t) = b, let y = Int64(t) { return x < y ? -1 : (x > y ? 1 : 0) }
        if case .number(let t) = a, let x = Int64(t), case .int(let y) = b { return x < y ? -1 : (x > y ? 1 : 0) }
        let x = a.doubleValue ?? .nan, y = b.doubleValue ?? .nan
        return x < y ? -1 : (x > y ? 1 : 0)
    }

    static func isMultiple(_ v: JSONValue, of m: JSONValue) -> Bool {
        if case .int(let x) = v, case .int(let y) = m, y > 0 { return x % y == 0 }
        guard let x = v.doubleValue, let y = m.doubleValue, y > 0 else { return false }
        if !x.isFinite { return false }
        let q = x / y
        guard q.isFinite else { return false }
        return q.rounded() == q
    }
}
