import Foundation
import Testing
import XCTest
@testable import HTTPContent

/// Issue 31 on the Swift front: links that misbehave (Tests/server/faultproxy.py between the
/// client and the test server), through the blocking and the async API. A download reset
/// mid-way resumes to the exact bytes (its digest covers the part kept on disk); stalls and
/// capped links fire the read, low-speed and total limits as `.timeout` within bounds; dripped
/// heads, caps and jitter keep bodies exact; a reset is `.transport` with libcurl's receive
/// error and the response it broke; an event stream cut mid-event reconnects with nothing lost,
/// repeated or spliced. Serialized: the time bounds are about this test's link, not a crowd's.
@Suite("Links that misbehave (fault proxy)", .serialized)
struct FaultProxyTests {
    static let curlRecvError: Int32 = 56
    /// sha256 of /range/3000000 (byte i is i % 251), as hashlib computes it.
    static let sha256Of3MB = "4d3870d4655ed773027a713ea136507d22e076248e0e9cc920a996039653b76f"

    private func makeClient(timeout: Duration? = .seconds(30), readTimeout: Duration? = nil,
                        lowSpeed: ClientConfiguration.LowSpeedLimit? = nil) throws -> Client {
        var config = ClientConfiguration()
        config.timeout = timeout
        config.readTimeout = readTimeout
        config.lowSpeedLimit = lowSpeed
        return try Client(configuration: config)
    }

    private func elapsed(_ start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    private func size(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int).flatMap { Int64($0) }
    }

    // MARK: - Downloads

