/// Percent-encoding of bytes, driven by a 256-entry table: RFC 3986's unreserved bytes
/// (`A-Z a-z 0-9 - . _ ~`) are kept, every other byte becomes `%XX` in uppercase hex. This is
/// exactly what `curl_easy_escape` does, which the tests check on random bytes.
enum PercentEncoding {
    /// 1 for a byte sent as it is, 0 for a byte that becomes `%XX`.
    static let unreserved: [UInt8] = (0..<256).map { b in
        switch UInt8(b) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return 1
        default:
            return 0
        }
    }

    static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends the escaped form of `bytes` to `out`.
    /// - Parameter plusForSpace: write a space as `+` instead of `%20` (`+` itself is then `%2B`,
    ///   as it always is).
    static func escape(_ bytes: some Collection<UInt8>, into out: inout [UInt8], plusForSpace: Bool) {
        unreserved.withUnsafeBufferPointer { table in
            hexDigits.withUnsafeBufferPointer { hex in
                for b in bytes {
                    if table[Int(b)] != 0 {
                        out.append(b)
                    } else if b == 0x20 && plusForSpace {
                        out.append(UInt8(ascii: "+"))
                    } else {
                        out.append(UInt8(ascii: "%"))
                        out.append(hex[Int(b >> 4)])
                        out.append(hex[Int(b & 0x0F)])
                    }
                }
            }
        }
    }

    /// The escaped form of `bytes` as text (always ASCII).
    static func escaped(_ bytes: some Collection<UInt8>, plusForSpace: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        escape(bytes, into: &out, plusForSpace: plusForSpace)
        return String(decoding: out, as: UTF8.self)
    }
}
