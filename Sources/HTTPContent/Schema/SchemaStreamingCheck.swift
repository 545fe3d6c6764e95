/// A schema's check while the `JSON` handler builds the tree, at any depth: each element of an
/// array whose subschemas are known (`SchemaStreamingPlace`: properties / items / prefixItems
/// chains, allOf and $ref) is checked on the tape as soon as it is complete, and so is each
/// object or array there when it closes (its scalar members with it), except inside an element
/// still small (`smallElement`), which its own check covers. An invalid item of
/// `{"count": N, "items": [...]}` thus fails the parse at the chunk that carries it instead of
/// after the whole body.
///
/// Its error lists that value's violations as the whole document's validation would report
/// them (full instance and schema paths); with all errors, those of that value only, since the
/// rest has not arrived. The finished document is then validated as usual, the containers
/// already proven valid being taken as such (`SchemaTapeProven`). Schemas without a tape program
/// are validated once the document is complete.
final class SchemaStreamingCheck: JSONStreamingCheck {
    private let schema: JSONSchema
    private let program: SchemaTapeProgram
    private let tables: SchemaTapeProgram.Tables
    private let allErrors: Bool
    private let scratch: SchemaRegexScratch?
    /// For member names against patternProperties while finding places (PCRE2 is needed then
    /// even when the tape program matches every pattern as a literal).
    private lazy var keyScratch = scratch ?? SchemaRegexScratch()
    private let proven = SchemaTapeProven()
    private let root: SchemaStreamingChild

    /// One open container the check follows.
    private struct Open {
        let child: SchemaStreamingChild
        /// What applies to its children (nil: nothing known).
        let place: SchemaStreamingPlace?
        /// Where it is in its parent: a member name's node, or an index.
        let key: UInt32
        let index: Int
        let parentIsObject: Bool
        /// The tape's node count when this container opened, if it is an array element; -1 if not.
        let start: Int
        /// The same for the innermost array element around it (-1: none).
        let enclosingStart: Int
    }

    /// Inside an array element still smaller than this many tape nodes, nothing is followed:
    /// the element's own check when it closes, soon, covers what is in it, and following every
    /// member cost more than the rest of validation (each container checked, each proof stored
    /// and looked up again). An element that grows past it (a page of items held by one element)
    /// has what it holds offered again (`reofferAt`), so its items still fail at their chunk.
    static let smallElement = 4096

    @exclusivity(unchecked) private var stack: [Open] = []
    @exclusivity(unchecked) private(set) var reofferAt = Int.max
    /// The tape run values are checked with, made at the first check, in memory of its own so it
    /// is only ever used in place (an optional run was copied, with its references retained, at
    /// each check).
    @exclusivity(unchecked) private var run: UnsafeMutablePointer<SchemaTapeRun>?

    init?(_ schema: JSONSchema, allErrors: Bool) {
        guard let program = schema.tapeProgram, let tables = program.tables, let root = program.programNode(schema.rootNode)
        else { return nil }
        self.schema = schema
        self.program = program
        self.tables = tables
        self.allErrors = allErrors
        scratch = program.makeScratch()
        self.root = SchemaStreamingChild([SchemaStreamingTarget(node: schema.rootNode, program: root, schemaPath: [])])
    }

    // MARK: - Events from the tree builder

    func enter(_ storage: JSONTapeStorage, isObject: Bool, key: UInt32, index: Int, parentIsObject: Bool) -> Bool {
        let child: SchemaStreamingChild
        var start = -1, enclosingStart = -1
        if index < 0 {
            stack.removeAll(keepingCapacity: true)
            reofferAt = Int.max
            child = root
        } else if !stack.isEmpty {
            let top = stack.count - 1
            enclosingStart = stack[top].start >= 0 ? stack[top].start : stack[top].enclosingStart
            // Read in place first: most containers met inside an element stop here.
            if enclosingStart >= 0 && storage.nodeCount - enclosingStart < Self.smallElement { return false }
            guard let place = stack[top].place else { reofferAt = Int.max; return false }
            child = parentIsObject ? place.child(key: key, storage, keyScratch) : place.child(index: index)
            if child.targets.isEmpty { reofferAt = Int.max; return false }
            if !parentIsObject {
                start = storage.nodeCount
                reofferAt = start + Self.smallElement
            }
        } else {
            return false
        }
        stack.append(Open(child: child, place: child.place(program), key: key, index: index,
                          parentIsObject: parentIsObject, start: start, enclosingStart: enclosingStart))
        return true
    }

