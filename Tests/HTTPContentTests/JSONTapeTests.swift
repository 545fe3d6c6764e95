import Testing
#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import HTTPContent

/// Parsed arrays and objects read their document's tape in place; these check what that must not
/// change: values, copy-on-write, equality, documents kept while the parser goes on, and the
/// short-string and member-name fast paths at every length.
@Suite("JSON tape-backed values")
struct JSONTapeTests {
    @Test func parsedContainersAreTapeBackedAndReadLikeBuiltOnes() throws {
        let v = try JSONValue(parsing: #"{"a": [1, 2.5, "x", null, true], "b": {"c": "d"}, "a": 3}"#)
        guard case .object(let o) = v else { Issue.record("not an object"); return }
        #expect(o.tape != nil)
        #expect(o.count == 3)
        #expect(o.keys == ["a", "b", "a"])
        #expect(o["a"] == 3)  // the last member of that name
        #expect(o.lastIndex(ofKey: "a") == 2)
        #expect(o.lastIndex(ofKey: "zz") == nil)
        #expect(v[path: ["b", "c"]] == "d")
        #expect(o[0].value == [1, 2.5, "x", nil, true])
        let built: JSONValue = ["a": [1, 2.5, "x", nil, true], "b": ["c": "d"], "a": 3]
        #expect(v == built)
        #expect(built == v)
        #expect(v.description == #"{"a":[1,2.5,"x",null,true],"b":{"c":"d"},"a":3}"#)
    }

    @Test func changingAParsedValueCopiesItAndLeavesOtherCopiesAlone() throws {
        let original = try JSONValue(parsing: #"{"list": [1, 2, 3], "name": "n"}"#)
        guard case .object(var o) = original, case .array(var list)? = o["list"] else {
            Issue.record("unexpected shape"); return
        }
        list[1] = "two"
        list.append(4)
        o["list"] = .array(list)
        o["name"] = nil
        o.append(key: "extra", value: true)
        #expect(o.tape == nil)
        #expect(JSONValue.object(o) == ["list": [1, "two", 3, 4], "extra": true])
        // The parsed value still reads the tape, unchanged.
        #expect(original == ["list": [1, 2, 3], "name": "n"])
        #expect(original["list.1"] == 2)
    }

    @Test func documentsTakenEarlyStayIntactWhileParsingGoesOn() throws {
        var options = JSONOptions()
        options.allowMultipleValues = true
        let parser = JSONStreamParser(options: options)
        var kept: [JSONValue] = []
        for i in 0..<200 {
            try parser.feed(Array(#"{"i": \#(i), "s": "value \#(i)", "l": [\#(i), {"k": "\#(i)"}]}"#.utf8))
            kept += parser.takeDocuments()
            if i % 3 == 0 { _ = parser.takeDocuments() }
        }
        kept += try parser.finishDocuments()
        #expect(kept.count == 200)
        for (i, v) in kept.enumerated() {
            #expect(v == ["i": .int(Int64(i)), "s": .string("value \(i)"), "l": [.int(Int64(i)), ["k": .string("\(i)")]]])
        }
    }

    @Test func pathStreamingReusesBuffersOnlyForValuesNobodyKept() throws {
        var text = "["
        for i in 0..<300 { text += (i > 0 ? "," : "") + #"{"id": \#(i), "tags": ["t\#(i)", "u"]}"# }
        text += "]"
        var kept: [JSONValue] = []
        var seen = 0
        let p = try JSONItemParser(prefixes: ["item"]) { item in
            // Keep every third value; the others are dropped as soon as the callback returns.
            #expect(item.value == ["id": .int(Int64(seen)), "tags": [.string("t\(seen)"), "u"]])
            if seen % 3 == 0 { kept.append(item.value) }
            seen += 1
        }
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            _ = try p.feed(Array(bytes[i..<min(i + 37, bytes.count)]))
            i += 37
        }
        _ = try p.finish()
        #expect(seen == 300)
        for (k, v) in kept.enumerated() {
            #expect(v == ["id": .int(Int64(k * 3)), "tags": [.string("t\(k * 3)"), "u"]])
        }
    }

    @Test func stringsAndMemberNamesOfEveryShortLengthRoundTrip() throws {
        let alphabet = Array("aé€😀b\u{0}c".unicodeScalars)
        for length in 0...40 {
            var s = ""
            for i in 0..<length { s.unicodeScalars.append(alphabet[i % alphabet.count]) }
            // As a value, as a member name, and a second object with the same name (cache hit).
            let json = JSONValue.array([.string(s), .object(JSONObject([JSONMember(key: s, value: 1)])),
                                        .object(JSONObject([JSONMember(key: s, value: 2)]))])
            let parsed = try JSONValue(parsing: json.description)
            #expect(parsed == json, "length \(length)")
            #expect(parsed[path: ["1", s]] == 1)
            #expect(parsed[path: ["2", s]] == 2)
            #expect(parsed["0"]?.stringValue?.utf8.count == s.utf8.count)
        }
    }

    @Test func removeNullsDropsMembersOnTheTapeButKeepsArrayNulls() throws {
        var options = JSONOptions()
        options.removeNulls = true
        let v = try JSONValue(parsing: #"{"a": null, "b": [null, {"c": null, "d": 1}], "e": {"f": null}}"#, options: options)
        #expect(v == ["b": [nil, ["d": 1]], "e": [:]])
    }

    @Test func aLargeDocumentSurvivesGrowthAndShrinking() throws {
        // Several MiB of tape: buffers grow past the populate threshold and shrink at the end.
        var text = "["
        for i in 0..<60_000 { text += (i > 0 ? "," : "") + #"{"id": \#(i), "name": "item number \#(i)", "v": \#(i).5}"# }
        text += "]"
        let v = try JSONValue(parsing: text)
        #expect(v.count == 60_000)
        #expect(v["59999.name"] == "item number 59999")
        #expect(v["31337.v"] == 31337.5)
        #expect(v["0.id"] == 0)
    }
}

@Suite("JSON number scanning")
struct JSONNumberScanTests {
    /// Every number token the one-pass scanner reads must equal what the exact slow paths give
    /// (Int64's and strtod's readings), inside containers (the tape) and at the top level.
    @Test func oneOfEveryShapeAgreesWithTheExactReading() throws {
        var rng = SystemRandomNumberGenerator()
        var tokens = ["0", "-0", "1", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                      "123456789012345678", "1234567890123456789", "0.1", "0.3", "1e22", "1e23", "1E-22", "1e-23",
                      "9007199254740993", "9007199254740993.0", "4.35", "2.5e-3", "1.7976931348623157e308",
                      "5e-324", "0.000001", "123.456e+5", "-0.0", "1e00000000000000000000000000001"]
        for _ in 0..<3000 {
            let intDigits = Int.random(in: 1...19, using: &rng)
            var t = (Bool.random(using: &rng) ? "-" : "") + String(Int.random(in: 1...9, using: &rng))
            for _ in 1..<intDigits { t += String(Int.random(in: 0...9, using: &rng)) }
            if Bool.random(using: &rng) {
                t += "."
                for _ in 0..<Int.random(in: 1...12, using: &rng) { t += String(Int.random(in: 0...9, using: &rng)) }
            }
            if Int.random(in: 0..<4, using: &rng) == 0 { t += "e" + String(Int.random(in: -30...30, using: &rng)) }
            tokens.append(t)
        }
        for token in tokens {
            let expected: JSONValue
            if let i = Int64(token) {
                expected = .int(i)
            } else {
                expected = .double(Double(token) ?? .nan)
            }
            let inArray = try JSONValue(parsing: "[\(token)]")
            #expect(inArray["0"] == expected, "\(token)")
            #expect(try JSONValue(parsing: token) == expected, "\(token)")
        }
    }

    /// The Eisel-Lemire path must give strtod's double, bit for bit: 17-digit texts of random
    /// doubles (what most JSON writers print), random 19-digit mantissas at every exponent the
    /// table covers and a little beyond, and texts a digit away from the halfway point between
    /// two doubles (where it must decline rather than guess).
    @Test func eiselLemireAgreesWithStrtodBitForBit() throws {
        var rng = SystemRandomNumberGenerator()
        var tokens: [String] = ["9007199254740993e-3", "2.2250738585072014e-308", "1.7976931348623157e308",
                                "4.9406564584124654e-324", "0.30000000000000004", "1e-100", "1e100",
                                "9999999999999999999e-120", "9999999999999999999e80", "1e-101", "1e101"]
        for _ in 0..<20_000 {
            let d = Double.random(in: 1..<10, using: &rng) * pow(10, Double(Int.random(in: -90...90, using: &rng)))
            tokens.append(d.description)
            // 17 significant digits, as %.17g prints: almost never takes Clinger's path.
            var mantissa = UInt64.random(in: 10_000_000_000_000_000..<100_000_000_000_000_000, using: &rng)
            tokens.append("\(mantissa)e\(Int.random(in: -120...120, using: &rng))")
            mantissa = UInt64.random(in: 1..<10_000_000_000_000_000_000, using: &rng)
            tokens.append("\(Bool.random(using: &rng) ? "-" : "")\(mantissa).5e\(Int.random(in: -110...110, using: &rng))")
        }
        // Near halfway: d's exact value plus half an ulp, cut to 19 digits, and one digit either side.
        for _ in 0..<5_000 {
            let d = Double.random(in: 1..<10, using: &rng) * pow(10, Double(Int.random(in: -60...60, using: &rng)))
            let mid = d + d.ulp / 2  // rounds to even: the text below is what matters
            var text = String(format: "%.18e", d.nextUp.isFinite ? mid : d)
            tokens.append(text)
            text = String(format: "%.18e", (d + d.nextUp) / 2)
            tokens.append(text)
        }
        var fast = 0
        for token in tokens {
            let raw = Array(token.utf8)
            let got = try raw.withUnsafeBytes { try JSONNumberText.scalar($0) }
            let want = raw.withUnsafeBytes { JSONNumberText.strtod($0) }
            if got.isInteger {
                #expect(Double(Int64(bitPattern: got.bits)) == want, "\(token)")
            } else {
                #expect(got.bits == want.bitPattern, "\(token): \(Double(bitPattern: got.bits)) vs strtod \(want)")
            }
            if raw.withUnsafeBytes({ JSONNumberText.fastScalar($0) }) != nil { fast += 1 }
        }
        // Most of these take a fast path (else this test would not test it).
        #expect(fast > tokens.count / 2, "\(fast) of \(tokens.count)")
        // Exact halfway cases decline; a mantissa of 0 is zero at any exponent.
        #expect(JSONNumberText.eiselLemire(9_007_199_254_740_993, 0, negative: false) == nil)
        #expect(JSONNumberText.eiselLemire(0, 300, negative: true) == (-0.0 as Double).bitPattern)
        #expect(JSONNumberText.eiselLemire(17, 101, negative: false) == nil)
    }
}

@Suite("JSON tape children widths")
struct JSONTapeChildrenTests {
    @Test func containersFarFromTheirChildrenOrWithLateNamesUseWideEntries() throws {
        // The object's second member lies 70,000 words after it; the late object's names are new
        // words beyond index 65,535; the small ones stay 16-bit. Each must read back the same.
        var text = #"{"big": ["#
        for i in 0..<70_000 { text += (i > 0 ? "," : "") + "\(i)" }
        text += #"], "after": {"x": 1}, "late": [{"k": "v"}, {"brandNewName": [true, null]}]}"#
        let v = try JSONValue(parsing: text)
        #expect(v.count == 3)
        #expect(v["big"]?.count == 70_000)
        #expect(v["big.69999"] == 69_999)
        #expect(v["after.x"] == 1)
        #expect(v["late.1.brandNewName"] == [true, nil])
        #expect(v["late.0.k"] == "v")
        guard case .object(let o) = v else { Issue.record("not an object"); return }
        #expect(o.keys == ["big", "after", "late"])
        #expect(o.lastIndex(ofKey: "late") == 2)
    }

    @Test func anArrayLongerThanTheWordCountFieldKeepsItsCount() throws {
        // 2^24 + 3 elements: more than a container word's 24-bit count holds.
        let n = (1 << 24) + 3
        var bytes = [UInt8](repeating: UInt8(ascii: ","), count: 2 * n + 1)
        bytes[0] = UInt8(ascii: "[")
        for i in 0..<n { bytes[2 * i + 1] = UInt8(ascii: "7") }
        bytes[2 * n] = UInt8(ascii: "]")
        let v = try JSONValue(parsing: bytes)
        #expect(v.count == n)
        #expect(v["\(n - 1)"] == 7)
        #expect(v["\(n)"] == nil)
    }
}

@Suite("Strict UTF-8 check")
struct JSONStrictUTF8Tests {
    /// `JSONStrings.isValidUTF8` (strictUTF8's check, which skips ASCII eight bytes at a time)
    /// agrees with Swift's own validation on random mixes of ASCII, lead and continuation bytes,
    /// overlongs, surrogates and bytes past U+10FFFF, at every offset and length.
    @Test func agreesWithSwiftsValidation() {
        var rng = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [[0x61], [0x20], Array("path/12".utf8), [0xC3, 0xA9], [0xE2, 0x9C, 0x93],
                                 [0xF0, 0x9F, 0x98, 0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80],
                                 [0xF4, 0x90, 0x80, 0x80], [0x80], [0xBF], [0xC3], [0xE2, 0x9C], [0xFF], [0xF5]]
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                bytes += pieces[Int.random(in: 0..<pieces.count, using: &rng)]
            }
            let want = String(validating: bytes, as: UTF8.self) != nil
            let got = bytes.withUnsafeBytes { JSONStrings.isValidUTF8($0) }
            #expect(got == want, "\(bytes)")
        }
    }
}
