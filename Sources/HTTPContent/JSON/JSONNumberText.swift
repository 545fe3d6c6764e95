#if canImport(Glibc)
import Glibc
#endif

/// Number text to and from numbers, without Foundation.
enum JSONNumberText {
    /// The scalar a number token becomes: `.int` when it is an integer that fits `Int64`, else
    /// `.double`; `.number(text)` when `keep`. A finite-looking token whose value overflows
    /// `Double` (`1e400`, a 400-digit integer) is a decode error unless `keep`.
    @inline(__always)
    static func value(_ token: UnsafeRawBufferPointer, keep: Bool) throws(HTTPContentError) -> JSONValue {
        if keep { return .number(String(decoding: token, as: UTF8.self)) }
        if let i = integer(token) { return .int(i) }
        let d = strtod(token)
        guard d.isFinite else {
            let text = String(decoding: token.prefix(40), as: UTF8.self) + (token.count > 40 ? "…" : "")
            throw HTTPContentError(.decode,
                "number \(text) is out of range for a double (keepNumberText keeps such numbers as text)")
        }
        return .double(d)
    }

    /// The token as an Int64 if it is a plain integer that fits, else nil.
    @inline(__always)
    static func integer(_ token: UnsafeRawBufferPointer) -> Int64? {
        let n = token.count
        guard n > 0 else { return nil }
        var i = 0
        let negative = token[0] == UInt8(ascii: "-")
        if negative { i = 1 }
        guard i < n else { return nil }
        // Accumulate negatively so Int64.min fits.
        var acc: Int64 = 0
        if n - i <= 18 {
            while i < n {
                let d = token[i] &- 0x30
                if d > 9 { return nil }
                acc = acc &* 10 &- Int64(d)
                i += 1
            }
        } else {
            while i < n {
                let d = token[i] &- 0x30
                if d > 9 { return nil }
                let (m, o1) = acc.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(Int64(d))
                if o1 || o2 { return nil }
                acc = s
                i += 1
            }
        }
        if negative { return acc }
        return acc == .min ? nil : -acc
    }

    /// C's strtod on a token that is not NUL-terminated.
    static func strtod(_ token: UnsafeRawBufferPointer) -> Double {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: token.count + 1) { buf in
            guard let base = buf.baseAddress else { return .nan }
            for i in 0..<token.count { base[i] = CChar(bitPattern: token[i]) }
            base[token.count] = 0
            return Glibc.strtod(base, nil)
        }
    }

    static func double(_ text: String) -> Double? {
        var t = text
        return t.withUTF8 { strtod(UnsafeRawBufferPointer($0)) }
    }

    /// True when `text` is a JSON number token (RFC 8259 §6).
    static func isValid(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        func digits() -> Int {
            var n = 0
            while let b = bytes.first, b >= 0x30, b <= 0x39 { bytes = bytes.dropFirst(); n += 1 }
            return n
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard let first = bytes.first else { return false }
        if first == UInt8(ascii: "0") { bytes = bytes.dropFirst() } else if digits() == 0 { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            if digits() == 0 { return false }
        }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let s = bytes.first, s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            if digits() == 0 { return false }
        }
        return bytes.isEmpty
    }

    /// The shortest text that reads back as `d` (Swift's own), which is valid JSON for finite `d`.
    static func format(_ d: Double) -> String {
        d.description
    }
}
