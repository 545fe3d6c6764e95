import Foundation
import Testing
@testable import HTTPContent

private let server = TestServer.shared

/// The product bytes of `value` (nil when it makes none).
private func product(of value: JSONValue) -> [UInt8]? {
    var out: [UInt8]?
    JSONTapeProduct.write(value) { out = Array($0) }
    return out
}

/// Documents that reach every kind of tape word: inline, short, long and wide strings and number
/// texts, wide integers and doubles, shared member names, 16- and 32-bit children.
private let documents: [String] = [
    #"{"a":1,"b":[true,false,null],"c":{"d":"short","e":"a string longer than sixteen bytes"}}"#,
    #"[1,-1,0,1152921504606846975,-1152921504606846976,9223372036854775807,-9223372036854775808]"#,
    #"[0.5,0.1,1e300,-2.5e-308,3.141592653589793,123456789.123456789,-0.0]"#,
    #"{"ünï":"çødé ✓ 𝄞","":"","\u0000":"nul\u0000inside","emoji":"😀😀😀😀😀😀😀😀"}"#,
    #"[[[[[[[[[[[[[[[[[[[[{"deep":[[[[[[[[[[]]]]]]]]]]}]]]]]]]]]]]]]]]]]]]]"#,
    #"[{},[],{"x":{}},[[]],"",{"k":[{"k":[{"k":1}]}]}]"#,
    "[" + (0..<300).map { #"{"id":\#($0),"name":"item \#($0)","tags":["a","b"],"score":\#(Double($0) * 0.5)}"# }
        .joined(separator: ",") + "]",
    // Elements more than 65,535 words after their array: 32-bit children.
    "[" + "[" + (0..<70_000).map(String.init).joined(separator: ",") + "]" + #","far","the far end of a long array"]"#,
    // More than 65,536 names before a member: its name is a 32-bit child.
    "{" + (0..<70_000).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","last":"value"}"#,
]

/// Visits every value under `value` (each string's text read); returns how many there were.
private func walk(_ value: JSONValue) -> Int {
    switch value {
    case .array(let a): return a.reduce(1) { $0 + walk($1) }
    case .object(let o): return o.reduce(1) { $0 + $1.key.utf8.count / Int.max + walk($1.value) }
    case .string(let s): return 1 + s.utf8.count / Int.max
    default: return 1
    }
}

@Suite struct JSONTapeProductTests {
    @Test(arguments: documents.indices)
    func aProductReadsBackAsTheSameValue(_ i: Int) throws {
        for options in [JSONOptions(), JSONOptions(keepNumberText: true)] {
            let value = try JSONValue(parsing: documents[i], options: options)
            let bytes = try #require(product(of: value))
            let back = try #require(bytes.withUnsafeBytes { JSONTapeProduct.read($0) })
            #expect(back == value)
            #expect(try back.serialized() == value.serialized())
        }
    }

    @Test func scalarsMakeNoProduct() throws {
        for text in ["1", "\"text\"", "null", "true", "2.5"] {
            #expect(product(of: try JSONValue(parsing: text)) == nil)
        }
        // A value built in Swift lives on no tape.
        #expect(product(of: .array([.int(1)])) == nil)
    }

    @Test func aDamagedProductIsRefusedOrReadsWithinItsBuffers() throws {
        let value = try JSONValue(parsing: documents[6])
        let good = try #require(product(of: value))
        #expect(good.withUnsafeBytes { JSONTapeProduct.read(UnsafeRawBufferPointer(rebasing: $0.dropLast())) } == nil)
        #expect(good.withUnsafeBytes { JSONTapeProduct.read(UnsafeRawBufferPointer(rebasing: $0.prefix(39))) } == nil)
        // Every byte flipped in turn, and random words: each is refused, or reads as some value
        // that can be walked to the end (the checksum in the store catches damage; this is what
        // stands between a checksummed-but-foreign product and a crash).
        var rng = SplitMix(state: 0x5EED)  // SchemaTests' generator: the same damage on every run
        var refused = 0
        for trial in 0..<3000 {
            var bad = good
            if trial < 1500 {
                let at = trial * 7919 % bad.count
                bad[at] ^= UInt8(truncatingIfNeeded: 1 << (trial % 8))
            } else {
                for _ in 0..<4 { bad[rng.int(bad.count)] = UInt8(truncatingIfNeeded: rng.next()) }
            }
            if let read = bad.withUnsafeBytes({ JSONTapeProduct.read($0) }) {
                // Walked to the end; writing it may refuse a number word whose text is not one.
                #expect(walk(read) > 0)
                _ = try? read.serialized()
            } else {
                refused += 1
            }
        }
        #expect(refused > 100)
    }

    @Test(arguments: ["memory", "sqlite"])
    func theTreeHandlersHitIsItsStoredTape(_ kind: String) throws {
        var config = ClientConfiguration()
        let cache: HTTPCache = kind == "memory" ? .memory(maxBytes: 1 << 22)
            : try .file(NSTemporaryDirectory() + "hc-tape-\(UUID().uuidString).sqlite", maxBytes: 1 << 22)
        config.cache = cache
        let client = try Client(configuration: config)
        var c = URLComponents(string: server.url("/cached/tape-\(UUID().uuidString)"))!
        c.queryItems = [URLQueryItem(name: "h", value: "Cache-Control: max-age=600"),
                        URLQueryItem(name: "type", value: "application/json"),
                        URLQueryItem(name: "body", value: documents[6])]
        let url = c.string!
        let miss = try client.get(url, handler: JSON())
        #expect(miss.head.cacheStatus == .miss)
        // The tape went into the store with the body, under the handler's fingerprint.
        let stored = try #require(try cache.store.variants(of: url).first)
        let fingerprint = try #require(JSON().cacheProductFingerprint)
        var kept: JSONValue?
        #expect(cache.store.readProduct(stored, fingerprint: fingerprint) { kept = JSONTapeProduct.read($0); return true })
        #expect(kept == miss.content && kept != nil)
        let hit = try client.get(url, handler: JSON())
        #expect(hit.head.cacheStatus == .hit && hit.content == miss.content)
        // A decoding handler reads the same tape back and decodes from it.
        struct Item: Decodable, Equatable { let id: Int; let name: String; let tags: [String]; let score: Double }
        let decoded = try client.get(url, handler: JSON.decoding([Item].self))
        #expect(decoded.head.cacheStatus == .hit && decoded.content.count == 300 && decoded.content[7].name == "item 7")
        #expect(JSON.decoding([Item].self).cacheProductFingerprint == fingerprint)
        // Other settings, other tape; a validator makes none.
        #expect(JSON(options: JSONOptions(keepNumberText: true)).cacheProductFingerprint != fingerprint)
        #expect(JSON(validator: try JSONSchema(JSONValue(parsing: #"{"type":"array"}"#))).cacheProductFingerprint == nil)
    }
}
