/// A compiled schema as a flat program of checks that runs on a parsed document's tape
/// (`JSONTape`) in place: no `JSONValue` per node, no reference counting, no allocation on the
/// way. It only answers whether a document is valid; when it says anything but "valid" (or
/// refuses the schema), `JSONSchema` runs its full validator, which alone makes errors. Errors
/// and verdicts are thus those of `SchemaEvaluation`, by construction, and the program is only
/// trusted where its verdict is certain (see `SchemaTapeVerdict`).
///
/// Made from the compiled `SchemaNode` graph (references already resolved, cycles included):
/// one program node per schema node, its keywords as `SchemaTapeOp`s. The object keywords
/// `properties`, `required`, `additionalProperties` and `patternProperties` of a node fuse into
/// one pass over the members: each member's key is looked up once in the node's key table (for
/// names of up to six bytes, one word comparison: the tape stores them inline). Schemas whose
/// verdict depends on more than the value in hand refuse to compile: `unevaluatedItems`,
/// `unevaluatedProperties` (annotations) and `$dynamicRef` (the dynamic scope).
final class SchemaTapeProgram: @unchecked Sendable {
    struct Node {
        /// 1 / 0 for a boolean schema, -1 for an object schema (its ops run).
        var always: Int8
        var first: Int32
        var count: Int32
    }

    /// A property name of an object plan: its inline tape word (names of up to six bytes; else
    /// 0), its bytes in `keyBytes`, the subschema of `properties` (-1: not a property) and its
    /// bit among the plan's `required` names (0: not required).
    struct Key {
        var word: UInt64
        var offset: Int32
        var length: Int32
        var node: Int32
        var bit: UInt64
    }

    /// The fused object keywords of one schema node.
    struct ObjectPlan {
        var firstKey: Int32, keyCount: Int32
        var required: UInt64
        var firstPattern: Int32, patternCount: Int32
        /// `additionalProperties`' subschema, or -1.
        var additional: Int32
    }

    /// A `minimum`-like bound, with the integer form when the bound is one (compared exactly).
    struct Bound {
        /// 0 maximum, 1 exclusiveMaximum, 2 minimum, 3 exclusiveMinimum.
        var kind: UInt8
        var isInt: Bool
        var int: Int64
        var double: Double
        /// The bound as written, in `values` (for number-text instances).
        var value: Int32
    }

    private(set) var nodes: [Node] = []
    private(set) var ops: [SchemaTapeOp] = []
    /// Node lists (prefixItems, allOf, anyOf, oneOf), as program node indices.
    private(set) var lists: [Int32] = []
    private(set) var keys: [Key] = []
    private(set) var keyBytes: [UInt8] = []
    private(set) var plans: [ObjectPlan] = []
    /// patternProperties: (regex index, node).
    private(set) var patterns: [(regex: Int32, node: Int32)] = []
    private(set) var regexes: [SchemaRegex] = []
    /// Per regex index: how it is matched (a plain literal needs no regex engine).
    private(set) var matchers: [SchemaTapeMatcher] = []
    private(set) var bounds: [Bound] = []
    /// enum lists, const values and bounds as written (the rare paths compare `JSONValue`s).
    private(set) var values: [JSONValue] = []
    private(set) var formats: [SchemaFormat] = []
    /// dependentRequired: (key index, first key index of the needed names, count).
    private(set) var dependencies: [(key: Int32, first: Int32, count: Int32)] = []
    /// dependentSchemas: (key index, node).
    private(set) var dependentSchemas: [(key: Int32, node: Int32)] = []

    /// The program node of each compiled schema node (kept: a streaming check evaluates the
    /// subschemas it finds along a document's path, see `SchemaStreamingCheck`).
    private var index: [ObjectIdentifier: Int32] = [:]
    private var queue: [(SchemaNode, Int32)] = []

    /// Why a schema is not compiled (the full validator handles it alone).
    struct Refusal: Error {}

    /// The program for `root`, or nil when a keyword needs the full validator.
    static func compile(_ root: SchemaNode) -> SchemaTapeProgram? {
        let p = SchemaTapeProgram()
        do {
            _ = try p.node(root)
            while let (n, i) = p.queue.popLast() { try p.fill(n, i) }
        } catch {
            return nil
        }
        p.tables = Tables(p)
        p.needsRegexEngine = p.matchers.contains { $0.kind == .regex }
        return p
    }

