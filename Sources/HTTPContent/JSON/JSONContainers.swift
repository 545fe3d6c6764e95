/// An object member: a key and its value.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue
    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// The elements of a JSON array, in order. A copy-on-write collection: parsed arrays read their
/// document's `JSONTape` in place, built or changed ones own a storage that dismantles nested
/// containers iteratively when released.
public struct JSONArray: Sendable, Equatable, RandomAccessCollection, MutableCollection,
    RangeReplaceableCollection, ExpressibleByArrayLiteral {
    /// The owned elements; the shared empty storage while `tape` holds them.
    var storage: JSONArrayStorage
    var tape: JSONTape?
    var node: UInt32 = 0

    public init() { storage = JSONArrayStorage.empty }
    public init(_ elements: [JSONValue]) { storage = JSONArrayStorage(elements) }
    public init<S: Sequence>(_ elements: S) where S.Element == JSONValue { self.init(Array(elements)) }
    public init(arrayLiteral elements: JSONValue...) { self.init(elements) }
    init(tape: JSONTape, node: UInt32) {
        storage = JSONArrayStorage.empty
        self.tape = tape
        self.node = node
    }

    /// The elements as a Swift array (an owned array's shares storage until either side changes).
    public var elements: [JSONValue] {
        guard let t = tape else { return storage.elements }
        let n = t.count(node)
        var out: [JSONValue] = []
        out.reserveCapacity(n)
        for i in 0..<n { out.append(t.value(t.element(node, i))) }
        return out
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        guard let t = tape else { return storage.elements.count }
        return t.count(node)
    }

    public subscript(position: Int) -> JSONValue {
        get {
            guard let t = tape else { return storage.elements[position] }
            precondition(position >= 0 && position < t.count(node), "JSONArray index out of range")
            return t.value(t.element(node, position))
        }
        set {
            let s = makeUnique()
            s.noteChild(newValue)
            s.elements[position] = newValue
        }
    }

    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
        where C.Element == JSONValue {
        let s = makeUnique()
        for v in newElements { s.noteChild(v) }
        s.elements.replaceSubrange(subrange, with: newElements)
    }

    public mutating func reserveCapacity(_ n: Int) {
        makeUnique().elements.reserveCapacity(n)
    }

    /// The owned storage, copied first when shared or when the elements are on a tape.
    @discardableResult
    private mutating func makeUnique() -> JSONArrayStorage {
        if tape != nil {
            storage = JSONArrayStorage(elements)
            tape = nil
        } else if !isKnownUniquelyReferenced(&storage) {
            storage = JSONArrayStorage(storage.elements)
        }
        return storage
    }

    /// The same storage: equal without looking at the elements.
    func isIdentical(to other: JSONArray) -> Bool {
        if let t = tape { return t === other.tape && node == other.node }
        return other.tape == nil && storage === other.storage
    }

    public static func == (a: JSONArray, b: JSONArray) -> Bool {
        a.isIdentical(to: b) || JSONEquality.equal(.array(a), .array(b))
    }
}

