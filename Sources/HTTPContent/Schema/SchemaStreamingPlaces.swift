/// The subschemas known to apply at each place of a document while it is parsed, whatever the
/// rest of the document holds: found from the root through `properties`, `patternProperties`,
/// `additionalProperties`, `prefixItems` and `items`, in place through `allOf` and `$ref`. Any
/// other applicator (`anyOf`, `oneOf`, `not`, `if`, `dependentSchemas`...) makes what lies
/// below it depend on more than the value's place, and is not followed: a value that fails a
/// subschema found here fails the whole document, which is what lets `SchemaStreamingCheck`
/// stop a transfer at the first invalid item. Schemas with `$dynamicRef` have no tape program
/// and are never checked while streaming.
///
/// Made lazily per document and remembered per transition (a place's child by member name or
/// index), so the items of an array share their subschemas after the first one.

/// One subschema applied at a place, with its program node and schema path from the root.
struct SchemaStreamingTarget {
    let node: SchemaNode
    let program: Int32
    let schemaPath: [String]
}

/// What applies to a value at one place: the subschemas to check it with when it completes.
final class SchemaStreamingChild {
    let targets: [SchemaStreamingTarget]
    /// The targets' program nodes, what a check runs (no target's references retained per value).
    let programs: [Int32]
    /// The targets as a container (expanded through allOf / $ref), when any of them says what
    /// applies to its members or elements; computed at the first container seen there.
    @exclusivity(unchecked) private var expanded: SchemaStreamingPlace??

    init(_ targets: [SchemaStreamingTarget]) {
        self.targets = targets
        programs = targets.map(\.program)
    }

    func place(_ program: SchemaTapeProgram) -> SchemaStreamingPlace? {
        if let expanded { return expanded }
        let p = SchemaStreamingPlace(targets, program)
        expanded = .some(p)
        return p
    }
}

/// A container's place: the subschemas (allOf and $ref expanded) whose `properties`,
/// `patternProperties`, `additionalProperties`, `prefixItems` or `items` say what applies to
/// its children.
final class SchemaStreamingPlace {
    private let applied: [SchemaStreamingTarget]
    private let program: SchemaTapeProgram
    @exclusivity(unchecked) private var byKey: [String: SchemaStreamingChild] = [:]
    /// Member names of at most 6 bytes by their tape word (which holds the name itself): a few
    /// compared in turn, no string made nor hashed per container.
    @exclusivity(unchecked) private var byWord: [(word: UInt64, child: SchemaStreamingChild)] = []
    @exclusivity(unchecked) private var byIndex: [SchemaStreamingChild] = []
    /// Children past every `prefixItems`: all alike.
    @exclusivity(unchecked) private var rest: SchemaStreamingChild?
    private let prefixCount: Int

    /// nil when no target says anything of the children.
    init?(_ targets: [SchemaStreamingTarget], _ program: SchemaTapeProgram) {
        var applied: [SchemaStreamingTarget] = []
        var seen = Set<ObjectIdentifier>()
        func expand(_ t: SchemaStreamingTarget) {
            guard t.node.always == nil, seen.insert(ObjectIdentifier(t.node)).inserted else { return }
            var navigable = false
            for keyword in t.node.keywords {
                switch keyword {
                case .properties, .patternProperties, .additionalProperties, .prefixItems, .items:
                    navigable = true
                case .allOf(let list):
                    for (i, n) in list.enumerated() {
                        if let p = program.programNode(n) { expand(.init(node: n, program: p, schemaPath: t.schemaPath + ["allOf", String(i)])) }
                    }
                case .ref(let r):
                    if let n = r.target, let p = program.programNode(n) {
                        expand(.init(node: n, program: p, schemaPath: t.schemaPath + ["$ref"]))
                    }
                default:
                    continue
                }
            }
            if navigable { applied.append(t) }
        }
        for t in targets { expand(t) }
        guard !applied.isEmpty else { return nil }
        self.applied = applied
        self.program = program
        prefixCount = applied.reduce(0) { n, t in
            t.node.keywords.reduce(n) { n, k in
                if case .prefixItems(let list) = k { return max(n, list.count) }
                return n
            }
        }
    }

    /// What applies to element `index` of this place's array.
    func child(index: Int) -> SchemaStreamingChild {
        if index >= prefixCount {
            if let rest { return rest }
            let c = makeChild(index: index)
            rest = c
            return c
        }
        while byIndex.count <= index { byIndex.append(makeChild(index: byIndex.count)) }
        return byIndex[index]
    }

    /// What applies to the member named by tape node `key` of this place's object.
    func child(key: UInt32, _ storage: JSONTapeStorage, _ scratch: SchemaRegexScratch) -> SchemaStreamingChild {
        let word = storage.word(key)
        guard word & 0xF == JSONTape.Tag.inlineString.rawValue else {
            return child(key: String(decoding: storage.text(key), as: UTF8.self), scratch)
        }
        for entry in byWord where entry.word == word { return entry.child }
        let c = child(key: String(decoding: storage.text(key), as: UTF8.self), scratch)
        if byWord.count < 16 { byWord.append((word, c)) }
        return c
    }

    /// What applies to member `key` of this place's object.
    func child(key: String, _ scratch: SchemaRegexScratch) -> SchemaStreamingChild {
        if let c = byKey[key] { return c }
        let c = makeChild(key: key, scratch)
        // Bounded: a document with many distinct names does not grow the table without end.
        if byKey.count < 4096 { byKey[key] = c }
        return c
    }

    private func target(_ n: SchemaNode, _ path: [String], _ out: inout [SchemaStreamingTarget]) {
        // Boolean subschemas: `true` says nothing, and `false` is the container's own failure
        // (reported as its keyword reports it, when the container is checked).
        guard n.always == nil, let p = program.programNode(n) else { return }
        out.append(.init(node: n, program: p, schemaPath: path))
    }

    private func makeChild(index: Int) -> SchemaStreamingChild {
        var out: [SchemaStreamingTarget] = []
        for t in applied {
            for keyword in t.node.keywords {
                switch keyword {
                case .prefixItems(let list) where index < list.count:
                    target(list[index], t.schemaPath + ["prefixItems", String(index)], &out)
                case .items(let n, let prefix) where index >= prefix:
                    target(n, t.schemaPath + ["items"], &out)
                default:
                    continue
                }
            }
        }
        return SchemaStreamingChild(out)
    }

    private func makeChild(key: String, _ scratch: SchemaRegexScratch) -> SchemaStreamingChild {
        var out: [SchemaStreamingTarget] = []
        for t in applied {
            for keyword in t.node.keywords {
                switch keyword {
                case .properties(_, let named, _):
                    if let n = named[key] { target(n, t.schemaPath + ["properties", key], &out) }
                case .patternProperties(let list):
                    for (re, n) in list where re.search(key, scratch) == true {
                        target(n, t.schemaPath + ["patternProperties", re.source], &out)
                    }
                case .additionalProperties(let n, let names, _, let patterns):
                    if names.contains(key) { continue }
                    // A pattern at its backtracking limit: the member's place is not known.
                    if patterns.contains(where: { $0.search(key, scratch) != false }) { continue }
                    target(n, t.schemaPath + ["additionalProperties"], &out)
                default:
                    continue
                }
            }
        }
        return SchemaStreamingChild(out)
    }
}