    /// The arrays the run reads, copied once into memory of their own: reading them costs no
    /// exclusivity check and no reference count.
    struct Tables {
        let nodes: UnsafeMutablePointer<Node>
        let ops: UnsafeMutablePointer<SchemaTapeOp>
        let lists: UnsafeMutablePointer<Int32>
        let keys: UnsafeMutablePointer<Key>
        let keyBytes: UnsafeMutablePointer<UInt8>
        let plans: UnsafeMutablePointer<ObjectPlan>
        let bounds: UnsafeMutablePointer<Bound>
        let matchers: UnsafeMutablePointer<SchemaTapeMatcher>
        let patterns: UnsafeMutablePointer<(regex: Int32, node: Int32)>

        init(_ p: SchemaTapeProgram) {
            func copy<T>(_ a: [T]) -> UnsafeMutablePointer<T> {
                let out = UnsafeMutablePointer<T>.allocate(capacity: max(a.count, 1))
                _ = UnsafeMutableBufferPointer(start: out, count: a.count).initialize(from: a)
                return out
            }
            nodes = copy(p.nodes); ops = copy(p.ops); lists = copy(p.lists); keys = copy(p.keys)
            keyBytes = copy(p.keyBytes); plans = copy(p.plans); bounds = copy(p.bounds)
            matchers = copy(p.matchers); patterns = copy(p.patterns)
        }

        func free(_ p: SchemaTapeProgram) {
            for x in [UnsafeMutableRawPointer(nodes), UnsafeMutableRawPointer(ops), UnsafeMutableRawPointer(lists),
                      UnsafeMutableRawPointer(keys), UnsafeMutableRawPointer(keyBytes), UnsafeMutableRawPointer(plans),
                      UnsafeMutableRawPointer(bounds), UnsafeMutableRawPointer(matchers), UnsafeMutableRawPointer(patterns)] {
                x.deallocate()
            }
        }
    }

    private(set) var tables: Tables?

    /// The program node of `node` (a node of the schema this program was made from).
    func programNode(_ node: SchemaNode) -> Int32? { index[ObjectIdentifier(node)] }
    /// Some pattern is matched by PCRE2 (not a plain literal): runs need its match state.
    private(set) var needsRegexEngine = false

    deinit { tables?.free(self) }

    private func node(_ n: SchemaNode) throws(Refusal) -> Int32 {
        if let i = index[ObjectIdentifier(n)] { return i }
        let i = Int32(nodes.count)
        index[ObjectIdentifier(n)] = i
        if let always = n.always {
            nodes.append(Node(always: always ? 1 : 0, first: 0, count: 0))
        } else {
            if n.hasUnevaluated { throw Refusal() }
            nodes.append(Node(always: -1, first: 0, count: 0))
            queue.append((n, i))
        }
        return i
    }

    private func list(_ ns: [SchemaNode]) throws(Refusal) -> (Int32, Int32) {
        let ids = try ns.map { (n: SchemaNode) throws(Refusal) -> Int32 in try node(n) }
        let first = Int32(lists.count)
        lists += ids
        return (first, Int32(ids.count))
    }

    private func key(_ name: String, node: Int32 = -1, bit: UInt64 = 0) -> Int32 {
        let bytes = Array(name.utf8)
        var word: UInt64 = 0
        if bytes.count <= 6 {
            word = bytes.withUnsafeBytes { JSONTape.Tag.inlineString.rawValue | UInt64($0.count) << 4 | ShortBytes($0).w0 << 8 }
        }
        keys.append(Key(word: word, offset: Int32(keyBytes.count), length: Int32(bytes.count), node: node, bit: bit))
        keyBytes += bytes
        return Int32(keys.count - 1)
    }

    private func value(_ v: JSONValue) -> Int32 {
        values.append(v)
        return Int32(values.count - 1)
    }

    private func bound(_ kind: UInt8, _ m: JSONValue) -> SchemaTapeOp {
        var b = Bound(kind: kind, isInt: false, int: 0, double: m.doubleValue ?? .nan, value: value(m))
        switch m {
        case .int(let y): b.isInt = true; b.int = y
        case .number(let t): if let y = Int64(t) { b.isInt = true; b.int = y }
        default: break
        }
        bounds.append(b)
        return .bound(Int32(bounds.count - 1))
    }

