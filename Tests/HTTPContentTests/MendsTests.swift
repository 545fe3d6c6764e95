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
}
