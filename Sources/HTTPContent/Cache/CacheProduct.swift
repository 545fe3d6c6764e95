/// Product cache: what a handler made of a stored body, kept beside it so a later hit skips
/// the work. Replaying a 100 KiB JSON body through a parser costs as much as the round trip
/// the cache saved; handing back the parser's stored output costs one read.
///
/// Only a handler whose content is a pure function of (body bytes, its settings) may take part:
/// it names its product by a fingerprint (kind, format version, every setting that changes the
/// output) and gives its product as bytes. The store keeps products with their entry (evicted,
/// invalidated, replaced with it, counted in its size limit) and checks a checksum on the way
/// out: a product that does not verify, or that the handler cannot decode, is dropped and the
/// body is replayed, so a hit's content never differs from a replay's.
public protocol CacheProductHandler: ContentHandler {
    /// The product's fingerprint for this handler's settings; nil: this handler makes none.
    var cacheProductFingerprint: String? { get }
    /// After a successful `finish`: calls `body` with the product of what it returned (not
    /// called when there is none, e.g. for an empty body).
    func withCacheProduct(_ body: (UnsafeRawBufferPointer) -> Void)
    /// Instead of `consume`s and `finish` (after `accept` saw the head): the content `finish`
    /// would return for the body whose product is `bytes` (borrowed during the call).
    /// - Returns: nil when the bytes are not a product this handler can read (the body is then
    ///   replayed).
    func finish(fromProduct bytes: UnsafeRawBufferPointer) -> Content?
}

/// A checksum of product bytes (64-bit, word at a time): a product damaged on disk is detected
/// before a handler reads it. Not a defence against someone who can write the cache file.
public enum CacheProductChecksum {
    public static func of(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        let words = bytes.count / 8
        var i = 0
        while i < words {
            let w = bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)
            h = (h ^ w) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 29
            i += 1
        }
        var tail: UInt64 = 0
        for j in (words * 8)..<bytes.count { tail = tail << 8 | UInt64(bytes[j]) }
        h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 32
        return Int64(bitPattern: h)
    }
}

extension JSONOptions {
    /// A JSON handler's product fingerprint: `kind` (its product's name and format version), then
    /// every option that changes the parsed value or whether the parse succeeds, and whether an
    /// empty body is allowed. Acceptance is not among them: `accept` still sees the head on a hit.
    package func cacheFingerprint(_ kind: String, allowEmpty: Bool) -> String {
        "\(kind) nulls=\(removeNulls) comments=\(allowComments) multiple=\(allowMultipleValues) depth=\(maxDepth) "
            + "size=\(maxSize ?? -1) utf8=\(strictUTF8) text=\(keepNumberText) exact=\(exactIntegers) "
            + "garbage=\(allowTrailingGarbage) partial=\(allowPartialValues) empty=\(allowEmpty)"
    }
}

/// A mapped handler keeps its inner handler's product; the mapping is applied to the content
/// restored from it as to the one `finish` makes.
extension MappedHandler: CacheProductHandler where Inner: CacheProductHandler {
    package var cacheProductFingerprint: String? { inner.cacheProductFingerprint }
    package func withCacheProduct(_ body: (UnsafeRawBufferPointer) -> Void) { inner.withCacheProduct(body) }
    package func finish(fromProduct bytes: UnsafeRawBufferPointer) -> Content? {
        inner.finish(fromProduct: bytes).map(transform)
    }
}

// MARK: - The hooks of the cached send

extension HTTPCache {
    /// A hit answered from the product stored for `stored` and `handler`'s fingerprint: the
    /// content, or nil (no product, or an unusable one, which is removed) to replay the body.
    func productContent(_ stored: StoredResponse, handler: any ContentHandler) -> Any? {
        guard let producer = handler as? any CacheProductHandler,
              let fingerprint = producer.cacheProductFingerprint else { return nil }
        return HTTPCache.restore(producer, stored, fingerprint, store)
    }

    private static func restore<H: CacheProductHandler>(_ handler: H, _ stored: StoredResponse,
                                                        _ fingerprint: String, _ store: any CacheStore) -> Any? {
        var content: H.Content?
        let found = store.readProduct(stored, fingerprint: fingerprint) { bytes in
            content = handler.finish(fromProduct: bytes)
            return content != nil
        }
        return found ? content.map { $0 as Any } : nil
    }

    /// After a body was replayed through `handler` and it finished: keeps its product for the
    /// next hit.
    func keepProduct(_ stored: StoredResponse, handler: any ContentHandler) {
        guard let producer = handler as? any CacheProductHandler,
              let fingerprint = producer.cacheProductFingerprint else { return }
        producer.withCacheProduct { store.storeProduct(stored, fingerprint: fingerprint, $0) }
    }

    /// After a transfer's body went to `handler` and into `writer`: the product goes into the
    /// same commit as the body.
    static func attachProduct(_ writer: any CacheBodyWriter, handler: any ContentHandler) {
        guard let producer = handler as? any CacheProductHandler,
              let fingerprint = producer.cacheProductFingerprint else { return }
        producer.withCacheProduct { writer.setProduct(fingerprint: fingerprint, $0) }
    }
}
