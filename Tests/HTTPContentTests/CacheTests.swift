import Foundation
import Testing
@testable import HTTPContent

private let server = TestServer.shared

private func key() -> String { UUID().uuidString }

/// `/cached/<key>` with query items (`h` may repeat).
private func cached(_ key: String, _ items: [(String, String)] = []) -> String {
    var c = URLComponents(string: server.url("/cached/\(key)"))!
    c.queryItems = items.map { URLQueryItem(name: $0.0, value: $0.1) }
    c.percentEncodedQuery = c.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
    return c.string!
}

/// How many requests the origin saw for `key`, and the last one's fields.
private func origin(_ key: String) throws -> (count: Int, headers: [String: String]) {
    let r = try Client().get(server.url("/cache-count/\(key)"), handler: Text())
    let obj = try JSONSerialization.jsonObject(with: Data(r.content.utf8)) as! [String: Any]
    return (obj["count"] as! Int, obj["headers"] as! [String: String])
}

private func client(_ cache: HTTPCache) throws -> Client {
    var config = ClientConfiguration()
    config.cache = cache
    return try Client(configuration: config)
}

private func tempPath(_ name: String) -> String {
    NSTemporaryDirectory() + "hc-cache-\(UUID().uuidString)-\(name)"
}

private func entry(_ headers: Headers, status: Int = 200, at time: Double = 1_000_000) -> CacheEntry {
    CacheEntry(url: "http://h/x", status: status, headers: headers, requestTime: time, responseTime: time)
}

// MARK: - The policy as pure functions

