import Foundation
import Testing
@testable import HTTPContent

private let server = TestServer.shared

/// Issue 28 ("Mends"): decisions the core makes for every front.
@Suite struct MendsTests {
    let client = try! Client()

    // MARK: - Text of a body already received

    @Test func decodingABodyFollowsTheTextHandlersRules() throws {
        func decode(_ bytes: [UInt8], _ type: String?, strict: Bool = false) throws -> String {
            try bytes.withUnsafeBytes { try Text.decode($0, contentType: type, strict: strict) }
        }
        #expect(try decode([0xFF, 0xFE, 0x68, 0x00, 0x69, 0x00], "text/plain") == "hi")       // BOM
        #expect(try decode([0x63, 0x61, 0x66, 0xE9], "text/plain; charset=ISO-8859-1") == "café")
        #expect(try decode([0x61, 0xFF, 0x62], nil) == "a\u{FFFD}b")                          // UTF-8
        #expect(throws: HTTPContentError.self) { try decode([0x61, 0xFF], nil, strict: true) }
        #expect(throws: HTTPContentError.self) { try decode([0x61], "text/plain; charset=x-unknown") }
    }

    // MARK: - A status checked after the fact

    @Test func checkingAStatusThrowsWhatARejectionThrows() throws {
        let url = server.url("/status/404?json=1&message=gone")
        var rejected: HTTPContentError?
        do { _ = try client.get(url, handler: Bytes()) } catch { rejected = error }
        let r = try client.get(url, handler: Bytes(acceptance: .anything))
        var checked: HTTPContentError?
        do { try r.checkStatus(body: r.content.array) } catch { checked = error }
        #expect(rejected?.message == "HTTP 404 Not Found: gone")
        #expect(checked?.message == rejected?.message)
        #expect(checked?.code == .unacceptableStatus && checked?.serverMessage == "gone")
        #expect(checked?.response?.method == "GET" && checked?.response?.url == url)
        let fine = try client.get(server.url("/status/201"), handler: Bytes(acceptance: .anything))
        try fine.checkStatus()
    }

    // MARK: - Redirects not followed

    @Test func aRedirectNotFollowedIsTheAnswerForDefaultHandlers() throws {
        var request = Request("GET", server.url("/redirect/1"))
        request.options.followRedirects = false
        let bytes = try client.send(request, handler: Bytes())
        #expect(bytes.status == 302 && bytes.headers["Location"] == "/redirect/0" && bytes.content.count == 0)
        let json = try client.send(request, handler: JSON())
        #expect(json.status == 302 && json.content == nil)
        #expect(throws: HTTPContentError.self) {
            _ = try client.send(request, handler: Bytes(acceptance: Acceptance(statusCodes: [200...200])))
        }
        let followed = try client.get(server.url("/redirect/1"), handler: Text())
        #expect(followed.status == 200 && followed.content == "done")
    }

    // MARK: - Link header

    @Test func linksAreParsedAsRFC8288WritesThem() {
        let headers: Headers = [
            "Link": "<https://x/items?page=2>; rel=\"next\", <https://x/items?page=9>;REL=last",
        ]
        var both = headers
        both.add("link", "<https://x/a>; title=\"a, b; \\\"c\\\"\"; type=text/html, junk, <https://x/b>")
        let links = both.links
        #expect(links.map(\.url) == ["https://x/items?page=2", "https://x/items?page=9", "https://x/a", "https://x/b"])
        #expect(links.map(\.rel) == ["next", "last", nil, nil])
        #expect(links[2][param: "title"] == "a, b; \"c\"" && links[2][param: "type"] == "text/html")
        #expect(Headers().links.isEmpty)
    }

    // MARK: - JSON record framing

    @Test func autoFramingReadsJSONSeqWhenTheResponseSaysSo() throws {
        #expect(JSONRecordOptions().framing == .auto)
        func records(_ type: String, _ body: String, _ framing: JSONRecordFraming = .auto) throws -> [JSONValue] {
            var seen: [JSONValue] = []
            let handler = JSONLines(options: JSONRecordOptions(framing: framing)) { seen.append($0) }
            _ = try handler.accept(ResponseHead(status: 200, headers: ["Content-Type": type]))
            try Array(body.utf8).withUnsafeBytes { try handler.consume($0) }
            _ = try handler.finish()
            return seen
        }
        let seq = "\u{1E}{\"a\":1}\n\u{1E}{\"a\":2}\n"
        #expect(try records("application/json-seq", seq) == [["a": 1], ["a": 2]])
        #expect(throws: HTTPContentError.self) { _ = try records("application/json-seq", seq, .lines) }
        #expect(try records("application/x-ndjson", "{\"a\":1}\n{\"a\":2}\n") == [["a": 1], ["a": 2]])
    }

    // MARK: - JSON with several values

    @Test func severalJSONValuesAcceptNDJSONTypes() throws {
        var options = JSONOptions()
        options.allowMultipleValues = true
        let ndjson = ResponseHead(status: 200, headers: ["Content-Type": "application/x-ndjson"])
        #expect(try JSON(options: options).accept(ndjson))
        #expect(try JSONItems(prefix: "", options: options) { _ in }.accept(ndjson))
        #expect(throws: HTTPContentError.self) { _ = try JSON().accept(ndjson) }
    }

    // MARK: - Progress of a resumed download

    @Test func progressOfAResumedDownloadCountsThePartOnDisk() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hc-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = File.Options()
        options.resume = true
        #expect(throws: HTTPContentError.self) {
            _ = try client.get(server.url("/range/100000?reset_after=40000"),
                               handler: File(path: dir + "/big.bin", options: options))
        }
        let part = Int64(try FileManager.default.attributesOfItem(atPath: dir + "/big.bin.part")[.size] as! Int)
        let seen = Locked<[TransferProgress]>([])
        let r = try client.send(.get(server.url("/range/100000")), handler: File(path: dir + "/big.bin", options: options),
                                progress: { p in seen.withLock { $0.append(p) } })
        let all = seen.withLock { $0 }
        #expect(r.content.resumed && part > 0 && part < 100000)
        #expect(all.first?.received == part)
        #expect(all.allSatisfy { $0.expected == 0 || $0.expected == 100000 })
        #expect(all.last?.received == 100000 && all.last?.expected == 100000)
    }
}