/// The members of a JSON object, in document order, duplicates kept. Lookup by key is a linear
/// scan that finds the last member of that name. Stored like `JSONArray`.
public struct JSONObject: Sendable, Equatable, RandomAccessCollection, MutableCollection,
    RangeReplaceableCollection {
    /// The owned members; the shared empty storage while `tape` holds them.
    var storage: JSONObjectStorage
    var tape: JSONTape?
    var node: UInt32 = 0

    public init() { storage = JSONObjectStorage.empty }
    public init(_ members: [JSONMember]) { storage = JSONObjectStorage(members) }
    public init<S: Sequence>(_ members: S) where S.Element == JSONMember { self.init(Array(members)) }
    init(tape: JSONTape, node: UInt32) {
        storage = JSONObjectStorage.empty
        self.tape = tape
        self.node = node
    }

    public var members: [JSONMember] {
        guard let t = tape else { return storage.members }
        let n = t.count(node)
        var out: [JSONMember] = []
        out.reserveCapacity(n)
        for i in 0..<n {
            out.append(JSONMember(key: t.string(t.memberKey(node, i)), value: t.value(t.memberValue(node, i))))
        }
        return out
    }

    public var keys: [String] {
        guard let t = tape else { return storage.members.map(\.key) }
        return (0..<t.count(node)).map { t.string(t.memberKey(node, $0)) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int {
        guard let t = tape else { return storage.members.count }
        return t.count(node)
    }

    public subscript(position: Int) -> JSONMember {
        get {
            guard let t = tape else { return storage.members[position] }
            precondition(position >= 0 && position < t.count(node), "JSONObject index out of range")
            return JSONMember(key: t.string(t.memberKey(node, position)),
                              value: t.value(t.memberValue(node, position)))
        }
        set {
            let s = makeUnique()
            s.noteChild(newValue.value)
            s.members[position] = newValue
        }
    }

    /// Member `i`'s key.
    func key(at i: Int) -> String {
        guard let t = tape else { return storage.members[i].key }
        return t.string(t.memberKey(node, i))
    }

    /// Whether member `i`'s key is `key`, compared in place (no String made from the document).
    @inline(__always)
    func key(at i: Int, equals key: String) -> Bool {
        guard let t = tape else { return storage.members[i].key == key }
        return t.textEquals(t.memberKey(node, i), key)
    }

    /// Whether member `i`'s key is exactly these UTF-8 bytes (compared in place).
    @inline(__always)
    func key(at i: Int, equalsUTF8 bytes: [UInt8]) -> Bool {
        guard let t = tape else { return storage.members[i].key.utf8.elementsEqual(bytes) }
        return t.textEquals(t.memberKey(node, i), bytes)
    }

    /// Whether some member's key is exactly these UTF-8 bytes.
    func hasKey(utf8 bytes: [UInt8]) -> Bool {
        guard let t = tape else { return storage.members.contains { $0.key.utf8.elementsEqual(bytes) } }
        for i in 0..<t.count(node) where t.textEquals(t.memberKey(node, i), bytes) { return true }
        return false
    }

    /// Member `i`'s value, without making its key.
    @inline(__always)
    func value(at i: Int) -> JSONValue {
        guard let t = tape else { return storage.members[i].value }
        return t.value(t.memberValue(node, i))
    }

    /// The index of the last member named `key`.
    public func lastIndex(ofKey key: String) -> Int? {
        guard let t = tape else { return storage.members.lastIndex { $0.key == key } }
        var i = t.count(node)
        while i > 0 {
            i -= 1
            if t.textEquals(t.memberKey(node, i), key) { return i }
        }
        return nil
    }

    /// The value of the last member named `key`. Setting replaces that member's value (or appends
    /// a member); setting nil removes every member of that name.
    public subscript(key: String) -> JSONValue? {
        get {
            if let t = tape {
                guard let i = lastIndex(ofKey: key) else { return nil }
                return t.value(t.memberValue(node, i))
            }
            let members = storage.members
            var i = members.count
            while i > 0 {
                i -= 1
                if members[i].key == key { return members[i].value }
            }
            return nil
        }
        set {
            let s = makeUnique()
            if let newValue { s.noteChild(newValue) }
            guard let newValue else {
                s.members.removeAll { $0.key == key }
                return
            }
            if let i = s.members.lastIndex(where: { $0.key == key }) {
                s.members[i].value = newValue
            } else {
                s.members.append(JSONMember(key: key, value: newValue))
            }
        }
    }

    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
        where C.Element == JSONMember {
        let s = makeUnique()
        for m in newElements { s.noteChild(m.value) }
        s.members.replaceSubrange(subrange, with: newElements)
    }

    public mutating func append(key: String, value: JSONValue) {
        append(JSONMember(key: key, value: value))
    }

    @discardableResult
    private mutating func makeUnique() -> JSONObjectStorage {
        if tape != nil {
            storage = JSONObjectStorage(members)
            tape = nil
        } else if !isKnownUniquelyReferenced(&storage) {
            storage = JSONObjectStorage(storage.members)
        }
        return storage
    }

    func isIdentical(to other: JSONObject) -> Bool {
        if let t = tape { return t === other.tape && node == other.node }
        return other.tape == nil && storage === other.storage
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.isIdentical(to: b) || JSONEquality.equal(.object(a), .object(b))
    }
}

// MARK: - Storage with iterative teardown

/// Shared by copies of a `JSONArray` until one of them changes (then copied): only ever mutated
/// while uniquely referenced, hence Sendable.
///
/// `height` bounds the nesting below the container (0: no container among the elements; never
/// less than the truth: it is computed when the storage is made and only ever raised by
/// mutations). Releasing a container no higher than `JSONTeardown.recursionLimit` simply lets
/// Swift release its children, which recurses at most that deep; higher ones are dismantled
/// iteratively. Most containers of real documents are low, so they skip the work list.
final class JSONArrayStorage: @unchecked Sendable {
    /// What empty and tape-backed arrays hold (never mutated: shared, so copied first).
    static let empty = JSONArrayStorage([])
    var elements: [JSONValue]
    var height: UInt32
    init(_ elements: [JSONValue]) {
        self.elements = elements
        var h: UInt32 = 0
        for v in elements { h = max(h, JSONTeardown.heightAbove(v)) }
        height = h
    }
    @inline(__always)
    func noteChild(_ value: JSONValue) { height = max(height, JSONTeardown.heightAbove(value)) }
    deinit {
        if height > JSONTeardown.recursionLimit { JSONTeardown.dismantle(&elements) }
    }
}

final class JSONObjectStorage: @unchecked Sendable {
    static let empty = JSONObjectStorage([])
    var members: [JSONMember]
    var height: UInt32
    init(_ members: [JSONMember]) {
        self.members = members
        var h: UInt32 = 0
        for m in members { h = max(h, JSONTeardown.heightAbove(m.value)) }
        height = h
    }
    @inline(__always)
    func noteChild(_ value: JSONValue) { height = max(height, JSONTeardown.heightAbove(value)) }
    deinit {
        guard height > JSONTeardown.recursionLimit else { return }
        JSONTeardown.dismantle { work in
            for m in members where m.value.isContainer { work.append(m.value) }
            members = []
        }
    }
}