@Suite struct CachePolicyTests {
    @Test func freshnessComesFromMaxAgeThenSharedMaxAgeThenExpires() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(CachePolicy.freshnessLifetime(entry(["Cache-Control": "max-age=60"]), shared: false) == 60)
        #expect(CachePolicy.freshnessLifetime(entry(["Cache-Control": "max-age=60, s-maxage=5"]), shared: true) == 5)
        #expect(CachePolicy.freshnessLifetime(entry(["Cache-Control": "max-age=60, s-maxage=5"]), shared: false) == 60)
        #expect(CachePolicy.freshnessLifetime(entry(["Date": date, "Expires": "Sun, 06 Nov 1994 08:50:37 GMT"]), shared: false) == 60)
        #expect(CachePolicy.freshnessLifetime(entry(["Date": date, "Expires": "0"]), shared: false) == 0)
        #expect(CachePolicy.freshnessLifetime(entry(["Cache-Control": "max-age=abc"]), shared: false) == 0)
        #expect(CachePolicy.freshnessLifetime(entry(["Cache-Control": "max-age=\"30\""]), shared: false) == 30)
    }

    @Test func heuristicFreshnessOnlyForStatusesTheRFCAllows() {
        let h: Headers = ["Date": "Sun, 06 Nov 1994 08:49:37 GMT", "Last-Modified": "Sun, 06 Nov 1994 07:49:37 GMT"]
        #expect(CachePolicy.freshnessLifetime(entry(h), shared: false) == 360)
        #expect(CachePolicy.freshnessLifetime(entry(h, status: 302), shared: false) == 0)
    }

    @Test func currentAgeAddsAgeHeaderDelayAndResidentTime() {
        var e = entry(["Age": "10"], at: 1000)
        e.requestTime = 998
        #expect(CachePolicy.currentAge(e, now: 1005) == 17)  // 10 + 2 s delay + 5 s resident
    }

    @Test func storableRulesPrivateAndShared() {
        func storable(_ h: Headers, status: Int = 200, method: String = "GET", request: Headers = Headers(), shared: Bool = false) -> Bool {
            CachePolicy.isStorable(method: method, requestHeaders: request, head: ResponseHead(status: status, headers: h), shared: shared)
        }
        #expect(storable(["Cache-Control": "max-age=60"]))
        #expect(!storable(["Cache-Control": "max-age=60, no-store"]))
        #expect(!storable(["Cache-Control": "max-age=60"], request: ["Cache-Control": "no-store"]))
        #expect(!storable(["Cache-Control": "max-age=60"], status: 206))
        #expect(!storable(["Cache-Control": "max-age=60"], method: "POST"))
        #expect(storable(["Cache-Control": "private, max-age=60"]))
        #expect(!storable(["Cache-Control": "private, max-age=60"], shared: true))
        #expect(!storable(["Cache-Control": "max-age=60"], request: ["Authorization": "x"], shared: true))
        #expect(storable(["Cache-Control": "public, max-age=60"], request: ["Authorization": "x"], shared: true))
        #expect(!storable(["Cache-Control": "max-age=60", "Vary": "*"]))
        #expect(!storable([:], status: 302))
    }

    @Test func varyMatchesOnTheNamedFieldsAndStarNeverMatches() {
        var e = entry(["Vary": "Accept, X-Lang"])
        e.varyValues = CachePolicy.varyValues(varyHeader: ["Accept, X-Lang"], request: ["Accept": "a/b"])
        #expect(CachePolicy.varyMatches(e, request: ["accept": "a/b", "Other": "1"]))
        #expect(!CachePolicy.varyMatches(e, request: ["Accept": "a/c"]))
        #expect(!CachePolicy.varyMatches(e, request: ["Accept": "a/b", "X-Lang": "fr"]))
        #expect(!CachePolicy.varyMatches(entry(["Vary": "*"]), request: [:]))
    }

    @Test func decisionsFollowRequestAndResponseDirectives() {
        let now = 1_000_100.0  // 100 s after the entry
        let fresh = entry(["Cache-Control": "max-age=600"])
        let stale = entry(["Cache-Control": "max-age=60"])
        #expect(CachePolicy.decide(fresh, request: [:], now: now, shared: false) == .serve(stale: false))
        #expect(CachePolicy.decide(fresh, request: ["Cache-Control": "no-cache"], now: now, shared: false) == .validate)
        #expect(CachePolicy.decide(fresh, request: ["Pragma": "no-cache"], now: now, shared: false) == .validate)
        #expect(CachePolicy.decide(fresh, request: ["Cache-Control": "max-age=50"], now: now, shared: false) == .validate)
        #expect(CachePolicy.decide(fresh, request: ["Cache-Control": "min-fresh=550"], now: now, shared: false) == .validate)
        #expect(CachePolicy.decide(stale, request: [:], now: now, shared: false) == .validate)
        #expect(CachePolicy.decide(stale, request: ["Cache-Control": "max-stale=60"], now: now, shared: false) == .serve(stale: true))
        #expect(CachePolicy.decide(stale, request: ["Cache-Control": "max-stale"], now: now, shared: false) == .serve(stale: true))
        let mustRevalidate = entry(["Cache-Control": "max-age=60, must-revalidate"])
        #expect(CachePolicy.decide(mustRevalidate, request: ["Cache-Control": "max-stale"], now: now, shared: false) == .validate)
        let swr = entry(["Cache-Control": "max-age=60, stale-while-revalidate=60"])
        #expect(CachePolicy.decide(swr, request: [:], now: now, shared: false) == .serveAndRevalidate)
        #expect(CachePolicy.decide(swr, request: [:], now: now + 100, shared: false) == .validate)
        let sie = entry(["Cache-Control": "max-age=60, stale-if-error=60"])
        #expect(CachePolicy.mayServeOnError(sie, request: [:], now: now, shared: false))
        #expect(!CachePolicy.mayServeOnError(sie, request: [:], now: now + 100, shared: false))
        #expect(CachePolicy.mayServeOnError(stale, request: ["Cache-Control": "stale-if-error=100"], now: now, shared: false))
    }

    @Test func a304ReplacesFieldsButKeepsTheBodysLength() {
        let e = entry(["Content-Length": "5", "ETag": "\"a\"", "X-A": "old", "Cache-Control": "max-age=1"])
        let merged = CachePolicy.merge304(e, with: ResponseHead(status: 304, headers: ["X-A": "new", "Content-Length": "0", "Cache-Control": "max-age=9"]),
                                          requestTime: 2, responseTime: 3)
        #expect(merged.headers["x-a"] == "new")
        #expect(merged.headers["content-length"] == "5")
        #expect(merged.headers.values(for: "cache-control") == ["max-age=9"])
        #expect(merged.responseTime == 3)
        #expect(!CachePolicy.validates(ResponseHead(status: 304, headers: ["ETag": "\"b\""]), e))
        #expect(CachePolicy.conditionalHeaders(e).map(\.0) == ["If-None-Match"])
    }

    @Test func aRequestsOwnConditionalsAreEvaluatedAgainstTheStoredResponse() {
        let e = entry(["ETag": "W/\"v2\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT",
                       "Date": "Sun, 06 Nov 1994 09:00:00 GMT", "Content-Type": "text/plain", "Cache-Control": "max-age=9"])
        #expect(CachePolicy.notModified(e, request: ["If-None-Match": "\"v1\", \"v2\""]))  // weak comparison
        #expect(CachePolicy.notModified(e, request: ["If-None-Match": "*"]))
        #expect(!CachePolicy.notModified(e, request: ["If-None-Match": "\"v1\""]))
        // If-None-Match wins over an If-Modified-Since that would match.
        #expect(!CachePolicy.notModified(e, request: ["If-None-Match": "\"v1\"", "If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]))
        #expect(CachePolicy.notModified(e, request: ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]))
        #expect(!CachePolicy.notModified(e, request: ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:36 GMT"]))
        #expect(!CachePolicy.notModified(e, request: ["If-Modified-Since": "yesterday"]))
        // Without Last-Modified, the stored Date stands in.
        let noLM = entry(["Date": "Sun, 06 Nov 1994 09:00:00 GMT"])
        #expect(CachePolicy.notModified(noLM, request: ["If-Modified-Since": "Sun, 06 Nov 1994 09:00:00 GMT"]))
        let h = CachePolicy.notModifiedHeaders(e)
        #expect(h["etag"] == "W/\"v2\"" && h["cache-control"] == "max-age=9" && h["content-type"] == nil && h["last-modified"] == nil)
    }

    @Test func aHeadAnswerUpdatesAStoredGetOnlyWhenItsValidatorsAgree() {
        let e = entry(["ETag": "\"a\"", "Content-Length": "5"])
        #expect(CachePolicy.headUpdates(ResponseHead(status: 200, headers: ["ETag": "\"a\""]), e))
        #expect(!CachePolicy.headUpdates(ResponseHead(status: 200, headers: ["ETag": "\"b\""]), e))
        #expect(!CachePolicy.headUpdates(ResponseHead(status: 404, headers: ["ETag": "\"a\""]), e))
        #expect(!CachePolicy.headUpdates(ResponseHead(status: 200, headers: ["Content-Length": "6"]), entry(["Content-Length": "5"])))
        #expect(CachePolicy.headUpdates(ResponseHead(status: 200, headers: [:]), entry([:])))
    }

    @Test func unsafeMethodsInvalidateTargetAndSameOriginLocations() {
        let head = ResponseHead(status: 201, headers: ["Location": "/a/new", "Content-Location": "http://other/x"])
        #expect(CachePolicy.invalidatedURLs(target: "http://h:1/a/b?q", head: head) == ["http://h:1/a/b?q", "http://h:1/a/new"])
        #expect(CachePolicy.invalidatedURLs(target: "http://h/a", head: ResponseHead(status: 500)).isEmpty)
        #expect(CachePolicy.isUnsafe("POST") && CachePolicy.isUnsafe("DELETE") && !CachePolicy.isUnsafe("HEAD"))
    }

    @Test func entryCodecRoundTripsAndRefusesDamage() throws {
        var e = entry(["A": "1", "b": "two"])
        e.varyValues = [.init(name: "accept", value: "x"), .init(name: "x-none", value: nil)]
        e.bodySize = 42
        let bytes = CacheEntryCodec.encode(e)
        #expect(try CacheEntryCodec.decode(bytes) == e)
        for cut in [0, 3, 10, bytes.count - 1] {
            #expect(throws: HTTPContentError.self) { try CacheEntryCodec.decode(bytes.prefix(cut)) }
        }
        var huge = bytes
        huge[8...11] = [0xFF, 0xFF, 0xFF, 0x7F]  // the URL's length
        #expect(throws: HTTPContentError.self) { try CacheEntryCodec.decode(huge) }
    }
}

