/// Decodes `Decodable` types straight from a `PlistValue` (no Foundation, no text round trip),
/// as `JSONValueDecoder` does for JSON.
///
/// Integers convert when exact (an `Int8` from `.int(5)`, a `UInt64` from `.uint`); `Double`
/// and `Float` from reals and integers; `[UInt8]` from `.data`; `PlistDate` from `.date`;
/// `PlistValue` is the value itself. A missing key decodes as nil for optionals.
public struct PlistValueDecoder: Sendable {
    public init() {}

    /// - Throws: `HTTPContentError` `.decode` naming the path and what was expected, with the
    ///   `DecodingError` as `underlying`.
    public func decode<T: Decodable>(_ type: T.Type, from value: PlistValue) throws(HTTPContentError) -> T {
        try run(T.self, PlistDecoderImpl(value: value, codingPath: []))
    }

    /// `type` from no value at all (an empty body): nil for an `Optional`, else a decode error.
    public func decodeEmpty<T: Decodable>(_ type: T.Type) throws(HTTPContentError) -> T {
        try run(T.self, PlistDecoderImpl(value: nil, codingPath: []))
    }

    private func run<T: Decodable>(_ type: T.Type, _ decoder: PlistDecoderImpl) throws(HTTPContentError) -> T {
        do {
            if let special = try decoder.special(T.self) { return special }
            return try T(from: decoder)
        } catch let error as DecodingError {
            throw HTTPContentError(.decode, "cannot decode \(T.self): \(PlistValueDecoder.describe(error))", underlying: error)
        } catch {
            throw HTTPContentError.wrapping(error)
        }
    }

    static func describe(_ error: DecodingError) -> String { ValueDecoding.describe(error, missing: "nothing") }
}

extension PlistValue {
    /// Decodes `type` from this value with `PlistValueDecoder`.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws(HTTPContentError) -> T {
        try PlistValueDecoder().decode(type, from: self)
    }
}

private func mismatch(_ type: Any.Type, _ value: PlistValue?, _ path: [any CodingKey]) -> DecodingError {
    DecodingError.typeMismatch(type, .init(codingPath: path, debugDescription: "found \(value?.kindName ?? "nothing")"))
}

private struct PlistDecoderImpl: Decoder {
    let value: PlistValue?
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The types that are values of their own in a plist rather than containers.
    func special<T>(_ type: T.Type) throws -> T? {
        if T.self == PlistValue.self {
            guard let value else { throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath, debugDescription: "")) }
            return value as? T
        }
        if T.self == [UInt8].self {
            guard case .data(let d) = value else { throw mismatch(T.self, value, codingPath) }
            return d as? T
        }
        if T.self == PlistDate.self {
            guard case .date(let d) = value else { throw mismatch(T.self, value, codingPath) }
            return d as? T
        }
        return nil
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let members) = value else { throw mismatch([String: PlistValue].self, value, codingPath) }
        var map: [String: PlistValue] = [:]
        for m in members { map[m.key] = m.value }
        return KeyedDecodingContainer(Keyed<Key>(members: map, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch([PlistValue].self, value, codingPath) }
        return Unkeyed(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value, codingPath: codingPath) }
}

private func decodeValue<T: Decodable>(_ type: T.Type, _ value: PlistValue?, _ path: [any CodingKey]) throws -> T {
    let decoder = PlistDecoderImpl(value: value, codingPath: path)
    if let special = try decoder.special(T.self) { return special }
    return try T(from: decoder)
}

private func integer<I: FixedWidthInteger>(_ type: I.Type, _ value: PlistValue?, _ path: [any CodingKey]) throws -> I {
    switch value {
    case .int(let i)?:
        guard let v = I(exactly: i) else { throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(i) does not fit \(I.self)")) }
        return v
    case .uint(let u)?:
        guard let v = I(exactly: u) else { throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(u) does not fit \(I.self)")) }
        return v
    default: throw mismatch(I.self, value, path)
    }
}

private struct Single: SingleValueDecodingContainer {
    let value: PlistValue?
    let codingPath: [any CodingKey]
    func decodeNil() -> Bool { value == nil }
    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let b)? = value else { throw mismatch(type, value, codingPath) }
        return b
    }
    func decode(_ type: String.Type) throws -> String {
        guard case .string(let s)? = value else { throw mismatch(type, value, codingPath) }
        return s
    }
    func decode(_ type: Double.Type) throws -> Double {
        guard let d = value?.doubleValue else { throw mismatch(type, value, codingPath) }
        return d
    }
    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int.Type) throws -> Int { try integer(type, value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type, value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type, value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type, value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type, value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type, value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type, value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type, value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type, value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type, value, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type, value, codingPath) }
}

private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: PlistValue]
    let codingPath: [any CodingKey]
    var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }
    private func value(_ key: Key) throws -> PlistValue {
        guard let v = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: ""))
        }
        return v
    }
    func decodeNil(forKey key: Key) throws -> Bool { members[key.stringValue] == nil }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeValue(type, try value(key), codingPath + [key])
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let v = members[key.stringValue] else { return nil }
        return try decodeValue(type, v, codingPath + [key])
    }
    func nestedContainer<N: CodingKey>(keyedBy type: N.Type, forKey key: Key) throws -> KeyedDecodingContainer<N> {
        try PlistDecoderImpl(value: try value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try PlistDecoderImpl(value: try value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder {
        PlistDecoderImpl(value: members["super"], codingPath: codingPath + [ValueCodingKey(stringValue: "super")])
    }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        PlistDecoderImpl(value: members[key.stringValue], codingPath: codingPath + [key])
    }
}

private struct Unkeyed: UnkeyedDecodingContainer {
    let items: [PlistValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    init(items: [PlistValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    private mutating func next(_ type: Any.Type) throws -> (PlistValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath, debugDescription: "the array has only \(items.count) elements"))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], codingPath + [ValueCodingKey(intValue: currentIndex)])
    }
    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (v, path) = try next(type)
        return try decodeValue(type, v, path)
    }
    mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) throws -> KeyedDecodingContainer<N> {
        let (v, path) = try next([String: PlistValue].self)
        return try PlistDecoderImpl(value: v, codingPath: path).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (v, path) = try next([PlistValue].self)
        return try PlistDecoderImpl(value: v, codingPath: path).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder {
        let (v, path) = try next(PlistValue.self)
        return PlistDecoderImpl(value: v, codingPath: path)
    }
}
