import Testing
@testable import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

private let server = TestServer.shared

/// The behaviours the C header promises (issue 14), as the Swift core gives them: every front
/// gets the same ones.
@Suite struct ContractTests {
    let client = try! Client()

    private func failure<H: ContentHandler>(_ request: Request, _ handler: H, on c: Client? = nil) -> HTTPContentError? {
        do {
            _ = try (c ?? client).send(request, handler: handler)
            return nil
        } catch {
            return error
        }
    }

    @Test func aRejectedResponseCarriesEveryHeaderItsURLAndItsMethod() throws {
        let e = try #require(failure(Request("DELETE", server.url("/redirect-to?url=/status/403")), Discard()))
        let accepted = try client.send(Request("DELETE", server.url("/status/403")),
                                       handler: Discard(acceptance: .anything))
        #expect(e.response?.headers.fields.map { $0.name.lowercased() }
                == accepted.headers.fields.map { $0.name.lowercased() })
        #expect(e.url == server.url("/status/403"))
        #expect(e.method == "DELETE")

        let refused = try #require(failure(Request("PUT", "http://127.0.0.1:1/nothing-listens"), Discard()))
        #expect(refused.code == .transport && refused.response == nil)
        #expect(refused.url == "http://127.0.0.1:1/nothing-listens" && refused.method == "PUT")
    }

    @Test(arguments: ["ftp://127.0.0.1/x", "gopher://127.0.0.1/x", "file:///etc/passwd", "FTP://x/"])
    func otherSchemesAreRefusedBeforeAnyConnection(url: String) throws {
        let e = try #require(failure(Request("GET", url), Bytes()))
        #expect(e.code == .invalidArgument && e.curlCode == nil)
        #expect(e.message.contains("scheme \"\(url.prefix { $0 != ":" }.lowercased())\""))
        #expect(throws: HTTPContentError.self) { try Request("GET", "127.0.0.1:8080/x").validate() }
        try Request("GET", "HTTPS://127.0.0.1/").validate()
    }

    @Test func jsonHonoursTheConfiguredEmptyStatusesAndMethods() throws {
        let emptyJSON = server.url("/ctype?type=application/json&body=")
        #expect(failure(.get(emptyJSON), JSON())?.code == .decode)
        var acceptance = JSON.defaultAcceptance()
        acceptance.emptyStatusCodes = [200]
        #expect(try client.get(emptyJSON, handler: JSON(acceptance: acceptance)).content == nil)
        #expect(failure(.get(server.url("/status/204")), JSON(acceptance: acceptance))?.code == .decode)
        var noMethods = JSON.defaultAcceptance()
        noMethods.emptyMethods = []
        #expect(failure(Request("HEAD", server.url("/json?doc=%7B%7D")), JSON(acceptance: noMethods))?.code == .decode)
        #expect(try client.send(Request("HEAD", server.url("/json?doc=%7B%7D")), handler: JSON()).content == nil)
        var items = JSON.defaultAcceptance()
        items.emptyStatusCodes = [200]
        let summary = try client.get(emptyJSON, handler: try JSONItems(prefixes: ["item"], acceptance: items) { _ in })
        #expect(summary.content.count == 0)
    }

    @Test func aStrictTextDecodeErrorCarriesTheBody() throws {
        let e = try #require(failure(.get(server.url("/text?raw_hex=68c3a96cff6c6f")), Text(encoding: .utf8)))
        #expect(e.code == .decode && e.offset == 4)
        #expect(e.body == [0x68, 0xC3, 0xA9, 0x6C, 0xFF, 0x6C, 0x6F])
    }

    @Test func aCompletePartAnsweredWith416IsRenamedIntoPlace() throws {
        var template = Array("/tmp/hc-contract-swift-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        let path = dir + "/whole.bin"
        _ = try client.get(server.url("/range/1000"), handler: File(path: path))
        #expect(rename(path, path + ".part") == 0)
        var options = File.Options()
        options.resume = true
        let r = try client.get(server.url("/range/1000"), handler: File(path: path, options: options))
        #expect(r.status == 416)
        #expect(r.content == FileDownload(path: path, bytesWritten: 0, size: 1000, resumed: true))
        #expect(access(path + ".part", F_OK) != 0)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_size == 1000)
        unlink(path)
        rmdir(dir)
    }

    @Test func aBatchRequestThatCannotStartCompletesDuringTheAdd() throws {
        var template = Array("/tmp/hc-contract-exists-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        close(fd)
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        var options = File.Options()
        options.overwrite = false
        let batch = Batch(client: client)
        var outcomes: [HTTPContentError.Code?] = []
        batch.add(.get(server.url("/bytes/5")), handler: File(path: path, options: options)) { result in
            if case .failure(let e) = result { outcomes.append(e.code) } else { outcomes.append(nil) }
        }
        #expect(outcomes == [.localIO])   // during the add
        batch.run()
        #expect(outcomes == [.localIO])   // and only once
    }

    /// The target the test server saw: absolute-form when it came through a proxy (the test
    /// server plays the proxy).
    private func target(_ c: Client, proxy: String? = nil) throws -> String {
        var request = Request.get(server.url("/echo"))
        request.options.proxy = proxy
        return try c.send(request, handler: JSON()).content?["target"]?.stringValue ?? ""
    }

    @Test func proxyPerClientAndPerRequest() throws {
        var config = ClientConfiguration()
        config.proxy = server.url("")
        let proxied = try Client(configuration: config)
        #expect(try target(proxied) == server.url("/echo"))
        #expect(try target(proxied, proxy: "") == "/echo")
        #expect(try target(proxied) == server.url("/echo"))   // the handle was reset
        config.noProxy = "127.0.0.1"
        #expect(try target(try Client(configuration: config)) == "/echo")
        #expect(try target(client, proxy: server.url("")) == server.url("/echo"))
        config.proxy = "ftp://127.0.0.1:21"
        #expect(throws: HTTPContentError.self) { try Client(configuration: config) }
        var bad = Request.get(server.url("/echo"))
        bad.options.proxy = "http://x\r\nInjected: 1"
        #expect(failure(bad, Bytes())?.code == .invalidArgument)
    }

    @Test func aJSONBuilderMakesWhatLiteralsMake() throws {
        var b = JSONBuilder()
        try b.beginObject()
        try b.key("name"); try b.string("Lucas Drance")
        try b.key("values"); try b.beginArray()
        try b.int(.min); try b.double(2.5); try b.bool(true); try b.null(); try b.number(text: "1e400")
        try b.endArray()
        #expect(throws: HTTPContentError.self) { try b.int(1) }          // a value with no key
        #expect(throws: HTTPContentError.self) { try b.endArray() }      // an object is open
        #expect(throws: HTTPContentError.self) { try b.number(text: "-.5") }
        #expect(throws: HTTPContentError.self) { try b.double(.nan) }
        #expect(throws: HTTPContentError.self) { _ = try b.finish() }
        try b.endObject()
        #expect(throws: HTTPContentError.self) { try b.null() }          // a second top-level value
        let built = try b.finish()
        let literal: JSONValue = ["name": "Lucas Drance", "values": [.int(.min), 2.5, true, nil, .number("1e400")]]
        #expect(built == literal)
        for text in ["0", "-0.5e+3", "12.0", "1E9"] { #expect(JSONBuilder.isJSONNumber(text), "\(text)") }
        for text in ["", "-", "01", "1.", ".1", "1e", "+1", "0x1", "1 "] { #expect(!JSONBuilder.isJSONNumber(text), "\(text)") }
    }
}