// MARK: - Through a client, against an origin that counts requests

@Suite struct CacheClientTests {
    @Test(arguments: ["memory", "sqlite"])
    func aFreshResponseIsServedFromTheStoreThroughAnyHandler(_ kind: String) throws {
        let cache = kind == "memory" ? HTTPCache.memory() : try HTTPCache.file(tempPath("fresh.sqlite"))
        let c = try client(cache)
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=60"), ("body", "{\"a\": [1, 2, 3]}"), ("type", "application/json")])
        let first = try c.get(url, handler: JSON())
        #expect(first.cacheStatus == .miss && !first.fromCache)
        let second = try c.get(url, handler: JSON())
        #expect(second.cacheStatus == .hit && second.fromCache)
        #expect(second.content?["a.2"]?.int64Value == 3)
        #expect(second.headers["age"] != nil && second.headers["x-count"] == "1")
        let text = try c.get(url, handler: Text())
        #expect(text.content == "{\"a\": [1, 2, 3]}")
        let head = try c.send(Request("HEAD", url), handler: Discard())
        #expect(head.cacheStatus == .hit)
        #expect(try origin(k).count == 1)
    }

    @Test func aStaleResponseIsRevalidatedAndTheStoredBodyReplayedOn304() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=0"), ("etag", "\"v1\""), ("body", "stored body")])
        #expect(try c.get(url, handler: Text()).cacheStatus == .miss)
        let second = try c.get(url, handler: Text())
        #expect(second.cacheStatus == .revalidated && second.fromCache)
        #expect(second.status == 200 && second.content == "stored body")
        #expect(second.headers["x-count"] == "2")  // the 304's fields replace the stored ones
        let seen = try origin(k)
        #expect(seen.count == 2 && seen.headers["if-none-match"] == "\"v1\"")
    }

    @Test func lastModifiedValidatesWithIfModifiedSince() throws {
        let c = try client(.memory())
        let k = key()
        let lm = "Sun, 06 Nov 1994 08:49:37 GMT"
        let url = cached(k, [("h", "Cache-Control: no-cache"), ("lm", lm)])
        _ = try c.get(url, handler: Text())
        #expect(try c.get(url, handler: Text()).cacheStatus == .revalidated)
        #expect(try origin(k).headers["if-modified-since"] == lm)
    }

    @Test func aConditionalRequestIsAnswered304FromAFreshStoredResponse() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=60"), ("etag", "\"v1\""), ("body", "stored")])
        _ = try c.get(url, handler: Text())
        let r = try c.send(Request("GET", url, headers: ["If-None-Match": "\"v1\""]), handler: Bytes(acceptance: .anything))
        #expect(r.status == 304 && r.cacheStatus == .hit && r.content.isEmpty && r.headers["etag"] == "\"v1\"")
        // Another tag: the stored response itself, whole.
        let other = try c.send(Request("GET", url, headers: ["If-None-Match": "\"v0\""]), handler: Text())
        #expect(other.status == 200 && other.cacheStatus == .hit && other.content == "stored")
        #expect(try origin(k).count == 1)
        // Nothing fresh stored: the request goes out with the caller's own field, as it is.
        let k2 = key()
        let stale = cached(k2, [("h", "Cache-Control: no-cache"), ("etag", "\"w\"")])
        _ = try c.get(stale, handler: Text())
        let sent = try c.send(Request("GET", stale, headers: ["If-None-Match": "\"mine\""]), handler: Text())
        #expect(sent.status == 200 && sent.cacheStatus == .miss)
        #expect(try origin(k2).headers["if-none-match"] == "\"mine\"")
    }

    @Test func aHeadAnswerRefreshesTheStoredGetsFields() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=0"), ("body", "kept")])
        _ = try c.get(url, handler: Text())
        let head = try c.send(Request("HEAD", url), handler: Discard())  // x-count 2 from the origin
        #expect(head.headers["x-count"] == "2")
        // The stored GET now carries the HEAD's fields: a stale hit allowed by max-stale shows them.
        let r = try c.send(Request("GET", url, headers: ["Cache-Control": "max-stale=60"]), handler: Text())
        #expect(r.cacheStatus == .stale && r.content == "kept" && r.headers["x-count"] == "2")
        #expect(try origin(k).count == 2)
    }

    @Test func noStoreAndUncacheableResponsesAlwaysGoToTheOrigin() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: no-store")])
        _ = try c.get(url, handler: Text())
        #expect(try c.get(url, handler: Text()).cacheStatus == .miss)
        var request = Request.get(cached(k + "b", [("h", "Cache-Control: max-age=60")]))
        request.headers.add("Cache-Control", "no-store")
        _ = try c.send(request, handler: Text())
        _ = try c.send(request, handler: Text())
        #expect(try origin(k).count == 2 && origin(k + "b").count == 2)
    }

    @Test func varyKeepsOneVariantPerRequestValue() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=60"), ("h", "Vary: Accept-Language")])
        func get(_ lang: String) throws -> CacheStatus? {
            try c.send(Request("GET", url, headers: ["Accept-Language": lang]), handler: Text()).cacheStatus
        }
        #expect(try get("fr") == .miss)
        #expect(try get("de") == .miss)
        #expect(try get("fr") == .hit)
        #expect(try get("de") == .hit)
        #expect(try origin(k).count == 2)
    }

    @Test func anUnsafeMethodInvalidatesTheStoredResponse() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=60")])
        _ = try c.get(url, handler: Text())
        #expect(try c.get(url, handler: Text()).cacheStatus == .hit)
        _ = try c.send(Request("POST", url, body: .bytes(Array("x".utf8), contentType: "text/plain")), handler: Text())
        #expect(try c.get(url, handler: Text()).cacheStatus == .miss)
        #expect(try origin(k).count == 3)
    }

    @Test func staleIfErrorServesTheStoredResponseWhenTheOriginFails() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=0, stale-if-error=60"), ("fail_after", "1"), ("body", "old")])
        _ = try c.get(url, handler: Text())
        let second = try c.get(url, handler: Text())
        #expect(second.cacheStatus == .stale && second.content == "old" && second.status == 200)
        // Without stale-if-error the 503 is the answer, and the error says it was a miss.
        let k2 = key()
        let url2 = cached(k2, [("h", "Cache-Control: max-age=0"), ("fail_after", "1")])
        _ = try c.get(url2, handler: Text())
        do {
            _ = try c.get(url2, handler: Text())
            Issue.record("a 503 was accepted")
        } catch {
            #expect(error.response?.status == 503 && error.response?.cacheStatus == .miss)
        }
    }

    @Test func onlyIfCachedWithNothingStoredIs504() throws {
        let c = try client(.memory())
        let k = key()
        do {
            _ = try c.send(Request("GET", cached(k), headers: ["Cache-Control": "only-if-cached"]), handler: Text())
            Issue.record("only-if-cached went to the origin")
        } catch {
            #expect(error.code == .unacceptableStatus && error.response?.status == 504)
        }
        #expect(try origin(k).count == 0)
    }

    @Test func maxStaleServesAStaleResponseMarkedStale() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=0")])
        _ = try c.get(url, handler: Text())
        let r = try c.send(Request("GET", url, headers: ["Cache-Control": "max-stale=60"]), handler: Text())
        #expect(r.cacheStatus == .stale)
        #expect(try origin(k).count == 1)
    }

    @Test func aRejectingHandlerOnAHitGetsTheErrorATransferWouldGive() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=60"), ("status", "404"), ("body", "gone")])
        _ = try c.get(url, handler: Bytes(acceptance: .anything))
        do {
            _ = try c.get(url, handler: Text())
            Issue.record("a 404 was accepted")
        } catch {
            #expect(error.code == .unacceptableStatus && error.response?.status == 404)
            #expect(error.response?.cacheStatus == .hit && error.body == Array("gone".utf8))
        }
        #expect(try origin(k).count == 1)
    }
}

