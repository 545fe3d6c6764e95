import Foundation
import Testing
@testable import HTTPContent

private let server = TestServer.shared

private func json(_ r: Response<String>) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(r.content.utf8))) as? [String: Any] ?? [:]
}

private func key() -> String { UUID().uuidString }

@Suite struct CookieTests {
    @Test func cookiesAreKeptByDefaultAndReadableFromTheJar() throws {
        let client = try Client()
        _ = try client.get(server.url("/cookie?set=a=1"), handler: Text())
        #expect(json(try client.get(server.url("/cookie"), handler: Text()))["cookie"] as? String == "a=1")
        #expect(client.cookieJar?.value("a") == "1")
        #expect(client.cookieJar?.all.first?.domain == "127.0.0.1")
    }

    @Test func cookiesOffKeepNothing() throws {
        var config = ClientConfiguration()
        config.cookies = false
        let client = try Client(configuration: config)
        _ = try client.get(server.url("/cookie?set=a=1"), handler: Text())
        #expect(json(try client.get(server.url("/cookie"), handler: Text()))["cookie"] is NSNull)
        #expect(client.cookieJar == nil)
    }

    @Test func setClearAndPerRequestCookies() throws {
        let client = try Client()
        try client.cookieJar!.set(Cookie(name: "t", value: "d", domain: "127.0.0.1"))
        var request = Request.get(server.url("/cookie"))
        request.options.cookies = [("once", "1")]
        let sent = json(try client.send(request, handler: Text()))["cookie"] as? String
        #expect(Set(sent?.components(separatedBy: "; ") ?? []) == ["t=d", "once=1"])
        #expect(client.cookieJar!.value("once") == nil)
        client.cookieJar!.clear()
        #expect(client.cookieJar!.all.isEmpty)
        #expect(throws: HTTPContentError.self) { try client.cookieJar!.set(Cookie(name: "a;b", value: "v", domain: "x")) }
    }

    @Test func aCookieFileIsSavedAndLoaded() throws {
        let path = NSTemporaryDirectory() + "hc-jar-\(key()).txt"
        defer { unlink(path) }
        var config = ClientConfiguration()
        config.cookieFile = path
        do {
            let client = try Client(configuration: config)
            _ = try client.get(server.url("/cookie?set=kept=yes"), handler: Text())
            try client.cookieJar!.save()
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("kept\tyes"))
        let again = try Client(configuration: config)
        #expect(again.cookieJar!.value("kept") == "yes")
    }

    @Test func asyncTransfersShareTheJar() async throws {
        let client = try Client()
        _ = try await client.send(Request.get(server.url("/cookie?set=shared=1")), handler: Text())
        #expect(json(try client.get(server.url("/cookie"), handler: Text()))["cookie"] as? String == "shared=1")
    }
}

@Suite struct AuthTests {
    let client = try! Client()

    @Test func basicBearerAndDigest() throws {
        var r = Request.get(server.url("/basic-auth/u/p"))
        r.options.auth = .basic(user: "u", password: "p")
        #expect(try client.send(r, handler: Text()).status == 200)
        r = Request.get(server.url("/bearer/tok"))
        r.options.auth = .bearer("tok")
        #expect(try client.send(r, handler: Text()).status == 200)
        r = Request.get(server.url("/digest-auth/u/p"))
        r.options.auth = .digest(user: "u", password: "p")
        #expect(try client.send(r, handler: Text()).status == 200)
        r.options.auth = .digest(user: "u", password: "wrong")
        #expect { try client.send(r, handler: Text()) } throws: { ($0 as? HTTPContentError)?.response?.status == 401 }
    }

