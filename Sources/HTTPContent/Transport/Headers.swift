#if canImport(Glibc)
import Glibc
#endif

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
///
/// A response's headers are kept as the bytes received (`ReceivedHeaders`) and looked up on
/// those bytes: a `String` is made only for a value someone asks for, not for every field of
/// every response. Changing such a list turns it into fields first.
public struct Headers: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    private var owned: [HeaderField] = []
    private var received: ReceivedHeaders?

    public init() {}
    init(received: ReceivedHeaders) {
        self.received = received.count > 0 ? received : nil
    }
    public init(_ pairs: [(String, String)]) {
        owned = pairs.map { HeaderField(name: $0.0, value: $0.1) }
    }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// The fields, in order.
    public var fields: [HeaderField] { received?.fields() ?? owned }

    public var count: Int { received?.count ?? owned.count }
    public func makeIterator() -> IndexingIterator<[HeaderField]> { fields.makeIterator() }

    public static func == (a: Headers, b: Headers) -> Bool {
        if a.received == nil, b.received == nil { return a.owned == b.owned }
        return a.fields == b.fields
    }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        if let received { return received.first(name) }
        return owned.first { asciiCaseInsensitiveEqual($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { asciiCaseInsensitiveEqual($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool {
        if let received { return received.index(of: name) != nil }
        return owned.contains { asciiCaseInsensitiveEqual($0.name, name) }
    }

    /// Calls `body` with the bytes of the first value of `name` (no String made), or returns
    /// nil when there is no such field.
    func withFirstValue<R>(_ name: String, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        if let received { return received.withFirstValue(name, body) }
        return withOwnedFirstValue(name, body)
    }

    /// `withFirstValue("content-length")`.
    func withContentLength<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        if let received { return received.withContentLength(body) }
        return withOwnedFirstValue("content-length", body)
    }

    private func withOwnedFirstValue<R>(_ name: String, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard var value = self[name] else { return nil }
        return value.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    /// Received fields become owned ones before a change.
    private mutating func own() {
        if let received {
            owned = received.fields()
            self.received = nil
        }
    }

    /// Appends a field; existing fields of the same name are kept.
    public mutating func add(_ name: String, _ value: String) {
        own()
        owned.append(HeaderField(name: name, value: value))
    }

    /// Replaces every field of `name` with one field.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        own()
        owned.removeAll { asciiCaseInsensitiveEqual($0.name, name) }
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

/// A response's header fields as received: the bytes of every name and (trimmed) value, one
/// after the other, and where each one is. Built by the transfer, never changed once a
/// `Headers` holds it.
final class ReceivedHeaders: @unchecked Sendable {
    struct Span {
        var nameStart: Int32
        var nameCount: Int32
        var valueStart: Int32
        var valueCount: Int32
    }

    // Plain malloc'd storage: this is filled for every header line of every response.
    @exclusivity(unchecked) private var bytes: UnsafeMutablePointer<UInt8>?
    @exclusivity(unchecked) private var byteCount = 0
    @exclusivity(unchecked) private var byteCapacity = 0
    @exclusivity(unchecked) private var spans: UnsafeMutablePointer<Span>?
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var spanCapacity = 0
    /// The first Content-Length field, noted as it arrives (every response head asks for it).
    @exclusivity(unchecked) private(set) var contentLengthIndex: Int?

    init() {}

    deinit {
        free(bytes)
        free(spans)
    }

    /// Room for `more` bytes; returns where they go.
    @inline(__always)
    private func room(_ more: Int) -> UnsafeMutablePointer<UInt8> {
        if byteCount + more > byteCapacity {
            let capacity = max(512, byteCapacity * 2, byteCount + more)
            guard let grown = realloc(bytes, capacity) else { fatalError("httpcontent: out of memory") }
            bytes = grown.assumingMemoryBound(to: UInt8.self)
            byteCapacity = capacity
        }
        return bytes! + byteCount
    }

    /// Empties the store, keeping its memory.
    func removeAll() {
        byteCount = 0
        count = 0
        contentLengthIndex = nil
    }

    /// Adds a field from a header line: the name is `line[0..<nameEnd]`, the (trimmed) value
    /// `line[valueStart..<valueEnd]`. The line is copied once, up to the value's end.
    func add(line: UnsafePointer<UInt8>, nameEnd: Int, valueStart: Int, valueEnd: Int) {
        if count == spanCapacity {
            let capacity = max(16, spanCapacity * 2)
            guard let grown = realloc(spans, capacity * MemoryLayout<Span>.stride) else {
                fatalError("httpcontent: out of memory")
            }
            spans = grown.assumingMemoryBound(to: Span.self)
            spanCapacity = capacity
        }
        let start = byteCount
        memcpy(room(valueEnd), line, valueEnd)
        byteCount += valueEnd
        // libcurl caps a response head far below 2 GiB: the offsets fit in 32 bits.
        spans![count] = Span(nameStart: Int32(truncatingIfNeeded: start), nameCount: Int32(truncatingIfNeeded: nameEnd),
                             valueStart: Int32(truncatingIfNeeded: start + valueStart),
                             valueCount: Int32(truncatingIfNeeded: valueEnd - valueStart))
        if nameEnd == 14, contentLengthIndex == nil, ReceivedHeaders.isContentLength(line) {
            contentLengthIndex = count
        }
        count += 1
    }

    /// Adds a field from its name and value.
    func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        var line = [UInt8](name)
        line.append(contentsOf: value)
        line.withUnsafeBufferPointer {
            add(line: $0.baseAddress!, nameEnd: name.count, valueStart: name.count, valueEnd: $0.count)
        }
    }

    /// Obsolete line folding: `more` continues the last field's value, after one space. The
    /// last value ends where the bytes end, so it stays in one piece.
    func appendToLastValue(_ more: UnsafeRawBufferPointer) {
        guard count > 0 else { return }
        let to = room(1 + more.count)
        to[0] = 0x20
        if let base = more.baseAddress, more.count > 0 { memcpy(to + 1, base, more.count) }
        byteCount += 1 + more.count
        spans![count - 1].valueCount += Int32(1 + more.count)
    }

    /// Whether the 14 bytes at `name` are "content-length" in any case: two 8-byte loads
    /// ("content-" and "t-length"), each compared with 0x20 set on its letters only. A byte
    /// matches a letter so only when it is that letter in either case, and '-' must be exact.
    private static func isContentLength(_ name: UnsafePointer<UInt8>) -> Bool {
        let raw = UnsafeRawPointer(name)
        let head = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
        let tail = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 6, as: UInt64.self))
        // Little-endian words of "content-" and "t-length"; the masks skip each '-'.
        return head | 0x0020_2020_2020_2020 == 0x2D74_6E65_746E_6F63
            && tail | 0x2020_2020_2020_0020 == 0x6874_676E_656C_2D74
    }

    /// The value of the first Content-Length field.
    func withContentLength<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard let i = contentLengthIndex else { return nil }
        return body(value(spans![i]))
    }

    /// A copy, for a builder that goes on adding after a `Headers` took this one.
    func copy() -> ReceivedHeaders {
        let other = ReceivedHeaders()
        for i in 0..<count {
            let span = spans![i]
            other.add(name: name(span), value: value(span))
        }
        return other
    }

    private func name(_ span: Span) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes! + Int(span.nameStart), count: Int(span.nameCount))
    }

    private func value(_ span: Span) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: bytes! + Int(span.valueStart), count: Int(span.valueCount))
    }

    func index(of name: String) -> Int? {
        var name = name
        return name.withUTF8 { key -> Int? in
            for i in 0..<count {
                let span = spans![i]
                guard Int(span.nameCount) == key.count else { continue }
                let field = bytes! + Int(span.nameStart)
                var j = 0
                while j < key.count, asciiLower(field[j]) == asciiLower(key[j]) { j += 1 }
                if j == key.count { return i }
            }
            return nil
        }
    }

    func withFirstValue<R>(_ name: String, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard let i = index(of: name) else { return nil }
        return body(value(spans![i]))
    }

    func first(_ name: String) -> String? {
        withFirstValue(name) { String(decoding: $0, as: UTF8.self) }
    }

    func fields() -> [HeaderField] {
        (0..<count).map { i in
            let span = spans![i]
            return HeaderField(name: String(decoding: name(span), as: UTF8.self),
                               value: String(decoding: value(span), as: UTF8.self))
        }
    }
}