// MARK: - The SQLite store

@Suite struct SQLiteCacheStoreTests {
    @Test func twoCachesOnOneFileShareEntriesAndLargeBodiesComeBackWhole() throws {
        let path = tempPath("shared.sqlite")
        let k = key()
        let n = 3 << 20 + 17  // several chunk rows
        let url = cached(k, [("h", "Cache-Control: max-age=60"), ("n", String(n))])
        let a = try client(.file(path))
        let b = try client(.file(path))
        #expect(try a.get(url, handler: Bytes()).cacheStatus == .miss)
        let hit = try b.get(url, handler: Bytes())
        #expect(hit.cacheStatus == .hit && Array(hit.content) == expectedBytes(n))
        #expect(try origin(k).count == 1)
    }

    @Test func leastRecentlyUsedResponsesAreEvictedOverTheLimit() throws {
        let store = try SQLiteCacheStore(path: tempPath("lru.sqlite"), maxBytes: 250_000)
        let c = try client(HTTPCache(store: store))
        let keys = (0..<3).map { _ in key() }
        let urls = keys.map { cached($0, [("h", "Cache-Control: max-age=60"), ("n", "100000")]) }
        _ = try c.get(urls[0], handler: Bytes())
        _ = try c.get(urls[1], handler: Bytes())
        _ = try c.get(urls[2], handler: Bytes())  // 300 000 bytes: the oldest goes
        #expect(try store.storedBytes() == 200_000)
        #expect(try store.variants(of: urls[0]).isEmpty)
        #expect(try c.get(urls[2], handler: Bytes()).cacheStatus == .hit)
    }

