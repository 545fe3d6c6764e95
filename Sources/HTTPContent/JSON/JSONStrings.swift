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
        if strict { try validate(bytes) }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Checks without keeping a string (batches copy the bytes as they are). A string of up to 16
    /// bytes is first scanned for ASCII inline (no call for the common case); a longer one is
    /// checked in one pass: `isValidUTF8` skips ASCII eight bytes at a time itself, so a
    /// separate ASCII scan first would read a non-ASCII string twice.
    @inline(__always)
    package static func validate(_ bytes: UnsafeRawBufferPointer) throws(HTTPContentError) {
        if bytes.count <= 16, isASCII(bytes) { return }
        if !isValidUTF8(bytes) { throw invalid() }
    }

    /// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing beyond U+10FFFF, no
    /// truncated sequence; exactly the input that `String(decoding:as:)` leaves unchanged, checked
    /// in place (building a String to compare costs an allocation per non-ASCII string).
    package static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let p = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        let n = bytes.count
        var i = 0
        while i < n {
            // Eight bytes at a time: past all of them when ASCII, else straight to the first
            // byte that is not (little-endian: the lowest set high bit is the first such byte).
            if i + 8 <= n {
                let high = UInt64(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self)) & 0x8080_8080_8080_8080
                if high == 0 {
                    i += 8
                    continue
                }
                i += high.trailingZeroBitCount >> 3
            }
            let b0 = p[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            @inline(__always) func cont(_ k: Int) -> Bool { i + k < n && p[i + k] & 0xC0 == 0x80 }
            switch b0 {
            case 0xC2...0xDF:
                guard cont(1) else { return false }
                i += 2
            case 0xE0...0xEF:
                guard cont(1), cont(2) else { return false }
                let b1 = p[i + 1]
                if b0 == 0xE0, b1 < 0xA0 { return false }  // overlong
                if b0 == 0xED, b1 > 0x9F { return false }  // surrogate
                i += 3
            case 0xF0...0xF4:
                guard cont(1), cont(2), cont(3) else { return false }
                let b1 = p[i + 1]
                if b0 == 0xF0, b1 < 0x90 { return false }  // overlong
                if b0 == 0xF4, b1 > 0x8F { return false }  // beyond U+10FFFF
                i += 4
            default:
                return false
            }
        }
        return true
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
