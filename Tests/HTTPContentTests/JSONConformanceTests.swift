import Foundation
import Testing
@testable import HTTPContent

/// The shared conformance data, found relative to this file: Tests/HTTPContentTests/X.swift →
/// ../../../shared/conformance (the folder beside the package root).
enum Conformance {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/conformance")

    static func folder(_ relative: String) -> URL? {
        let url = root.appendingPathComponent(relative)
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir) && isDir.boolValue ? url : nil
    }

    static func files(_ relative: String, suffix: String = ".json") -> [(name: String, bytes: [UInt8])] {
        guard let dir = folder(relative),
              let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return names.filter { $0.hasSuffix(suffix) }.sorted().compactMap { name in
            guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(name).path) else { return nil }
            return (name, [UInt8](data))
        }
    }
}

/// Parses `bytes` fed in chunks of `chunk` bytes (0: all at once).
func parseChunked(_ bytes: [UInt8], chunk: Int, options: JSONOptions = JSONOptions()) -> Result<JSONValue, HTTPContentError> {
    let parser = JSONStreamParser(options: options)
    do {
        if chunk == 0 {
            try parser.feed(bytes)
        } else {
            var i = 0
            while i < bytes.count {
                try parser.feed(Array(bytes[i..<min(i + chunk, bytes.count)]))
                i += chunk
            }
        }
        return .success(try parser.finish())
    } catch {
        return .failure(error)
    }
}

let chunkSizes = [1, 7, 0]

@Suite("JSONTestSuite test_parsing", .enabled(if: Conformance.folder("JSONTestSuite/test_parsing") != nil,
                                              "../shared/conformance/JSONTestSuite is absent"))
struct JSONTestSuiteConformance {
    let files = Conformance.files("JSONTestSuite/test_parsing")

    @Test func everyYFileIsAccepted() {
        let y = files.filter { $0.name.hasPrefix("y_") }
        #expect(y.count == 95)
        for file in y {
            for chunk in chunkSizes {
                if case .failure(let error) = parseChunked(file.bytes, chunk: chunk) {
                    Issue.record("\(file.name) (chunk \(chunk)) rejected: \(error.message)")
                }
            }
        }
    }

    @Test func everyNFileIsRejectedWithAnOffset() {
        let n = files.filter { $0.name.hasPrefix("n_") }
        #expect(n.count == 188)
        #expect(n.contains { $0.name == "n_structure_whitespace_formfeed.json" })
        for file in n {
            for chunk in chunkSizes {
                switch parseChunked(file.bytes, chunk: chunk) {
                case .success(let v):
                    Issue.record("\(file.name) (chunk \(chunk)) accepted as \(v)")
                case .failure(let error):
                    #expect(error.code == .decode, "\(file.name): \(error)")
                    #expect(error.offset != nil && error.offset! <= file.bytes.count, "\(file.name): offset \(String(describing: error.offset))")
                }
            }
        }
    }

    @Test func formFeedIsRejectedAtItsOffset() {
        let bytes: [UInt8] = Array("[1,\u{0C}2]".utf8)
        for chunk in chunkSizes {
            guard case .failure(let e) = parseChunked(bytes, chunk: chunk) else {
                Issue.record("form feed accepted")
                continue
            }
            #expect(e.offset == 3)  // the index of the form feed
            #expect(e.message.contains("form feed"))
        }
    }

    /// What the implementation-defined files do, the same at every chunk size; docs/json.md
    /// records it (accepted: the 500-deep array; rejected: the rest, see the docs).
    @Test func iFilesBehaveTheSameAtEveryChunkSize() {
        var accepted: [String] = []
        for file in files where file.name.hasPrefix("i_") {
            let outcomes = chunkSizes.map { (try? parseChunked(file.bytes, chunk: $0).get()) != nil }
            #expect(Set(outcomes).count == 1, "\(file.name) depends on chunking")
            if outcomes[0] { accepted.append(file.name) }
        }
        #expect(accepted.sorted() == JSONTestSuiteConformance.acceptedIFiles, "accepted: \(accepted)")
        // Without strict UTF-8, every invalid-UTF-8 file is accepted (U+FFFD), not UTF-16 or a BOM.
        for file in files where file.name.hasPrefix("i_string") || file.name.hasPrefix("i_object") {
            let lax = (try? parseChunked(file.bytes, chunk: 0, options: JSONOptions(strictUTF8: false)).get()) != nil
            let notUTF8 = file.name.contains("16") || file.name.contains("BOM")
            #expect(lax == !notUTF8, "\(file.name) with strictUTF8 off")
        }
        // With keepNumberText the out-of-range numbers are kept.
        for file in files where file.name.hasPrefix("i_number") {
            if case .failure(let e) = parseChunked(file.bytes, chunk: 0, options: JSONOptions(keepNumberText: true)) {
                Issue.record("\(file.name) with keepNumberText: \(e.message)")
            }
        }
    }

