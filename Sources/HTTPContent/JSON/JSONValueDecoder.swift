/// Decodes `Decodable` types straight from a `JSONValue` (no Foundation, no text round trip).
///
/// Numbers convert when exact: an `Int` from `.int`, from an integral `.double`, or from a
/// `.number` text; a `Double` from any number. Missing keys and `null` decode as nil for
/// optionals. Keys are used as they are (no case conversion).
public struct JSONValueDecoder: Sendable {
    public init() {}

    /// - Throws: `HTTPContentError` `.decode` naming the path and what was expected, with the
    ///   `DecodingError` as `underlying`.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws(HTTPContentError) -> T {
        do {
            return try T(from: ValueDecoder(value: value, codingPath: []))
        } catch let error as DecodingError {
            throw HTTPContentError(.decode, "cannot decode \(T.self): \(JSONValueDecoder.describe(error))",
                                   underlying: error)
        } catch {
            throw HTTPContentError.wrapping(error)
        }
    }

    static func describe(_ error: DecodingError) -> String { ValueDecoding.describe(error, missing: "null") }
}

extension JSONValue {
    /// Decodes `type` from this value with `JSONValueDecoder`.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws(HTTPContentError) -> T {
        try JSONValueDecoder().decode(type, from: self)
    }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw mismatch([String: JSONValue].self, value, codingPath)
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath)
    }
}

private func kind(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool: return "a boolean"
    case .int, .double, .number: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    if case .null = value {
        return .valueNotFound(type, .init(codingPath: path, debugDescription: "found null"))
    }
    return .typeMismatch(type, .init(codingPath: path, debugDescription: "found \(kind(value))"))
}

/// Scalar conversions shared by every container.
private func decodeScalar<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
    func integer<I: FixedWidthInteger>(_: I.Type) throws -> I {
        if let exact = value.int64Value, let converted = I(exactly: exact) { return converted }
        if case .number(let text) = value, let converted = I(text) { return converted }
        if let d = value.doubleValue, let converted = I(exactly: d) { return converted }
        if value.doubleValue != nil {
            throw DecodingError.dataCorrupted(.init(codingPath: path,
                debugDescription: "number \(value.numberText ?? "") does not fit \(I.self)"))
        }
        throw mismatch(I.self, value, path)
    }
    switch type {
    case is Bool.Type:
        guard case .bool(let b) = value else { throw mismatch(Bool.self, value, path) }
        return try cast(b, T.self, path)
    case is String.Type:
        guard case .string(let s) = value else { throw mismatch(String.self, value, path) }
        return try cast(s, T.self, path)
    case is Double.Type:
        guard let d = value.doubleValue else { throw mismatch(Double.self, value, path) }
        return try cast(d, T.self, path)
    case is Float.Type:
        guard let d = value.doubleValue else { throw mismatch(Float.self, value, path) }
        return try cast(Float(d), T.self, path)
    case is Int.Type: return try cast(try integer(Int.self), T.self, path)
    case is Int8.Type: return try cast(try integer(Int8.self), T.self, path)
    case is Int16.Type: return try cast(try integer(Int16.self), T.self, path)
    case is Int32.Type: return try cast(try integer(Int32.self), T.self, path)
    case is Int64.Type: return try cast(try integer(Int64.self), T.self, path)
    case is UInt.Type: return try cast(try integer(UInt.self), T.self, path)
    case is UInt8.Type: return try cast(try integer(UInt8.self), T.self, path)
    case is UInt16.Type: return try cast(try integer(UInt16.self), T.self, path)
    case is UInt32.Type: return try cast(try integer(UInt32.self), T.self, path)
    case is UInt64.Type: return try cast(try integer(UInt64.self), T.self, path)
    case is JSONValue.Type: return try cast(value, T.self, path)
    default:
        return try T(from: ValueDecoder(value: value, codingPath: path))
    }
}

/// `x as! T` without the trap (the callers checked the type already).
private func cast<T>(_ x: Any, _: T.Type, _ path: [any CodingKey]) throws -> T {
    guard let t = x as? T else { throw DecodingError.typeMismatch(T.self, .init(codingPath: path, debugDescription: "internal cast")) }
    return t
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.map(\.key).compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let v = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no such member"))
        }
        return v
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeScalar(type, value(key), codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let v = object[key.stringValue], !v.isNull else { return nil }
        return try decodeScalar(type, v, codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: object["super"] ?? .null, codingPath: codingPath + [ValueCodingKey(stringValue: "super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: JSONArray
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(array: JSONArray, codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next(_ type: Any.Type) throws -> (JSONValue, [any CodingKey]) {
        let key = ValueCodingKey(intValue: currentIndex)
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [key],
                                                          debugDescription: "the array has only \(array.count) elements"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], codingPath + [key])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        if array[currentIndex].isNull {
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (v, path) = try next(type)
        return try decodeScalar(type, v, path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey> {
        let (v, path) = try next([String: JSONValue].self)
        return try ValueDecoder(value: v, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (v, path) = try next([JSONValue].self)
        return try ValueDecoder(value: v, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (v, path) = try next(JSONValue.self)
        return ValueDecoder(value: v, codingPath: path)
    }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    func decodeNil() -> Bool { value.isNull }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeScalar(type, value, codingPath) }
}

extension JSONValue: Decodable {
    /// Decodes from any decoder (a `JSONValue` decoded by `JSONValueDecoder` is taken as is).
    public init(from decoder: any Decoder) throws {
        if let own = decoder as? ValueDecoder {
            self = own.value
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let b = try? single.decode(Bool.self) { self = .bool(b) }
        else if let i = try? single.decode(Int64.self) { self = .int(i) }
        else if let d = try? single.decode(Double.self) { self = .double(d) }
        else if let s = try? single.decode(String.self) { self = .string(s) }
        else if let a = try? single.decode([JSONValue].self) { self = .array(JSONArray(a)) }
        else if let o = try? single.decode([String: JSONValue].self) {
            self = .object(JSONObject(o.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: $0.value) }))
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a JSON value"))
        }
    }
}
