/// A property-list value: what the `Plist` handler produces and `RequestBody.plist` sends.
///
/// Integers that fit `Int64` are `.int` (negative ones included); only integers above
/// `Int64.max` are `.uint`, so each integer has one form (as Python's `int` and `plistlib`).
/// Dictionaries keep their members in document order. Dates are `PlistDate` (seconds since
/// 2001-01-01 00:00:00 UTC, as the binary format stores them). `.uid` is the keyed archivers'
/// object reference (binary plists only).
public enum PlistValue: Sendable, Equatable {
    case dictionary([PlistMember])
    case array([PlistValue])
    case string(String)
    /// An integer that fits in `Int64`.
    case int(Int64)
    /// An integer above `Int64.max` (up to `UInt64.max`).
    case uint(UInt64)
    case real(Double)
    case bool(Bool)
    case date(PlistDate)
    case data([UInt8])
    case uid(UInt64)

    /// An integer of any sign: `.int`, or `.uint` when it does not fit `Int64`.
    public static func integer(_ value: UInt64) -> PlistValue {
        value <= UInt64(Int64.max) ? .int(Int64(value)) : .uint(value)
    }

    // MARK: - Accessors

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var int64Value: Int64? { if case .int(let i) = self { return i } else { return nil } }
    /// The integer as `UInt64`: non-negative `.int`s and every `.uint`.
    public var uint64Value: UInt64? {
        switch self {
        case .int(let i) where i >= 0: return UInt64(i)
        case .uint(let u): return u
        default: return nil
        }
    }
    /// Reals, and integers converted (may round).
    public var doubleValue: Double? {
        switch self {
        case .real(let d): return d
        case .int(let i): return Double(i)
        case .uint(let u): return Double(u)
        default: return nil
        }
    }
    public var dateValue: PlistDate? { if case .date(let d) = self { return d } else { return nil } }
    public var dataValue: [UInt8]? { if case .data(let d) = self { return d } else { return nil } }
    public var uidValue: UInt64? { if case .uid(let u) = self { return u } else { return nil } }
    public var arrayValue: [PlistValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var dictionaryValue: [PlistMember]? { if case .dictionary(let d) = self { return d } else { return nil } }

    /// Elements of an array or members of a dictionary; 0 for scalars.
    public var count: Int {
        switch self {
        case .array(let a): return a.count
        case .dictionary(let d): return d.count
        default: return 0
        }
    }

    /// The member named `key` of a dictionary (the last, if repeated), else nil.
    public subscript(key: String) -> PlistValue? {
        guard case .dictionary(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// The value at a dot-separated key path ("items.0.name": member names, and decimal indices
    /// in arrays); "" is the value itself.
    public subscript(keyPath keyPath: String) -> PlistValue? {
        self[path: keyPath.isEmpty ? [] : keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)]
    }

    /// The value at a path given component by component (for keys that contain dots).
    public subscript(path components: [String]) -> PlistValue? {
        var current = self
        for c in components {
            switch current {
            case .dictionary(let members):
                guard let m = members.last(where: { $0.key == c }) else { return nil }
                current = m.value
            case .array(let a):
                guard let i = Int(c), i >= 0, i < a.count, c.first != "+" else { return nil }
                current = a[i]
            default: return nil
            }
        }
        return current
    }

    /// What kind of value this is, in words, for messages.
    public var kindName: String {
        switch self {
        case .dictionary: return "a dictionary"
        case .array: return "an array"
        case .string: return "a string"
        case .int, .uint: return "an integer"
        case .real: return "a real"
        case .bool: return "a boolean"
        case .date: return "a date"
        case .data: return "data"
        case .uid: return "a UID"
        }
    }
}

/// One member of a property-list dictionary.
public struct PlistMember: Sendable, Equatable {
    public var key: String
    public var value: PlistValue
    public init(key: String, value: PlistValue) {
        self.key = key
        self.value = value
    }
}

/// A property-list date: seconds since 2001-01-01 00:00:00 UTC (the binary format's own
/// representation, a double, kept exactly), with conversions to the Unix epoch.
public struct PlistDate: Sendable, Equatable, Hashable, Comparable {
    /// Seconds from 2001-01-01 00:00:00 UTC to 1970-01-01 00:00:00 UTC, negated.
    public static let unixEpochOffset: Double = 978_307_200

    public var secondsSince2001: Double

    public init(secondsSince2001: Double) { self.secondsSince2001 = secondsSince2001 }
    public init(secondsSince1970: Double) { secondsSince2001 = secondsSince1970 - PlistDate.unixEpochOffset }

    public var secondsSince1970: Double { secondsSince2001 + PlistDate.unixEpochOffset }

    public static func < (a: PlistDate, b: PlistDate) -> Bool { a.secondsSince2001 < b.secondsSince2001 }
}

// MARK: - Literals

extension PlistValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: PlistValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, PlistValue)...) {
        self = .dictionary(elements.map { PlistMember(key: $0.0, value: $0.1) })
    }
}

extension PlistDate: Codable {
    /// From a plist date (through `PlistValueDecoder`), or elsewhere from seconds since 2001.
    public init(from decoder: any Decoder) throws {
        secondsSince2001 = try decoder.singleValueContainer().decode(Double.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(secondsSince2001)
    }
}
