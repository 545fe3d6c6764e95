import Foundation
import Testing
import XCTest
@testable import HTTPContent

private var server: JSONTestServer? { JSONTestServer.shared }

@Suite("JSON handlers end to end", .enabled(if: JSONTestServer.shared != nil, "python3 test server could not start"))
struct JSONHandlerTests {
    let client: Client
    let s: JSONTestServer

    init() throws {
        client = try Client()
        s = try #require(server)
    }

    @Test func treeHandlerParsesWhileDownloading() throws {
        let r = try client.get(s.jsonURL(#"{"user": {"followers": [{"name": "ann"}]}}"#), handler: JSON())
        #expect(r.content?["user.followers.0.name"] == "ann")
        #expect(r.status == 200)
    }

    @Test func bigArrayStreamsInChunks() throws {
        let r = try client.get(s.url("/big-json-array?n=5000"), handler: JSON())
        #expect(r.content?.count == 5000)
        #expect(r.content?["4999.name"] == "item 4999")
        #expect(r.content?["3.value"] == 4.5)
    }

    @Test func decodeErrorsCarryOffsetAndBody() throws {
        do {
            _ = try client.get(s.jsonURL(#"{"a": [1, 2}"#), handler: JSON())
            Issue.record("no error")
        } catch {
            #expect(error.code == .decode)
            #expect(error.offset == 11)
            #expect(error.body == Array(#"{"a": [1, 2}"#.utf8))
            #expect(error.response?.status == 200)
        }
    }

    @Test func emptyBodies() throws {
        #expect(try client.send(Request("HEAD", s.jsonURL("[1]")), handler: JSON()).content == nil)
        var accept204 = JSON.defaultAcceptance()
        accept204.contentTypes = []
        #expect(try client.get(s.url("/status/204"), handler: JSON(acceptance: accept204)).content == nil)
        do {
            _ = try client.get(s.jsonURL(""), handler: JSON())
            Issue.record("empty 200 accepted")
        } catch {
            #expect(error.code == .decode && error.message.contains("empty"))
        }
        #expect(try client.get(s.jsonURL(""), handler: JSON(allowEmpty: true)).content == nil)
    }

    @Test func contentTypesAccepted() throws {
        for t in ["text/json", "text/javascript", "application/problem+json", "application/json; charset=utf-8"] {
            #expect(try client.get(s.jsonURL("[1]", ctype: t), handler: JSON()).content == [1], "\(t)")
        }
        do {
            _ = try client.get(s.jsonURL("[1]", ctype: "text/html"), handler: JSON())
            Issue.record("text/html accepted")
        } catch {
            #expect(error.code == .unacceptableContentType)
        }
    }

    @Test func rejectedJSONErrorBodyGivesTheServerMessage() throws {
        do {
            _ = try client.get(s.url("/status/401?json=1"), handler: JSON())
            Issue.record("401 accepted")
        } catch {
            #expect(error.code == .unacceptableStatus)
            #expect(error.serverMessage == "You are not authorized to access this resource.")
            #expect(error.message == "HTTP 401 Unauthorized: You are not authorized to access this resource.")
        }
    }

    @Test func maxSizeFailsEarly() throws {
        do {
            _ = try client.get(s.url("/big-json-array?n=100000"), handler: JSON(options: JSONOptions(maxSize: 100_000)))
            Issue.record("no error")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }

    @Test func itemsStreamAndStopEarlyWithSuccess() throws {
        var ids: [Int64] = []
        let handler = try JSONItems(prefix: "item", limit: 10) { item in
            if let id = item.value["id"]?.int64Value { ids.append(id) }
        }
        let r = try client.get(s.url("/big-json-array?n=200000"), handler: handler)
        #expect(ids == Array(0..<10))
        #expect(r.content == JSONItemsSummary(count: 10, stoppedEarly: true))
        #expect(r.metrics.decodedBytes < 2_000_000)
        // The client still works afterwards.
        #expect(try client.get(s.jsonURL("[2]"), handler: JSON()).content == [2])
    }

    @Test func stoppingInsideTheFirstChunkIsStillASuccess() throws {
        var got: [JSONValue] = []
        let items = try JSONItems(prefix: "item", limit: 1) { got.append($0.value) }
        let r = try client.get(s.jsonURL("[1,2,3]"), handler: items)
        #expect(got == [1] && r.content == JSONItemsSummary(count: 1, stoppedEarly: true))
        var batches = 0
        let b = try JSONItemBatches(prefixes: ["item"], limit: 2) { _, json, n in
            #expect(String(decoding: json, as: UTF8.self) == "[1,2]" && n == 2)
            batches += 1
        }
        #expect(try client.get(s.jsonURL("[1,2,3]"), handler: b).content == JSONItemsSummary(count: 2, stoppedEarly: true))
        #expect(batches == 1)
        var events = 0
        let e = JSONEvents { _, _ in
            events += 1
            if events == 2 { throw StopTransfer() }
        }
        _ = try client.get(s.jsonURL("[1,2,3]"), handler: e)
        #expect(events == 2)
    }

    @Test func batchesDeliverWhatPrecedesAParseError() throws {
        var texts: [String] = []
        let b = try JSONItemBatches(prefixes: ["item"]) { _, json, _ in texts.append(String(decoding: json, as: UTF8.self)) }
        do {
            _ = try client.get(s.jsonURL(#"[{"a":1},{"a":2},{"a":tru},{"a":4}]"#), handler: b)
            Issue.record("no error")
        } catch {
            #expect(error.code == .decode)
        }
        #expect(texts == [#"[{"a":1},{"a":2}]"#])
        texts = []
        let truncated = try JSONItemBatches(prefixes: ["item"]) { _, json, _ in texts.append(String(decoding: json, as: UTF8.self)) }
        #expect(throws: HTTPContentError.self) { try client.get(s.jsonURL(#"[1,2,[3"#), handler: truncated) }
        #expect(texts == ["[1,2]"])
    }

    @Test func ndjsonDocumentsWithRootPrefix() throws {
        var n = 0
        var acceptance = JSON.defaultAcceptance()
        acceptance.contentTypes.append("application/x-ndjson")
        let handler = try JSONItems(prefixes: [""], options: JSONOptions(allowMultipleValues: true), acceptance: acceptance) { item in
            #expect(item.value["i"] == .int(Int64(n)))
            n += 1
        }
        let r = try client.get(s.url("/ndjson?n=1000"), handler: handler)
        #expect(n == 1000 && r.content.count == 1000 && !r.content.stoppedEarly)
    }

    @Test func callbackErrorsFailTheTransfer() throws {
        struct Mine: Error {}
        let handler = try JSONItems(prefix: "item") { _ in throw Mine() }
        do {
            _ = try client.get(s.url("/big-json-array?n=10"), handler: handler)
            Issue.record("no error")
        } catch {
            #expect(error.code == .callback && error.underlying is Mine)
        }
    }

    @Test func batchesCoverEveryItem() throws {
        var total = 0
        var batches = 0
        let handler = try JSONItemBatches(prefixes: ["item"], batchBytes: 8192) { _, json, count in
            let parsed = try JSONValue(parsing: Array(json))
            #expect(parsed.count == count)
            total += count
            batches += 1
        }
        let r = try client.get(s.url("/big-json-array?n=20000"), handler: handler)
        #expect(total == 20000 && r.content.count == 20000)
        #expect(batches > 10)
    }

    @Test func eventsHandlerSeesEveryEvent() throws {
        var keys = 0
        let r = try client.get(s.jsonURL(#"{"a": 1, "b": [true]}"#), handler: JSONEvents { event, _ in
            if case .mapKey = event { keys += 1 }
        })
        _ = r
        #expect(keys == 2)
    }

    @Test func jsonRequestBodyIsSent() throws {
        let body = try RequestBody.json(["hello": "wörld"])
        let r = try client.send(Request("POST", s.url("/echo"), body: body), handler: JSON())
        #expect(r.content?["method"] == "POST")
        let hex = try #require(r.content?["body_hex"]?.stringValue)
        #expect(hex == Array(#"{"hello":"wörld"}"#.utf8).map { String(format: "%02x", $0) }.joined())
        #expect(r.content?["headers"].map { "\($0)".contains("application/json") } == true)
    }
}

/// XCTest flavour for the decoding path.
final class JSONDecodingOverHTTPTests: XCTestCase {
    struct Item: Decodable { var id: Int; var name: String; var tags: [String]; var value: Double }

    func testDecodableFromAStreamedArray() throws {
        guard let s = JSONTestServer.shared else { throw XCTSkip("test server unavailable") }
        let r = try Client().get(s.url("/big-json-array?n=100"), handler: JSON())
        let items = try XCTUnwrap(r.content).decode([Item].self)
        XCTAssertEqual(items.count, 100)
        XCTAssertEqual(items[7].name, "item 7")
        XCTAssertEqual(items[7].value, 10.5)
        let direct = try Client().get(s.url("/big-json-array?n=10"), handler: JSON.decoding([Item].self))
        XCTAssertEqual(direct.content.map(\.id), Array(0..<10))
        XCTAssertThrowsError(try Client().get(s.url("/big-json-array?n=10"), handler: JSON.decoding([String].self))) { error in
            XCTAssertEqual((error as? HTTPContentError)?.code, .decode)
        }
    }
}