    @Test func aResetDownloadResumesToTheExactBytes() throws {
        let dir = TempDir()
        let target = dir.path + "/big.bin"
        var options = File.Options()
        options.resume = true
        options.digest = try ExpectedDigest(.sha256, hex: Self.sha256Of3MB)
        let proxy = try FaultProxy(["--reset-after", "1200000", "--faulty", "1"])
        defer { proxy.stop() }
        let client = try makeClient()
        let url = proxy.url("/range/3000000")
        let error = #expect(throws: HTTPContentError.self) {
            _ = try client.get(url, handler: File(path: target, options: options))
        }
        #expect(error?.code == .transport && error?.curlCode == Self.curlRecvError)
        #expect(size(target) == nil)                        // nothing half-written in its place
        let kept = try #require(size(target + ".part"))
        #expect(kept > 0 && kept <= 1_200_000)
        let r = try client.get(url, handler: File(path: target, options: options))   // a clean link
        #expect(r.status == 206 && r.content.resumed && r.content.size == 3_000_000)
        #expect(r.content.bytesWritten == 3_000_000 - kept)
        #expect(r.content.digest == "sha256:" + Self.sha256Of3MB)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: target))) == expectedBytes(3_000_000))
        let stats = proxy.stats()
        #expect(stats.connections == 2 && stats.resets == 1)
    }

    @Test func aResetDownloadResumesThroughTheAsyncAPI() async throws {
        let dir = TempDir()
        let target = dir.path + "/big.bin"
        var options = File.Options()
        options.resume = true
        let proxy = try FaultProxy(["--reset-after", "300000", "--faulty", "1"])
        defer { proxy.stop() }
        let client = try makeClient()
        let request = Request.get(proxy.url("/range/1000000"))
        await #expect(throws: HTTPContentError.self) {
            _ = try await client.send(request, handler: File(path: target, options: options))
        }
        let r = try await client.send(request, handler: File(path: target, options: options))
        #expect(r.status == 206 && r.content.resumed && r.content.bytesWritten < 1_000_000)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: target))) == expectedBytes(1_000_000))
        let stats = proxy.stats()
        #expect(stats.connections == 2 && stats.resets == 1)
    }

    // MARK: - Time limits

    @Test func aStallFiresTheReadTimeout() async throws {
        let proxy = try FaultProxy(["--stall-after", "20000", "--stall", "5"])
        defer { proxy.stop() }
        let client = try makeClient(timeout: nil, readTimeout: .milliseconds(500))
        var start = ContinuousClock.now
        let error = #expect(throws: HTTPContentError.self) {
            _ = try client.get(proxy.url("/bytes/200000"), handler: Bytes())
        }
        var waited = elapsed(start)
        #expect(error?.code == .timeout && error?.response?.status == 200)
        #expect(waited > 0.4 && waited < 4, "waited \(waited) s")
        start = ContinuousClock.now
        let async = await #expect(throws: HTTPContentError.self) {
            _ = try await client.send(.get(proxy.url("/bytes/200000")), handler: Bytes())
        }
        waited = elapsed(start)
        #expect(async?.code == .timeout)
        #expect(waited > 0.4 && waited < 4, "waited \(waited) s (async)")
    }

    /// Capped at 500 B/s under a limit of 1000 B/s for 1 s. (A stall after a burst fires it
    /// about 5 s late: libcurl averages the speed over 5 s; test_faults.c pins that.)
    @Test func aSlowLinkFiresTheLowSpeedLimit() throws {
        let proxy = try FaultProxy(["--rate", "500"])
        defer { proxy.stop() }
        let client = try makeClient(timeout: nil, lowSpeed: .init(bytesPerSecond: 1000, seconds: 1))
        let start = ContinuousClock.now
        let error = #expect(throws: HTTPContentError.self) {
            _ = try client.get(proxy.url("/bytes/200000"), handler: Bytes())
        }
        let waited = elapsed(start)
        #expect(error?.code == .timeout)
        #expect(waited > 0.9 && waited < 4, "waited \(waited) s")
    }

    /// 1 MB at 100 kB/s takes 10 s: a 0.7 s total limit fires though bytes keep coming.
    @Test func aTotalTimeoutFiresOnACappedLink() async throws {
        let proxy = try FaultProxy(["--rate", "100000"])
        defer { proxy.stop() }
        let client = try makeClient(timeout: .milliseconds(700))
        for useAsync in [false, true] {
            let start = ContinuousClock.now
            var error: HTTPContentError?
            do throws(HTTPContentError) {
                if useAsync {
                    _ = try await client.send(.get(proxy.url("/bytes/1000000")), handler: Bytes())
                } else {
                    _ = try client.get(proxy.url("/bytes/1000000"), handler: Bytes())
                }
            } catch let failure { error = failure }
            let waited = elapsed(start)
            #expect(error?.code == .timeout, "async: \(useAsync)")
            #expect(waited > 0.6 && waited < 4, "waited \(waited) s, async: \(useAsync)")
        }
    }

    /// ~150 head bytes 50 ms apart take seconds: a timeout, not a malformed response.
    @Test func aDrippingHeadPastTheLimitIsATimeout() throws {
        let proxy = try FaultProxy(["--drip-headers", "0.05"])
        defer { proxy.stop() }
        let client = try makeClient(timeout: .milliseconds(500))
        let error = #expect(throws: HTTPContentError.self) {
            _ = try client.get(proxy.url("/bytes/10"), handler: Bytes())
        }
        #expect(error?.code == .timeout && error?.response == nil)
    }

    // MARK: - Exact bodies

    @Test func aHeadDrippedByteByByteIsReadWhole() async throws {
        let proxy = try FaultProxy(["--drip-headers", "0.002"])
        defer { proxy.stop() }
        let client = try makeClient()
        let r = try client.get(proxy.url("/bytes/1000"), handler: Bytes())
        #expect(r.status == 200 && r.headers["content-length"] == "1000")
        #expect(Array(r.content) == expectedBytes(1000))
        let a = try await client.send(.get(proxy.url("/bytes/700")), handler: Bytes())
        #expect(Array(a.content) == expectedBytes(700))
    }

    /// 200 kB at 400 kB/s: at least 0.4 s, and every byte.
    @Test func aBandwidthCapSlowsTheBodyAndKeepsItWhole() throws {
        let proxy = try FaultProxy(["--rate", "400000"])
        defer { proxy.stop() }
        let start = ContinuousClock.now
        let r = try makeClient().get(proxy.url("/bytes/200000"), handler: Bytes())
        #expect(elapsed(start) >= 0.4)
        #expect(Array(r.content) == expectedBytes(200_000))
    }

    @Test func latencyAndJitterKeepEveryBodyWhole() async throws {
        let proxy = try FaultProxy(["--latency", "0.002", "--jitter", "0.01"])
        defer { proxy.stop() }
        let client = try makeClient()
        for n in [1, 5000, 70000, 300_000] {
            #expect(Array(try client.get(proxy.url("/bytes/\(n)"), handler: Bytes()).content) == expectedBytes(n))
            #expect(Array(try await client.send(.get(proxy.url("/bytes/\(n)")), handler: Bytes()).content) == expectedBytes(n))
        }
    }

    // MARK: - Errors

    @Test func aResetMidBodyIsATransportErrorWithTheResponseKept() async throws {
        let proxy = try FaultProxy(["--reset-after", "50000"])
        defer { proxy.stop() }
        let client = try makeClient()
        let error = #expect(throws: HTTPContentError.self) {
            _ = try client.get(proxy.url("/bytes/500000"), handler: Bytes())
        }
        #expect(error?.code == .transport && error?.curlCode == Self.curlRecvError)
        #expect(error?.response?.status == 200)   // the head had arrived: which response broke
        let async = await #expect(throws: HTTPContentError.self) {
            _ = try await client.send(.get(proxy.url("/bytes/500000")), handler: Bytes())
        }
        #expect(async?.code == .transport && async?.curlCode == Self.curlRecvError)
        let stats = proxy.stats()
        #expect(stats.connections == 2 && stats.resets == 2)
    }

    // MARK: - Event streams

    /// Cut (test_faults.c has the byte map) inside event 3's id line, after event 5's data line
    /// but before the blank line that dispatches it, and in the body's last chunk: each time the
    /// stream reconnects with Last-Event-ID and events 1..8 arrive once each, whole, in order.
    @Test(arguments: [261, 333, 419])
    func anEventStreamCutMidEventReconnectsWithNothingLostOrSpliced(cut: Int) throws {
        let proxy = try FaultProxy(["--reset-after", String(cut), "--faulty", "1"])
        defer { proxy.stop() }
        var events: [ServerSentEvent] = []
        // The comment each connection's server sends names the Last-Event-ID it got: the id of
        // the last event dispatched before it ("" for none), not that of an event cut short.
        var heard: [(comment: String, lastDispatched: String)] = []
        let summary = try EventSource.run(client: makeClient(),
                                          request: .get(proxy.url("/records/sse-resume?total=8&per=8&mode=close&retry=10")),
                                          options: EventSourceOptions(reconnect: true, maxReconnects: 3),
                                          onComment: { heard.append(($0, events.last?.id ?? "")) }) { events.append($0) }
        #expect(!heard.isEmpty && heard.allSatisfy { $0.comment == " last-event-id=" + $0.lastDispatched })
        #expect(events.map(\.id) == (1...8).map(String.init))
        #expect(events.map(\.data) == (1...8).map { "event \($0)" })
        #expect(summary.reconnects >= 1)
        let stats = proxy.stats()
        #expect(stats.resets == 1 && stats.connections >= 2)
    }

    @Test func anEventStreamCutMidEventReconnectsAsAnAsyncSequence() async throws {
        let proxy = try FaultProxy(["--reset-after", "297", "--faulty", "1"])   // inside event 4's data line
        defer { proxy.stop() }
        var events: [ServerSentEvent] = []
        for try await event in try makeClient().events(.get(proxy.url("/records/sse-resume?total=8&per=8&mode=close&retry=10")),
                                                   options: EventSourceOptions(reconnect: true, maxReconnects: 3)) {
            events.append(event)
        }
        #expect(events.map(\.id) == (1...8).map(String.init))
        #expect(events.map(\.data) == (1...8).map { "event \($0)" })
        #expect(proxy.stats().resets == 1)
    }
}

