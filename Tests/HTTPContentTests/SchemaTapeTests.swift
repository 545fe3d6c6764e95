import Foundation
import Testing
@testable import HTTPContent

/// The tape program (`SchemaTapeProgram`) against the full validator: it may only ever say
/// "valid" or "invalid" where the full validator says the same, and the errors a caller sees
/// must be the full validator's whether or not the program ran.
@Suite("JSON Schema tape program")
struct SchemaTapeTests {
    /// The program's verdict on member `key` of a parsed object, scalars included (the public
    /// path only runs the program on containers).
    static func verdict(_ schema: JSONSchema, member key: String, of parent: JSONValue) -> SchemaTapeVerdict? {
        guard let program = schema.tapeProgram, case .object(let o) = parent, let tape = o.tape,
              let i = o.lastIndex(ofKey: key) else { return nil }
        return program.verdict(tape, tape.memberValue(o.node, i), SchemaRegexScratch())
    }

    /// Every verdict, error list and first error agrees with the full validator's.
    static func agree(_ schema: JSONSchema, _ value: JSONValue, _ what: String, _ failures: inout [String]) {
        let full = schema.fullViolations(of: value, allErrors: true)
        if let v = schema.tapeVerdict(value), v != .undecided, (v == .valid) != full.isEmpty {
            failures.append("\(what): tape says \(v), full validator \(full.isEmpty ? "valid" : "invalid")")
        }
        if schema.violations(of: value, allErrors: true) != full { failures.append("\(what): all errors differ") }
        if schema.violations(of: value, allErrors: false) != Array(full.prefix(1)) {
            failures.append("\(what): first error differs")
        }
        if schema.isValid(value) != full.isEmpty { failures.append("\(what): isValid differs") }
    }

