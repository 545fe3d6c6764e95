// What the decoders of parsed values (`JSONValueDecoder`, `PlistValueDecoder`) share: the coding
// key they build paths with and the words of their errors. Kept here, beside the other shared
// handler pieces, so neither format imports the other.

/// A coding key for a member name or an array index.
struct ValueCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

enum ValueDecoding {
    /// A `DecodingError` in a sentence naming the path (`a.0.b`) and what was expected;
    /// `missing` says what stood where a value was needed ("null", "nothing").
    static func describe(_ error: DecodingError, missing: String) -> String {
        func path(_ p: [any CodingKey]) -> String {
            p.isEmpty ? "the top-level value" : p.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let t, let c): return "expected \(t) at \(path(c.codingPath)): \(c.debugDescription)"
        case .valueNotFound(let t, let c): return "expected \(t) at \(path(c.codingPath)), found \(missing)"
        case .keyNotFound(let k, let c): return "no member \"\(k.stringValue)\" at \(path(c.codingPath))"
        case .dataCorrupted(let c): return "\(c.debugDescription) at \(path(c.codingPath))"
        @unknown default: return "\(error)"
        }
    }
}
