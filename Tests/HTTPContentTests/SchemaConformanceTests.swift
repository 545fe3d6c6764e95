import Foundation
import Testing
@testable import HTTPContent

/// The JSON-Schema-Test-Suite: ../shared/conformance relative to the checkout first (as CI lays
/// it out), then $HC_CONFORMANCE, then /work/shared/conformance (worktrees under /work/wt).
enum SchemaSuite {
    static let root: URL? = {
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var candidates = [checkout.deletingLastPathComponent().appendingPathComponent("shared/conformance")]
        if let env = ProcessInfo.processInfo.environment["HC_CONFORMANCE"] { candidates.append(URL(fileURLWithPath: env)) }
        candidates.append(URL(fileURLWithPath: "/work/shared/conformance"))
        for c in candidates {
            let suite = c.appendingPathComponent("JSON-Schema-Test-Suite/tests/draft2020-12")
            if FileManager.default.fileExists(atPath: suite.path) { return c.appendingPathComponent("JSON-Schema-Test-Suite") }
        }
        return nil
    }()

    /// Every remote document, by the http://localhost:1234/ URI the suite's schemas use.
    static let remotes: [String: JSONValue] = {
        guard let root else { return [:] }
        let dir = root.appendingPathComponent("remotes")
        var out: [String: JSONValue] = [:]
        let e = FileManager.default.enumerator(atPath: dir.path)
        while let rel = e?.nextObject() as? String {
            guard rel.hasSuffix(".json"), let data = FileManager.default.contents(atPath: dir.appendingPathComponent(rel).path),
                  let v = try? JSONValue(parsing: [UInt8](data)) else { continue }
            out["http://localhost:1234/" + rel] = v
        }
        return out
    }()

    struct Case { let file: String; let group: String; let test: String; let schema: JSONValue; let data: JSONValue; let valid: Bool }

    static func cases(_ folder: String = "tests/draft2020-12") -> [Case] {
        guard let root else { return [] }
        let dir = root.appendingPathComponent(folder)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        var out: [Case] = []
        for name in names {
            guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(name).path),
                  case .array(let groups)? = try? JSONValue(parsing: [UInt8](data)) else { continue }
            for g in groups {
                guard case .array(let tests)? = g["tests"], let schema = g["schema"] else { continue }
                for t in tests {
                    out.append(Case(file: name, group: g["description"]?.stringValue ?? "", test: t["description"]?.stringValue ?? "",
                                    schema: schema, data: t.child("data") ?? .null, valid: t["valid"]?.boolValue ?? false))
                }
            }
        }
        return out
    }
}

@Suite("JSON-Schema-Test-Suite draft 2020-12", .enabled(if: SchemaSuite.root != nil,
       "JSON-Schema-Test-Suite is absent (../shared/conformance, $HC_CONFORMANCE, /work/shared/conformance)"))
struct SchemaConformanceTests {
    @Test func everyRequiredTestGivesTheExpectedVerdict() throws {
        let cases = SchemaSuite.cases()
        #expect(cases.count > 1200)
        var failures: [String] = []
        var cache: [String: JSONSchema] = [:]
        for c in cases {
            let key = c.schema.description
            let schema: JSONSchema
            do {
                if let s = cache[key] { schema = s } else {
                    schema = try JSONSchema(c.schema, remotes: SchemaSuite.remotes)
                    cache[key] = schema
                }
            } catch {
                failures.append("\(c.file) / \(c.group) / \(c.test): schema refused: \(error)")
                continue
            }
            let valid = schema.isValid(c.data)
            let reported = schema.violations(of: c.data, allErrors: true)
            if valid != c.valid { failures.append("\(c.file) / \(c.group) / \(c.test): expected \(c.valid)") }
            if reported.isEmpty != valid { failures.append("\(c.file) / \(c.group) / \(c.test): isValid and violations disagree") }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(cases.count) failed:\n\(failures.joined(separator: "\n"))")
    }
}
