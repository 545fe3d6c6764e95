#if canImport(Glibc)
import Glibc
#endif
import HTTPContent

/// Writes a `JSONValue` in the format of Python's `marshal` module (version-independent subset:
/// None `N`, `T`/`F`, int `i`/`l`, binary float `g`, strings `z`/`a`/`u`, list `[`, dict `{`…`0`,
/// and back-references `r` for repeated member names), for the Python binding:
/// `marshal.loads` builds the objects about three times faster than `json.loads` parses text,
/// and repeated member names become one shared `str` (as `json.loads`'s memo does).
///
/// The result is what `json.loads(serialized)` gives: ints exact, doubles bit for bit, member
/// order and duplicates as in the document (the last duplicate wins in the dict). `.number`
/// values (`keepNumberText`) are refused: Python wants `Decimal` for them, which marshal cannot
/// express. No recursion (an explicit stack); values nested deeper than Python's reader allows
/// (2000 levels; the parser's default `maxDepth` is 512) are refused.
public enum JSONPythonMarshal {
    /// The marshal bytes in a `malloc`'d buffer (`free` it), and their length.
    public static func encode(_ value: JSONValue) throws(HTTPContentError) -> (UnsafeMutablePointer<UInt8>, Int) {
        var w = Writer()
        do {
            try w.write(value)
        } catch {
            w.release()
            throw error
        }
        return w.take()
    }

    enum Open {
        case array(JSONArray, Int)
        case object(JSONObject, Int)
    }

    struct Writer {
        var buf: UnsafeMutablePointer<UInt8>
        var count = 0
        var capacity: Int
        /// Member names already written with the reference flag, and their reference numbers.
        var refs: [String: Int32] = [:]
        var nextRef: Int32 = 0

        init() {
            capacity = 1 << 16
            buf = malloc(capacity)!.assumingMemoryBound(to: UInt8.self)
        }

        func release() { free(buf) }

        func take() -> (UnsafeMutablePointer<UInt8>, Int) { (buf, count) }

        @inline(__always)
        mutating func reserve(_ n: Int) {
            if count + n <= capacity { return }
            var c = capacity * 2
            while c < count + n { c *= 2 }
            buf = realloc(buf, c)!.assumingMemoryBound(to: UInt8.self)
            capacity = c
        }

        @inline(__always)
        mutating func byte(_ b: UInt8) {
            reserve(1)
            buf[count] = b
            count += 1
        }

        @inline(__always)
        mutating func int32(_ v: Int32) {
            reserve(4)
            (UnsafeMutableRawPointer(buf) + count).storeBytes(of: v.littleEndian, as: Int32.self)
            count += 4
        }

        mutating func int(_ i: Int64) {
            if let small = Int32(exactly: i) {
                reserve(5)
                buf[count] = UInt8(ascii: "i")
                count += 1
                int32(small)
                return
            }
            // TYPE_LONG: digit count (negative for a negative number), then 15-bit digits,
            // least significant first.
            var magnitude = i.magnitude
            var digits: [UInt16] = []
            while magnitude != 0 {
                digits.append(UInt16(magnitude & 0x7FFF))
                magnitude >>= 15
            }
            byte(UInt8(ascii: "l"))
            int32(Int32(i < 0 ? -digits.count : digits.count))
            reserve(2 * digits.count)
            for d in digits {
                (UnsafeMutableRawPointer(buf) + count).storeBytes(of: d.littleEndian, as: UInt16.self)
                count += 2
            }
        }

        /// An integer token of any length (TYPE_LONG from its decimal digits).
        mutating func bigInt(text token: UnsafeRawBufferPointer) {
            let negative = token.first == UInt8(ascii: "-")
            var dec = token.dropFirst(negative ? 1 : 0).map { UInt32($0 &- 0x30) }
            var digits: [UInt16] = []
            var start = 0
            while start < dec.count, dec[start] == 0 { start += 1 }
            while start < dec.count {
                var rem: UInt32 = 0
                for i in start..<dec.count {
                    let cur = rem * 10 + dec[i]
                    dec[i] = cur >> 15
                    rem = cur & 0x7FFF
                }
                digits.append(UInt16(rem))
                while start < dec.count, dec[start] == 0 { start += 1 }
            }
            byte(UInt8(ascii: "l"))
            int32(Int32(negative ? -digits.count : digits.count))
            reserve(2 * digits.count)
            for d in digits {
                (UnsafeMutableRawPointer(buf) + count).storeBytes(of: d.littleEndian, as: UInt16.self)
                count += 2
            }
        }

