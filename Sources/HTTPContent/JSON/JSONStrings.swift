#if canImport(Glibc)
import Glibc
#endif

/// Strings from the bytes yajl delivers (already unescaped).
///
/// yajl's own UTF-8 check lets through overlong forms, UTF-8-encoded surrogates and code points
/// beyond U+10FFFF (and its `\uDC00`-style lone low-surrogate escapes produce such bytes); with
/// `strictUTF8` those are decode errors here. A lone high-surrogate escape is turned into `?`
/// by yajl before we see it. Without `strictUTF8`, invalid bytes become U+FFFD.
package enum JSONStrings {
    @inline(__always)
    static func make(_ bytes: UnsafeRawBufferPointer, strict: Bool) throws(HTTPContentError) -> String {
        let utf8 = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        let s = String(decoding: utf8, as: UTF8.self)
        if strict, !isASCII(bytes), !unchanged(s, utf8) { throw invalid() }
        return s
    }

    /// Checks without keeping a string (batches copy the bytes as they are).
    @inline(__always)
    package static func validate(_ bytes: UnsafeRawBufferPointer) throws(HTTPContentError) {
        if isASCII(bytes) { return }
        let utf8 = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        if !unchanged(String(decoding: utf8, as: UTF8.self), utf8) { throw invalid() }
    }

    /// Decoding repairs invalid input (U+FFFD), so valid input is exactly input that decodes to
    /// the same bytes. (The generic `String(validating:as:)` costs runtime metadata lookups on
    /// every call; this stays on the specialised UTF-8 fast path.)
    private static func unchanged(_ s: String, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var s = s
        return s.withUTF8 { decoded in
            guard decoded.count == utf8.count else { return false }
            guard let a = decoded.baseAddress, let b = utf8.baseAddress else { return true }
            return memcmp(a, b, utf8.count) == 0
        }
    }

    /// True when every byte is below 0x80 (eight at a time).
    @inline(__always)
    package static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let n = bytes.count
        var i = 0
        var acc: UInt64 = 0
        while i + 8 <= n {
            acc |= bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            acc |= UInt64(bytes[i])
            i += 1
        }
        return acc & 0x8080_8080_8080_8080 == 0
    }

    /// The bytes decoded with invalid sequences replaced by U+FFFD (as `make` does unstrictly).
    package static func repaired(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.bindMemory(to: UInt8.self), as: UTF8.self)
    }

    static func invalid() -> HTTPContentError {
        HTTPContentError(.decode, "lexical error: invalid UTF-8 in a string (overlong form, surrogate or beyond U+10FFFF)")
    }
}