    private func regex(_ re: SchemaRegex) -> Int32 {
        regexes.append(re)
        var m = SchemaTapeMatcher(re.source)
        if m.kind != .regex {
            m.offset = Int32(keyBytes.count)
            keyBytes += m.literal
            m.literal = []
        }
        matchers.append(m)
        return Int32(regexes.count - 1)
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private func fill(_ n: SchemaNode, _ i: Int32) throws(Refusal) {
        var out: [SchemaTapeOp] = []
        // The object keywords, fused into one plan.
        var props: [(String, SchemaNode)] = []
        var required: [SchemaKey] = []
        var patternList: [(SchemaRegex, SchemaNode)] = []
        var additional: SchemaNode?
        var hasObjectPlan = false
        for k in n.keywords {
            switch k {
            case .type(let set, _): out.append(.type(set.rawValue))
            case .enumeration(let list): out.append(enumeration(list))
            case .constant(let c): out.append(.constant(value(c)))
            case .multipleOf(let m): out.append(.multipleOf(value(m)))
            case .maximum(let m): out.append(bound(0, m))
            case .exclusiveMaximum(let m): out.append(bound(1, m))
            case .minimum(let m): out.append(bound(2, m))
            case .exclusiveMinimum(let m): out.append(bound(3, m))
            case .maxLength(let x): out.append(.maxLength(x))
            case .minLength(let x): out.append(.minLength(x))
            case .pattern(let re): out.append(.pattern(regex(re)))
            case .maxItems(let x): out.append(.maxItems(x))
            case .minItems(let x): out.append(.minItems(x))
            case .uniqueItems: out.append(.uniqueItems)
            case .maxProperties(let x): out.append(.maxProperties(x))
            case .minProperties(let x): out.append(.minProperties(x))
            case .required(let names):
                required += names
                hasObjectPlan = true
            case .dependentRequired(let deps): out += dependentRequired(deps)
            case .prefixItems(let ns):
                let (first, count) = try list(ns)
                out.append(.prefixItems(first, count))
            case .items(let item, let prefix): out.append(.items(try node(item), Int32(prefix)))
            case .contains(let c, let minC, let maxC):
                guard minC <= Int(Int32.max), (maxC ?? 0) <= Int(Int32.max) else { throw Refusal() }
                out.append(.contains(try node(c), Int32(minC), Int32(maxC ?? -1)))
            case .properties(let list, _, _):
                // A name given twice: which subschema applies differs between the full
                // validator's lookups; leave such schemas to it.
                if Set(list.map(\.0)).count != list.count { throw Refusal() }
                props += list
                hasObjectPlan = true
            case .patternProperties(let list):
                patternList += list
                hasObjectPlan = true
            case .additionalProperties(let a, _, _, _):
                additional = a
                hasObjectPlan = true
            case .propertyNames(let p): out.append(.propertyNames(try node(p)))
            case .dependentSchemas(let deps): out += try dependentSchemas(deps)
            case .allOf(let ns):
                let (first, count) = try list(ns)
                out.append(.allOf(first, count))
            case .anyOf(let ns):
                let (first, count) = try list(ns)
                out.append(.anyOf(first, count))
            case .oneOf(let ns):
                let (first, count) = try list(ns)
                out.append(.oneOf(first, count))
            case .not(let x): out.append(.not(try node(x)))
            case .conditional(let c, let t, let e):
                out.append(.conditional(try node(c), try t.map { (x: SchemaNode) throws(Refusal) -> Int32 in try node(x) } ?? -1,
                                        try e.map { (x: SchemaNode) throws(Refusal) -> Int32 in try node(x) } ?? -1))
            case .ref(let r):
                if let t = r.target { out.append(.ref(try node(t))) }
            case .format(_, let checker):
                if let checker {
                    formats.append(checker)
                    out.append(.format(Int32(formats.count - 1)))
                }
            case .contentEncoding:
                break  // an annotation for JSON documents (property lists take the full validator)
            case .dynamicRef, .unevaluatedItems, .unevaluatedProperties:
                throw Refusal()
            }
        }
        if hasObjectPlan {
            // Cheap checks first: the plan descends into the members.
            out.append(try objectPlan(props, required, patternList, additional))
        }
        nodes[Int(i)].first = Int32(ops.count)
        nodes[Int(i)].count = Int32(out.count)
        ops += out
    }

    /// `enum`: an enum of strings only is compared as keys (no value made per check).
    private func enumeration(_ list: [JSONValue]) -> SchemaTapeOp {
        guard !list.isEmpty, list.allSatisfy({ if case .string = $0 { return true } else { return false } }) else {
            return .enumeration(value(.array(JSONArray(list))))
        }
        let first = Int32(keys.count)
        for case .string(let s) in list { _ = key(s) }
        return .enumStrings(first, Int32(list.count))
    }

    /// `dependentRequired`: an op per named property, its needed names as keys.
    private func dependentRequired(_ deps: [(String, [String])]) -> [SchemaTapeOp] {
        var out: [SchemaTapeOp] = []
        for (name, needed) in deps {
            let k = key(name)
            let first = Int32(keys.count)
            for other in needed { _ = key(other) }
            dependencies.append((k, first, Int32(needed.count)))
            out.append(.dependentRequired(Int32(dependencies.count - 1)))
        }
        return out
    }

    /// `dependentSchemas`: an op per named property.
    private func dependentSchemas(_ deps: [(String, SchemaNode)]) throws(Refusal) -> [SchemaTapeOp] {
        var out: [SchemaTapeOp] = []
        for (name, d) in deps {
            dependentSchemas.append((key(name), try node(d)))
            out.append(.dependentSchema(Int32(dependentSchemas.count - 1)))
        }
        return out
    }

    /// properties, required, patternProperties and additionalProperties fused into one plan:
    /// distinct required names, each a bit (more than 64: the full validator).
    private func objectPlan(_ props: [(String, SchemaNode)], _ required: [SchemaKey],
                            _ patternList: [(SchemaRegex, SchemaNode)],
                            _ additional: SchemaNode?) throws(Refusal) -> SchemaTapeOp {
        var requiredNames: [String] = []
        for r in required where !requiredNames.contains(r.name) { requiredNames.append(r.name) }
        if requiredNames.count > 64 { throw Refusal() }
        let firstKey = Int32(keys.count)
        var mask: UInt64 = 0
        for (name, sub) in props {
            let bit: UInt64 = requiredNames.firstIndex(of: name).map { 1 << UInt64($0) } ?? 0
            mask |= bit
            _ = key(name, node: try node(sub), bit: bit)
        }
        for (j, name) in requiredNames.enumerated() where !props.contains(where: { $0.0 == name }) {
            mask |= 1 << UInt64(j)
            _ = key(name, bit: 1 << UInt64(j))
        }
        let firstPattern = Int32(patterns.count)
        for (re, sub) in patternList { patterns.append((regex(re), try node(sub))) }
        plans.append(ObjectPlan(firstKey: firstKey, keyCount: Int32(keys.count) - firstKey, required: mask,
                                firstPattern: firstPattern, patternCount: Int32(patternList.count),
                                additional: try additional.map { (x: SchemaNode) throws(Refusal) -> Int32 in try node(x) } ?? -1))
        return .object(Int32(plans.count - 1))
    }
}

/// One check of a program node (trivial payloads only: copying one costs no reference count).
enum SchemaTapeOp {
    /// `SchemaTypes` bits.
    case type(UInt8)
    case enumeration(Int32)
    /// An enum of strings only: its names as keys (first, count).
    case enumStrings(Int32, Int32)
    case constant(Int32)
    case multipleOf(Int32)
    /// An index among the bounds.
    case bound(Int32)
    case maxLength(Int), minLength(Int)
    case pattern(Int32)
    case maxItems(Int), minItems(Int)
    case uniqueItems
    case maxProperties(Int), minProperties(Int)
    case object(Int32)
    case dependentRequired(Int32)
    case prefixItems(Int32, Int32)
    /// Subschema, prefixItems count.
    case items(Int32, Int32)
    /// Subschema, minContains, maxContains (-1: none).
    case contains(Int32, Int32, Int32)
    case propertyNames(Int32)
    case dependentSchema(Int32)
    case allOf(Int32, Int32), anyOf(Int32, Int32), oneOf(Int32, Int32)
    case not(Int32)
    /// if, then (-1: none), else (-1: none).
    case conditional(Int32, Int32, Int32)
    case ref(Int32)
    case format(Int32)
}

/// How a `pattern` is matched on a document's bytes: a pattern that is plain ASCII text (no
/// regular expression syntax), anchored at the start or not, is a byte comparison (exact: ASCII
/// bytes are never changed by the repair of invalid UTF-8 the full validator applies);
/// anything else goes to PCRE2.
struct SchemaTapeMatcher {
    enum Kind: UInt8 { case prefix, substring, regex }
    let kind: Kind
    /// The literal's bytes (prefix, substring) while compiling; then where they are in the
    /// program's key bytes.
    var literal: [UInt8]
    var offset: Int32 = 0
    var length: Int32 = 0

    init(_ source: String) {
        var bytes = Array(source.utf8)
        var anchored = false
        if bytes.first == UInt8(ascii: "^") {
            anchored = true
            bytes.removeFirst()
        }
        let plain = bytes.allSatisfy { b in
            b < 0x80 && b >= 0x20 && !"\\^$.|?*+()[]{}/".utf8.contains(b)
        }
        if plain && !bytes.isEmpty {
            kind = anchored ? .prefix : .substring
            literal = bytes
            length = Int32(bytes.count)
        } else {
            kind = .regex
            literal = []
        }
    }
}
