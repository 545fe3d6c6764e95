import Foundation
import Synchronization
import Testing
@testable import HTTPContent

private let server = TestServer.shared

/// The streaming promise from Swift: batches hand over what is complete when a chunk ends (an
/// item cut there goes on in the next batch), a token set from another thread stops a transfer
/// on an idle connection at once, and the read timeout fails a silent transfer on time, on the
/// blocking, batch and async paths, while a stream that never goes silent that long lives.
@Suite(.serialized) struct StreamingPromiseTests {
    /// `body` cut at `at` (byte offsets), each part held `hold` seconds.
    private func drip(_ body: String, at: [Int], hold: Double, type: String = "application/json") -> String {
        let b64 = Data(body.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return server.url("/records/drip?b64=\(b64)&at=\(at.map(String.init).joined(separator: ","))&hold=\(hold)&ctype=\(type)")
    }

    /// Five lines, one every 0.3 s.
    private var lines: String { drip("1\n2\n3\n4\n5\n", at: [2, 4, 6, 8], hold: 0.3, type: "text/plain") }

    @Test func batchesHandOverTheItemsCompleteWhenAChunkEnds() throws {
        let start = ContinuousClock.now
        var texts: [String] = []
        var secondAt: Duration?
        var items = 0
        let handler = try JSONItemBatches(prefixes: ["items.item"]) { _, json, n in
            texts.append(String(decoding: json, as: UTF8.self))
            items += n
            if items >= 2, secondAt == nil { secondAt = ContinuousClock.now - start }
        }
        let body = #"{"items": [{"a": 1}, {"a": 2}, {"a": 3}]}"#
        _ = try Client().get(drip(body, at: [35], hold: 2), handler: handler)
        #expect(texts == [#"[{"a":1},{"a":2}]"#, #"[{"a":3}]"#])
        #expect(secondAt.map { $0 < .seconds(1) } == true)
    }

    @Test func aTokenSetElsewhereStopsAnIdleTransferAtOnce() throws {
        let token = CancelToken()
        let client = try Client()
        let stall = server.url("/stall?bytes=100")
        let cancelledAt = Locked<ContinuousClock.Instant?>(nil)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            cancelledAt.withLock { $0 = ContinuousClock.now }
            token.cancel()
        }
        #expect(throws: HTTPContentError.self) {
            _ = try client.send(.get(stall), handler: Discard(), cancel: token)
        }
        // From the cancel on (a loaded machine may run the timer late): libcurl's own progress
        // tick, the only look at the token before, came up to a second later.
        let after = cancelledAt.withLock { $0 }.map { ContinuousClock.now - $0 }
        #expect(after.map { $0 < .milliseconds(600) } == true, "returned \(String(describing: after)) after the cancel")
    }

    @Test func aTokenSetElsewhereStopsATransferOfABatchAtOnce() throws {
        let token = CancelToken()
        let batch = Batch(client: try Client())
        var outcome: HTTPContentError?
        let stall = server.url("/stall?bytes=100")
        batch.add(.get(stall), handler: Discard(), cancel: token) {
            if case .failure(let e) = $0 { outcome = e }
        }
        let cancelledAt = Locked<ContinuousClock.Instant?>(nil)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            cancelledAt.withLock { $0 = ContinuousClock.now }
            token.cancel()
        }
        batch.run()
        #expect(outcome?.code == .cancelled)
        let after = cancelledAt.withLock { $0 }.map { ContinuousClock.now - $0 }
        #expect(after.map { $0 < .milliseconds(600) } == true, "returned \(String(describing: after)) after the cancel")
    }

    private func readTimeoutClient(_ ms: Int) throws -> Client {
        var config = ClientConfiguration()
        config.readTimeout = .milliseconds(ms)
        return try Client(configuration: config)
    }

    @Test func theReadTimeoutFailsASilentTransferOnTime() async throws {
        let client = try readTimeoutClient(400)
        let stall = server.url("/stall?bytes=100")
        func check(_ error: HTTPContentError?, since start: ContinuousClock.Instant) {
            #expect(error?.code == .timeout)
            #expect(error?.message.contains("read timeout") == true)
            let took = ContinuousClock.now - start
            // Not early, and not far late: the full suite on a loaded machine was seen at 1.5-2 s.
            #expect(took > .milliseconds(350) && took < .milliseconds(4000), "took \(took)")
        }
        var start = ContinuousClock.now
        do { _ = try client.get(stall, handler: Discard()); Issue.record("no timeout") } catch { check(error, since: start) }

        start = ContinuousClock.now
        let batch = Batch(client: client)
        var failure: HTTPContentError?
        batch.add(.get(stall), handler: Discard()) { if case .failure(let e) = $0 { failure = e } }
        batch.run()
        check(failure, since: start)

        start = ContinuousClock.now
        do { _ = try await client.send(.get(stall), handler: Discard()); Issue.record("no timeout") } catch { check(error, since: start) }
    }

    @Test func aStreamLongerThanTheReadTimeoutButNeverSilentThatLongLives() async throws {
        let client = try readTimeoutClient(800)
        #expect(try client.get(lines, handler: Text()).content == "1\n2\n3\n4\n5\n")
        #expect(try await client.send(.get(lines), handler: Text()).content == "1\n2\n3\n4\n5\n")
        let batch = Batch(client: client)
        var text: String?
        batch.add(.get(lines), handler: Text()) { text = try? $0.get().content }
        batch.run()
        #expect(text == "1\n2\n3\n4\n5\n")
    }

    @Test func aSlowReaderOfAnItemSequenceHoldsTheTransferBack() async throws {
        // 1,000,000 lines (~12 MB): a reader that takes 10 and then sleeps must find the
        // transfer paused with about what one pause lets through (the queue's 64, plus the
        // rest of the 16 KiB chunk that filled it), not the whole body parsed into memory.
        let produced = Atomic<Int>(0)
        let client = try Client()
        let lines = client.itemStream(.get(server.url("/ndjson?n=1000000"))) { (yield: @escaping (String) -> Bool) in
            Lines { line in
                produced.add(1, ordering: .relaxed)
                if !yield(line) { throw StopTransfer() }
            }
        }
        var taken = 0
        for try await _ in lines {
            taken += 1
            if taken == 10 { break }
        }
        // The loop is left, but `lines` is still held: the transfer stays paused meanwhile.
        try await Task.sleep(for: .seconds(1))
        let held = produced.load(ordering: .relaxed)
        #expect(held < 10 + ItemQueue<String>.capacity + 4000, "\(held) lines made for a reader that took 10")
        var more = 0
        for try await _ in lines {
            more += 1
            if more == 200_000 { break }
        }
        #expect(more == 200_000)   // resumed as the reader came back
    }

    @Test func aRequestLiftsOrSetsTheClientsLimits() throws {
        var config = ClientConfiguration()
        config.timeout = .milliseconds(500)
        let client = try Client(configuration: config)
        #expect(throws: HTTPContentError.self) { _ = try client.get(lines, handler: Text()) }
        var lifted = Request.get(lines)
        lifted.options.timeout = .zero
        lifted.options.readTimeout = .milliseconds(100)
        #expect(throws: HTTPContentError.self) { _ = try client.send(lifted, handler: Text()) }
        lifted.options.readTimeout = .seconds(1)
        #expect(try client.send(lifted, handler: Text()).content == "1\n2\n3\n4\n5\n")
    }
}