    func leave(_ storage: JSONTapeStorage, _ node: UInt32) throws(HTTPContentError) {
        guard let open = stack.popLast() else { return }
        if open.start >= 0 { reofferAt = open.enclosingStart >= 0 ? open.enclosingStart + Self.smallElement : Int.max }
        // The document itself is validated by `finish`, with the rest.
        if stack.isEmpty { return }
        try check(storage, node, open.child, last: (open.key, open.index, open.parentIsObject), container: true)
    }

    func element(_ storage: JSONTapeStorage, _ node: UInt32, _ index: Int) throws(HTTPContentError) {
        guard let last = stack.last, let place = last.place else { return }
        // A scalar inside a small element: that element's check covers it.
        if last.start >= 0 && storage.nodeCount - last.start < Self.smallElement { return }
        let child = place.child(index: index)
        if child.targets.isEmpty { return }
        try check(storage, node, child, last: (0, index, false), container: false)
    }

    func finish(_ value: JSONValue) throws(HTTPContentError) {
        stack.removeAll(keepingCapacity: true)
        dropRun()
        defer { proven.removeAll() }
        try schema.validate(value, allErrors: allErrors, proven: proven)
    }

    // MARK: - Checking

    /// Checks `node` (complete on `storage`) against what applies at its place; containers
    /// proven valid are remembered for the checks around them.
    private func check(_ storage: JSONTapeStorage, _ node: UInt32, _ child: SchemaStreamingChild,
                       last: (key: UInt32, index: Int, parentIsObject: Bool), container: Bool) throws(HTTPContentError) {
        let run = tapeRun(storage)
        var failed: [Int] = []
        let depth = stack.count
        child.programs.withUnsafeBufferPointer { programs in
            for (i, program) in programs.enumerated() {
                run.pointee.depth = depth
                switch run.pointee.eval(program, node) {
                case .valid:
                    if container { proven.insert(program, node) }
                case .undecided:
                    continue
                case .invalid:
                    failed.append(i)
                    if !allErrors { return }
                }
            }
        }
        if failed.isEmpty { return }
        let value = JSONTape.valueOf(storage, node)
        var path = instancePath(storage)
        path.append(last.parentIsObject ? String(decoding: storage.text(last.key), as: UTF8.self) : String(last.index))
        let prefix = SchemaPointer.join(path)
        var found: [SchemaViolation] = []
        for target in failed.map({ child.targets[$0] }) {
            let schemaPrefix = SchemaPointer.join(target.schemaPath)
            for v in schema.violations(of: value, at: target.node, allErrors: allErrors) {
                found.append(SchemaViolation(instancePath: prefix + v.instancePath, schemaPath: schemaPrefix + v.schemaPath,
                                             keyword: v.keyword, message: v.message))
            }
            if !allErrors && !found.isEmpty { break }
        }
        // The full validator alone decides: should it disagree, the document's end will tell.
        if found.isEmpty { return }
        throw JSONSchema.error(found)
    }

    /// The instance path of the innermost open container, as tokens.
    private func instancePath(_ storage: JSONTapeStorage) -> [String] {
        stack.dropFirst().map { $0.parentIsObject ? String(decoding: storage.text($0.key), as: UTF8.self) : String($0.index) }
    }

    private func tapeRun(_ storage: JSONTapeStorage) -> UnsafeMutablePointer<SchemaTapeRun> {
        if let run {
            run.pointee.tape = storage
            return run
        }
        let r = UnsafeMutablePointer<SchemaTapeRun>.allocate(capacity: 1)
        r.initialize(to: SchemaTapeRun(t: tables, program: program, tape: storage, scratch: scratch, proven: proven))
        run = r
        return r
    }

    private func dropRun() {
        guard let run else { return }
        run.deinitialize(count: 1)
        run.deallocate()
        self.run = nil
    }

    deinit { dropRun() }
}

extension JSONSchema: JSONStreamingValidator {
    func streamingCheck() -> (any JSONStreamingCheck)? { SchemaStreamingCheck(self, allErrors: false) }
}

extension JSONSchemaCheck: JSONStreamingValidator {
    /// Asked for every error, the document is checked whole once complete: failing at the first
    /// invalid item would report that one alone.
    func streamingCheck() -> (any JSONStreamingCheck)? {
        allErrors ? nil : SchemaStreamingCheck(schema, allErrors: false)
    }
}