    @Test(arguments: ["basic", "bearer", "digest", "hook"])
    func credentialsAreNotForwardedToAnotherHost(kind: String) throws {
        let other = server.url("/auth-check").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        var r = Request.get(server.url("/redirect-to?url=\(other)"))
        switch kind {
        case "basic": r.options.auth = .basic(user: "u", password: "p")
        case "bearer": r.options.auth = .bearer("t")
        case "digest": r.options.auth = .digest(user: "u", password: "p")
        default: r.options.auth = .custom(AuthHook { req, _ in req.headers.set("Authorization", "Bearer h") })
        }
        let response = try client.send(r, handler: Text())
        #expect(response.url == other)
        #expect(json(response)["authorization"] is NSNull)
    }

    @Test func aHookRefreshesOnceOn401() throws {
        let calls = Locked<[Bool]>([])
        var config = ClientConfiguration()
        config.auth = .custom(AuthHook { req, refresh in
            calls.withLock { $0.append(refresh) }
            req.headers.set("Authorization", "Bearer \(refresh ? "fresh" : "stale")")
        })
        let client = try Client(configuration: config)
        #expect(try client.get(server.url("/bearer/fresh"), handler: Text()).status == 200)
        #expect(calls.withLock { $0 } == [false, true])
    }
}

@Suite struct RetryTests {
    @Test func retriesA503WithRetryAfterUntilItSucceeds() throws {
        var config = ClientConfiguration()
        config.retry = RetryPolicy(total: 3, backoff: .milliseconds(10))
        let client = try Client(configuration: config)
        let start = ContinuousClock.now
        let r = try client.get(server.url("/flaky?key=\(key())&fail=2&retry_after=1"), handler: Text())
        #expect(json(r)["attempts"] as? Int == 3)
        #expect(ContinuousClock.now - start >= .milliseconds(1900))
    }

    @Test func theLastErrorSaysHowManyAttempts() throws {
        let client = try Client()
        var r = Request.get(server.url("/flaky?key=\(key())&fail=9"))
        r.options.retry = RetryPolicy(total: 3, backoff: .milliseconds(5))
        #expect { try client.send(r, handler: Text()) } throws: { error in
            let e = error as? HTTPContentError
            return e?.attempts == 3 && e?.message.contains("after 3 attempts") == true && e?.code == .unacceptableStatus
        }
    }

    @Test func postIsNotRetriedUnlessAllowed() throws {
        let client = try Client()
        let k = key()
        var r = Request("POST", server.url("/flaky?key=\(k)&fail=1"), body: .bytes([1], contentType: nil))
        r.options.retry = RetryPolicy(total: 3, backoff: .milliseconds(5))
        #expect { try client.send(r, handler: Text()) } throws: { ($0 as? HTTPContentError)?.attempts == 1 }
        r.options.retry?.allMethods = true
        #expect(json(try client.send(r, handler: Text()))["attempts"] as? Int == 2)
    }

    @Test func aHandlerThatSawBodyIsNotSentAgain() throws {
        // A Bytes handler got 10 bytes before the reset: sending it again would append.
        let client = try Client()
        var r = Request.get(server.url("/flaky-reset?key=\(key())&fail=1"))
        r.options.retry = RetryPolicy(total: 3, backoff: .milliseconds(5))
        #expect { try client.send(r, handler: Bytes()) } throws: { ($0 as? HTTPContentError)?.code == .transport }
        // A handler made per attempt is sent again.
        r.url = server.url("/flaky-reset?key=\(key())&fail=1")
        let made = try client.send(r, makeHandler: { Bytes() })
        #expect(made.status == 200)
        #expect(String(decoding: (made.content as? ByteBuffer)?.array ?? [], as: UTF8.self) == "{\"attempts\": 2}")
    }

    @Test func retryAfterParsesSecondsAndHTTPDates() {
        #expect(RetryPolicy.retryAfterSeconds("7") == 7)
        #expect(RetryPolicy.retryAfterSeconds("Sun, 06 Nov 1994 08:49:47 GMT", now: 784111777) == 10)
        #expect(RetryPolicy.retryAfterSeconds("soon") == nil)
        #expect(RetryPolicy.retryAfterSeconds("-1") == nil)
    }
}

