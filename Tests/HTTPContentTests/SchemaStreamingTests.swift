import Foundation
import Testing
@testable import HTTPContent

// MARK: - While streaming: the JSON handler checks items as they complete, at any depth

@Suite("JSON Schema while streaming")
struct SchemaStreamingTests {
    static let schema = try! JSONSchema(parsing: Array(#"""
    {"type":"array","maxItems":50,"prefixItems":[{"const":"head"}],
     "items":{"type":"object","required":["id"],"properties":{"id":{"type":"integer","minimum":0}}}}
    """#.utf8))
    static let head = ResponseHead(status: 200, headers: Headers([("Content-Type", "application/json")]))

    /// Feeds `text` in chunks of `chunk` bytes; returns the index of the chunk that threw (nil:
    /// none; chunks.count: finish) and the error.
    static func run(_ text: String, schema: JSONSchema = schema, chunk: Int = 64,
                    allErrors: Bool = false) throws -> (Int?, HTTPContentError?) {
        let handler = JSON(validator: JSONSchemaCheck(schema, allErrors: allErrors))
        _ = try handler.accept(head)
        let bytes = Array(text.utf8)
        let chunks = stride(from: 0, to: bytes.count, by: chunk).map { Array(bytes[$0..<min($0 + chunk, bytes.count)]) }
        for (i, c) in chunks.enumerated() {
            do { try c.withUnsafeBytes { try handler.consume($0) } } catch let e as HTTPContentError { return (i, e) }
        }
        do { _ = try handler.finish() } catch let e as HTTPContentError { return (chunks.count, e) }
        return (nil, nil)
    }

    static func doc(_ n: Int, bad: Int? = nil, badText: String = #"{"id":-1}"#) -> String {
        "[\"head\"" + (1..<n).map { i in i == bad ? "," + badText : #",{"id":\#(i),"pad":"................................"}"# }.joined() + "]"
    }

    @Test func anInvalidElementFailsAtItsChunkWithTheWholeDocumentsErrors() throws {
        let text = Self.doc(40, bad: 5, badText: #"{"id":-1,"x":"s"}"#)
        for allErrors in [false, true] {
            let (at, error) = try Self.run(text, allErrors: allErrors)
            let expected = Self.schema.violations(of: try JSONValue(parsing: Array(text.utf8)), allErrors: allErrors)
            #expect(error?.violations == expected)
            #expect(error?.code == .decode)
            #expect(error?.response?.status == 200 && error?.body.isEmpty == false)
            // A schema error, worded as whole-document validation words it (not "invalid JSON").
            #expect(error?.message.hasPrefix("schema validation failed") == true, "\(error?.message ?? "")")
            // Element 5 ends near byte 300: far before the body's end (40 elements, ~2 KB).
            // Asked for every error, the document is checked whole: it fails at the end.
            if !allErrors { #expect(at != nil && at! < 8, "failed at chunk \(String(describing: at))") }
        }
        // prefixItems too.
        let (at, error) = try Self.run(#"["tail",{"id":1}"# + String(repeating: #",{"id":1}"#, count: 30) + "]")
        #expect(at == 0 && error?.violations.first?.schemaPath == "/prefixItems/0/const")
    }

    @Test func rootKeywordsAndValidDocumentsAreCheckedAtTheEnd() throws {
        #expect(try Self.run(Self.doc(40)).1 == nil)
        let tooMany = Self.doc(60)
        let (at, error) = try Self.run(tooMany)
        #expect(at == (Array(tooMany.utf8).count + 63) / 64, "the whole body was read")
        #expect(error?.violations == Self.schema.violations(of: try JSONValue(parsing: Array(tooMany.utf8))))
        #expect(error?.violations.first?.keyword == "maxItems")
        // Not an array: validated once complete.
        let (_, notArray) = try Self.run(#"{"id":1}"#)
        #expect(notArray?.violations.first?.keyword == "type")
    }

    // The shape of most APIs: the items are one level down, under a known schema.
    static let nested = try! JSONSchema(parsing: Array(#"""
    {"type":"object","required":["count"],"properties":{"count":{"type":"integer"},
     "data":{"allOf":[{"$ref":"#/$defs/page"}]}},
     "$defs":{"page":{"properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}}}},
              "item":{"type":"object","required":["id"],"properties":{"id":{"type":"integer","minimum":0},
                      "tags":{"type":"array","items":{"type":"string"}}}}}}
    """#.utf8))

    static func runNested(_ text: String, allErrors: Bool = false) throws -> (Int?, HTTPContentError?) {
        try run(text, schema: nested, allErrors: allErrors)
    }

    static func page(_ n: Int, bad: Int? = nil, badText: String = #"{"id":-1}"#) -> String {
        let items = (0..<n).map { i in i == bad ? badText : #"{"id":\#(i),"tags":["a","b"],"pad":"........................"}"# }
        return #"{"count":\#(n),"data":{"items":["# + items.joined(separator: ",") + "]}}"
    }

    @Test func anInvalidNestedItemFailsAtItsChunkWithTheWholeDocumentsErrors() throws {
        for (badText, keyword) in [(#"{"id":-1}"#, "minimum"), (#"{"id":1,"tags":["a",2]}"#, "type"), ("7", "type")] {
            let text = Self.page(60, bad: 4, badText: badText)
            for allErrors in [false, true] {
                let (at, error) = try Self.runNested(text, allErrors: allErrors)
                let expected = Self.nested.violations(of: try JSONValue(parsing: Array(text.utf8)), allErrors: allErrors)
                #expect(error?.violations == expected, "\(badText)")
                #expect(error?.violations.first?.keyword == keyword)
                #expect(error?.message.hasPrefix("schema validation failed") == true)
                // Item 4 ends near byte 300 of ~4 KB (every error asked for: checked whole, at the end).
                if !allErrors { #expect(at != nil && at! < 7, "failed at chunk \(String(describing: at))") }
            }
        }
        // Valid pages, and the object's own keywords at the end.
        #expect(try Self.runNested(Self.page(60)).1 == nil)
        let noCount = #"{"data":{"items":[{"id":1}]}}"#
        #expect(try Self.runNested(noCount).1?.violations.first?.keyword == "required")
        // A member of a followed object is checked when that object closes: "data" here, long
        // before the document ends.
        let badData = #"{"data":{"items":"none"},"pad":""# + String(repeating: ".", count: 600) + #"","count":1}"#
        let (at, error) = try Self.runNested(badData)
        #expect(at == 0 && error?.violations.first?.instancePath == "/data/items", "\(String(describing: error))")
        #expect(error?.violations == Self.nested.violations(of: try JSONValue(parsing: Array(badData.utf8))))
    }

    /// Inside a small array element nothing is followed (its own check covers it); an element
    /// that grows past `smallElement` nodes is followed from there on, so a page of items held by
    /// one element still fails at the bad item's chunk.
    @Test func itemsInsideOneLargeElementStillFailAtTheirChunk() throws {
        let schema = try JSONSchema(parsing: Array(#"""
        {"type":"array","items":{"type":"object","properties":{"page":{"$ref":"#/$defs/page"}}},
         "$defs":{"page":{"type":"object","properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}}}},
                  "item":{"type":"object","required":["id"],"properties":{"id":{"type":"integer","minimum":0},
                          "tags":{"type":"array","items":{"type":"string"}}}}}}
        """#.utf8))
        // About 10 tape nodes an item: item 2,000 lies well past the first 4,096 nodes.
        func wrapped(_ n: Int, bad: Int?, badText: String) -> String {
            let items = (0..<n).map { i in i == bad ? badText : #"{"id":\#(i),"tags":["a","b"],"n":\#(i)}"# }
            return #"[{"page":{"items":["# + items.joined(separator: ",") + "]}}]"
        }
        for badText in [#"{"id":-1}"#, #"{"id":1,"tags":["a",2]}"#] {
            let text = wrapped(4000, bad: 2000, badText: badText)
            let chunks = (text.utf8.count + 63) / 64
            let (at, error) = try Self.run(text, schema: schema)
            #expect(error?.violations == schema.violations(of: try JSONValue(parsing: Array(text.utf8))))
            #expect(at != nil && at! < chunks / 2 + 10, "failed at chunk \(String(describing: at)) of \(chunks)")
            // A small element is checked whole when it closes: the same errors.
            let small = wrapped(20, bad: 5, badText: badText)
            let (_, smallError) = try Self.run(small, schema: schema)
            #expect(smallError?.violations == schema.violations(of: try JSONValue(parsing: Array(small.utf8))))
            #expect(smallError?.violations.isEmpty == false)
        }
        #expect(try Self.run(wrapped(4000, bad: nil, badText: ""), schema: schema).1 == nil)
    }

    @Test func anInvalidItemFailsTheTransferBeforeTheRestIsSent() throws {
        guard let server = JSONTestServer.shared else { return }
        let client = try Client()
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func q(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        let head = #"{"count":3,"data":{"items":[{"id":1},{"id":-5},"#
        let url = server.url("/json-hold?hold=8&head=\(q(head))&tail=\(q(#"{"id":3}]}}"#))")
        let started = Date()
        do {
            _ = try client.get(url, handler: JSON(validator: Self.nested))
            Issue.record("no error")
        } catch {
            #expect(error.code == .decode)
            #expect(error.violations.first?.instancePath == "/data/items/1/id")
            #expect(error.violations.first?.schemaPath == "/properties/data/allOf/0/$ref/properties/items/items/$ref/properties/id/minimum")
        }
        // The server holds the rest for 8 s: the error came before it.
        #expect(Date().timeIntervalSince(started) < 4, "took \(Date().timeIntervalSince(started)) s")
    }
}
