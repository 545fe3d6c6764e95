import Testing
@testable import HTTPContent

/// Feeds `text` in `chunk`-byte pieces to a path-streaming parser and collects the items.
private func items(_ text: String, _ prefixes: [JSONPrefix], options: JSONOptions = JSONOptions(), chunk: Int = 3,
                   limit: Int? = nil, stopWhenPrefixCloses: Bool = false, requirePrefix: Bool = false)
    throws(HTTPContentError) -> (values: [String], summary: JSONItemsSummary) {
    var got: [String] = []
    let p = try JSONItemParser(prefixes: prefixes, options: options, limit: limit,
                               stopWhenPrefixCloses: stopWhenPrefixCloses, requirePrefix: requirePrefix) { item in
        got.append("\(item.prefix)=\(item.value)")
    }
    let bytes = Array(text.utf8)
    var i = 0
    while i < bytes.count {
        if try !p.feed(Array(bytes[i..<min(i + chunk, bytes.count)])) { break }
        i += chunk
    }
    return (got, try p.finish())
}

@Suite("JSON path streaming and events")
struct JSONStreamingTests {
    let doc = #"{"meta": {"n": 2}, "results": [{"id": 1, "x": [1, 2]}, {"id": 2}], "tail": true}"#

    @Test func itemsUnderAPrefixArriveOneByOne() throws {
        for chunk in [1, 7, 1000] {
            let r = try items(doc, ["results.item"], chunk: chunk)
            #expect(r.values == [#"results.item={"id":1,"x":[1,2]}"#, #"results.item={"id":2}"#])
            #expect(r.summary == JSONItemsSummary(count: 2, stoppedEarly: false))
        }
    }

    @Test func severalPrefixesScalarsAndNestedPaths() throws {
        let r = try items(doc, ["meta.n", "results.item.x.item", "tail"])
        #expect(r.values == ["meta.n=2", "results.item.x.item=1", "results.item.x.item=2", "tail=true"])
    }

    @Test func rootPrefixYieldsTheDocumentOrEachNDJSONDocument() throws {
        #expect(try items(doc, [""]).values.count == 1)
        let nd = "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n"
        let r = try items(nd, [""], options: JSONOptions(allowMultipleValues: true))
        #expect(r.values == [#"={"i":0}"#, #"={"i":1}"#, #"={"i":2}"#])
        let ids = try items(nd, ["i"], options: JSONOptions(allowMultipleValues: true))
        #expect(ids.values == ["i=0", "i=1", "i=2"])
    }

