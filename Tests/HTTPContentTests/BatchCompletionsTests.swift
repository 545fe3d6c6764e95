import Testing
@testable import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

private let server = TestServer.shared

/// A batch's completions kept by key (`BatchCompletions`): what hc_batch_step hands to an
/// event loop, taken in bunches, in completion order, each request cancellable by its key.
@Suite struct BatchCompletionsTests {
    let client = try! Client()

    /// Steps the batch (bounded) until `n` completions were taken, `capacity` at a time.
    private func takeAll(_ completions: BatchCompletions<Int>, count n: Int, capacity: Int)
        -> [(UInt64, Result<Int, HTTPContentError>)] {
        let fd = completions.batch.pollDescriptor() ?? -1
        var taken: [(UInt64, Result<Int, HTTPContentError>)] = []
        for _ in 0..<2000 where taken.count < n {
            if fd >= 0 {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ms = completions.batch.stepTimeoutMs
                _ = poll(&p, 1, Int32(ms < 0 || ms > 100 ? 100 : ms))
            }
            completions.batch.step()
            let got = completions.take(upTo: capacity) { taken.append(($0, $1)) }
            #expect(got <= capacity)
        }
        return taken
    }

    private func add(_ completions: BatchCompletions<Int>, _ path: String, key: UInt64) {
        let token = completions.token(for: key)
        completions.batch.add(.get(server.url(path)), handler: Bytes(), cancel: token) { result in
            completions.complete(key, result.map { $0.content.count })
        }
    }

    @Test func completionsAreTakenByKeyInBunches() throws {
        let completions = BatchCompletions<Int>(batch: Batch(client: client, maxConcurrent: 4))
        _ = completions.batch.pollDescriptor()
        for n in 1...10 { add(completions, "/bytes/\(n * 100)", key: UInt64(n)) }
        let taken = takeAll(completions, count: 10, capacity: 3)
        #expect(taken.count == 10)
        #expect(Set(taken.map { $0.0 }) == Set(1...10))
        for (key, outcome) in taken { #expect((try? outcome.get()) == Int(key) * 100) }
        #expect(!completions.hasWaiting)
        #expect(completions.take(upTo: 5) { _, _ in Issue.record("nothing waits") } == 0)
    }

    @Test func aRequestIsCancelledByItsKeyAndOthersGoOn() throws {
        let completions = BatchCompletions<Int>(batch: Batch(client: client))
        _ = completions.batch.pollDescriptor()
        add(completions, "/stall?bytes=10", key: 7)
        add(completions, "/bytes/5", key: 8)
        completions.cancel(7)
        completions.cancel(99)   // no such key: nothing
        let taken = takeAll(completions, count: 2, capacity: 8)
        let byKey = Dictionary(uniqueKeysWithValues: taken.map { ($0.0, $0.1) })
        if case .failure(let error) = byKey[7] { #expect(error.code == .cancelled) } else { Issue.record("7 not cancelled") }
        #expect((try? byKey[8]?.get()) == 5)
        completions.cancel(8)    // completed already: nothing
        #expect(!completions.hasWaiting && completions.batch.pending == 0)
    }

    @Test func aRequestsOwnTokenStillCancelsIt() throws {
        let completions = BatchCompletions<Int>(batch: Batch(client: client))
        _ = completions.batch.pollDescriptor()
        let own = CancelToken()
        let token = completions.token(for: 1, linkedTo: own)
        completions.batch.add(.get(server.url("/stall?bytes=10")), handler: Bytes(), cancel: token) { result in
            completions.complete(1, result.map { $0.content.count })
        }
        own.cancel()
        let taken = takeAll(completions, count: 1, capacity: 1)
        if case .failure(let error)? = taken.first?.1 { #expect(error.code == .cancelled) } else { Issue.record("not cancelled") }
    }
}
