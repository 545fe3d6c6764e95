#if canImport(Glibc)
import Glibc
#endif

/// The limits checked before libplist sees a document. libplist 2.2 has none of its own: its
/// parsers recurse once per nesting level, and its binary parser copies an object once per
/// reference, so a few kilobytes of shared references expand to billions of nodes. These
/// scans walk the structure without building anything and refuse what is too deep
/// (`.decode`), too many (`.tooLarge`), or self-referencing (`.decode`).
enum PlistScan {
    // MARK: - Binary

    /// Walks a binary plist's object graph from its top object: checks the trailer and the
    /// offset table, every container's reference list, cycles, the nesting depth, and the
    /// number of values the graph expands to (shared objects counted once per reference).
    static func binary(_ b: UnsafeRawBufferPointer, _ options: PlistOptions) throws(HTTPContentError) {
        let n = b.count
        func bad(_ why: String) -> HTTPContentError {
            HTTPContentError(.decode, "malformed binary plist: \(why)")
        }
        guard n >= 8 + 32 else { throw bad("\(n) bytes is shorter than its header and trailer") }
        func uint(_ at: Int, _ size: Int) -> UInt64 {
            var v: UInt64 = 0
            for i in 0..<size { v = v << 8 | UInt64(b[at + i]) }
            return v
        }
        let t = n - 32
        let offSize = Int(b[t + 6]), refSize = Int(b[t + 7])
        let count64 = uint(t + 8, 8), top64 = uint(t + 16, 8), table64 = uint(t + 24, 8)
        guard (1...8).contains(offSize), (1...8).contains(refSize) else {
            throw bad("offset size \(offSize) or reference size \(refSize) is not 1 to 8")
        }
        guard count64 >= 1, count64 <= UInt64(n), top64 < count64, table64 >= 8, table64 < UInt64(t) else {
            throw bad("the trailer's object count, top object or offset table position is out of range")
        }
        let count = Int(count64), table = Int(table64)
        guard count <= (t - table) / offSize else { throw bad("the offset table runs past the trailer") }
        if count > options.maxObjects {
            throw HTTPContentError(.tooLarge, "binary plist holds \(count) objects, more than the limit of \(options.maxObjects)")
        }
        // libplist 2.2 asserts (aborting the process) when it reads a string or key holding a
        // NUL: refuse those first. ASCII strings are marker 0x5N, UTF-16 ones 0x6N, N the length
        // or 0xF and an int object with it.
        for object in 0..<count {
            let offset64 = uint(table + object * offSize, offSize)
            guard offset64 >= 8, offset64 < UInt64(table) else { continue }  // reported by the walk below
            let offset = Int(offset64)
            let kind = b[offset] >> 4
            guard kind == 0x5 || kind == 0x6 else { continue }
            var length = Int(b[offset] & 0xF)
            var p = offset + 1
            if length == 0xF {
                guard p < table, b[p] >> 4 == 1, b[p] & 0xF <= 3 else { continue }
                let size = 1 << Int(b[p] & 0xF)
                guard p + 1 + size <= table else { continue }
                let l = uint(p + 1, size)
                guard l <= UInt64(n) else { throw bad("string object \(object) claims \(l) characters") }
                length = Int(l)
                p += 1 + size
            }
            let unit = kind == 0x6 ? 2 : 1
            guard length <= (table - p) / unit else { throw bad("string object \(object) runs past the object area") }
            var i = 0
            while i < length {
                if unit == 1 ? b[p + i] == 0 : (b[p + 2 * i] == 0 && b[p + 2 * i + 1] == 0) {
                    throw bad("string object \(object) holds a NUL character, which this reader does not accept")
                }
                i += 1
            }
        }

        /// Where the container's references start and how many there are; nil for a scalar.
        func references(of object: Int) throws(HTTPContentError) -> (start: Int, count: Int)? {
            let offset64 = uint(table + object * offSize, offSize)
            guard offset64 >= 8, offset64 < UInt64(table) else { throw bad("object \(object) lies outside the object area") }
            let offset = Int(offset64)
            let marker = b[offset]
            let kind = marker >> 4
            guard kind == 0xA || kind == 0xC || kind == 0xD else { return nil }
            var items = Int(marker & 0xF)
            var p = offset + 1
            if items == 0xF {
                guard p < table, b[p] >> 4 == 1, b[p] & 0xF <= 3 else { throw bad("object \(object) has a malformed count") }
                let size = 1 << Int(b[p] & 0xF)
                guard p + 1 + size <= table else { throw bad("object \(object) has a malformed count") }
                let c = uint(p + 1, size)
                guard c <= UInt64(n) else { throw bad("object \(object) claims \(c) elements") }
                items = Int(c)
                p += 1 + size
            }
            let refs = kind == 0xD ? items * 2 : items
            guard refs <= (table - p) / refSize else { throw bad("object \(object)'s references run past the object area") }
            return (p, refs)
        }

        // depth[i]: 0 unvisited, UInt16.max in progress, else 1 + the object's nesting depth.
        var depth = [UInt16](repeating: 0, count: count)
        // size[i]: how many values object i expands to (saturated just past the limit).
        var size = [UInt32](repeating: 0, count: count)
        let cap = UInt64(min(options.maxObjects, Int(UInt32.max - 1))) + 1
        struct Frame { var object: Int; var start: Int; var refs: Int; var next: Int; var size: UInt64; var depth: Int }
        var stack: [Frame] = []

        func tooMany() -> HTTPContentError {
            HTTPContentError(.tooLarge, "binary plist expands to more than \(options.maxObjects) values (shared objects count once per reference)")
        }
        func tooDeep() -> HTTPContentError {
            HTTPContentError(.decode, "plist nesting exceeds the maximum depth of \(options.maxDepth)")
        }
        /// Visits `object` at nesting level `level` (1 for the top): pushes a container, or
        /// returns the finished (size, depth) of a scalar or an object already walked.
        func visit(_ object: Int, level: Int) throws(HTTPContentError) -> (UInt64, Int)? {
            let d = depth[object]
            if d == UInt16.max { throw bad("object \(object) contains itself") }
            if d != 0 {
                if level - 1 + Int(d) - 1 > options.maxDepth { throw tooDeep() }
                return (UInt64(size[object]), Int(d) - 1)
            }
            guard let (start, refs) = try references(of: object) else {
                depth[object] = 1
                size[object] = 1
                return (1, 0)
            }
            if level > options.maxDepth { throw tooDeep() }
            depth[object] = UInt16.max
            stack.append(Frame(object: object, start: start, refs: refs, next: 0, size: 1, depth: 1))
            return nil
        }

        var result = try visit(Int(top64), level: 1)
        while result == nil, !stack.isEmpty {
            let i = stack.count - 1
            if stack[i].next < stack[i].refs {
                let child64 = uint(stack[i].start + stack[i].next * refSize, refSize)
                stack[i].next += 1
                guard child64 < count64 else { throw bad("object \(stack[i].object) refers to object \(child64) of \(count)") }
                if let (s, d) = try visit(Int(child64), level: stack.count + 1) {
                    stack[i].size = min(stack[i].size + s, cap)
                    stack[i].depth = max(stack[i].depth, d + 1)
                    if stack[i].size >= cap { throw tooMany() }
                }
                continue
            }
            let done = stack.removeLast()
            depth[done.object] = UInt16(done.depth + 1)
            size[done.object] = UInt32(done.size)
            if let j = stack.indices.last {
                stack[j].size = min(stack[j].size + done.size, cap)
                stack[j].depth = max(stack[j].depth, done.depth + 1)
                if stack[j].size >= cap { throw tooMany() }
            } else {
                result = (done.size, done.depth)
            }
        }
    }

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
