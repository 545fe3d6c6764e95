/// The binary half of `PlistScan`: walks a binary plist's object graph from its top object
/// without building anything.
extension PlistScan {
    /// Checks the trailer and the offset table, refuses strings holding a NUL, then walks the
    /// graph from its top object: every container's reference list, cycles, the nesting depth,
    /// and the number of values the graph expands to (shared objects counted once per
    /// reference).
    /// - Returns: the checked layout, which `PlistBinaryReader` reads from.
    @discardableResult
    static func binary(_ b: UnsafeRawBufferPointer, _ options: PlistOptions) throws(HTTPContentError) -> PlistBinaryLayout {
        let layout = try PlistBinaryLayout(checking: b, options)
        try refuseStringsWithNUL(layout)
        var walk = PlistGraphWalk(layout: layout, options: options)
        try walk.run()
        return layout
    }

    /// libplist 2.2 asserts (aborting the process) when it reads a string or key holding a
    /// NUL: refuse those first. ASCII strings are marker 0x5N, UTF-16 ones 0x6N, N the length
    /// or 0xF and an int object with it. Objects outside the object area are left to the walk.
    private static func refuseStringsWithNUL(_ layout: PlistBinaryLayout) throws(HTTPContentError) {
        let b = layout.b, table = layout.table
        for object in 0..<layout.count {
            let offset = layout.offset(object)
            guard layout.inObjects(offset) else { continue }  // reported by the walk
            let kind = b[offset] >> 4
            guard kind == 0x5 || kind == 0x6 else { continue }
            guard let (l, p) = layout.lengthField(b[offset], at: offset + 1) else { continue }
            guard l <= UInt64(layout.n) else { throw PlistBinaryLayout.malformed("string object \(object) claims \(l) characters") }
            let length = Int(l)
            let unit = kind == 0x6 ? 2 : 1
            guard length <= (table - p) / unit else { throw PlistBinaryLayout.malformed("string object \(object) runs past the object area") }
            var i = 0
            while i < length {
                if unit == 1 ? b[p + i] == 0 : (b[p + 2 * i] == 0 && b[p + 2 * i + 1] == 0) {
                    throw PlistBinaryLayout.malformed("string object \(object) holds a NUL character, which this reader does not accept")
                }
                i += 1
            }
        }
    }
}

/// A depth-first walk of a binary plist's object graph with an explicit stack (no recursion
/// per level), each object's depth and expanded size kept once walked.
private struct PlistGraphWalk {
    let layout: PlistBinaryLayout
    let options: PlistOptions
    /// depth[i]: 0 unvisited, UInt16.max in progress, else 1 + the object's nesting depth.
    var depth: [UInt16]
    /// size[i]: how many values object i expands to (saturated just past the limit).
    var size: [UInt32]
    /// The saturation point of sizes: one past the value limit.
    let cap: UInt64
    struct Frame { var object: Int; var start: Int; var refs: Int; var next: Int; var size: UInt64; var depth: Int }
    var stack: [Frame] = []

    init(layout: PlistBinaryLayout, options: PlistOptions) {
        self.layout = layout
        self.options = options
        depth = [UInt16](repeating: 0, count: layout.count)
        size = [UInt32](repeating: 0, count: layout.count)
        cap = UInt64(min(options.maxObjects, Int(UInt32.max - 1))) + 1
    }

    mutating func run() throws(HTTPContentError) {
        var done = try visit(layout.top, level: 1) != nil
        while !done, !stack.isEmpty {
            let i = stack.count - 1
            if stack[i].next < stack[i].refs {
                let child64 = PlistBinaryLayout.uint(layout.b + stack[i].start + stack[i].next * layout.refSize, layout.refSize)
                stack[i].next += 1
                guard child64 < UInt64(layout.count) else {
                    throw PlistBinaryLayout.malformed("object \(stack[i].object) refers to object \(child64) of \(layout.count)")
                }
                if let (s, d) = try visit(Int(child64), level: stack.count + 1) { try add(s, d, to: i) }
                continue
            }
            let finished = stack.removeLast()
            depth[finished.object] = UInt16(finished.depth + 1)
            size[finished.object] = UInt32(finished.size)
            if let j = stack.indices.last {
                try add(finished.size, finished.depth, to: j)
            } else {
                done = true
            }
        }
    }

    /// Adds a finished child (its expanded size and depth) to frame `i`.
    private mutating func add(_ childSize: UInt64, _ childDepth: Int, to i: Int) throws(HTTPContentError) {
        stack[i].size = min(stack[i].size + childSize, cap)
        stack[i].depth = max(stack[i].depth, childDepth + 1)
        if stack[i].size >= cap {
            throw HTTPContentError(.tooLarge, "binary plist expands to more than \(options.maxObjects) values (shared objects count once per reference)")
        }
    }

    private func tooDeep() -> HTTPContentError {
        HTTPContentError(.decode, "plist nesting exceeds the maximum depth of \(options.maxDepth)")
    }

    /// Visits `object` at nesting level `level` (1 for the top): pushes a container, or
    /// returns the finished (size, depth) of a scalar or an object already walked.
    private mutating func visit(_ object: Int, level: Int) throws(HTTPContentError) -> (UInt64, Int)? {
        let d = depth[object]
        if d == UInt16.max { throw PlistBinaryLayout.malformed("object \(object) contains itself") }
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

    /// Where the container's references start and how many there are; nil for a scalar.
    private func references(of object: Int) throws(HTTPContentError) -> (start: Int, count: Int)? {
        let offset = layout.offset(object)
        guard layout.inObjects(offset) else { throw PlistBinaryLayout.malformed("object \(object) lies outside the object area") }
        let marker = layout.b[offset]
        let kind = marker >> 4
        guard kind == 0xA || kind == 0xC || kind == 0xD else { return nil }
        guard let (c, p) = layout.lengthField(marker, at: offset + 1) else {
            throw PlistBinaryLayout.malformed("object \(object) has a malformed count")
        }
        guard c <= UInt64(layout.n) else { throw PlistBinaryLayout.malformed("object \(object) claims \(c) elements") }
        let items = Int(c)
        let refs = kind == 0xD ? items * 2 : items
        guard refs <= (layout.table - p) / layout.refSize else {
            throw PlistBinaryLayout.malformed("object \(object)'s references run past the object area")
        }
        return (p, refs)
    }
}
