import Foundation
import Testing
@testable import HTTPContent

private let server = TestServer.shared

/// A handler whose content is a pure function of the body (its text upper-cased, tagged with
/// the route it took), and which keeps that content as its product; it counts what it was fed.
private final class Shouting: CacheProductHandler {
    var fingerprint: String? = "shout/1"
    /// What `finish(fromProduct:)` answers: false plays a product it cannot read.
    var readable = true
    var consumed = 0
    var restored = 0
    private var body: [UInt8] = []
    private var made: [UInt8]?

    func accept(_ head: ResponseHead) throws -> Bool { body = []; made = nil; return true }
    func consume(_ chunk: UnsafeRawBufferPointer) throws { consumed += 1; body += chunk }
    func finish() throws -> String {
        let text = String(decoding: body, as: UTF8.self).uppercased()
        made = Array(text.utf8)
        return text
    }
    var cacheProductFingerprint: String? { fingerprint }
    func withCacheProduct(_ body: (UnsafeRawBufferPointer) -> Void) { made?.withUnsafeBytes(body) }
    func finish(fromProduct bytes: UnsafeRawBufferPointer) -> String? {
        guard readable else { return nil }
        restored += 1
        return String(decoding: bytes, as: UTF8.self)
    }
}

private func cachedURL(_ key: String, body: String) -> String {
    var c = URLComponents(string: server.url("/cached/\(key)"))!
    c.queryItems = [URLQueryItem(name: "h", value: "Cache-Control: max-age=600"), URLQueryItem(name: "body", value: body)]
    return c.string!
}

private func makeCache(_ kind: String, maxBytes: Int64 = 1 << 20) throws -> HTTPCache {
    kind == "memory" ? .memory(maxBytes: maxBytes)
        : try .file(NSTemporaryDirectory() + "hc-product-\(UUID().uuidString).sqlite", maxBytes: maxBytes)
}

private func client(_ cache: HTTPCache) throws -> Client {
    var config = ClientConfiguration()
    config.cache = cache
    return try Client(configuration: config)
}

@Suite struct CacheProductTests {
    @Test(arguments: ["memory", "sqlite"])
    func aHitIsTheProductAndEqualsAReplay(_ kind: String) throws {
        let cache = try makeCache(kind)
        let c = try client(cache)
        let url = cachedURL(UUID().uuidString, body: "héllo wörld ✓")
        // Stored by a handler without products: the first JSON-free hit replays and keeps one.
        #expect(try c.get(url, handler: Bytes()).head.cacheStatus == .miss)
        let replaying = Shouting()
        let replayed = try c.get(url, handler: replaying)
        #expect(replayed.head.cacheStatus == .hit && replaying.consumed > 0 && replaying.restored == 0)
        let reading = Shouting()
        let product = try c.get(url, handler: reading)
        #expect(product.head.cacheStatus == .hit && reading.consumed == 0 && reading.restored == 1)
        #expect(product.content == replayed.content && product.content == "HÉLLO WÖRLD ✓")
        #expect(try cache.store.storedBytes() == Int64("héllo wörld ✓".utf8.count + "HÉLLO WÖRLD ✓".utf8.count))
    }

    @Test(arguments: ["memory", "sqlite"])
    func aMissKeepsTheProductWithTheBody(_ kind: String) throws {
        let cache = try makeCache(kind)
        let c = try client(cache)
        let url = cachedURL(UUID().uuidString, body: "abc")
        #expect(try c.get(url, handler: Shouting()).head.cacheStatus == .miss)
        let reading = Shouting()
        #expect(try c.get(url, handler: reading).content == "ABC")
        #expect(reading.restored == 1 && reading.consumed == 0)
        // Another fingerprint (other settings) is not given this product.
        let other = Shouting()
        other.fingerprint = "shout/2"
        #expect(try c.get(url, handler: other).content == "ABC")
        #expect(other.consumed > 0 && other.restored == 0)
        // A handler that makes no product replays every time.
        let none = Shouting()
        none.fingerprint = nil
        #expect(try c.get(url, handler: none).content == "ABC")
        #expect(none.consumed > 0)
    }

    @Test(arguments: ["memory", "sqlite"])
    func anUnreadableProductIsDroppedAndTheBodyReplayed(_ kind: String) throws {
        let cache = try makeCache(kind)
        let c = try client(cache)
        let url = cachedURL(UUID().uuidString, body: "xyz")
        _ = try c.get(url, handler: Shouting())
        let refusing = Shouting()
        refusing.readable = false
        #expect(try c.get(url, handler: refusing).content == "XYZ")
        #expect(refusing.consumed > 0)
        let reading = Shouting()
        #expect(try c.get(url, handler: reading).content == "XYZ" && reading.restored == 1)
    }

    @Test(arguments: ["memory", "sqlite"])
    func productsGoWithTheirEntryAndCountAgainstTheLimit(_ kind: String) throws {
        // Room for two entries with products (3 + 3 bytes each), not three.
        let cache = try makeCache(kind, maxBytes: 13)
        let c = try client(cache)
        let urls = (0..<3).map { cachedURL(UUID().uuidString + "-\($0)", body: "abc") }
        for url in urls { _ = try c.get(url, handler: Shouting()) }
        #expect(try cache.store.storedBytes() == 12)
        #expect(try cache.store.variants(of: urls[0]).isEmpty)  // evicted, product and all
        try cache.store.remove(url: urls[2])
        #expect(try cache.store.storedBytes() == 6)
        let reading = Shouting()
        #expect(try c.get(urls[2], handler: reading).head.cacheStatus == .miss && reading.restored == 0)
    }
}