    @Test func aBodyLargerThanTheLimitIsNotStored() throws {
        let store = try SQLiteCacheStore(path: tempPath("big.sqlite"), maxBytes: 1000)
        let c = try client(HTTPCache(store: store))
        let url = cached(key(), [("h", "Cache-Control: max-age=60"), ("n", "5000")])
        _ = try c.get(url, handler: Bytes())
        #expect(try c.get(url, handler: Bytes()).cacheStatus == .miss)
        #expect(try store.storedBytes() == 0)
    }

    @Test func aForeignOrCorruptFileIsAClearErrorAndLeftAlone() throws {
        let garbage = tempPath("garbage.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: garbage))
        #expect { try SQLiteCacheStore(path: garbage) } throws: { e in
            (e as? HTTPContentError)?.code == .io && "\(e)".contains("not a usable httpcontent cache")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbage)) == Data(repeating: 0x41, count: 8192))
        let foreign = tempPath("foreign.sqlite")
        let other = try SQLiteCacheStore(path: foreign)
        _ = other
        // A database of another application: same engine, other application id.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()", foreign + "-other"]
        try p.run()
        p.waitUntilExit()
        #expect { try SQLiteCacheStore(path: foreign + "-other") } throws: { e in
            "\(e)".contains("another application")
        }
    }

    @Test func anUnfinishedWriteIsInvisibleAndAnAbortLeavesNothing() throws {
        let path = tempPath("abort.sqlite")
        let store = try SQLiteCacheStore(path: path)
        let e = CacheEntry(url: "http://h/x", status: 200, headers: ["Cache-Control": "max-age=60"],
                           requestTime: CachePolicy.now(), responseTime: CachePolicy.now())
        let writer = try store.beginStore(e)
        try Array(repeating: UInt8(7), count: 600_000).withUnsafeBytes { try writer.write($0) }
        #expect(try store.variants(of: "http://h/x").isEmpty)  // chunk rows written, not visible
        let reopened = try SQLiteCacheStore(path: path)
        #expect(try reopened.variants(of: "http://h/x").isEmpty)
        writer.abort()
        try writer.commit()  // after abort: nothing
        #expect(try reopened.storedBytes() == 0)
        let w2 = try store.beginStore(e)
        try Array(repeating: UInt8(9), count: 300_000).withUnsafeBytes { try w2.write($0) }
        try w2.commit()
        let got = try reopened.variants(of: "http://h/x")
        #expect(got.count == 1 && got[0].entry.bodySize == 300_000)
        var total = 0
        try reopened.readBody(got[0]) { total += $0.count; #expect($0.allSatisfy { $0 == 9 }) }
        #expect(total == 300_000)
    }
}

