import Testing
@testable import HTTPContent

private let server = TestServer.shared

@Suite struct TransportTests {
    let client = try! Client()

    @Test func bytesArriveExactlyWithStatusAndHeaders() throws {
        let r = try client.get(server.url("/bytes/100000"), handler: Bytes())
        #expect(r.status == 200)
        #expect(r.content.array == expectedBytes(100000))
        #expect(r.headers["CONTENT-length"] == "100000")
        #expect(r.contentType?.essence == "application/octet-stream")
        #expect(r.url.hasSuffix("/bytes/100000"))
        #expect(r.metrics.decodedBytes == 100000)
    }

    @Test func aKeptResponseKeepsItsHeadersWhileTheHandleServesOthers() throws {
        // One client used in sequence: one handle, whose header store passes to the next
        // transfer once no response holds it.
        let serial = try Client()
        let kept = try serial.get(server.url("/bytes/10"), handler: Bytes())
        for n in [20, 300, 4000] {
            let r = try serial.get(server.url("/bytes/\(n)"), handler: Bytes())
            #expect(r.headers["content-length"] == "\(n)")
            #expect(r.content.count == n)
        }
        #expect(kept.headers["content-length"] == "10")
        #expect(kept.headers.fields.filter { $0.name.lowercased() == "content-length" }.count == 1)
    }