    static let acceptedIFiles: [String] = [
        "i_number_double_huge_neg_exp.json",          // 123.456e-789 → 0.0
        "i_number_real_underflow.json",               // 123e-10000000 → 0.0
        "i_number_too_big_neg_int.json",              // beyond Int64 → double
        "i_number_too_big_pos_int.json",
        "i_number_very_big_negative_int.json",
        "i_string_1st_surrogate_but_2nd_missing.json",      // lone high surrogate → "?" (yajl)
        "i_string_1st_valid_surrogate_2nd_invalid.json",    // yajl decodes "\uD888\u1234" as one code point
        "i_string_incomplete_surrogate_and_escape_valid.json",
        "i_string_incomplete_surrogates_escape_valid.json",
        "i_string_invalid_lonely_surrogate.json",
        "i_string_invalid_surrogate.json",
        "i_structure_500_nested_arrays.json",
    ]
}

// MARK: - yajl's own cases, reproduced from the event stream

@Suite("yajl parsing cases", .enabled(if: Conformance.folder("yajl-parsing-cases/cases") != nil,
                                      "../shared/conformance/yajl-parsing-cases is absent"))
struct YajlGoldCases {
    /// The event lines yajl's test program prints, from our event stream. Numbers come as text
    /// (keepNumberText) and are classified as yajl_test does: integers with %lld (an integer
    /// beyond Int64 is yajl's "integer overflow"), others with %g.
    static func events(_ bytes: [UInt8], chunk: Int, options: JSONOptions) -> [String] {
        var lines: [String] = []
        var stop = false
        let parser = JSONEventParser(options: options) { event, _ in
            switch event {
            case .startMap: lines.append("map open '{'")
            case .endMap: lines.append("map close '}'")
            case .startArray: lines.append("array open '['")
            case .endArray: lines.append("array close ']'")
            case .mapKey(let k): lines.append("key: '\(k)'")
            case .null: lines.append("null")
            case .bool(let b): lines.append("bool: \(b)")
            case .string(let s): lines.append("string: '\(s)'")
            case .int(let i): lines.append("integer: \(i)")
            case .double(let d): lines.append("double: \(String(format: "%g", d))")
            case .number(let text):
                if text.contains(where: { ".eE".contains($0) }) {
                    let d = strtod(text, nil)
                    lines.append(d.isInfinite ? "double: \(d < 0 ? "-" : "")Infinity" : "double: \(String(format: "%g", d))")
                } else if let i = Int64(text), i != Int64.min {
                    lines.append("integer: \(i)")
                } else {
                    lines.append("parse error: integer overflow")
                    stop = true
                    throw StopTransfer()
                }
            }
        }
        do {
            var i = 0
            let step = chunk == 0 ? max(bytes.count, 1) : chunk
            while i < bytes.count, !stop {
                try parser.feed(Array(bytes[i..<min(i + step, bytes.count)]))
                i += step
            }
            if !stop { try parser.finish() }
        } catch {
            // "invalid JSON at byte N: <yajl's reason>"
            let reason = error.message.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? error.message
            lines.append(reason)
        }
        return lines
    }

    static func options(for name: String) -> JSONOptions {
        var o = JSONOptions(maxDepth: 100_000, keepNumberText: true)
        if name.hasPrefix("ac_") { o.allowComments = true }
        if name.hasPrefix("ag_") { o.allowTrailingGarbage = true }
        if name.hasPrefix("am_") { o.allowMultipleValues = true }
        if name.hasPrefix("ap_") { o.allowPartialValues = true }
        return o
    }

    @Test func eventStreamReproducesEveryGoldFile() throws {
        let cases = Conformance.files("yajl-parsing-cases/cases")
        #expect(cases.count == 58)
        guard let dir = Conformance.folder("yajl-parsing-cases/cases") else { return }
        for file in cases {
            let goldData = try #require(FileManager.default.contents(atPath: dir.appendingPathComponent(file.name + ".gold").path))
            let gold = String(decoding: goldData, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .map(String.init).filter { !$0.isEmpty && !$0.hasPrefix("memory leaks") }
            for chunk in chunkSizes {
                // Strings may hold newlines: compare line by line as yajl_test's output reads.
                let got = YajlGoldCases.events(file.bytes, chunk: chunk, options: YajlGoldCases.options(for: file.name))
                    .joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false)
                    .map(String.init).filter { !$0.isEmpty }
                if got != gold {
                    let i = Array(zip(got, gold)).firstIndex { $0 != $1 } ?? min(got.count, gold.count)
                    Issue.record("\(file.name) chunk \(chunk): line \(i): got \(i < got.count ? got[i].debugDescription : "nothing"), gold \(i < gold.count ? gold[i].debugDescription : "nothing")")
                }
            }
        }
    }
}
