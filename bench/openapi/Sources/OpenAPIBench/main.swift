// OpenAPIBench BASE ROUNDS REQUESTS: the same generated client (EchoAPI, `client.small()` then
// `.ok.body.json`) on two transports, httpcontent's HTTPContentTransport and
// swift-openapi-async-http-client's AsyncHTTPClientTransport, against BASE/small.json.
// Rounds are interleaved (hc sequential, ahc sequential, hc 16 in flight, ahc 16 in flight, then
// again), each round REQUESTS calls after a warm-up; prints one line per round:
//     ROUND <contestant> <mode> rps=<requests per second> cpu_us=<process CPU µs per request>
import AsyncHTTPClient
import Foundation
import HTTPContent
import HTTPContentOpenAPI
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
#if canImport(Glibc)
import Glibc
#endif

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// `count` calls of the generated operation, `inFlight` at a time; each reads and decodes the body.
func run(_ client: Client, count: Int, inFlight: Int) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<inFlight {
            group.addTask {
                for _ in stride(from: worker, to: count, by: inFlight) {
                    let small = try await client.small().ok.body.json
                    precondition(small.id == 1)
                }
            }
        }
        try await group.waitForAll()
    }
}

let args = CommandLine.arguments
guard args.count == 4, let base = URL(string: args[1]), let rounds = Int(args[2]), let requests = Int(args[3]) else {
    FileHandle.standardError.write("usage: OpenAPIBench BASE ROUNDS REQUESTS\n".data(using: .utf8)!)
    exit(2)
}

// httpcontent: a default Client (keep-alive handles, one per request in flight).
let hcTransport = try HTTPContentTransport()
// AsyncHTTPClient: its shared event loop group, up to 16 HTTP/1.1 connections to the host (the
// default soft limit is 8, which would queue half of the 16 in flight).
var ahcConfiguration = HTTPClient.Configuration()
ahcConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: ahcConfiguration)
let ahcTransport = AsyncHTTPClientTransport(configuration: .init(client: httpClient))

let contestants: [(String, Client)] = [
    ("hc", Client(serverURL: base, transport: hcTransport)),
    ("ahc", Client(serverURL: base, transport: ahcTransport)),
]
for (_, client) in contestants {  // connections open, code paths warm
    try await run(client, count: 200, inFlight: 16)
    try await run(client, count: 200, inFlight: 1)
}
for _ in 0..<rounds {
    for (mode, inFlight) in [("sequential", 1), ("concurrent16", 16)] {
        for (name, client) in contestants {
            let cpu0 = cpuSeconds()
            let start = ContinuousClock.now
            try await run(client, count: requests, inFlight: inFlight)
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let cpu = cpuSeconds() - cpu0
            print("ROUND \(name) \(mode) rps=\(Int(Double(requests) / seconds)) cpu_us=\(Int(cpu / Double(requests) * 1e6))")
        }
    }
}
try await httpClient.shutdown()
