#if canImport(Glibc)
import Glibc
#endif
import HTTPContent

/// Python's JSON handler keeps its marshal bytes in the HTTP cache (`CacheProductHandler`): a
/// hit is then one read of them and one `marshal.loads`, instead of yajl parsing the body again.
/// The bytes are exactly what `finish` made of the body, so the content is the replay's.
extension JSONPythonMarshalHandler: CacheProductHandler {
    /// The writer's format version: bump it when `JSONPythonMarshalWriter`'s output changes.
    static let productVersion = 1

    /// The parse options' fingerprint (`JSONOptions.cacheFingerprint`).
    public var cacheProductFingerprint: String? {
        options.cacheFingerprint("json-pymarshal/\(Self.productVersion)", allowEmpty: allowEmpty)
    }

    public func withCacheProduct(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard let product = lastProduct else { return }
        body(UnsafeRawBufferPointer(start: product.pointer, count: product.count))
    }

    public func finish(fromProduct bytes: UnsafeRawBufferPointer) -> JSONPythonMarshalBytes?? {
        guard !bytes.isEmpty, let base = bytes.baseAddress,
              let copy = malloc(bytes.count)?.assumingMemoryBound(to: UInt8.self) else { return nil }
        memcpy(copy, base, bytes.count)
        return .some(JSONPythonMarshalBytes(copy, bytes.count))
    }
}