// MARK: - The paths that do not block: async send and batches

@Suite struct CacheAsyncPathTests {
    @Test func anAsyncSendMissesThenHitsThenRevalidates() async throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=60"), ("body", "one")])
        let first = try await c.send(Request.get(url), handler: Text())
        #expect(first.cacheStatus == .miss && first.content == "one")
        let second = try await c.send(Request.get(url), handler: Text())
        #expect(second.cacheStatus == .hit && second.fromCache && second.content == "one")
        #expect(try origin(k).count == 1)
        let k2 = key()
        let stale = cached(k2, [("h", "Cache-Control: max-age=0"), ("etag", "\"v1\""), ("body", "kept")])
        #expect(try await c.send(Request.get(stale), anyHandler: Text()).cacheStatus == .miss)
        let again = try await c.send(Request.get(stale), anyHandler: Text())
        #expect(again.cacheStatus == .revalidated && again.status == 200 && again.content as? String == "kept")
        let seen = try origin(k2)
        #expect(seen.count == 2 && seen.headers["if-none-match"] == "\"v1\"")
    }

    @Test func anAsyncSendServesStaleIfErrorAndAnUnsafeMethodInvalidates() async throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=0, stale-if-error=60"), ("fail_after", "1"), ("body", "old")])
        _ = try await c.send(Request.get(url), handler: Text())
        let second = try await c.send(Request.get(url), handler: Text())
        #expect(second.cacheStatus == .stale && second.content == "old" && second.status == 200)
        let k2 = key()
        let fresh = cached(k2, [("h", "Cache-Control: max-age=60")])
        _ = try await c.send(Request.get(fresh), handler: Text())
        _ = try await c.send(Request("DELETE", fresh), handler: Discard())
        #expect(try await c.send(Request.get(fresh), handler: Text()).cacheStatus == .miss)
        #expect(try origin(k2).count == 3)
    }

    @Test func aBatchHitCompletesOnTheNextTurnWithoutATransfer() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: max-age=60"), ("body", "batched")])
        let batch = Batch(client: c)
        var outcomes: [Result<Response<String>, HTTPContentError>] = []
        batch.add(Request.get(url), handler: Text()) { outcomes.append($0) }
        batch.run()
        batch.add(Request.get(url), handler: Text()) { outcomes.append($0) }
        #expect(outcomes.count == 1 && batch.pending == 1)  // not during add: at the next turn
        batch.run()
        let statuses = try outcomes.map { try $0.get().cacheStatus }
        #expect(statuses == [.miss, .hit])
        #expect(try outcomes[1].get().content == "batched")
        #expect(try origin(k).count == 1)
    }

    @Test func aBatchRevalidatesAStaleEntryAndACancelledHitCompletesCancelled() throws {
        let c = try client(.memory())
        let k = key()
        let url = cached(k, [("h", "Cache-Control: no-cache"), ("etag", "\"e\""), ("body", "kept")])
        let batch = Batch(client: c)
        var statuses: [CacheStatus?] = []
        for _ in 0..<2 {
            batch.add(Request.get(url), anyHandler: Text()) { statuses.append(try? $0.get().cacheStatus) }
            batch.run()
        }
        #expect(statuses == [.miss, .revalidated])
        #expect(try origin(k).count == 2)
        let k2 = key()
        let fresh = cached(k2, [("h", "Cache-Control: max-age=60")])
        batch.add(Request.get(fresh), handler: Discard()) { _ in }
        batch.run()
        let token = batch.cancelToken()
        var code: HTTPContentError.Code?
        batch.add(Request.get(fresh), handler: Text(), cancel: token) { outcome in
            if case .failure(let error) = outcome { code = error.code }
        }
        batch.cancel(token)
        batch.run()
        #expect(code == .cancelled && batch.pending == 0)
    }
}
