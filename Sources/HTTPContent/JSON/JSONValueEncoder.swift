/// Encodes `Encodable` values into a `JSONValue` (then `serialized()` for text), without
/// Foundation. Keyed containers keep the order in which members are encoded.
/// Non-finite floating-point values are refused.
public struct JSONValueEncoder: Sendable {
    public init() {}

    /// - Throws: `HTTPContentError` `.invalidArgument` for NaN/infinity or a value that encodes
    ///   nothing, with the `EncodingError` as `underlying`.
    public func encode<T: Encodable>(_ value: T) throws(HTTPContentError) -> JSONValue {
        if let json = value as? JSONValue { return json }
        let root = Node()
        do {
            try value.encode(to: NodeEncoder(node: root, codingPath: []))
        } catch let error as EncodingError {
            var what = "\(error)"
            if case .invalidValue(_, let c) = error {
                let path = c.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
                what = c.debugDescription + (path.isEmpty ? "" : " at \(path)")
            }
            throw HTTPContentError(.invalidArgument, "cannot encode \(T.self) as JSON: \(what)", underlying: error)
        } catch {
            throw HTTPContentError.wrapping(error)
        }
        guard let result = root.finish() else {
            throw HTTPContentError(.invalidArgument, "\(T.self) encoded no value")
        }
        return result
    }

    /// The JSON text of `value`.
    public func encodeToBytes<T: Encodable>(_ value: T, pretty: Bool = false) throws(HTTPContentError) -> [UInt8] {
        try encode(value).serialized(pretty: pretty)
    }
}

extension RequestBody {
    /// A JSON request body from an `Encodable` (`Content-Type: application/json`).
    public static func json<T: Encodable>(encoding value: T) throws(HTTPContentError) -> RequestBody {
        .bytes(try JSONValueEncoder().encodeToBytes(value), contentType: "application/json")
    }
}

/// A value under construction: containers are nodes so nested encoders can fill them later.
private final class Node {
    enum Content {
        case empty
        case value(JSONValue)
        case array([Node])
        case object([(String, Node)])
    }
    var content: Content = .empty

    /// The finished value, built with a work list (encoders may nest deeply).
    func finish() -> JSONValue? {
        // Post-order without recursion: results of children are collected on a value stack.
        enum Step { case visit(Node), makeArray(Int), makeObject([String]) }
        var steps: [Step] = [.visit(self)]
        var values: [JSONValue] = []
        while let step = steps.popLast() {
            switch step {
            case .visit(let node):
                switch node.content {
                case .empty: values.append(.object(JSONObject()))
                case .value(let v): values.append(v)
                case .array(let children):
                    steps.append(.makeArray(children.count))
                    for child in children.reversed() { steps.append(.visit(child)) }
                case .object(let members):
                    steps.append(.makeObject(members.map(\.0)))
                    for (_, child) in members.reversed() { steps.append(.visit(child)) }
                }
            case .makeArray(let n):
                let elements = Array(values.suffix(n))
                values.removeLast(n)
                values.append(.array(JSONArray(elements)))
            case .makeObject(let keys):
                let vals = values.suffix(keys.count)
                values.removeLast(keys.count)
                values.append(.object(JSONObject(zip(keys, vals).map { JSONMember(key: $0, value: $1) })))
            }
        }
        if case .empty = content { return nil }
        return values.last
    }

    func objectMembers() -> [(String, Node)] {
        if case .object(let m) = content { return m }
        content = .object([])
        return []
    }

    func set(_ key: String, _ child: Node) {
        var members = objectMembers()
        content = .empty
        if let i = members.firstIndex(where: { $0.0 == key }) { members[i].1 = child } else { members.append((key, child)) }
        content = .object(members)
    }

    func append(_ child: Node) {
        var elements: [Node] = []
        if case .array(let e) = content { elements = e }
        content = .empty
        elements.append(child)
        content = .array(elements)
    }

    var arrayCount: Int { if case .array(let e) = content { return e.count } else { return 0 } }
}

