/// Strings from the bytes yajl delivers (already unescaped).
///
/// yajl's own UTF-8 check lets through overlong forms, UTF-8-encoded surrogates and code points
/// beyond U+10FFFF (and its `\uDC00`-style lone low-surrogate escapes produce such bytes); with
/// `strictUTF8` those are decode errors here. A lone high-surrogate escape is turned into `?`
/// by yajl before we see it. Without `strictUTF8`, invalid bytes become U+FFFD.
enum JSONStrings {
    @inline(__always)
    static func make(_ bytes: UnsafeRawBufferPointer, strict: Bool) throws(HTTPContentError) -> String {
        let utf8 = bytes.bindMemory(to: UInt8.self)
        guard strict else { return String(decoding: utf8, as: UTF8.self) }
        guard let s = String(validating: utf8, as: UTF8.self) else { throw invalid() }
        return s
    }

    /// Checks without making a string (batches copy the bytes as they are).
    @inline(__always)
    static func validate(_ bytes: UnsafeRawBufferPointer) throws(HTTPContentError) {
        var ascii = true
        for b in bytes where b >= 0x80 {
            ascii = false
            break
        }
        if !ascii, String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) == nil { throw invalid() }
    }

    static func invalid() -> HTTPContentError {
        HTTPContentError(.decode, "lexical error: invalid UTF-8 in a string (overlong form, surrogate or beyond U+10FFFF)")
    }
}
