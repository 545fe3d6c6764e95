import Foundation
import HTTPContent
import HTTPContentFoundation
import Testing

/// HTTPContentFoundation: URL, Data and Date conveniences and AsyncSequence bodies (chunks,
/// bytes, lines, JSON items) over the core, against the local test server.
@Suite struct FoundationInteropTests {
    let server = TestServer.shared

    @Test func httpDatesInTheThreeFormsOfRFC9110() throws {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.format(expected) == "Sun, 06 Nov 1994 08:49:37 GMT")
        for bad in ["", "0", "-1", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 32 Nov 1994 08:49:37 GMT",
                    "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
        // Round trips over a wide span, against Foundation's own calendar.
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for seconds in stride(from: -2_000_000_000, through: 4_000_000_000, by: 86_399 * 37) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            let text = HTTPDate.format(date)
            #expect(HTTPDate.parse(text) == date, "\(text)")
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            #expect(text.contains(" \(parts.year!) "), "\(text)")
        }
    }

    @Test func urlDataAndDateConveniences() async throws {
        let client = try Client()
        let url = URL(string: server.url("/bytes/1000"))!
        let r = try await client.get(url, handler: Bytes())
        #expect(r.data == Data(expectedBytes(1000)))
        #expect(r.head.foundationURL == url)
        let date = try #require(r.head.date)
        #expect(abs(date.timeIntervalSinceNow) < 600)

        let (data, head) = try await client.data(from: URL(string: server.url("/bytes/70000"))!)
        #expect(data == Data(expectedBytes(70000)) && head.status == 200)

        let payload = Data((0..<5000).map { UInt8($0 % 256) })
        let echoed = try await client.send(Request("POST", url: URL(string: server.url("/echo/raw"))!,
                                             body: .data(payload, contentType: "application/x-test")),
                                     handler: Bytes())
        #expect(echoed.data == payload)
        #expect(echoed.headers["x-request-content-type"] == "application/x-test")

        await #expect(throws: HTTPContentError.self) {
            _ = try await client.data(from: URL(string: server.url("/status/404"))!)
        }
    }

    @Test func retryAfterInSecondsOrAsADate() throws {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let seconds = ResponseHead(status: 503, headers: Headers([("Retry-After", "120")]))
        #expect(seconds.retryAfter(now: now) == now.addingTimeInterval(120))
        let date = ResponseHead(status: 503, headers: Headers([("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        #expect(date.retryAfter() == Date(timeIntervalSince1970: 784_111_777))
        #expect(ResponseHead(status: 503).retryAfter() == nil)
    }

    @Test func aBodyAsChunksBytesAndLines() async throws {
        let client = try Client()
        let (head, body) = try await client.body(for: Request(url: URL(string: server.url("/bytes/1000000"))!))
        #expect(head.status == 200)
        var received = Data()
        var chunks = 0
        for try await chunk in body {
            received.append(chunk)
            chunks += 1
        }
        #expect(received == Data(expectedBytes(1_000_000)))
        #expect(chunks > 1)  // it arrived in pieces, not as one buffer

        let (_, small) = try await client.body(for: Request(url: URL(string: server.url("/bytes/300"))!))
        var bytes: [UInt8] = []
        for try await byte in small.bytes { bytes.append(byte) }
        #expect(bytes == expectedBytes(300))

        let (_, text) = try await client.body(for: Request(url: URL(string: server.url("/ndjson?n=5"))!))
        var lines: [String] = []
        for try await line in text.lines { lines.append(line) }
        #expect(lines == (0..<5).map { "{\"i\": \($0)}" })

        // A line without a newline at the end, and CRLF endings.
        let crlf = "a\r\nb\r\n\r\nlast".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let (_, mixed) = try await client.body(for: Request(url: URL(string: server.url("/text?text=\(crlf)"))!))
        var got: [String] = []
        for try await line in mixed.lines { got.append(line) }
        #expect(got == ["a", "b", "", "last"])
    }

    @Test func aRejectedStatusFailsBeforeTheBody() async throws {
        let client = try Client()
        do {
            _ = try await client.body(for: Request(url: URL(string: server.url("/status/503"))!))
            Issue.record("expected a failure")
        } catch let error as HTTPContentError {
            #expect(error.code == .unacceptableStatus)
            #expect(error.response?.status == 503)
        }
    }

    @Test func jsonItemsArriveWhileTheDocumentDoes() async throws {
        struct Item: Decodable, Sendable, Equatable {
            let id: Int
            let name: String
        }
        let client = try Client()
        var ids: [Int] = []
        let items = try await client.jsonItems(for: Request(url: URL(string: server.url("/big-json-array?n=2500"))!))
        for try await value in items { ids.append(Int(value["id"]?.int64Value ?? -1)) }
        #expect(ids == Array(0..<2500))

        let typed = try await client.jsonItems(for: Request(url: URL(string: server.url("/big-json-array?n=3"))!))
        var decoded: [Item] = []
        for try await item in typed.decoded(as: Item.self) { decoded.append(item) }
        #expect(decoded == [Item(id: 0, name: "item 0"), Item(id: 1, name: "item 1"), Item(id: 2, name: "item 2")])
    }

    @Test func stoppingEarlyStopsTheTransfer() async throws {
        // A hundred million items (about 6 GB, many minutes for the test server to write):
        // reading three and leaving the loop must end the transfer at once (the transfer waits
        // for the reader, then sees it go). The bound is loose because the whole exchange waits
        // on the concurrency pool, which on 2 cores other tests' blocking calls can hold for
        // tens of seconds (a CI run measured 34 s); it still separates leaving early from
        // reading the document.
        let client = try Client()
        let start = ContinuousClock.now
        let items = try await client.jsonItems(for: Request(url: URL(string: server.url("/big-json-array?n=100000000"))!),
                                               buffered: 4)
        var seen = 0
        for try await _ in items {
            seen += 1
            if seen == 3 { break }
        }
        items.cancel()
        #expect(seen == 3)
        // The client is still usable, and the whole exchange took far less than the document would.
        let r = try client.get(server.url("/bytes/10"), handler: Bytes())
        #expect(r.content.array == expectedBytes(10))
        #expect(ContinuousClock.now - start < .seconds(120))
    }

    @Test func theCoreImportsNoFoundation() throws {
        // The core stays Foundation-free; only HTTPContentFoundation (and tests) import it.
        let core = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/HTTPContent")
        let files = try #require(FileManager.default.enumerator(atPath: core.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10)
        for file in files {
            let text = try String(contentsOf: core.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("import ") {
                #expect(!line.contains("Foundation"), "\(file): \(line)")
            }
        }
    }
}