    @Test func limitStopsEarly() throws {
        let r = try items(#"[1, 2, 3, 4, 5, [6"#, ["item"], limit: 2)
        #expect(r.values == ["item=1", "item=2"])
        #expect(r.summary == JSONItemsSummary(count: 2, stoppedEarly: true))
    }

    @Test func stopWhenPrefixCloses() throws {
        // The rest of the document (even broken) is never read.
        let r = try items(#"{"results": [1, 2], "after": tru"#, ["results.item"], chunk: 1, stopWhenPrefixCloses: true)
        #expect(r.values == ["results.item=1", "results.item=2"])
        #expect(r.summary.stoppedEarly)
        let both = try items(#"{"a": [1], "b": {"c": 3}, "z": x"#, ["a.item", "b.c"], chunk: 1, stopWhenPrefixCloses: true)
        #expect(both.values == ["a.item=1", "b.c=3"])
        #expect(both.summary.stoppedEarly)
    }

    @Test func missingPrefixIsAnErrorWhenRequired() throws {
        #expect(try items(#"{"results": []}"#, ["results.item"], requirePrefix: true).values.isEmpty)
        do {
            _ = try items(#"{"error": "nope"}"#, ["results.item"], requirePrefix: true)
            Issue.record("no error")
        } catch {
            #expect(error.code == .decode && error.message.contains("results.item"))
        }
        #expect(try items(#"{"error": "nope"}"#, ["results.item"]).values.isEmpty)
    }

    @Test func missingDeepPrefixIsReportedAtTheEnd() throws {
        do {
            _ = try items(#"{"x": 1}"#, ["a.b.item"], requirePrefix: true)
            Issue.record("no error")
        } catch {
            #expect(error.code == .decode && error.message.contains("a.b.item"))
        }
    }

    @Test func prefixComponentsReachAMemberNamedItem() throws {
        let p = JSONPrefix(components: [.key("item"), .item])
        #expect(p.description == "item.item")
        #expect(JSONPrefix("item.item").components == [.item, .item])
        #expect(try items(#"{"item": [1, 2]}"#, [p]).values == ["item.item=1", "item.item=2"])
        #expect(try items(#"[[1], [2, 3]]"#, ["item.item"]).values == ["item.item=1", "item.item=2", "item.item=3"])
    }

    @Test func overlappingPrefixesAreRefused() {
        #expect(throws: HTTPContentError.self) { try items("[]", ["a", "a.b"]) }
        #expect(throws: HTTPContentError.self) { try items("[]", ["x", "x"]) }
        #expect(throws: HTTPContentError.self) { try items("[]", []) }
    }

    @Test func callbackCanStopOrFail() throws {
        var seen = 0
        let p = try JSONItemParser(prefixes: ["item"]) { _ in
            seen += 1
            if seen == 2 { throw StopTransfer() }
        }
        #expect(try p.feed(Array("[1,2,3]".utf8)) == false)
        #expect(try p.finish() == JSONItemsSummary(count: 2, stoppedEarly: true))
        struct Mine: Error {}
        let q = try JSONItemParser(prefixes: ["item"]) { _ in throw Mine() }
        do {
            try q.feed(Array("[1]".utf8))
            Issue.record("no error")
        } catch {
            #expect(error.code == .callback && error.underlying is Mine)
        }
    }

    @Test func parseErrorsInsideItemsCarryOffsets() throws {
        do {
            _ = try items(#"[{"a": 1}, {"a": tru}]"#, ["item"], chunk: 1)
            Issue.record("no error")
        } catch {
            #expect(error.code == .decode && error.offset != nil)
        }
    }

    @Test func batchesAreJSONArraysOfItems() throws {
        var batches: [(Int, String, Int)] = []
        let capture = BatchCapture(options: JSONOptions(removeNulls: true), batchBytes: 20) { i, json, n in
            batches.append((i, String(decoding: json, as: UTF8.self), n))
        }
        let p = try JSONItemParser(prefixes: ["a.item", "b"], options: JSONOptions(removeNulls: true), limit: nil,
                                   stopWhenPrefixCloses: false, requirePrefix: false, capture: capture)
        try p.feed(Array(#"{"a": [{"k": "v\n", "n": null}, 123456789012345678901234567890, [true]], "b": {"z": 1e400}}"#.utf8))
        _ = try p.finish()
        try capture.flush()
        #expect(batches.map(\.0) == [0, 0, 1])
        #expect(batches.map(\.1) == [#"[{"k":"v\n"},123456789012345678901234567890]"#, "[[true]]", #"[{"z":1e400}]"#])
        #expect(batches.map(\.2) == [2, 1, 1])
    }

    @Test func eventStreamCarriesPaths() throws {
        var log: [String] = []
        let p = JSONEventParser { event, path in log.append("\(path.prefix)|\(path)|\(event)") }
        try p.feed(Array(#"{"a": [10, {"b": null}], "c": "s"}"#.utf8))
        try p.finish()
        #expect(log == [
            "||startMap", "||mapKey(\"a\")", "a|a|startArray", "a.item|a.0|int(10)", "a.item|a.1|startMap",
            "a.item|a.1|mapKey(\"b\")", "a.item.b|a.1.b|null", "a.item|a.1|endMap", "a|a|endArray",
            "||mapKey(\"c\")", "c|c|string(\"s\")", "||endMap",
        ])
    }
}
