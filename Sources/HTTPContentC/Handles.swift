import HTTPContent
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How many handles the library has handed out and not yet had back (hc_live_handles).
let liveHandles = Atomic<Int>(0)

// Every handle crossing the C boundary is a retained Swift object behind an OpaquePointer:
// `_new` passes a +1 reference out, `_free` takes it back, and everything else borrows.

@inline(__always)
func retainHandle<T: AnyObject>(_ object: T) -> OpaquePointer {
    liveHandles.add(1, ordering: .relaxed)
    return OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

@inline(__always)
func borrowHandle<T: AnyObject>(_ handle: OpaquePointer?, as _: T.Type) -> T? {
    guard let handle else { return nil }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
}

@inline(__always)
func releaseHandle<T: AnyObject>(_ handle: OpaquePointer?, as _: T.Type) {
    guard let handle else { return }
    liveHandles.subtract(1, ordering: .relaxed)
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).release()
}

/// A NUL-terminated copy of a C string argument, or nil for NULL.
@inline(__always)
func string(_ p: UnsafePointer<CChar>?) -> String? {
    p.map { String(cString: $0) }
}

/// C strings handed out as "borrowed from this handle": made once per key, freed with the handle.
final class CStringCache {
    private var strings: [String: UnsafeMutablePointer<CChar>] = [:]

    func get(_ key: String, _ make: () -> String?) -> UnsafePointer<CChar>? {
        if let p = strings[key] { return UnsafePointer(p) }
        guard var value = make() else { return nil }
        // All of the UTF-8 bytes, NUL included (strdup would stop at the first NUL, and the
        // text getter lends `utf8.count` bytes), then a terminating NUL.
        let p: UnsafeMutablePointer<CChar>? = value.withUTF8 { utf8 in
            guard let p = malloc(utf8.count + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
            if let base = utf8.baseAddress { memcpy(p, base, utf8.count) }
            p[utf8.count] = 0
            return p
        }
        guard let p else { return nil }
        strings[key] = p
        return UnsafePointer(p)
    }

    deinit { for p in strings.values { free(p) } }
}

/// Records `error` as the thread's last error and returns its code.
@discardableResult
func fail(_ error: HTTPContentError) -> Int32 {
    ErrorBox.setLast(error)
    return error.code.rawValue
}

@discardableResult
func fail(_ code: HTTPContentError.Code, _ message: String) -> Int32 {
    fail(HTTPContentError(code, message))
}

/// The usual guard: a NULL handle or argument is HC_EINVALID_ARG with a message naming it.
@discardableResult @inline(__always)
func nullArgument(_ name: String, in function: String = #function) -> Int32 {
    fail(.invalidArgument, "\(function.prefix { $0 != "(" }): \(name) is NULL")
}

let HC_OK: Int32 = 0