    @Test func userAgentIsTheClientsUnlessTheRequestSetsOne() throws {
        #expect(try client.get(server.url("/user-agent"), handler: Text()).content
                == "httpcontent/\(HTTPContentVersion.string)")
        let mine = try client.get(server.url("/user-agent"), headers: ["User-Agent": "me/1"], handler: Text())
        #expect(mine.content == "me/1")
        var config = ClientConfiguration()
        config.userAgent = "agent/2"
        #expect(try Client(configuration: config).get(server.url("/user-agent"), handler: Text()).content == "agent/2")
        config.userAgent = ""
        let empty = try Client(configuration: config).get(server.url("/headers"), handler: Text()).content
        #expect(empty.contains("[\"User-Agent\", \"\"]"))
    }

    @Test func proxyVariablesAsLibcurlReadsThem() {
        // Direct only when no variable libcurl consults names a proxy; an empty one names none.
        // (The Python tests check, in a process of their own, that a named proxy is used.)
        func names(_ env: [String: String]) -> Bool { !ProxyEnvironment.namesNoProxy { env[$0] } }
        #expect(!names([:]))
        #expect(!names(["http_proxy": "", "ALL_PROXY": ""]))
        #expect(!names(["HTTP_PROXY": "http://p:1", "no_proxy": "*"]))  // libcurl ignores both here
        for name in ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            #expect(names([name: "http://127.0.0.1:9"]), "\(name)")
        }
    }

    @Test func onlyHTTPSTransfersWaitToMultiplex() {
        // CURLOPT_PIPEWAIT for https (ALPN may pick HTTP/2; the Python tests check 40 transfers
        // share one h2 connection of a real nginx), not for plain HTTP/1.1.
        #expect(Transfer.mayMultiplex("https://example.com/"))
        #expect(Transfer.mayMultiplex("HTTPS://example.com/"))
        #expect(!Transfer.mayMultiplex("http://example.com/"))
        #expect(!Transfer.mayMultiplex("https"))
        #expect(!Transfer.mayMultiplex("https\u{1A}//x"))  // 0x1A | 0x20 is ":", but not a letter
        #expect(!Transfer.mayMultiplex(""))
    }

    @Test func chunkedAndGzipBodiesAreDecoded() throws {
        #expect(try client.get(server.url("/bytes/30000?chunked=1&chunk=999"), handler: Bytes()).content.array
                == expectedBytes(30000))
        let r = try client.get(server.url("/gzip/40000"), handler: Bytes())
        #expect(r.headers["content-encoding"] == "gzip")
        #expect(r.content.array == expectedBytes(40000))
        #expect(r.metrics.wireBytes < r.metrics.decodedBytes)
    }

    @Test func rejectedStatusCarriesStatusHeadersAndBody() throws {
        do {
            _ = try client.get(server.url("/status/404"), handler: Bytes())
            Issue.record("a 404 was accepted")
        } catch {
            #expect(error.code == .unacceptableStatus)
            #expect(error.response?.status == 404)
            #expect(error.body == Array("status 404".utf8))
            #expect(error.message.hasPrefix("HTTP 404 Not Found"))
        }
    }

    @Test func errorsAreValuesWhenCopiedAndChanged() throws {
        // One pointer wide (its fields live in a shared box): a change to a copy is the copy's.
        let original = HTTPContentError(.decode, "bad byte", body: [1, 2], offset: 3)
        var copy = original
        copy.message = "changed"
        copy.offset = 9
        copy.body.append(3)
        copy.response = ResponseHead(status: 418)
        #expect(original.message == "bad byte" && original.offset == 3 && original.body == [1, 2])
        #expect(original.response == nil)
        #expect(copy.code == .decode && copy.message == "changed" && copy.offset == 9 && copy.body == [1, 2, 3])
        #expect(copy.response?.status == 418)
        #expect(MemoryLayout<HTTPContentError>.size == MemoryLayout<Int>.size)
    }

    @Test func rejectedBodyNeverReachesTheHandler() throws {
        let handler = Recording()
        #expect(throws: HTTPContentError.self) {
            _ = try client.get(server.url("/status/500"), handler: handler)
        }
        #expect(handler.events == ["prepare", "accept", "cleanup(failed: true)"])
    }

    @Test func handlerStepsRunInOrder() throws {
        let handler = Recording()
        let r = try client.get(server.url("/bytes/10"), handler: handler)
        #expect(r.content == 10)
        #expect(handler.events.first == "prepare")
        #expect(handler.events.dropFirst().first == "accept")
        #expect(handler.events.suffix(2) == ["finish", "cleanup(failed: false)"])
    }

    @Test func acceptanceByStatusAndType() throws {
        let accept404 = Acceptance(statusCodes: [404...404])
        #expect(try client.get(server.url("/status/404"), handler: Bytes(acceptance: accept404)).status == 404)
        #expect(try client.get(server.url("/status/503"), handler: Bytes(acceptance: .anything)).status == 503)
        let jsonish = Acceptance(statusCodes: [200...299], contentTypes: ["*/*+json", "image/*"])
        #expect(try client.get(server.url("/ctype?type=application/problem%2Bjson&body=x"),
                               handler: Bytes(acceptance: jsonish)).content.array == [UInt8(ascii: "x")])
        #expect(throws: HTTPContentError.self) {
            _ = try client.get(server.url("/ctype?type=text/html&body=x"), handler: Bytes(acceptance: jsonish))
        }
        do {
            _ = try client.get(server.url("/ctype?none=1&body=x"), handler: Bytes(acceptance: jsonish))
            Issue.record("a body without Content-Type was accepted by a handler that names types")
        } catch {
            #expect(error.code == .unacceptableContentType)
        }
    }

    @Test func sizeLimitCountsDecodedBytes() throws {
        do {
            _ = try client.get(server.url("/gzip-bomb/5000000"), handler: Bytes(maxSize: 100_000))
            Issue.record("the gzip bomb was accepted")
        } catch {
            #expect(error.code == .tooLarge)
        }
        #expect(try client.get(server.url("/bytes/1000"), handler: Bytes(maxSize: 1000)).content.count == 1000)
    }

    @Test func transportFailuresHaveDistinctCodes() throws {
        func code(_ path: String, _ options: RequestOptions = RequestOptions()) -> HTTPContentError.Code? {
            do {
                _ = try client.send(Request("GET", server.url(path), options: options), handler: Bytes())
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code("/truncated?bytes=100&declared=1000") == .transport)
        #expect(code("/stall?bytes=100", RequestOptions(timeout: .milliseconds(300))) == .timeout)
        #expect(code("/redirect-loop") == .tooManyRedirects)
        #expect(code("/redirect-to?url=file:///etc/passwd") == .transport)
        #expect(code("/redirect/2") == nil)
        // Not followed, a redirect is the answer asked for, not a failure (MendsTests).
        #expect(code("/redirect/1", RequestOptions(followRedirects: false)) == nil)
    }

    @Test func theRedirectsFollowedAreTheResponsesHistoryOldestFirst() async throws {
        let r = try client.get(server.url("/redirect/2"), handler: Text())
        #expect(r.head.history.map(\.status) == [302, 302])
        #expect(r.head.history.map(\.url) == [server.url("/redirect/2"), server.url("/redirect/1")])
        #expect(r.head.history.map { $0.headers["location"] } == ["/redirect/1", "/redirect/0"])
        #expect(r.head.history.allSatisfy { $0.history.isEmpty })
        #expect(r.url == server.url("/redirect/0") && r.content == "done")
        #expect(try client.get(server.url("/redirect/0"), handler: Text()).head.history.isEmpty)
        // The async path (a multi handle) records the same.
        let viaAsync = try await client.send(Request("GET", server.url("/redirect/1")), handler: Text())
        #expect(viaAsync.head.history.map(\.url) == [server.url("/redirect/1")])
    }

    @Test func anErrorAfterRedirectsCarriesThem() throws {
        let target = server.url("/redirect-to?url=/status/404&status=308")
        do {
            _ = try client.get(target, handler: Bytes())
            Issue.record("a 404 was accepted")
        } catch {
            #expect(error.code == .unacceptableStatus)
            #expect(error.response?.history.map(\.status) == [308])
            #expect(error.response?.history.first?.url == target)
            #expect(error.url == server.url("/status/404") && error.method == "GET")
        }
    }

    @Test func cancellationFromAnotherThreadAndFromProgress() throws {
        let token = CancelToken()
        token.cancel()
        #expect(throws: HTTPContentError.self) {
            _ = try client.send(.get(server.url("/bytes/10")), handler: Bytes(), cancel: token)
        }
        let local = CancelToken()
        do {
            _ = try client.send(.get(server.url("/slow?bytes=100&delay=0.05")), handler: Bytes(),
                                cancel: local, progress: { p in if p.received > 0 { local.cancel() } })
            Issue.record("the transfer was not cancelled")
        } catch {
            #expect(error.code == .cancelled)
        }
    }

    @Test func headerInjectionIsRefusedBeforeSending() {
        var request = Request.get(server.url("/headers"))
        request.headers.add("X-Evil", "a\r\nInjected: yes")
        #expect(throws: HTTPContentError.self) { _ = try client.send(request, handler: Bytes()) }
        #expect(throws: HTTPContentError.self) { _ = try client.get("http://x/a b", handler: Bytes()) }
    }

    @Test func postBodyRoundTrips() throws {
        let body: [UInt8] = [0, 1, 2, 255, 10, 13]
        let r = try client.send(Request("POST", server.url("/echo/raw"), body: .bytes(body, contentType: "application/x-test")),
                                handler: Bytes())
        #expect(r.content.array == body)
        #expect(r.headers["x-request-content-type"] == "application/x-test")
    }

    @Test func connectionsAreReused() throws {
        _ = try client.get(server.url("/bytes/1"), handler: Discard())
        let second = try client.get(server.url("/bytes/1"), handler: Discard())
        #expect(second.metrics.newConnections == 0)
    }
}

/// A handler that records the order of the steps it is driven through.
final class Recording: ContentHandler {
    var events: [String] = []
    var count = 0
    func prepare(_ request: inout Request) throws { events.append("prepare") }
    func accept(_ head: ResponseHead) throws -> Bool {
        events.append("accept")
        try Acceptance.builtInDefault.check(head)
        return true
    }
    func consume(_ chunk: UnsafeRawBufferPointer) throws {
        events.append("consume")
        count += chunk.count
    }
    func finish() throws -> Int {
        events.append("finish")
        return count
    }
    func cleanup(failed: Bool) { events.append("cleanup(failed: \(failed))") }
}