@Suite struct ChecksumTests {
    @Test func anExpectedDigestIsCheckedAndAMismatchLeavesNoFile() throws {
        let client = try Client()
        let dir = NSTemporaryDirectory() + "hc-sum-\(key())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = File.Options()
        options.resume = true
        options.digest = try ExpectedDigest(.sha256, hex: "054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8")
        let ok = try client.get(server.url("/range/4"), handler: File(path: dir + "/a", options: options))
        #expect(ok.content.digest == "sha256:054edec1d0211f624fed0cbca9d4f9400b0e491c43742af2c5b0abebf0c990d8")
        options.digest = try ExpectedDigest(.md5, hex: String(repeating: "0", count: 32))
        #expect { try client.get(server.url("/range/4"), handler: File(path: dir + "/b", options: options)) }
            throws: { ($0 as? HTTPContentError)?.code == .checksumMismatch }
        #expect(!FileManager.default.fileExists(atPath: dir + "/b"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/b.part"))
        #expect { try ExpectedDigest(.sha512, hex: "abc") } throws: { ($0 as? HTTPContentError)?.code == .invalidArgument }
    }

    @Test func aChangedFileRestartsFromZero() throws {
        let client = try Client()
        let dir = NSTemporaryDirectory() + "hc-sum-\(key())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = File.Options()
        options.resume = true
        let k = key()
        #expect(throws: HTTPContentError.self) {
            try client.get(server.url("/versioned/100000?key=\(k)&reset_after=40000&bump=1"),
                           handler: File(path: dir + "/f", options: options))
        }
        #expect(FileManager.default.fileExists(atPath: dir + "/f.part.meta"))
        let r = try client.get(server.url("/versioned/100000?key=\(k)&digest=repr"), handler: File(path: dir + "/f", options: options))
        #expect(!r.content.resumed)
        #expect(r.content.size == 100000)
        #expect(r.content.digest?.hasPrefix("sha256:") == true)
        #expect(!FileManager.default.fileExists(atPath: dir + "/f.part.meta"))
    }

    @Test func serverDigestFieldsParse() {
        #expect(DownloadVerifier.structured("sha-256=:AAEC:, foo=:x:").first?.1 == [0, 1, 2])
        #expect(DownloadVerifier.legacy("SHA-256=AAEC,MD5=AAE=").count == 2)
    }
}

/// Proxies: the tiny loopback-only proxies inside the test server (Tests/server/proxyserver.py),
/// which log what they saw; https through CONNECT goes to a real nginx with TLS (`H2Server`).
@Suite(.serialized) struct ProxyTests {
    let client = try! Client()

