#if canImport(Glibc)
import Glibc
#endif

/// Copies `bytes` into a malloc'd buffer the caller frees with hc_buffer_free, NUL-terminated
/// for convenience (the terminator is not counted).
func mallocCopy(_ bytes: [UInt8]) -> UnsafeMutablePointer<UInt8>? {
    guard let raw = malloc(bytes.count + 1) else { return nil }
    let out = raw.bindMemory(to: UInt8.self, capacity: bytes.count + 1)
    bytes.withUnsafeBufferPointer { src in
        if let base = src.baseAddress { out.update(from: base, count: bytes.count) }
    }
    out[bytes.count] = 0
    return out
}

@_cdecl("hc_buffer_free")
public func hc_buffer_free(_ buf: UnsafeMutableRawPointer?) {
    free(buf)
}
