#if canImport(Glibc)
import Glibc
#endif

/// Number text to and from numbers, without Foundation.
package enum JSONNumberText {
    /// The scalar a number token becomes: `.int` when it is an integer that fits `Int64`, else
    /// `.double`; `.number(text)` when `keep`. A finite-looking token whose value overflows
    /// `Double` (`1e400`, a 400-digit integer) is a decode error unless `keep`.
    /// With `exactIntegers`, an integer too large for `Int64` is `.number(text)` too.
    @inline(__always)
    package static func value(_ token: UnsafeRawBufferPointer, keep: Bool,
                              exactIntegers: Bool = false) throws(HTTPContentError) -> JSONValue {
        if keep { return .number(String(decoding: token, as: UTF8.self)) }
        if let i = integer(token) { return .int(i) }
        if exactIntegers, isIntegerLiteral(token) { return .number(String(decoding: token, as: UTF8.self)) }
        return .double(try finiteDouble(token))
    }

    /// True when a number token has neither a fraction nor an exponent.
    @inline(__always)
    package static func isIntegerLiteral(_ token: UnsafeRawBufferPointer) -> Bool {
        !token.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// The token as a double; a decode error when it overflows (`1e400`).
    @inline(__always)
    static func finiteDouble(_ token: UnsafeRawBufferPointer) throws(HTTPContentError) -> Double {
        try checkFinite(fastDouble(token) ?? strtod(token), token)
    }

    /// `d`, or a decode error when it overflowed (`1e400`).
    @inline(__always)
    private static func checkFinite(_ d: Double, _ token: UnsafeRawBufferPointer) throws(HTTPContentError) -> Double {
        guard d.isFinite else {
            let text = String(decoding: token.prefix(40), as: UTF8.self) + (token.count > 40 ? "…" : "")
            throw HTTPContentError(.decode,
                "number \(text) is out of range for a double (keepNumberText keeps such numbers as text)")
        }
        return d
    }

    /// A number token read in one pass: an integer that fits `Int64` (`isInteger`, `bits` its
    /// bit pattern) or a double (`bits` its bit pattern). Short tokens take the fast paths (at
    /// most 18 integer digits; Clinger's and Eisel-Lemire's for doubles), the rest `integer`/`strtod`.
    /// - Throws: `.decode` for a number that overflows `Double` (`1e400`).
    @inline(__always)
    static func scalar(_ token: UnsafeRawBufferPointer) throws(HTTPContentError) -> (isInteger: Bool, bits: UInt64) {
        if let fast = fastScalar(token) { return fast }
        return try slowScalar(token)
    }

    /// The fast paths of `scalar`; nil when they do not apply. Clinger's: a mantissa of at most
    /// 2^53 and a decimal exponent within ±22 are both exact doubles, so one IEEE multiplication
    /// or division rounds the value correctly. Else, for at most 19 digits, Eisel-Lemire's (see
    /// `eiselLemire`): the 17-digit doubles most JSON writers print take it instead of strtod.
    /// Transparent: `@inline(__always)` left it a call from yajl's number callbacks (a call and
    /// an optional tuple returned through memory per number).
    @_transparent
    static func fastScalar(_ token: UnsafeRawBufferPointer) -> (isInteger: Bool, bits: UInt64)? {
        let n = token.count
        guard n > 0, n <= 24, let p = token.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let negative = p[0] == UInt8(ascii: "-")
        var m: UInt64 = 0
        var i = scanDigits(p, negative ? 1 : 0, n, &m)
        let digits = i - (negative ? 1 : 0)
        if i == n {
            guard digits <= 18 else { return nil }
            let v = Int64(bitPattern: m)
            return (true, UInt64(bitPattern: negative ? 0 &- v : v))
        }
        var exponent = 0
        var total = digits
        if p[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            i = scanDigits(p, i, n, &m)
            exponent = start - i
            total += i - start
        }
        if i < n {
            // e or E, an optional sign, digits (the value saturates: far out of range either way).
            i += 1
            var expNegative = false
            if i < n, p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+") {
                expNegative = p[i] == UInt8(ascii: "-")
                i += 1
            }
            var e = 0
            while i < n {
                if e < 100_000 { e = e * 10 + Int(p[i] &- 0x30) }
                i += 1
            }
            exponent += expNegative ? -e : e
        }
        guard total <= 19 else { return nil }
        if m <= 1 << 53, exponent >= -22, exponent <= 22 {
            var v = Double(m)
            if exponent < 0 { v /= powersOf10[-exponent] } else if exponent > 0 { v *= powersOf10[exponent] }
            return (false, (negative ? -v : v).bitPattern)
        }
        guard let bits = eiselLemire(m, exponent, negative: negative) else { return nil }
        return (false, bits)
    }

    /// Reads the digits from `i` on into `m` (m × 10 + digit each, wrapping past 19 digits: the
    /// callers count digits and give up there). Returns where the digits end. Four at a time
    /// while four bytes of the token remain and all are digits (a coordinate's or a printed
    /// double's fraction), then one at a time. (Eight at a time was slower: most JSON numbers
    /// are short.) The wrapping sums are the same as digit by digit's, modulo 2^64.
    @inline(__always)
    private static func scanDigits(_ p: UnsafePointer<UInt8>, _ i: Int, _ n: Int, _ m: inout UInt64) -> Int {
        var i = i
        while i &+ 4 <= n {
            let x = UInt32(littleEndian: UnsafeRawPointer(p + i).loadUnaligned(as: UInt32.self))
            // Every byte 0x30...0x39: high nibble 3, and adding 6 leaves it 3.
            guard x & 0xF0F0_F0F0 == 0x3030_3030, (x &+ 0x0606_0606) & 0xF0F0_F0F0 == 0x3030_3030 else { break }
            var d = x &- 0x3030_3030
            d = d &* 10 &+ (d &>> 8)  // byte 0: d0 × 10 + d1, byte 2: d2 × 10 + d3
            m = m &* 10_000 &+ UInt64((d & 0xFF) &* 100 &+ ((d &>> 16) & 0xFF))
            i &+= 4
        }
        while i < n {
            let d = p[i] &- 0x30
            if d > 9 { break }
            m = m &* 10 &+ UInt64(d)
            i &+= 1
        }
        return i
    }

    /// The correctly rounded double nearest `mantissa` × 10^`exponent` (a mantissa of at most 19
    /// digits), as its bit pattern, by the Eisel-Lemire algorithm (Lemire, "Number Parsing at a
    /// Gigabyte per Second", 2021; this follows Go's strconv.eiselLemire64): the mantissa times a
    /// 128-bit approximation of 10^exponent fixes the rounding unless the product lies too close
    /// to a halfway point, or the result would be subnormal or infinite. Then nil, and strtod
    /// decides, so the result is always strtod's.
    /// Out of line: rarely needed once Clinger's path has run, and inlined it made the callers
    /// too large for `fastScalar` to be inlined into yajl's number callback.
    @inline(never)
    static func eiselLemire(_ mantissa: UInt64, _ exponent: Int, negative: Bool) -> UInt64? {
        if mantissa == 0 { return negative ? (-0.0 as Double).bitPattern : 0 }
        guard exponent >= JSONPowersOfTen.minExponent, exponent <= JSONPowersOfTen.maxExponent else { return nil }
        let clz = mantissa.leadingZeroBitCount
        let man = mantissa << UInt64(clz)
        // floor(exponent × log2(10)) + 64 + the exponent bias, less the normalizing shift.
        var exp2 = UInt64(bitPattern: Int64((217_706 &* exponent) >> 16 &+ 64 &+ 1023)) &- UInt64(clz)
        let index = 2 * (exponent - JSONPowersOfTen.minExponent)
        let (hiPower, loPower) = JSONPowersOfTen.words.withUnsafeBufferPointer { ($0[index], $0[index + 1]) }
        var (xHi, xLo) = man.multipliedFullWidth(by: hiPower)
        if xHi & 0x1FF == 0x1FF, xLo &+ man < man {
            // The low bits are all ones: the power's low word may carry into them.
            let (yHi, yLo) = man.multipliedFullWidth(by: loPower)
            var mergedHi = xHi
            let mergedLo = xLo &+ yHi
            if mergedLo < xLo { mergedHi &+= 1 }
            if mergedHi & 0x1FF == 0x1FF, mergedLo &+ 1 == 0, yLo &+ man < man { return nil }
            xHi = mergedHi
            xLo = mergedLo
        }
        let msb = xHi >> 63
        var bits = xHi >> (msb + 9)
        exp2 &-= 1 ^ msb
        // Exactly halfway between two doubles: round-half-even needs the exact value.
        if xLo == 0, xHi & 0x1FF == 0, bits & 3 == 1 { return nil }
        bits &+= bits & 1
        bits >>= 1
        if bits >> 53 > 0 {
            bits >>= 1
            exp2 &+= 1
        }
        // Subnormal (exponent 0 or below, wrapped) or infinite.
        if exp2 &- 1 >= 0x7FF - 1 { return nil }
        var result = exp2 << 52 | bits & 0x000F_FFFF_FFFF_FFFF
        if negative { result |= 1 << 63 }
        return result
    }

    @inline(never)
    static func slowScalar(_ token: UnsafeRawBufferPointer) throws(HTTPContentError) -> (isInteger: Bool, bits: UInt64) {
        if let i = integer(token) { return (true, UInt64(bitPattern: i)) }
        // The fast paths were tried already (`scalar`): straight to strtod.
        return (false, try checkFinite(strtod(token), token).bitPattern)
    }

    /// The token as an Int64 if it is a plain integer that fits, else nil.
    @inline(__always)
    package static func integer(_ token: UnsafeRawBufferPointer) -> Int64? {
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

    private static let powersOf10: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// The token's double by the fast paths of `scalar`, or nil when they do not apply.
    @inline(__always)
    package static func fastDouble(_ token: UnsafeRawBufferPointer) -> Double? {
        guard let fast = fastScalar(token) else { return nil }
        return fast.isInteger ? Double(Int64(bitPattern: fast.bits)) : Double(bitPattern: fast.bits)
    }

    /// C's strtod on a token that is not NUL-terminated.
    package static func strtod(_ token: UnsafeRawBufferPointer) -> Double {
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
