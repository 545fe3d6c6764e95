/// A private (or, by option, shared) HTTP cache as RFC 9111 describes it, set on a client with
/// `ClientConfiguration.cache`. It sits below the handlers: a stored body is replayed through
/// whatever handler a request names, so content handling cannot tell a hit from a transfer
/// except by `Response.cacheStatus`.
public final class HTTPCache: Sendable {
    /// Where responses are kept.
    public let store: any CacheStore
    /// A shared cache (a proxy's): `private` responses and ones to requests with
    /// `Authorization` are not stored, `s-maxage` and `proxy-revalidate` apply.
    public let shared: Bool

    public init(store: any CacheStore, shared: Bool = false) {
        self.store = store
        self.shared = shared
    }

    /// A cache in memory.
    /// - Parameters:
    ///   - maxBytes: the most body bytes kept (default 64 MiB); least recently used go first.
    ///   - shared: shared-cache rules instead of a private cache's (default false).
    public static func memory(maxBytes: Int64 = 64 << 20, shared: Bool = false) -> HTTPCache {
        HTTPCache(store: MemoryCacheStore(maxBytes: maxBytes), shared: shared)
    }

    /// A cache in a SQLite file, shared with other clients and processes that open it.
    /// - Parameters:
    ///   - path: the database file (created when missing).
    ///   - maxBytes: the most body bytes kept (default 256 MiB); least recently used go first.
    ///   - shared: shared-cache rules instead of a private cache's (default false).
    /// - Throws: `.io` when the file cannot be opened, is not a SQLite database or belongs to
    ///   another application.
    public static func file(_ path: String, maxBytes: Int64 = 256 << 20, shared: Bool = false) throws(HTTPContentError) -> HTTPCache {
        HTTPCache(store: try SQLiteCacheStore(path: path, maxBytes: maxBytes), shared: shared)
    }
}

/// How the cache answered a request.
public enum CacheStatus: String, Sendable {
    /// From the origin server (and stored when the response allows).
    case miss
    /// A fresh stored response, no request sent.
    case hit
    /// A stored response the origin confirmed with a 304.
    case revalidated
    /// A stale stored response (allowed by `max-stale`, `stale-while-revalidate` or
    /// `stale-if-error`).
    case stale
}
