#if canImport(Glibc)
import Glibc
#endif

/// The limits checked before libplist sees a document. libplist 2.2 has none of its own: its
/// parsers recurse once per nesting level, and its binary parser copies an object once per
/// reference, so a few kilobytes of shared references expand to billions of nodes. These
/// scans walk the structure without building anything and refuse what is too deep
/// (`.decode`), too many (`.tooLarge`), or self-referencing (`.decode`).
enum PlistScan {
    // The binary walk: `PlistScanBinary.swift`.

    // MARK: - XML

    /// Counts elements and their nesting in an XML plist, skipping comments, CDATA, processing
    /// instructions and the DOCTYPE, without building anything. The nesting allowed is
    /// `maxDepth` containers plus the `<plist>` element and a scalar element inside.
    static func xml(_ b: UnsafeRawBufferPointer, _ options: PlistOptions) throws(HTTPContentError) {
        guard let base = b.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let n = b.count
        var i = 0
        var level = 0
        var elements = 0
        func find(_ byte: UInt8, from: Int) -> Int? {
            guard from < n, let p = memchr(base + from, Int32(byte), n - from) else { return nil }
            return base.distance(to: p.assumingMemoryBound(to: UInt8.self))
        }
        func starts(_ s: StaticString, at: Int) -> Bool {
            let len = s.utf8CodeUnitCount
            guard at + len <= n else { return false }
            return memcmp(base + at, s.utf8Start, len) == 0
        }
        func skip(past s: StaticString, from: Int) throws(HTTPContentError) -> Int {
            var j = from
            let first = s.utf8Start.pointee
            while let k = find(first, from: j) {
                if starts(s, at: k) { return k + s.utf8CodeUnitCount }
                j = k + 1
            }
            throw HTTPContentError(.decode, "malformed XML plist: unterminated markup at byte \(from)", offset: from)
        }
        while let lt = find(UInt8(ascii: "<"), from: i) {
            if starts("<!--", at: lt) { i = try skip(past: "-->", from: lt + 4); continue }
            if starts("<![CDATA[", at: lt) { i = try skip(past: "]]>", from: lt + 9); continue }
            if starts("<?", at: lt) { i = try skip(past: "?>", from: lt + 2); continue }
            if starts("<!", at: lt) {
                // A DOCTYPE, with its internal subset in brackets (libplist refuses entities).
                var j = lt + 2, brackets = 0
                while j < n, !(base[j] == UInt8(ascii: ">") && brackets == 0) {
                    if base[j] == UInt8(ascii: "[") { brackets += 1 }
                    if base[j] == UInt8(ascii: "]") { brackets -= 1 }
                    j += 1
                }
                i = j + 1
                continue
            }
            if starts("</", at: lt) {
                level -= 1
                i = (find(UInt8(ascii: ">"), from: lt) ?? n - 1) + 1
                continue
            }
            // A start tag; attribute values may hold '>' inside quotes.
            var j = lt + 1
            var quote: UInt8 = 0
            while j < n {
                let c = base[j]
                if quote != 0 { if c == quote { quote = 0 } } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                    quote = c
                } else if c == UInt8(ascii: ">") { break }
                j += 1
            }
            guard j < n else {
                throw HTTPContentError(.decode, "malformed XML plist: unterminated tag at byte \(lt)", offset: lt)
            }
            elements += 1
            if elements > options.maxObjects + 1 {
                throw HTTPContentError(.tooLarge, "XML plist holds more than \(options.maxObjects) values")
            }
            if base[j - 1] != UInt8(ascii: "/") {
                level += 1
                if level > options.maxDepth + 2 {
                    throw HTTPContentError(.decode, "plist nesting exceeds the maximum depth of \(options.maxDepth) (at byte \(lt))",
                                           offset: lt)
                }
            }
            i = j + 1
        }
    }
}
