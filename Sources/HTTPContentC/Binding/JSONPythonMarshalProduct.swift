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

    /// Every option that changes the marshal bytes or whether the parse succeeds. Acceptance is
    /// not among them: `accept` still sees the head on a hit.
    public var cacheProductFingerprint: String? {
        let o = options
        return "json-pymarshal/\(Self.productVersion) nulls=\(o.removeNulls) comments=\(o.allowComments) "
            + "multiple=\(o.allowMultipleValues) depth=\(o.maxDepth) size=\(o.maxSize ?? -1) utf8=\(o.strictUTF8) "
            + "exact=\(o.exactIntegers) garbage=\(o.allowTrailingGarbage) partial=\(o.allowPartialValues) "
            + "empty=\(allowEmpty)"
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