        @inline(__always)
        mutating func double(_ d: Double) {
            reserve(9)
            buf[count] = UInt8(ascii: "g")
            (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: d.bitPattern.littleEndian, as: UInt64.self)
            count += 9
        }

        @inline(__always)
        mutating func string(_ s: String, flag: UInt8 = 0) {
            var s = s
            s.withUTF8 { string(bytes: UnsafeRawBufferPointer($0), flag: flag) }
        }

        /// A string from UTF-8 bytes known to be valid.
        @inline(__always)
        mutating func string(bytes: UnsafeRawBufferPointer, flag: UInt8 = 0) {
            string(bytes: bytes, ascii: JSONStrings.isASCII(bytes), flag: flag)
        }

        /// A string from UTF-8 bytes known to be valid, and to be ASCII or not.
        @inline(__always)
        mutating func string(bytes: UnsafeRawBufferPointer, ascii: Bool, flag: UInt8 = 0) {
            let n = bytes.count
            reserve(n + 5)
            if ascii, n < 256 {
                buf[count] = UInt8(ascii: "z") | flag
                buf[count + 1] = UInt8(n)
                count += 2
            } else {
                buf[count] = (ascii ? UInt8(ascii: "a") : UInt8(ascii: "u")) | flag
                (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: Int32(n).littleEndian, as: Int32.self)
                count += 5
            }
            if let base = bytes.baseAddress { (UnsafeMutableRawPointer(buf) + count).copyMemory(from: base, byteCount: n) }
            count += n
        }

        @inline(__always)
        mutating func ref(_ r: Int32) {
            reserve(5)
            buf[count] = UInt8(ascii: "r")
            (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: r.littleEndian, as: Int32.self)
            count += 5
        }

        @inline(__always)
        func patch(_ v: Int32, at offset: Int) {
            (UnsafeMutableRawPointer(buf) + offset).storeBytes(of: v.littleEndian, as: Int32.self)
        }

        /// A member name: short ones are written once and referenced after.
        @inline(__always)
        mutating func key(_ k: String) {
            guard k.utf8.count <= 64 else { return string(k) }
            if let r = refs[k] {
                reserve(5)
                buf[count] = UInt8(ascii: "r")
                (UnsafeMutableRawPointer(buf) + count + 1).storeBytes(of: r.littleEndian, as: Int32.self)
                count += 5
                return
            }
            if refs.count < 65536 {
                // FLAG_REF: the reader keeps the object as reference number nextRef.
                refs[k] = nextRef
                nextRef += 1
                string(k, flag: 0x80)
            } else {
                string(k)
            }
        }

        /// Writes a scalar, or the header of a container (returned to be opened).
        @inline(__always)
        mutating func scalarOrOpen(_ v: JSONValue) throws(HTTPContentError) -> Open? {
            switch v {
            case .null: byte(UInt8(ascii: "N"))
            case .bool(let b): byte(b ? UInt8(ascii: "T") : UInt8(ascii: "F"))
            case .int(let i): int(i)
            case .double(let d): double(d)
            case .string(let s): string(s)
            case .number:
                throw HTTPContentError(.invalidArgument,
                    "numbers kept as text (keepNumberText) cannot be written for Python's marshal")
            case .array(let a):
                byte(UInt8(ascii: "["))
                int32(Int32(truncatingIfNeeded: a.count))
                return .array(a, 0)
            case .object(let o):
                byte(UInt8(ascii: "{"))
                return .object(o, 0)
            }
            return nil
        }

        mutating func write(_ value: JSONValue) throws(HTTPContentError) {
            guard let first = try scalarOrOpen(value) else { return }
            var stack: [Open] = [first]
            while let top = stack.popLast() {
                switch top {
                case .array(let a, let i):
                    guard i < a.count else { continue }
                    stack.append(.array(a, i + 1))
                    if let open = try scalarOrOpen(a[i]) { try push(open, &stack) }
                case .object(let o, let i):
                    guard i < o.count else {
                        byte(UInt8(ascii: "0"))
                        continue
                    }
                    stack.append(.object(o, i + 1))
                    let m = o[i]
                    key(m.key)
                    if let open = try scalarOrOpen(m.value) { try push(open, &stack) }
                }
            }
        }

        @inline(__always)
        func push(_ open: Open, _ stack: inout [Open]) throws(HTTPContentError) {
            if stack.count >= 1999 {
                throw HTTPContentError(.invalidArgument,
                    "JSON nested deeper than 1999 levels cannot be written for Python's marshal")
            }
            stack.append(open)
        }
    }
}
