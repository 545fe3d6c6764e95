import Foundation
import Testing
@testable import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

private let server = TestServer.shared

/// A batch polling its own sockets (`Batch.pollDescriptor`/`step`): an event loop watches one
/// descriptor, as asyncio's does through the C front.
@Suite struct BatchPollTests {
    let client = try! Client()

    /// One turn of a loop of mine: wait for the descriptor (or the batch's timeout), then step.
    private func turn(_ batch: Batch, fd: Int32) {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = batch.stepTimeoutMs
        _ = poll(&p, 1, Int32(ms < 0 || ms > 200 ? 200 : ms))
        batch.step()
    }

    @Test func oneDescriptorServesEveryTransfer() throws {
        let batch = Batch(client: client, maxConcurrent: 8)
        let fd = try #require(batch.pollDescriptor())
        #expect(batch.pollDescriptor() == fd)   // asked again: the same one
        #expect(batch.pollsOwnSockets && !batch.handsSocketsToCaller)
        var sizes: [Int: Int] = [:]
        for n in 1...40 {
            batch.add(.get(server.url("/bytes/\(n * 10)")), handler: Bytes()) { result in
                sizes[n] = (try? result.get())?.content.count ?? -1
            }
        }
        #expect(batch.stepTimeoutMs == 0)   // added: step at once
        for _ in 0..<2000 where batch.pending > 0 { turn(batch, fd: fd) }
        #expect(batch.pending == 0)
        #expect(sizes.count == 40 && sizes.allSatisfy { $0.value == $0.key * 10 })
        #expect(batch.stepTimeoutMs == -1 || batch.stepTimeoutMs > 0)   // idle: nothing due now
    }

    /// The error a transfer completed with (set by its completion).
    private final class Outcome { var code: HTTPContentError.Code? }

    /// A batch polling its own sockets with one transfer under `token` that the server stalls,
    /// a few turns in.
    private func stalled(under token: CancelToken) throws -> (batch: Batch, fd: Int32, outcome: Outcome) {
        let batch = Batch(client: client)
        let fd = try #require(batch.pollDescriptor())
        let outcome = Outcome()
        batch.add(.get(server.url("/stall?bytes=10")), handler: Bytes(), cancel: token) { result in
            if case .failure(let e) = result { outcome.code = e.code }
        }
        for _ in 0..<5 { turn(batch, fd: fd) }
        #expect(batch.pending == 1)
        return (batch, fd, outcome)
    }

    @Test func aTokenSetEndsItsTransferAtTheNextStep() throws {
        let token = CancelToken()
        let (batch, _, outcome) = try stalled(under: token)
        token.cancel()
        batch.step()
        #expect(outcome.code == .cancelled && batch.pending == 0)
    }

    /// A token set from another thread makes the descriptor readable (the poller's eventfd):
    /// a loop asleep on it wakes and its step ends the transfer, without waiting for a timer.
    @Test func aTokenSetFromAnotherThreadWakesTheDescriptor() throws {
        let token = CancelToken()
        let (batch, fd, outcome) = try stalled(under: token)
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 0) == 0)   // quiet: the server sends nothing more
        let other = Thread { usleep(100_000); token.cancel() }
        other.start()
        let start = ContinuousClock.now
        #expect(poll(&p, 1, 5000) == 1)
        #expect(ContinuousClock.now - start < .seconds(2))
        batch.step()
        #expect(outcome.code == .cancelled && batch.pending == 0)
        #expect(poll(&p, 1, 0) == 0)   // the wake-up was taken
    }

    @Test func aBatchTokenCostsNothingUntilTheBatchSetsIt() throws {
        let batch = Batch(client: client)
        let fd = try #require(batch.pollDescriptor())
        let stalled = batch.cancelToken(), waiting = batch.cancelToken(), other = batch.cancelToken()
        #expect(!stalled.isPolled)
        var codes: [String: HTTPContentError.Code] = [:]
        var sizes: [Int] = []
        batch.maxConcurrent = 2
        batch.add(.get(server.url("/stall?bytes=10")), handler: Bytes(), cancel: stalled) { result in
            if case .failure(let e) = result { codes["stalled"] = e.code }
        }
        batch.add(.get(server.url("/stall?bytes=10")), handler: Bytes(), cancel: other) { result in
            if case .failure(let e) = result { codes["other"] = e.code }
        }
        // Over the limit: it waits its turn, and is cancelled before it starts.
        batch.add(.get(server.url("/bytes/5")), handler: Bytes(), cancel: waiting) { result in
            switch result {
            case .failure(let e): codes["waiting"] = e.code
            case .success(let r): sizes.append(r.content.count)
            }
        }
        for _ in 0..<5 { turn(batch, fd: fd) }
        #expect(batch.pending == 3 && codes.isEmpty)
        batch.cancel(waiting)
        batch.cancel(stalled)
        #expect(batch.stepTimeoutMs == 0)   // told: step at once
        batch.step()
        #expect(codes["stalled"] == .cancelled && codes["waiting"] == .cancelled && sizes.isEmpty)
        #expect(codes["other"] == nil && batch.pending == 1)   // the others' tokens untouched
        batch.cancel(other)
        batch.step()
        #expect(codes["other"] == .cancelled && batch.pending == 0)
    }
}
