/// Where a cache keeps its responses: heads by URL and variant, bodies in chunks.
///
/// A store is shared by every thread of a client (and, for the SQLite store, by processes), so
/// each call is atomic on its own: a body being written is invisible until `commit`, and a
/// commit replaces the previous response of the same URL and variant in one step.
public protocol CacheStore: AnyObject, Sendable {
    /// The complete stored responses of `url`, most recently stored first.
    func variants(of url: String) throws(HTTPContentError) -> [StoredResponse]
    /// Feeds the stored body of `response` to `chunk`, in order, in bounded pieces.
    /// - Throws: the store's error, or what `chunk` throws (as `HTTPContentError`).
    func readBody(_ response: StoredResponse, _ chunk: (UnsafeRawBufferPointer) throws -> Void) throws(HTTPContentError)
    /// Starts storing a response; nothing is visible until the writer commits.
    func beginStore(_ entry: CacheEntry) throws(HTTPContentError) -> any CacheBodyWriter
    /// Replaces the head of a stored response (after a 304); the body stays.
    func updateHead(_ response: StoredResponse, _ entry: CacheEntry) throws(HTTPContentError)
    /// Marks a stored response as just used (least-recently-used eviction).
    func touch(_ response: StoredResponse)
    /// Removes every stored response of `url`.
    func remove(url: String) throws(HTTPContentError)
    /// The bytes the stored bodies (and their products) take.
    func storedBytes() throws(HTTPContentError) -> Int64
    /// Calls `use` with the product kept beside `response` under `fingerprint` (`CacheProduct`),
    /// checked against its checksum; `use` says whether it could read it. A product that fails
    /// either check is removed.
    /// - Returns: whether a product was found and read.
    func readProduct(_ response: StoredResponse, fingerprint: String, _ use: (UnsafeRawBufferPointer) -> Bool) -> Bool
    /// Keeps `bytes` as the product of `response` under `fingerprint` (replacing one there), counted
    /// in the size limit and dropped with the response. Nothing happens when the response is gone.
    func storeProduct(_ response: StoredResponse, fingerprint: String, _ bytes: UnsafeRawBufferPointer)
}

/// A store of one's own need not keep products: every hit then replays the body.
extension CacheStore {
    public func readProduct(_ response: StoredResponse, fingerprint: String, _ use: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        false
    }
    public func storeProduct(_ response: StoredResponse, fingerprint: String, _ bytes: UnsafeRawBufferPointer) {}
}

/// A stored response as a store hands it out: its id in the store and its head.
public struct StoredResponse: Sendable {
    public let id: Int64
    public var entry: CacheEntry
    /// When it was last used (seconds since 1970), for eviction.
    public var lastUsed: Double
    public init(id: Int64, entry: CacheEntry, lastUsed: Double) {
        self.id = id
        self.entry = entry
        self.lastUsed = lastUsed
    }
}

/// A body on its way into the store.
public protocol CacheBodyWriter: AnyObject {
    /// Appends a chunk. Throws when the store fails; the writer is then aborted.
    func write(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError)
    /// Makes the response visible, replacing the one of the same URL and variant, and evicts
    /// least-recently-used responses while the store holds more than its limit.
    func commit() throws(HTTPContentError)
    /// Drops what was written. Harmless after `commit` or a second time.
    func abort()
    /// Keeps `bytes` (copied) as the body's product under `fingerprint`, stored by `commit` in
    /// the same step as the body.
    func setProduct(fingerprint: String, _ bytes: UnsafeRawBufferPointer)
}

extension CacheBodyWriter {
    public func setProduct(fingerprint: String, _ bytes: UnsafeRawBufferPointer) {}
}

/// A store in memory: bodies as chunk arrays, a size limit with least-recently-used eviction.
public final class MemoryCacheStore: CacheStore, @unchecked Sendable {
    private struct Item {
        var stored: StoredResponse
        var chunks: [[UInt8]]
        var products: [String: [UInt8]] = [:]
        /// What the item counts against `maxBytes`: its body and its products.
        var size: Int64 { stored.entry.bodySize + products.values.reduce(0) { $0 + Int64($1.count) } }
    }
    private struct State {
        var items: [String: [Item]] = [:]
        var bytes: Int64 = 0
        var nextId: Int64 = 1
        var clock: Double = 0
    }
    private let state = Locked(State())
    /// The most body bytes kept; the least recently used responses go first.
    public let maxBytes: Int64

    public init(maxBytes: Int64 = 64 << 20) {
        self.maxBytes = maxBytes
    }

    public func variants(of url: String) throws(HTTPContentError) -> [StoredResponse] {
        state.withLock { $0.items[url]?.map(\.stored) ?? [] }
    }