    private func document(_ path: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(client.get(server.url(path), handler: Text()).content.utf8))
    }

    private func ports() throws -> [String: Int] {
        (try document("/proxies") as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
    }

    /// (kind, target, atyp) of each entry the proxies logged from `since` on.
    private func seen(since: Int) throws -> [[String]] {
        (try document("/proxies/log?since=\(since)") as? [[String: Any]] ?? []).map { entry in
            ["kind", "target", "atyp"].map { entry[$0] as? String ?? "" }
        }
    }

    private func echoTarget(_ configuration: ClientConfiguration, proxy: String? = nil,
                            url: String = server.url("/echo")) throws -> String? {
        let r = try Client(configuration: configuration)
            .send(Request("GET", url, options: RequestOptions(proxy: proxy)), handler: Text())
        return json(r)["target"] as? String
    }

    @Test func socks5ResolvesLocallyAndSocks5hLetsTheProxyResolve() throws {
        let ports = try ports(), since = ports["logged"] ?? 0
        let port = server.url("").split(separator: ":").last.map(String.init) ?? ""
        var config = ClientConfiguration()
        config.proxy = "socks5://127.0.0.1:\(ports["socks5"] ?? 0)"
        #expect(try echoTarget(config) == "/echo")
        config.proxy = "socks5h://pu:pp@127.0.0.1:\(ports["socks5_auth"] ?? 0)"
        #expect(try echoTarget(config, url: "http://localhost:\(port)/echo") == "/echo")
        #expect(try seen(since: since) == [["socks5", "127.0.0.1:\(port)", "ipv4"],
                                           ["socks5", "localhost:\(port)", "domain"]])
        config.proxy = "socks5h://pu:bad@127.0.0.1:\(ports["socks5_auth"] ?? 0)"
        #expect(throws: HTTPContentError.self) { try echoTarget(config) }
    }

    @Test func httpProxyForwardsHTTPAndTunnelsHTTPSWithConnect() throws {
        let ports = try ports(), since = ports["logged"] ?? 0
        var config = ClientConfiguration()
        config.proxy = "http://pu:pp@127.0.0.1:\(ports["http_auth"] ?? 0)"
        #expect(try echoTarget(config) == server.url("/echo"))
        guard let tls = try H2Server() else { return }  // nginx or openssl missing: said why
        defer { tls.stop() }
        config.caFile = tls.caFile
        let r = try Client(configuration: config).get("https://127.0.0.1:\(tls.port)/f4.bin", handler: Bytes())
        #expect(r.content.array == [UInt8](repeating: 4, count: 1004))
        #expect(try seen(since: since).map { Array($0.prefix(2)) }
                == [["forward", server.url("/echo")], ["connect", "127.0.0.1:\(tls.port)"]])
    }

    @Test func noProxyAndAnIgnoredEnvironmentGoDirectly() throws {
        let ports = try ports(), since = ports["logged"] ?? 0
        var config = ClientConfiguration()
        config.proxy = "http://127.0.0.1:\(ports["http"] ?? 0)"
        config.noProxy = "127.0.0.1"
        #expect(try echoTarget(config) == "/echo")
        #expect(try seen(since: since).isEmpty)
        // trustEnvironment false: libcurl is told there is no proxy whatever the environment
        // says (the environment itself is tested from C and Python, in processes of their own).
        var ignoring = ClientConfiguration()
        ignoring.trustEnvironment = false
        #expect(try Client(configuration: ignoring).direct)
        #expect(try echoTarget(ignoring, proxy: "http://127.0.0.1:\(ports["http"] ?? 0)") == server.url("/echo"))
    }
}

/// Retries and the auth hook in a `Batch`: a retried transfer is re-added after its wait while
/// the others go on.
@Suite struct BatchRetryTests {
    @Test func aRetryWaitsWithoutHoldingTheOtherTransfers() throws {
        var config = ClientConfiguration()
        config.retry = RetryPolicy(total: 3, backoff: .milliseconds(10))
        let client = try Client(configuration: config)
        let batch = Batch(client: client)
        let start = ContinuousClock.now
        var finished: [(String, Duration, Result<Response<String>, HTTPContentError>)] = []
        func add(_ name: String, _ path: String) {
            batch.add(Request.get(server.url(path)), handler: Text()) { finished.append((name, ContinuousClock.now - start, $0)) }
        }
        add("slow", "/flaky?key=\(key())&fail=2&retry_after=1")     // 503 twice, 1 s each
        add("quick", "/flaky?key=\(key())&fail=1&retry_after=0")    // 503 once, at once
        add("failing", "/flaky?key=\(key())&fail=9&retry_after=0")  // 503 every time
        for i in 0..<3 { add("plain\(i)", "/bytes/10") }
        batch.run()
        #expect(finished.count == 6)
        #expect(finished.last?.0 == "slow")  // everything else completed during its waits
        for (name, at, outcome) in finished {
            switch (name, outcome) {
            case ("slow", .success(let r)):
                #expect(json(r)["attempts"] as? Int == 3)
                #expect(at >= .milliseconds(1900))
            case ("quick", .success(let r)):
                #expect(json(r)["attempts"] as? Int == 2)
                #expect(at < .milliseconds(900))
            case ("failing", .failure(let error)):
                #expect(error.attempts == 3 && error.response?.status == 503)
                #expect(error.message.contains("after 3 attempts"))
            case (_, .success(let r)) where name.hasPrefix("plain"):
                #expect(r.status == 200 && at < .milliseconds(900))
            default:
                Issue.record("\(name): \(outcome)")
            }
        }
    }

