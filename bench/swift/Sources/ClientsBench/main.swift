// ClientsBench BASE ROUNDS SMALL BIG: httpcontent's Swift `Client` against AsyncHTTPClient's
// `HTTPClient`, both used as their users would from Swift concurrency, against a local nginx:
//   sequential    SMALL GETs of BASE/1k.bin one after another (each awaited before the next)
//   concurrent16  SMALL GETs of BASE/1k.bin, 16 in flight (a task group of 16 workers)
//   big           BIG GETs of BASE/64m.bin one after another, each body collected in memory
// Every body's size is checked. Contestants:
//   hc        `Client()` (defaults), `try await client.send(.get(url), handler: Bytes())`
//   hc-256k   `Client(configuration:)` with `receiveBufferSize` 256 KiB (what a request sent alone
//             gets, an `async` one alone too; among others libcurl's 16 KiB keeps many small), async
//   hc-sync   the same client's blocking `client.send(.get(url), handler: Bytes())` (sequential
//             modes only: what a caller with a thread of its own uses)
//   ahc       `HTTPClient(eventLoopGroupProvider: .singleton, configuration:)` with 16 HTTP/1.1
//             connections per host (default soft limit 8), `execute(request, timeout:)` then
//             `response.body.collect(upTo:)`
// Rounds interleave the contestants mode by mode, the first rotating; one line per measurement:
//     ROUND <contestant> <mode> rps=<requests per second> mbps=<MB/s> cpu_us=<process CPU µs per request>
import AsyncHTTPClient
import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func fail(_ message: String) -> Never {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }  // fd 2: Swift 6 rejects the `stderr` global
    exit(1)
}

/// `x` with one decimal (no Foundation here).
func tenths(_ x: Double) -> String {
    let t = Int((x * 10).rounded())
    return "\(t / 10).\(t % 10)"
}

struct Mode {
    let name: String
    let file: String
    let size: Int
    let inFlight: Int
    let count: Int
}

/// One contestant: fetches a URL and returns the body's size.
typealias Fetch = @Sendable (String) async throws -> Int

/// `count` fetches of `url`, `inFlight` at a time (workers in a task group); checks each size.
func run(_ fetch: @escaping Fetch, url: String, size: Int, count: Int, inFlight: Int) async throws {
    if inFlight == 1 {
        for _ in 0..<count where try await fetch(url) != size { fail("\(url): wrong size") }
        return
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<inFlight {
            group.addTask {
                for _ in stride(from: worker, to: count, by: inFlight) where try await fetch(url) != size {
                    fail("\(url): wrong size")
                }
            }
        }
        try await group.waitForAll()
    }
}

let args = CommandLine.arguments
guard args.count == 5, let rounds = Int(args[2]), let small = Int(args[3]), let big = Int(args[4]) else {
    fail("usage: ClientsBench BASE ROUNDS SMALL BIG")
}
let base = args[1]
let modes = [Mode(name: "sequential", file: "1k.bin", size: 1024, inFlight: 1, count: small),
             Mode(name: "concurrent16", file: "1k.bin", size: 1024, inFlight: 16, count: small),
             Mode(name: "big", file: "64m.bin", size: 64 << 20, inFlight: 1, count: big)]

let hcClient = try Client()
var bigBuffer = ClientConfiguration()
bigBuffer.receiveBufferSize = 256 * 1024
let hc256Client = try Client(configuration: bigBuffer)
var ahcConfiguration = HTTPClient.Configuration()
ahcConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: ahcConfiguration)

let hcAsync: Fetch = { url in try await hcClient.send(.get(url), handler: Bytes()).content.count }
let hc256: Fetch = { url in try await hc256Client.send(.get(url), handler: Bytes()).content.count }
let hcSync: Fetch = { url in try hcClient.send(.get(url), handler: Bytes()).content.count }
let ahc: Fetch = { url in
    let response = try await httpClient.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
    guard response.status == .ok else { fail("ahc: HTTP \(response.status.code)") }
    return try await response.body.collect(upTo: 128 << 20).readableBytes
}
let contestants: [(String, Fetch, Bool)] = [("hc", hcAsync, true), ("hc-256k", hc256, true), ("hc-sync", hcSync, false),
                                          ("ahc", ahc, true)]

// Warm-up: connections open (16 each), code paths warm, a big body's buffers grown once.
for (_, fetch, concurrent) in contestants {
    for mode in modes where concurrent || mode.inFlight == 1 {
        try await run(fetch, url: "\(base)/\(mode.file)", size: mode.size,
                      count: mode.size > 1 << 20 ? 1 : 200, inFlight: mode.inFlight)
    }
}
for round in 0..<rounds {
    for mode in modes {
        let active = contestants.filter { $0.2 || mode.inFlight == 1 }
        for k in 0..<active.count {
            let (name, fetch, _) = active[(k + round) % active.count]
            let cpu0 = cpuSeconds()
            let start = ContinuousClock.now
            try await run(fetch, url: "\(base)/\(mode.file)", size: mode.size, count: mode.count, inFlight: mode.inFlight)
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let cpu = cpuSeconds() - cpu0
            let rps = Double(mode.count) / seconds
            print("ROUND \(name) \(mode.name) rps=\(tenths(rps)) mbps=\(tenths(rps * Double(mode.size) / 1e6)) "
                  + "cpu_us=\(Int(cpu / Double(mode.count) * 1e6))")
        }
    }
}
try await httpClient.shutdown()