    public func readBody(_ response: StoredResponse, _ chunk: (UnsafeRawBufferPointer) throws -> Void) throws(HTTPContentError) {
        let chunks = state.withLock { s in
            s.items[response.entry.url]?.first { $0.stored.id == response.id }?.chunks
        }
        guard let chunks else { throw HTTPContentError(.io, "cached response \(response.id) was evicted while read") }
        do {
            for c in chunks { try c.withUnsafeBytes { try chunk($0) } }
        } catch {
            throw HTTPContentError.wrapping(error)
        }
    }

    public func beginStore(_ entry: CacheEntry) throws(HTTPContentError) -> any CacheBodyWriter {
        MemoryWriter(store: self, entry: entry)
    }

    public func updateHead(_ response: StoredResponse, _ entry: CacheEntry) throws(HTTPContentError) {
        state.withLock { s in
            guard let i = s.items[entry.url]?.firstIndex(where: { $0.stored.id == response.id }) else { return }
            s.items[entry.url]![i].stored.entry = entry
        }
    }

    public func touch(_ response: StoredResponse) {
        state.withLock { s in
            s.clock += 1
            guard let i = s.items[response.entry.url]?.firstIndex(where: { $0.stored.id == response.id }) else { return }
            s.items[response.entry.url]![i].stored.lastUsed = s.clock
        }
    }

    public func remove(url: String) throws(HTTPContentError) {
        state.withLock { s in
            for item in s.items[url] ?? [] { s.bytes -= item.size }
            s.items[url] = nil
        }
    }

    public func storedBytes() throws(HTTPContentError) -> Int64 { state.withLock { $0.bytes } }

    public func readProduct(_ response: StoredResponse, fingerprint: String, _ use: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        let product = state.withLock { s in
            s.items[response.entry.url]?.first { $0.stored.id == response.id }?.products[fingerprint]
        }
        guard let product else { return false }
        if product.withUnsafeBytes(use) { return true }
        state.withLock { s in
            guard let i = s.items[response.entry.url]?.firstIndex(where: { $0.stored.id == response.id }),
                  let dropped = s.items[response.entry.url]![i].products.removeValue(forKey: fingerprint) else { return }
            s.bytes -= Int64(dropped.count)
        }
        return false
    }

    public func storeProduct(_ response: StoredResponse, fingerprint: String, _ bytes: UnsafeRawBufferPointer) {
        state.withLock { s in
            guard let i = s.items[response.entry.url]?.firstIndex(where: { $0.stored.id == response.id }) else { return }
            s.bytes -= Int64(s.items[response.entry.url]![i].products[fingerprint]?.count ?? 0)
            s.items[response.entry.url]![i].products[fingerprint] = Array(bytes)
            s.bytes += Int64(bytes.count)
            evict(&s)
        }
    }

    fileprivate func commit(_ entry: CacheEntry, chunks: [[UInt8]], products: [String: [UInt8]]) {
        state.withLock { s in
            s.clock += 1
            let key = entry.variantKey
            var list = s.items[entry.url] ?? []
            for old in list where old.stored.entry.variantKey == key { s.bytes -= old.size }
            list.removeAll { $0.stored.entry.variantKey == key }
            let item = Item(stored: StoredResponse(id: s.nextId, entry: entry, lastUsed: s.clock), chunks: chunks,
                            products: products)
            list.insert(item, at: 0)
            s.nextId += 1
            s.items[entry.url] = list
            s.bytes += item.size
            evict(&s)
        }
    }

    /// Least recently used first, until the bodies and products fit.
    private func evict(_ s: inout State) {
        while s.bytes > maxBytes, let victim = s.items.values.joined().min(by: { $0.stored.lastUsed < $1.stored.lastUsed }) {
            s.bytes -= victim.size
            s.items[victim.stored.entry.url]?.removeAll { $0.stored.id == victim.stored.id }
            if s.items[victim.stored.entry.url]?.isEmpty == true { s.items[victim.stored.entry.url] = nil }
        }
    }

    private final class MemoryWriter: CacheBodyWriter {
        let store: MemoryCacheStore
        var entry: CacheEntry
        var chunks: [[UInt8]] = []
        var products: [String: [UInt8]] = [:]
        var open = true

        init(store: MemoryCacheStore, entry: CacheEntry) {
            self.store = store
            self.entry = entry
        }

        func write(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) {
            guard open else { return }
            entry.bodySize += Int64(chunk.count)
            if entry.bodySize > store.maxBytes { abort(); return }  // can never fit: not stored
            chunks.append(Array(chunk))
        }

        func commit() throws(HTTPContentError) {
            guard open else { return }
            open = false
            store.commit(entry, chunks: chunks, products: products)
            chunks = []
            products = [:]
        }

        func setProduct(fingerprint: String, _ bytes: UnsafeRawBufferPointer) {
            if open { products[fingerprint] = Array(bytes) }
        }

        func abort() {
            open = false
            chunks = []
            products = [:]
        }
    }
}
