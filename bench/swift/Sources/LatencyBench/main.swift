// LatencyBench MODE BASE N QUERY: reads N records dripped by bench/drip_server.py with one of
// the library's Swift streaming APIs and prints each record's latency in nanoseconds (the time
// the caller holds it minus the server's stamp, both CLOCK_MONOTONIC) as a JSON array.
//   swift-items        a JSONItems handler's callback (blocking send)
//   swift-lines-async  `for try await line in client.lines(request)`
//   swift-json-lines-async  `for try await record in client.jsonLines(request)`
//   swift-json-items-async  `for try await item in client.jsonItems(for: request, prefix:)`
import Foundation
import HTTPContent
import HTTPContentFoundation
#if canImport(Glibc)
import Glibc
#endif

func now() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func stamp(_ v: JSONValue) -> Int64 {
    if case .int(let t)? = v["t"] { return t }
    return 0
}

let args = CommandLine.arguments
guard args.count == 5, let n = Int(args[3]) else {
    FileHandle.standardError.write("usage: LatencyBench MODE BASE N QUERY\n".data(using: .utf8)!)
    exit(2)
}
let (mode, base, query) = (args[1], args[2], args[4])
let client = try Client()
var latencies: [Int64] = []

switch mode {
case "swift-items":
    let handler = try JSONItems(prefixes: ["items.item"]) { item in latencies.append(now() - stamp(item.value)) }
    _ = try client.get("\(base)/json?n=\(n)\(query)", handler: handler)
case "swift-lines-async":
    for try await line in client.lines(.get("\(base)/lines?n=\(n)\(query)")) {
        latencies.append(now() - (Int64(line.split(separator: " ").last ?? "") ?? 0))
        if latencies.count == n { break }
    }
case "swift-json-lines-async":
    for try await record in client.jsonLines(.get("\(base)/ndjson?n=\(n)\(query)")) {
        latencies.append(now() - stamp(record))
        if latencies.count == n { break }
    }
case "swift-json-items-async":
    for try await item in try await client.jsonItems(for: .get("\(base)/json?n=\(n)\(query)"), prefix: "items.item") {
        latencies.append(now() - stamp(item))
        if latencies.count == n { break }
    }
default:
    FileHandle.standardError.write("unknown mode \(mode)\n".data(using: .utf8)!)
    exit(2)
}
guard latencies.count == n else {
    FileHandle.standardError.write("got \(latencies.count) of \(n)\n".data(using: .utf8)!)
    exit(1)
}
print("[" + latencies.map(String.init).joined(separator: ",") + "]")
