#if canImport(Glibc)
import Glibc
#endif

/// Releases nested values without recursion. Containers at most `recursionLimit` high are
/// released plainly (see `JSONArrayStorage`); for higher ones, the first dying container on a thread becomes the
/// dismantler: it moves its children to a work list and releases them one by one. A container
/// that dies meanwhile (on the same thread) only moves its own children to that list (it owns
/// them, being in its deinit), so recursion never goes deeper than one level, however deep the
/// value. No uniqueness checks are needed: shared children simply do not die yet.
final class JSONTeardown {
    @exclusivity(unchecked) private var work: [JSONValue] = []

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    static func dismantle(_ values: inout [JSONValue]) {
        guard values.contains(where: \.isContainer) else { return }
        dismantle { work in
            work.append(contentsOf: values)
            values = []
        }
    }

    /// `collect` moves the dying container's children to the work list.
    static func dismantle(_ collect: (inout [JSONValue]) -> Void) {
        if let active = pthread_getspecific(key) {
            collect(&Unmanaged<JSONTeardown>.fromOpaque(active).takeUnretainedValue().work)
            return
        }
        let dismantler = JSONTeardown()
        collect(&dismantler.work)
        pthread_setspecific(key, Unmanaged.passUnretained(dismantler).toOpaque())
        while let value = dismantler.work.popLast() {
            // Releasing `value` here may run a storage deinit, which appends to the work list.
            _ = consume value
        }
        pthread_setspecific(key, nil)
    }
}

extension JSONTeardown {
    /// Containers no higher than this are released by plain (recursive) release.
    static let recursionLimit: UInt32 = 32

    /// The height a container gets from holding `value`: 0 for a scalar, the child's height + 1
    /// for a container (saturating).
    @inline(__always)
    static func heightAbove(_ value: JSONValue) -> UInt32 {
        switch value {
        case .array(let a): return a.storage.height == .max ? .max : a.storage.height + 1
        case .object(let o): return o.storage.height == .max ? .max : o.storage.height + 1
        default: return 0
        }
    }
}

extension JSONValue {
    var isContainer: Bool {
        switch self {
        case .array, .object: return true
        default: return false
        }
    }
}

/// Structural equality without recursion (deep values compare with an explicit work list).
/// Numbers compare by kind and value: `.int(1)` is not `.double(1)`.
enum JSONEquality {
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        var work: [(JSONValue, JSONValue)] = [(a, b)]
        while let (x, y) = work.popLast() {
            switch (x, y) {
            case (.null, .null): continue
            case let (.bool(p), .bool(q)): if p != q { return false }
            case let (.int(p), .int(q)): if p != q { return false }
            case let (.double(p), .double(q)): if p != q { return false }
            case let (.number(p), .number(q)): if p != q { return false }
            case let (.string(p), .string(q)): if p != q { return false }
            case let (.array(p), .array(q)):
                if p.isIdentical(to: q) { continue }
                guard p.count == q.count else { return false }
                for i in 0..<p.count { work.append((p[i], q[i])) }
            case let (.object(p), .object(q)):
                if p.isIdentical(to: q) { continue }
                guard p.count == q.count else { return false }
                for i in 0..<p.count {
                    guard p[i].key == q[i].key else { return false }
                    work.append((p[i].value, q[i].value))
                }
            default: return false
            }
        }
        return true
    }
}

extension JSONValue {
    public static func == (a: JSONValue, b: JSONValue) -> Bool { JSONEquality.equal(a, b) }
}