    @Test func theHookRefreshesOnceOn401InABatch() throws {
        let calls = Locked<[Bool]>([])
        var config = ClientConfiguration()
        config.auth = .custom(AuthHook { req, refresh in
            calls.withLock { $0.append(refresh) }
            req.headers.set("Authorization", "Bearer \(refresh ? "fresh" : "stale")")
        })
        let batch = Batch(client: try Client(configuration: config))
        var status = 0
        batch.add(Request.get(server.url("/bearer/fresh")), anyHandler: Text()) { status = (try? $0.get())?.status ?? -1 }
        batch.run()
        #expect(status == 200)
        #expect(calls.withLock { $0 } == [false, true])
    }

    @Test func cancellingTheBatchEndsAWaitingRetry() throws {
        var config = ClientConfiguration()
        config.retry = RetryPolicy(total: 3, backoff: .milliseconds(10))
        let batch = Batch(client: try Client(configuration: config))
        var outcome: HTTPContentError?
        batch.add(Request.get(server.url("/flaky?key=\(key())&fail=2&retry_after=20")), anyHandler: Text()) {
            if case .failure(let e) = $0 { outcome = e }
        }
        let start = ContinuousClock.now
        while batch.pending > 0, outcome == nil, ContinuousClock.now - start < .seconds(10) {
            batch.perform()
            if batch.pending > 0 { batch.wait(timeoutMs: 50) }
            if ContinuousClock.now - start > .milliseconds(300) { batch.cancelAll() }
        }
        #expect(outcome?.code == .cancelled && outcome?.attempts == 1)
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}

/// Retries and the auth hook for `async` sends: the task sleeps between attempts.
@Suite struct AsyncRetryTests {
    @Test func anAsyncSendIsRetriedAndTellsItsAttempts() async throws {
        var config = ClientConfiguration()
        config.retry = RetryPolicy(total: 3, backoff: .milliseconds(10))
        let client = try Client(configuration: config)
        let r = try await client.send(Request.get(server.url("/flaky?key=\(key())&fail=2&retry_after=0")), handler: Text())
        #expect(json(r)["attempts"] as? Int == 3)
        do {
            _ = try await client.send(Request.get(server.url("/flaky?key=\(key())&fail=9&retry_after=0")), handler: Text())
            Issue.record("a request failing every time succeeded")
        } catch {
            #expect(error.attempts == 3 && error.response?.status == 503)
        }
    }

    @Test func theHookRefreshesOnceOn401ForAnAsyncSend() async throws {
        let calls = Locked<[Bool]>([])
        var config = ClientConfiguration()
        config.auth = .custom(AuthHook { req, refresh in
            calls.withLock { $0.append(refresh) }
            req.headers.set("Authorization", "Bearer \(refresh ? "fresh" : "stale")")
        })
        let client = try Client(configuration: config)
        #expect(try await client.send(Request.get(server.url("/bearer/fresh")), handler: Text()).status == 200)
        #expect(calls.withLock { $0 } == [false, true])
    }

    @Test func cancellingTheTaskEndsAWaitingRetry() async throws {
        var config = ClientConfiguration()
        config.retry = RetryPolicy(total: 3, backoff: .milliseconds(10))
        let client = try Client(configuration: config)
        let url = server.url("/flaky?key=\(key())&fail=2&retry_after=20")
        let task = Task { () -> HTTPContentError? in
            do throws(HTTPContentError) {
                _ = try await client.send(Request.get(url), handler: Text())
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(500))
        let start = ContinuousClock.now
        task.cancel()
        let error = await task.value
        #expect(error?.code == .cancelled && error?.attempts == 1)
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}
