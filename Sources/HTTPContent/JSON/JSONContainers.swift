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
            storage.noteChild(newValue)
            storage.elements[position] = newValue
        }
    }

    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
        where C.Element == JSONValue {
        makeUnique()
        for v in newElements { storage.noteChild(v) }
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
            storage.noteChild(newValue.value)
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
            if let newValue { storage.noteChild(newValue) }
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
        for m in newElements { storage.noteChild(m.value) }
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
///
/// `height` bounds the nesting below the container (0: no container among the elements; never
/// less than the truth: it is computed when the storage is made and only ever raised by
/// mutations). Releasing a container no higher than `JSONTeardown.recursionLimit` simply lets
/// Swift release its children, which recurses at most that deep; higher ones are dismantled
/// iteratively. Most containers of real documents are low, so they skip the work list.
final class JSONArrayStorage: @unchecked Sendable {
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
