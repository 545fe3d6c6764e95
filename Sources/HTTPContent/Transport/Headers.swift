/// One header field, as received or as to be sent.
public struct HeaderField: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// An ordered, multi-valued header list with case-insensitive lookup.
///
/// Order and repetition are kept exactly as received, since some headers (Set-Cookie, Link) mean
/// something only as a list.
public struct Headers: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [HeaderField] = []

    public init() {}
    /// Room for `capacity` fields, so a response's headers fill in without regrowing.
    init(capacity: Int) { fields.reserveCapacity(capacity) }
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { HeaderField(name: $0.0, value: $0.1) }
    }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public var count: Int { fields.count }
    public func makeIterator() -> IndexingIterator<[HeaderField]> { fields.makeIterator() }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        fields.first { asciiCaseInsensitiveEqual($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { asciiCaseInsensitiveEqual($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Appends a field; existing fields of the same name are kept.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(HeaderField(name: name, value: value))
    }

    /// Replaces every field of `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    mutating func appendToLastValue(_ more: String) {
        guard !fields.isEmpty else { return }
        fields[fields.count - 1].value += more
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { asciiCaseInsensitiveEqual($0.name, name) }
    }

    /// Checks that names are RFC 9110 tokens and that no value carries CR, LF or NUL, which would
    /// let a caller's data inject extra header lines.
    public func validate() throws(HTTPContentError) {
        for field in fields {
            try Headers.validate(name: field.name, value: field.value)
        }
    }

    public static func validate(name: String, value: String) throws(HTTPContentError) {
        if name.isEmpty || !name.utf8.allSatisfy(isTokenByte) {
            throw HTTPContentError(.invalidArgument, "invalid header name \(quoted(name))")
        }
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw HTTPContentError(.invalidArgument, "header \(name) has CR, LF or NUL in its value")
        }
    }
}

/// RFC 9110 `tchar`.
@inline(__always)
func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
         UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

@inline(__always)
func asciiLower(_ b: UInt8) -> UInt8 {
    (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b
}

func asciiCaseInsensitiveEqual(_ a: String, _ b: String) -> Bool {
    // Header lookups run for every response: compare lengths first (O(1) for native strings).
    guard a.utf8.count == b.utf8.count else { return false }
    var ia = a.utf8.makeIterator()
    var ib = b.utf8.makeIterator()
    while true {
        switch (ia.next(), ib.next()) {
        case (nil, nil): return true
        case let (x?, y?) where asciiLower(x) == asciiLower(y): continue
        default: return false
        }
    }
}

func asciiLowercased(_ s: String) -> String {
    String(decoding: s.utf8.map(asciiLower), as: UTF8.self)
}

func quoted(_ s: String) -> String { "\"\(s)\"" }
