#if canImport(Glibc)
import Glibc
#endif

/// An object member: a key and its value.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue
    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// The elements of a JSON array, in order. A copy-on-write collection whose storage dismantles
/// nested containers iteratively when released.
public struct JSONArray: Sendable, Equatable, RandomAccessCollection, MutableCollection,
    RangeReplaceableCollection, ExpressibleByArrayLiteral {
    var storage: JSONArrayStorage

    public init() { storage = JSONArrayStorage([]) }
    public init(_ elements: [JSONValue]) { storage = JSONArrayStorage(elements) }
    public init<S: Sequence>(_ elements: S) where S.Element == JSONValue { self.init(Array(elements)) }
    public init(arrayLiteral elements: JSONValue...) { self.init(elements) }

    /// The elements as a Swift array (shares storage until either side changes).
    public var elements: [JSONValue] { storage.elements }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.elements.count }

    public subscript(position: Int) -> JSONValue {
        get { storage.elements[position] }
        set {
            makeUnique()
            storage.elements[position] = newValue
        }
    }

    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
        where C.Element == JSONValue {
        makeUnique()
        storage.elements.replaceSubrange(subrange, with: newElements)
    }

    public mutating func reserveCapacity(_ n: Int) {
        makeUnique()
        storage.elements.reserveCapacity(n)
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = JSONArrayStorage(storage.elements) }
    }

    public static func == (a: JSONArray, b: JSONArray) -> Bool {
        a.storage === b.storage || JSONEquality.equal(.array(a), .array(b))
    }
}

/// The members of a JSON object, in document order, duplicates kept. Lookup by key is a linear
/// scan that finds the last member of that name.
public struct JSONObject: Sendable, Equatable, RandomAccessCollection, MutableCollection,
    RangeReplaceableCollection {
    var storage: JSONObjectStorage

    public init() { storage = JSONObjectStorage([]) }
    public init(_ members: [JSONMember]) { storage = JSONObjectStorage(members) }
    public init<S: Sequence>(_ members: S) where S.Element == JSONMember { self.init(Array(members)) }

    public var members: [JSONMember] { storage.members }
    public var keys: [String] { storage.members.map(\.key) }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.members.count }

    public subscript(position: Int) -> JSONMember {
        get { storage.members[position] }
        set {
            makeUnique()
            storage.members[position] = newValue
        }
    }

    /// The value of the last member named `key`. Setting replaces that member's value (or appends
    /// a member); setting nil removes every member of that name.
    public subscript(key: String) -> JSONValue? {
        get {
            let members = storage.members
            var i = members.count
            while i > 0 {
                i -= 1
                if members[i].key == key { return members[i].value }
            }
            return nil
        }
        set {
            makeUnique()
            guard let newValue else {
                storage.members.removeAll { $0.key == key }
                return
            }
            if let i = storage.members.lastIndex(where: { $0.key == key }) {
                storage.members[i].value = newValue
            } else {
                storage.members.append(JSONMember(key: key, value: newValue))
            }
        }
    }

    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
        where C.Element == JSONMember {
        makeUnique()
        storage.members.replaceSubrange(subrange, with: newElements)
    }

    public mutating func append(key: String, value: JSONValue) {
        append(JSONMember(key: key, value: value))
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { storage = JSONObjectStorage(storage.members) }
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.storage === b.storage || JSONEquality.equal(.object(a), .object(b))
    }
}

// MARK: - Storage with iterative teardown

/// Shared by copies of a `JSONArray` until one of them changes (then copied): only ever mutated
/// while uniquely referenced, hence Sendable.
final class JSONArrayStorage: @unchecked Sendable {
    var elements: [JSONValue]
    init(_ elements: [JSONValue]) { self.elements = elements }
    deinit { JSONTeardown.dismantle(&elements) }
}

final class JSONObjectStorage: @unchecked Sendable {
    var members: [JSONMember]
    init(_ members: [JSONMember]) { self.members = members }
    deinit {
        guard members.contains(where: { $0.value.isContainer }) else { return }
        JSONTeardown.dismantle { work in
            for m in members where m.value.isContainer { work.append(m.value) }
            members = []
        }
    }
}

/// Releases nested values without recursion. The first dying container on a thread becomes the
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
                if p.storage === q.storage { continue }
                guard p.count == q.count else { return false }
                for i in 0..<p.count { work.append((p[i], q[i])) }
            case let (.object(p), .object(q)):
                if p.storage === q.storage { continue }
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
