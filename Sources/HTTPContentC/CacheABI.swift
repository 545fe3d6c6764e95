import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

// The HTTP cache's C ABI (include/httpcontent/cache.h): a handle over the core's HTTPCache, and
// the cache status of responses and errors. It translates; the core decides.

/// What an hc_cache handle points at.
final class CacheBox {
    let cache: HTTPCache
    init(_ cache: HTTPCache) { self.cache = cache }
}

/// The hc_cache_status value of a core status (HC_CACHE_NONE = 0 for nil).
func cacheStatusCode(_ status: CacheStatus?) -> Int32 {
    switch status {
    case nil: return 0
    case .miss: return 1
    case .hit: return 2
    case .revalidated: return 3
    case .stale: return 4
    }
}

@_cdecl("hc_cache_new")
public func hc_cache_new(_ path: UnsafePointer<CChar>?, _ maxBytes: Int64, _ flags: UInt32) -> OpaquePointer? {
    guard maxBytes >= 0 else { fail(.invalidArgument, "hc_cache_new: negative max_bytes"); return nil }
    guard flags & ~1 == 0 else { fail(.invalidArgument, "hc_cache_new: unknown flags \(flags)"); return nil }
    let shared = flags & 1 != 0
    do {
        let cache: HTTPCache
        if let path = string(path) {
            cache = maxBytes > 0 ? try .file(path, maxBytes: maxBytes, shared: shared) : try .file(path, shared: shared)
        } else {
            cache = maxBytes > 0 ? .memory(maxBytes: maxBytes, shared: shared) : .memory(shared: shared)
        }
        return retainHandle(CacheBox(cache))
    } catch {
        fail(error)
        return nil
    }
}

@_cdecl("hc_cache_free")
public func hc_cache_free(_ cache: OpaquePointer?) {
    releaseHandle(cache, as: CacheBox.self)
}

@_cdecl("hc_client_set_cache")
public func hc_client_set_cache(_ client: OpaquePointer?, _ cache: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    let chosen = borrowHandle(cache, as: CacheBox.self)?.cache
    do {
        try box.update { $0.cache = chosen }
    } catch {
        return fail(error)
    }
    return 0
}

@_cdecl("hc_cache_size")
public func hc_cache_size(_ cache: OpaquePointer?) -> Int64 {
    guard let box = borrowHandle(cache, as: CacheBox.self) else { nullArgument("cache"); return -1 }
    do {
        return try box.cache.store.storedBytes()
    } catch {
        fail(error)
        return -1
    }
}

@_cdecl("hc_response_cache_status")
public func hc_response_cache_status(_ response: OpaquePointer?) -> Int32 {
    cacheStatusCode(borrowHandle(response, as: ResponseBox.self)?.response.cacheStatus)
}

@_cdecl("hc_error_cache_status")
public func hc_error_cache_status(_ err: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(err, as: ErrorBox.self), !box.isNone else { return 0 }
    return cacheStatusCode(box.error.response?.cacheStatus)
}

/// The names, static C strings (never freed).
nonisolated(unsafe) private let cacheStatusNames: [UnsafePointer<CChar>?] = ["none", "miss", "hit", "revalidated", "stale"]
    .map { (name: String) in strdup(name).map { UnsafePointer($0) } }

@_cdecl("hc_cache_status_name")
public func hc_cache_status_name(_ status: Int32) -> UnsafePointer<CChar>? {
    guard status >= 0, Int(status) < cacheStatusNames.count else { return nil }
    return cacheStatusNames[Int(status)]
}