private func scalar<T: Encodable>(_ value: T, _ path: [any CodingKey]) throws -> JSONValue? {
    func finite(_ d: Double) throws -> JSONValue {
        guard d.isFinite else {
            throw EncodingError.invalidValue(d, .init(codingPath: path,
                debugDescription: "\(d) is not a JSON number (NaN and infinities are refused)"))
        }
        return .double(d)
    }
    switch value {
    case let v as JSONValue: return v
    case let v as Bool: return .bool(v)
    case let v as String: return .string(v)
    case let v as Double: return try finite(v)
    case let v as Float: return try finite(Double(v))
    case let v as Int: return .int(Int64(v))
    case let v as Int8: return .int(Int64(v))
    case let v as Int16: return .int(Int64(v))
    case let v as Int32: return .int(Int64(v))
    case let v as Int64: return .int(v)
    case let v as UInt8: return .int(Int64(v))
    case let v as UInt16: return .int(Int64(v))
    case let v as UInt32: return .int(Int64(v))
    case let v as UInt: return Int64(exactly: v).map(JSONValue.int) ?? .number(String(v))
    case let v as UInt64: return Int64(exactly: v).map(JSONValue.int) ?? .number(String(v))
    default: return nil
    }
}

private func encodeChild<T: Encodable>(_ value: T, into node: Node, _ path: [any CodingKey]) throws {
    if let v = try scalar(value, path) {
        node.content = .value(v)
    } else {
        try value.encode(to: NodeEncoder(node: node, codingPath: path))
    }
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        _ = node.objectMembers()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, codingPath: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    func encodeNil(forKey key: Key) throws { node.set(key.stringValue, leaf(.null)) }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let child = Node()
        try encodeChild(value, into: child, codingPath + [key])
        node.set(key.stringValue, child)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey> {
        let child = Node()
        node.set(key.stringValue, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = Node()
        node.set(key.stringValue, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superEncoder() -> any Encoder { superEncoder(key: "super") }
    func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key.stringValue) }
    private func superEncoder(key: String) -> any Encoder {
        let child = Node()
        node.set(key, child)
        return NodeEncoder(node: child, codingPath: codingPath + [ValueCodingKey(stringValue: key)])
    }
}

private func leaf(_ v: JSONValue) -> Node {
    let n = Node()
    n.content = .value(v)
    return n
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int { node.arrayCount }

    private var nextPath: [any CodingKey] { codingPath + [ValueCodingKey(intValue: count)] }

    func encodeNil() throws { node.append(leaf(.null)) }

    func encode<T: Encodable>(_ value: T) throws {
        let child = Node()
        try encodeChild(value, into: child, nextPath)
        node.append(child)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = Node()
        let path = nextPath
        node.append(child)
        return NodeEncoder(node: child, codingPath: path).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = Node()
        let path = nextPath
        node.append(child)
        return NodeEncoder(node: child, codingPath: path).unkeyedContainer()
    }

    func superEncoder() -> any Encoder {
        let child = Node()
        let path = nextPath
        node.append(child)
        return NodeEncoder(node: child, codingPath: path)
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    func encodeNil() throws { node.content = .value(.null) }
    func encode<T: Encodable>(_ value: T) throws { try encodeChild(value, into: node, codingPath) }
}

extension JSONValue: Encodable {
    /// Encodes into any encoder (with `JSONValueEncoder`, the value is taken as is).
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer()
            try c.encode(i)
        case .double(let d):
            var c = encoder.singleValueContainer()
            try c.encode(d)
        case .number(let text):
            var c = encoder.singleValueContainer()
            if let i = Int64(text) { try c.encode(i) } else { try c.encode(JSONNumberText.double(text) ?? .nan) }
        case .string(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .array(let a):
            var c = encoder.unkeyedContainer()
            for element in a { try c.encode(element) }
        case .object(let o):
            var c = encoder.container(keyedBy: ValueCodingKey.self)
            for member in o { try c.encode(member.value, forKey: ValueCodingKey(stringValue: member.key)) }
        }
    }
}
