import Testing
import Foundation
@testable import HTTPContent

private let server = TestServer.shared

@Suite struct ConcurrencyTests {
    let client = try! Client()

    @Test func manyAsyncRequestsEachGetTheirOwnResult() async throws {
        let sizes = (0..<200).map { 1 + ($0 * 37) % 5000 }
        let client = self.client
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for (i, n) in sizes.enumerated() {
                group.addTask {
                    let r = try await client.send(.get(server.url("/bytes/\(n)")), handler: Bytes())
                    #expect(r.content.array == expectedBytes(n))
                    return (i, r.content.count)
                }
            }
            var out: [Int: Int] = [:]
            for try await (i, n) in group { out[i] = n }
            return out
        }
        #expect(results.count == sizes.count)
        #expect(sizes.indices.allSatisfy { results[$0] == sizes[$0] })
    }

    @Test func asyncTransfersToAnH2ServerShareOneConnection() async throws {
        guard let h2 = try H2Server() else { return }  // nginx or openssl missing: said why
        defer { h2.stop() }
        var config = ClientConfiguration()
        config.caFile = h2.caFile
        let client = try Client(configuration: config)
        let port = h2.port
        let versions = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<40 {
                group.addTask {
                    let r = try await client.send(.get("https://127.0.0.1:\(port)/f\(i).bin"), handler: Bytes())
                    #expect(r.content.array == [UInt8](repeating: UInt8(i), count: 1000 + i))
                    return r.head.httpVersion
                }
            }
            var all: [String] = []
            for try await v in group { all.append(v) }
            return all
        }
        #expect(versions.count == 40 && Set(versions) == ["HTTP/2"])
        // nginx's log, "<connection> <protocol> <uri>" per request: all on one connection.
        let lines = h2.loggedRequests(atLeast: 40)
        #expect(lines.count == 40)
        #expect(Set(lines.map { $0[0] }).count == 1)
    }

    @Test func mixedHandlersAndFailuresUnderConcurrency() async {
        let client = self.client
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<60 {
                group.addTask {
                    switch i % 4 {
                    case 0:
                        let r = try? await client.send(.get(server.url("/text?text=n\(i)")), handler: Text())
                        #expect(r?.content == "n\(i)")
                    case 1:
                        do {
                            _ = try await client.send(.get(server.url("/status/40\(i % 10)")), handler: Bytes())
                            Issue.record("a 4xx was accepted")
                        } catch let error as HTTPContentError {
                            #expect(error.code == .unacceptableStatus)
                            #expect(error.response?.status == 400 + i % 10)
                        } catch {
                            Issue.record("unexpected \(error)")
                        }
                    case 2:
                        do {
                            _ = try await client.send(Request("GET", server.url("/stall?bytes=5"),
                                                              options: RequestOptions(timeout: .milliseconds(200))),
                                                      handler: Bytes())
                            Issue.record("a stalled transfer did not time out")
                        } catch let error as HTTPContentError {
                            #expect(error.code == .timeout)
                        } catch {
                            Issue.record("unexpected \(error)")
                        }
                    default:
                        let r = try? await client.send(.get(server.url("/image/gif")), handler: Image())
                        #expect(r?.content?.width == 3)
                    }
                }
            }
        }
    }

    @Test func cancellingTheTaskCancelsTheTransferAndRemovesThePartialFile() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hc-async-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let client = self.client
        let task = Task {
            try await client.send(.get(server.url("/slow?bytes=100000&delay=0.05&chunk=100")),
                                  handler: File(path: dir + "/big.bin"))
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        task.cancel()
        let result = await task.result
        guard case .failure(let error as HTTPContentError) = result else {
            Issue.record("the cancelled download did not fail: \(result)")
            return
        }
        #expect(error.code == .cancelled)
        // Uncancelled, the body takes 50 s; a loaded machine may still take a few to notice.
        #expect(ContinuousClock.now - cancelled < .seconds(20))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }
}