/// Memory stays flat while a large download crawls over a capped link: libcurl's buffer and the
/// file handler's window, never the body. XCTest, so no other test runs (and allocates) in this
/// process meanwhile; scripts/sanitize.sh sets HC_SKIP_MEMORY_TESTS (ASan's shadow memory).
final class FaultProxyMemoryTests: XCTestCase {
    static let size = 24_000_000
    static let allowedGrowth = 8 << 20

    override func setUpWithError() throws {
        try XCTSkipIf(ProcessInfo.processInfo.environment["HC_SKIP_MEMORY_TESTS"] != nil,
                      "RSS is not measurable under a sanitizer")
    }

    func testACappedLargeDownloadKeepsMemoryFlat() throws {
        let proxy = try FaultProxy(["--rate", "8000000"])   // 24 MB at 8 MB/s: about 3 s
        defer { proxy.stop() }
        let dir = TempDir()
        var options = File.Options()
        options.fsync = false
        let client = try Client()
        _ = try client.get(proxy.url("/bytes/1000"), handler: Bytes())   // warm: first-use allocations
        let before = try residentBytes()
        let r = try client.get(proxy.url("/bytes/\(Self.size)"), handler: File(path: dir.path + "/big.bin", options: options))
        let growth = try residentBytes() - before
        XCTAssertEqual(r.content.size, Int64(Self.size))
        XCTAssertLessThanOrEqual(growth, Self.allowedGrowth, "RSS grew by \(growth >> 10) KiB")
        // The bytes are the origin's: compared a window at a time (reading it whole would not be flat).
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: dir.path + "/big.bin"))
        defer { try? handle.close() }
        var offset = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            XCTAssert(chunk.enumerated().allSatisfy { $0.element == UInt8((offset + $0.offset) % 251) }, "at \(offset)")
            offset += chunk.count
        }
        XCTAssertEqual(offset, Self.size)
    }
}

/// The resident set size from /proc/self/statm (its second field, in pages).
private func residentBytes() throws -> Int {
    let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else {
        throw HTTPContentError(.localIO, "unreadable /proc/self/statm: \(text)")
    }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