    @Test(.enabled(if: SchemaSuite.root != nil, "JSON-Schema-Test-Suite is absent"))
    func suiteVerdictsMatchTheFullValidator() throws {
        var failures: [String] = []
        var groupCount = 0, compiled = 0, decided = 0, total = 0
        for folder in ["tests/draft2020-12", "tests/draft2020-12/optional", "tests/draft2020-12/optional/format"] {
            guard let root = SchemaSuite.root else { continue }
            let dir = root.appendingPathComponent(folder)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
            for name in names {
                guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(name).path),
                      case .array(let groups)? = try? JSONValue(parsing: [UInt8](data)) else { continue }
                for g in groups {
                    guard case .array(let tests)? = g["tests"], let raw = g["schema"] else { continue }
                    groupCount += 1
                    // Formats asserted in the format folder, as its tests expect.
                    guard let schema = try? JSONSchema(raw, remotes: SchemaSuite.remotes,
                                                       assertFormat: folder.hasSuffix("format")) else { continue }
                    guard schema.tapeProgram != nil else { continue }
                    compiled += 1
                    for t in tests {
                        total += 1
                        let what = "\(folder)/\(name) / \(g["description"]?.stringValue ?? "") / \(t["description"]?.stringValue ?? "")"
                        let data = t.child("data") ?? .null
                        let full = schema.fullViolations(of: data, allErrors: true)
                        if let v = Self.verdict(schema, member: "data", of: t), v != .undecided {
                            decided += 1
                            if (v == .valid) != full.isEmpty {
                                failures.append("\(what): tape says \(v), full validator \(full.isEmpty ? "valid" : "invalid")")
                            }
                        }
                        Self.agree(schema, data, what, &failures)
                    }
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) disagreements:\n\(failures.joined(separator: "\n"))")
        // Most of the suite runs on the program (the rest: unevaluated*, $dynamicRef).
        print("tape program: \(compiled) of \(groupCount) suite schemas compiled, \(decided) of their \(total) tests decided")
        #expect(compiled * 10 > groupCount * 7, "\(compiled) of \(groupCount) schemas compiled")
        #expect(decided * 10 > total * 9, "\(decided) of \(total) decided")
    }

    @Test func refusedKeywordsLeaveTheFullValidator() throws {
        for text in [#"{"unevaluatedProperties":false}"#, #"{"items":{"unevaluatedItems":false}}"#,
                     ##"{"$dynamicAnchor":"a","properties":{"x":{"$dynamicRef":"#a"}}}"##] {
            #expect(try JSONSchema(parsing: Array(text.utf8)).tapeProgram == nil, "\(text)")
        }
        #expect(try JSONSchema(parsing: Array(##"{"properties":{"a":{"$ref":"#"}}}"##.utf8)).tapeProgram != nil)
    }

    // MARK: - Differential: mutated documents

    static let schemas = [
        // The benchmark's realistic schema (bench/schema.sh).
        #"""
        {"type":"array","items":{"type":"object","required":["id","name","text","score","geo","flags"],
          "additionalProperties":false,"properties":{"id":{"type":"integer","minimum":0},
          "name":{"type":"string","minLength":1,"maxLength":64},"text":{"type":"string","pattern":"^caf"},
          "score":{"type":"number","minimum":0},
          "geo":{"type":"object","required":["lat","lon"],"properties":{"lat":{"type":"number","minimum":-90,"maximum":90},
            "lon":{"type":"number","minimum":-180,"maximum":180},
            "tags":{"type":"array","prefixItems":[{"type":"string"},{"type":"string"}],
              "items":{"type":"object","required":["k"],"properties":{"k":{"type":"integer"}}}}}},
          "flags":{"type":"array","maxItems":3,"items":{"type":["boolean","null"]}}}}}
        """#,
        SchemaPropertyTests.schemaText,
        #"""
        {"$defs":{"node":{"type":"object","properties":{"v":{"enum":["a","b",1,null]},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},
         "type":"object","properties":{"root":{"$ref":"#/$defs/node"},
           "any":{"anyOf":[{"type":"string","maxLength":3},{"type":"integer","multipleOf":3}]},
           "one":{"oneOf":[{"type":"number","exclusiveMinimum":0},{"type":"integer","exclusiveMaximum":10}]},
           "no":{"not":{"const":{"a":[1,2]}}},
           "cond":{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"array","contains":{"type":"null"},"maxContains":2}},
           "uniq":{"type":"array","uniqueItems":true},"lit":{"pattern":"bc"},"pre":{"pattern":"^ab"},
           "names":{"type":"object","propertyNames":{"pattern":"^[a-k]+$"},"maxProperties":3,"minProperties":1},
           "pat":{"type":"object","patternProperties":{"^x":{"type":"integer"},"y$":{"type":"string"}},"additionalProperties":{"type":"boolean"}},
           "dep":{"dependentRequired":{"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}},
         "allOf":[{"minProperties":0},{"not":{"required":["forbidden"]}}]}
        """#,
    ]

    static let pool: [JSONValue] = [
        .null, true, false, 0, -1, 3, 9, 12, 1.5, -0.5, 100.25, .int(1 << 62), "", "a", "ab", "abc", "caf\u{e9}", "xy",
        .string(String(repeating: "n", count: 70)), "\u{212A}ey", [], [1, 2], [nil, nil, nil], ["a", "a"], [:],
        ["a": [1, 2]], ["k": 1], ["x1": 2, "ay": "s"], ["a": 1], ["a": 1, "b": 2], ["c": 1], ["c": 1, "d": 2],
    ]
    static let keys = ["id", "name", "text", "score", "geo", "flags", "lat", "tags", "k", "v", "kids", "root", "any",
                       "one", "no", "cond", "uniq", "names", "pat", "dep", "lit", "pre", "x9", "zy", "extra", "\u{212A}ey", "login"]

    /// `v` with one random change somewhere inside.
    static func mutate(_ v: JSONValue, _ r: inout SplitMix) -> JSONValue {
        switch v {
        case .array(var a) where !a.isEmpty && r.int(3) != 0:
            let i = r.int(a.count)
            a[i] = mutate(a[i], &r)
            return .array(a)
        case .object(var o) where !o.isEmpty && r.int(3) != 0:
            let i = r.int(o.count)
            o[i].value = mutate(o[i].value, &r)
            return .object(o)
        case .array(var a):
            switch r.int(3) {
            case 0 where !a.isEmpty: a.remove(at: r.int(a.count))
            case 1 where !a.isEmpty: a.append(a[r.int(a.count)])
            default: a.append(pool[r.int(pool.count)])
            }
            return .array(a)
        case .object(var o):
            switch r.int(3) {
            case 0 where !o.isEmpty: o.remove(at: r.int(o.count))
            default: o.append(key: keys[r.int(keys.count)], value: pool[r.int(pool.count)])
            }
            return .object(o)
        default:
            return pool[r.int(pool.count)]
        }
    }

    static func seed(_ index: Int, _ r: inout SplitMix) throws -> JSONValue {
        switch index {
        case 0:
            let items = (0..<4).map { i in
                #"{"id":\#(i),"name":"item \"\#(i)\"\n","text":"caf\u00e9 \\ path/\#(i) \u2713","score":\#(Double(i) * 0.37),"#
                    + #""geo":{"lat":45.12,"lon":-73.76,"tags":["a","b",{"k":\#(i)}]},"flags":[true,false,null]}"#
            }
            return try JSONValue(parsing: Array(("[" + items.joined(separator: ",") + "]").utf8))
        case 1: return SchemaPropertyTests.generate(&r)
        default:
            return try JSONValue(parsing: Array(#"""
            {"root":{"v":"a","kids":[{"v":1},{"v":null,"kids":[]}]},"any":"ab","one":0.5,"no":{"a":[1]},
             "cond":"ok","uniq":[1,"1"],"lit":"abcd","pre":"abc","names":{"abc":1},"pat":{"x1":1,"by":"s","z":true},"dep":{"a":1,"b":2,"c":3,"d":4}}
            """#.utf8))
        }
    }

    @Test func mutatedDocumentsGetTheFullValidatorsVerdictAndErrors() throws {
        var failures: [String] = []
        var r = SplitMix(state: 18)
        var decided = 0, invalid = 0, total = 0
        for (index, text) in Self.schemas.enumerated() {
            let schema = try JSONSchema(parsing: Array(text.utf8))
            #expect(schema.tapeProgram != nil)
            for _ in 0..<400 {
                var doc = try Self.seed(index, &r)
                for _ in 0..<r.int(4) { doc = Self.mutate(doc, &r) }
                // Parsed from text, as a response body is: on a tape.
                let parsed = try JSONValue(parsing: Array(doc.description.utf8))
                total += 1
                if let v = schema.tapeVerdict(parsed), v != .undecided { decided += 1 }
                if !schema.fullViolations(of: parsed, allErrors: false).isEmpty { invalid += 1 }
                Self.agree(schema, parsed, "schema \(index): \(parsed)", &failures)
            }
        }
        #expect(failures.isEmpty, "\(failures.count) disagreements:\n\(failures.prefix(20).joined(separator: "\n"))")
        #expect(decided == total, "\(decided) of \(total) decided")
        // The mutations reach both verdicts.
        #expect(invalid > total / 4 && invalid < total * 3 / 4, "\(invalid) of \(total) invalid")
    }
}
