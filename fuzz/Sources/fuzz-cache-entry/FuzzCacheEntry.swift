// Fuzz target: the HTTP cache's stored-entry decoding, `CacheEntryCodec.decode` (what the SQLite
// store reads back from a file another process, a crash or an attacker may have written).
//
// Input: any bytes, taken as a stored entry.
// Checks: decoding never crashes or allocates beyond the input (lengths are checked against what
// is left); an entry that decodes re-encodes to exactly the input (the format has one spelling),
// and the policy functions run on it without trapping (freshness, age, Vary, conditional headers).
import FuzzSupport
import HTTPContent

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let entry = try? CacheEntryCodec.decode(bytes) else { return 0 }
    fuzzCheck(CacheEntryCodec.encode(entry) == bytes, "a decoded entry does not re-encode to its bytes")
    let now = entry.responseTime + 10
    _ = CachePolicy.freshnessLifetime(entry, shared: false)
    _ = CachePolicy.freshnessLifetime(entry, shared: true)
    _ = CachePolicy.currentAge(entry, now: now)
    _ = CachePolicy.varyMatches(entry, request: entry.headers)
    _ = CachePolicy.decide(entry, request: entry.headers, now: now, shared: false)
    _ = CachePolicy.conditionalHeaders(entry)
    return 0
}

@main
struct FuzzCacheEntry {
    static func main() { runFuzzer(fuzzTest) }
}
