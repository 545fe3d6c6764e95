/// Encodes ordered key/value pairs as `application/x-www-form-urlencoded`, for request bodies
/// and query strings: `name=Lucas%20Drance&age=1.5`.
///
/// Keys and values are both escaped, byte by byte, with `PercentEncoding`: every byte outside
/// `A-Z a-z 0-9 - . _ ~` becomes `%XX` (uppercase), so the output is plain ASCII whatever the
/// input. Pairs keep their order and repeated keys, unless `sortedKeys` is set. Brackets in nested
/// keys are escaped like any other byte (`a%5B%5D=1` for `a[]=1`), which every server decodes.
public struct FormEncoder: Sendable, Equatable {
    /// How a space is written.
    public enum SpaceEncoding: Sendable, Equatable {
        /// `%20`: understood everywhere, including by servers that mishandle `+`.
        case percentEscaped
        /// `+`, as HTML forms send it.
        case plusReplaced
    }

    /// How an array value is written.
    public enum ArrayEncoding: Sendable, Equatable {
        /// `a[]=1&a[]=2` (PHP, Rails).
        case brackets
        /// `a=1&a=2`.
        case `repeat`
        /// `a[0]=1&a[1]=2`.
        case indexed
    }

    /// How a boolean value is written.
    public enum BoolEncoding: Sendable, Equatable {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal
    }

    /// What becomes of a `.null` value.
    public enum NullEncoding: Sendable, Equatable {
        /// The pair is left out.
        case dropped
        /// The pair is sent with an empty value: `key=`.
        case empty
    }

    public var spaceEncoding: SpaceEncoding
    public var arrayEncoding: ArrayEncoding
    public var boolEncoding: BoolEncoding
    public var nullEncoding: NullEncoding
    /// Sort pairs by key (bytewise, stable: repeated keys keep their order), at the top level and
    /// inside dictionaries; arrays always keep their order.
    public var sortedKeys: Bool

    /// - Parameters:
    ///   - spaceEncoding: default `.percentEscaped` (`%20`).
    ///   - arrayEncoding: default `.brackets` (`a[]=1`).
    ///   - boolEncoding: default `.numeric` (`1`/`0`).
    ///   - nullEncoding: default `.dropped`.
    ///   - sortedKeys: default `false` (the caller's order).
    public init(spaceEncoding: SpaceEncoding = .percentEscaped, arrayEncoding: ArrayEncoding = .brackets,
                boolEncoding: BoolEncoding = .numeric, nullEncoding: NullEncoding = .dropped,
                sortedKeys: Bool = false) {
        self.spaceEncoding = spaceEncoding
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.nullEncoding = nullEncoding
        self.sortedKeys = sortedKeys
    }

    // MARK: - Encoding

    /// The encoded pairs, joined with `&`, as bytes (ASCII).
    public func encode(_ pairs: [FormPair]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(pairs.count * 16)
        for pair in ordered(pairs) {
            append(key: pair.key, pair.value, to: &out)
        }
        return out
    }

    public func encode(_ pairs: KeyValuePairs<String, FormValue>) -> [UInt8] {
        encode([FormPair](pairs))
    }

    /// The encoded pairs as a `String` (ASCII).
    public func encodeString(_ pairs: [FormPair]) -> String {
        String(decoding: encode(pairs), as: UTF8.self)
    }

    public func encodeString(_ pairs: KeyValuePairs<String, FormValue>) -> String {
        encodeString([FormPair](pairs))
    }

    /// The bytes of one scalar value, or nil for a value that is left out.
    func scalarBytes(_ value: FormValue) -> [UInt8]? {
        switch value {
        case .string(let s): return Array(s.utf8)
        case .bytes(let b): return b
        case .int(let i): return Array(String(i).utf8)
        case .double(let d): return Array(d.description.utf8)
        case .bool(let b):
            switch boolEncoding {
            case .numeric: return [b ? UInt8(ascii: "1") : UInt8(ascii: "0")]
            case .literal: return Array((b ? "true" : "false").utf8)
            }
        case .null: return nullEncoding == .empty ? [] : nil
        case .array, .dictionary: return nil
        }
    }

    private func ordered(_ pairs: [FormPair]) -> [FormPair] {
        guard sortedKeys else { return pairs }
        // Swift's sort is not guaranteed stable: sort indices, tie-broken by position.
        return pairs.indices.sorted { a, b in
            let (ka, kb) = (pairs[a].key, pairs[b].key)
            return ka == kb ? a < b : ka.lexicographicallyPrecedes(kb)
        }.map { pairs[$0] }
    }

    private func append(key: [UInt8], _ value: FormValue, to out: inout [UInt8]) {
        switch value {
        case .array(let items):
            for (i, item) in items.enumerated() {
                switch arrayEncoding {
                case .brackets: append(key: key + Array("[]".utf8), item, to: &out)
                case .repeat: append(key: key, item, to: &out)
                case .indexed: append(key: key + Array("[\(i)]".utf8), item, to: &out)
                }
            }
        case .dictionary(let pairs):
            for pair in ordered(pairs) {
                append(key: key + [UInt8(ascii: "[")] + pair.key + [UInt8(ascii: "]")], pair.value, to: &out)
            }
        default:
            guard let bytes = scalarBytes(value) else { return }
            let plus = spaceEncoding == .plusReplaced
            if !out.isEmpty { out.append(UInt8(ascii: "&")) }
            PercentEncoding.escape(key, into: &out, plusForSpace: plus)
            out.append(UInt8(ascii: "="))
            PercentEncoding.escape(bytes, into: &out, plusForSpace: plus)
        }
    }
}
