/// Turns schema documents into `SchemaNode` graphs: finds every resource (`$id`), anchor and
/// reference, loads referenced documents from the caller's remotes or the built-in
/// meta-schemas (never from the network), and resolves every `$ref` before validation starts.
final class SchemaCompiler {
    private(set) var resources: [String: SchemaResource] = [:]
    /// Compiled subschemas by "resource-uri#json-pointer".
    private var nodes: [String: SchemaNode] = [:]
    private var pending: [SchemaReference] = []
    private let remotes: [String: JSONValue]
    let assertFormat: Bool
    let formats: [String: SchemaFormat]
    /// Every node and reference made, to break the graph's cycles when the schema goes away.
    private var allNodes: [SchemaNode] = []
    /// Every `format` name the schemas use.
    private(set) var formatNamesUsed: Set<String> = []
    private var allReferences: [SchemaReference] = []

    /// Breaks every reference cycle of the compiled graph (nodes reach each other through
    /// references and resources), so that it can be freed.
    func tearDown() {
        for n in allNodes { n.keywords = []; n.owner = nil }
        for r in allReferences { r.target = nil }
        for r in resources.values { r.root = nil; r.anchors = [:]; r.dynamicAnchors = [:] }
        allNodes = []
        allReferences = []
        nodes = [:]
        resources = [:]
    }

    static let metaSchemas: [String: JSONValue] = {
        var out: [String: JSONValue] = [:]
        for (id, text) in SchemaMetaSchemas.documents {
            if let v = try? JSONValue(parsing: Array(text.utf8)) { out[id] = v }
        }
        return out
    }()

    init(remotes: [String: JSONValue], assertFormat: Bool, formats: [String: SchemaFormat]) {
        var r: [String: JSONValue] = [:]
        for (k, v) in remotes { r[SchemaURI.split(k).base] = v }
        self.remotes = r
        self.assertFormat = assertFormat
        self.formats = formats
    }

    /// Compiles the root document and everything it references.
    func compileRoot(_ schema: JSONValue, baseURI: String) throws(HTTPContentError) -> SchemaNode {
        let root = try compileDocument(schema, uri: baseURI)
        try resolvePending()
        return root
    }

    private func resolvePending() throws(HTTPContentError) {
        while let ref = pending.popLast() {
            let target = try resolve(ref.uri)
            ref.target = target
            if ref.isDynamic {
                let fragment = SchemaURI.split(ref.uri).fragment
                if !fragment.isEmpty, !fragment.hasPrefix("/"),
                   let resource = resourceOf(ref.uri), resource.dynamicAnchors[fragment] === target {
                    ref.dynamicName = fragment
                }
            }
        }
    }

    private func resourceOf(_ uri: String) -> SchemaResource? {
        resources[SchemaURI.split(uri).base]
    }

    // MARK: - Documents and resources

    private func compileDocument(_ doc: JSONValue, uri: String) throws(HTTPContentError) -> SchemaNode {
        let vocab = try vocabularies(of: doc, inherited: .all)
        var base = uri
        if case .object(let o) = doc, case .string(let id)? = o["$id"] {
            base = SchemaURI.split(SchemaURI.resolve(id, against: uri)).base
        }
        let resource = SchemaResource(uri: base, raw: doc, vocabularies: vocab)
        resources[base] = resource
        if base != uri { resources[uri] = resource }
        let node = try compile(doc, resource: resource, pointer: "", vocab: vocab, isResourceRoot: true)
        resource.root = node
        return node
    }

    /// The vocabularies a resource's `$schema` meta-schema declares (all, for the standard one
    /// and for meta-schemas without `$vocabulary`).
    private func vocabularies(of doc: JSONValue, inherited: SchemaVocabularies) throws(HTTPContentError) -> SchemaVocabularies {
        guard case .object(let o) = doc, case .string(let metaURI)? = o["$schema"] else { return inherited }
        let key = SchemaURI.split(metaURI).base
        if key == "https://json-schema.org/draft/2020-12/schema" { return .all }
        guard let meta = remotes[key] ?? SchemaCompiler.metaSchemas[key] else { return inherited }
        guard case .object(let m) = meta, case .object(let vocabs)? = m["$vocabulary"] else { return .all }
        var out: SchemaVocabularies = []
        for member in vocabs {
            switch member.key {
            case SchemaVocabularies.prefix + "core", SchemaVocabularies.prefix + "meta-data",
                 SchemaVocabularies.prefix + "content": break
            case SchemaVocabularies.prefix + "applicator": out.insert(.applicator)
            case SchemaVocabularies.prefix + "unevaluated": out.insert(.unevaluated)
            case SchemaVocabularies.prefix + "validation": out.insert(.validation)
            case SchemaVocabularies.prefix + "format-annotation": out.insert(.format)
            case SchemaVocabularies.prefix + "format-assertion": out.insert([.format, .formatAssertion])
            default:
                if member.value == .bool(true) {
                    throw HTTPContentError(.invalidArgument, "the meta-schema \(metaURI) requires the unknown vocabulary \(member.key)")
                }
            }
        }
        return out
    }

    // MARK: - Subschemas

    private func compile(_ value: JSONValue, resource parent: SchemaResource, pointer parentPointer: String,
                         vocab inheritedVocab: SchemaVocabularies, isResourceRoot: Bool = false) throws(HTTPContentError) -> SchemaNode {
        var resource = parent
        var pointer = parentPointer
        var vocab = inheritedVocab
        let outerKey = parent.uri + "#" + parentPointer
        if let existing = nodes[outerKey] { return existing }
        switch value {
        case .bool(let b):
            let node = SchemaNode(always: b)
            node.owner = parent
            allNodes.append(node)
            nodes[outerKey] = node
            return node
        case .object(let o):
            let node = SchemaNode()
            nodes[outerKey] = node
            if case .string(let id)? = o["$id"], !isResourceRoot {
                let uri = SchemaURI.split(SchemaURI.resolve(id, against: parent.uri)).base
                vocab = try vocabularies(of: value, inherited: inheritedVocab)
                resource = SchemaResource(uri: uri, raw: value, vocabularies: vocab)
                resource.root = node
                resources[uri] = resource
                pointer = ""
                nodes[uri + "#"] = node
            }
            node.owner = resource
            allNodes.append(node)
            try fill(node, o, resource: resource, pointer: pointer, vocab: vocab)
            return node
        default:
            throw HTTPContentError(.invalidArgument,
                                   "invalid schema at \(parent.uri)#\(parentPointer): a schema is an object or a boolean, not \(value)")
        }
    }

    private func sub(_ value: JSONValue, _ r: SchemaResource, _ p: String, _ tokens: String...,
                     vocab: SchemaVocabularies) throws(HTTPContentError) -> SchemaNode {
        var pointer = p
        for t in tokens { pointer += "/" + SchemaPointer.escape(t) }
        return try compile(value, resource: r, pointer: pointer, vocab: vocab)
    }

    private func invalid(_ r: SchemaResource, _ p: String, _ keyword: String, _ why: String) -> HTTPContentError {
        HTTPContentError(.invalidArgument, "invalid schema at \(r.uri)#\(p)/\(keyword): \(why)")
    }

    private func count(_ v: JSONValue?, _ r: SchemaResource, _ p: String, _ k: String) throws(HTTPContentError) -> Int? {
        guard let v else { return nil }
        guard let d = v.doubleValue, d >= 0, d.rounded() == d else {
            throw invalid(r, p, k, "must be a non-negative integer")
        }
        return d > Double(Int.max / 2) ? Int.max / 2 : Int(d)
    }

    private func number(_ v: JSONValue?, _ r: SchemaResource, _ p: String, _ k: String) throws(HTTPContentError) -> JSONValue? {
        guard let v else { return nil }
        guard v.doubleValue != nil else { throw invalid(r, p, k, "must be a number") }
        return v
    }

    private func schemaList(_ v: JSONValue?, _ r: SchemaResource, _ p: String, _ k: String,
                            _ vocab: SchemaVocabularies) throws(HTTPContentError) -> [SchemaNode]? {
        guard let v else { return nil }
        guard case .array(let a) = v, !a.isEmpty else { throw invalid(r, p, k, "must be a non-empty array of schemas") }
        var out: [SchemaNode] = []
        for (i, s) in a.enumerated() { out.append(try sub(s, r, p, k, String(i), vocab: vocab)) }
        return out
    }

    private func schemaMap(_ v: JSONValue?, _ r: SchemaResource, _ p: String, _ k: String,
                           _ vocab: SchemaVocabularies) throws(HTTPContentError) -> [(String, SchemaNode)]? {
        guard let v else { return nil }
        guard case .object(let o) = v else { throw invalid(r, p, k, "must be an object of schemas") }
        var out: [(String, SchemaNode)] = []
        for m in o { out.append((m.key, try sub(m.value, r, p, k, m.key, vocab: vocab))) }
        return out
    }

    private func reference(_ text: String, _ r: SchemaResource, dynamic: Bool) -> SchemaReference {
        let ref = SchemaReference(uri: SchemaURI.resolve(text, against: r.uri), isDynamic: dynamic)
        pending.append(ref)
        allReferences.append(ref)
        return ref
    }

    /// Compiles the keywords of an object schema into `node`, vocabulary by vocabulary (each
    /// in evaluation order; the `unevaluated*` keywords last, since they read what the others
    /// evaluated).
    private func fill(_ node: SchemaNode, _ o: JSONObject, resource r: SchemaResource, pointer p: String,
                      vocab: SchemaVocabularies) throws(HTTPContentError) {
        var k: [SchemaKeyword] = []
        try compileCore(&k, node, o, r, p, vocab)
        if vocab.contains(.validation) { try compileValidation(&k, o, r, p) }
        if vocab.contains(.applicator) { try compileApplicators(&k, o, r, p, vocab) }
        try compileFormatAndContent(&k, o, r, p, vocab)
        if vocab.contains(.unevaluated) { try compileUnevaluated(&k, node, o, r, p, vocab) }
        node.keywords = k
    }

    // MARK: - Keywords by vocabulary

    /// Core: identifiers first, so references resolve against the right base.
    private func compileCore(_ k: inout [SchemaKeyword], _ node: SchemaNode, _ o: JSONObject, _ r: SchemaResource,
                             _ p: String, _ vocab: SchemaVocabularies) throws(HTTPContentError) {
        if case .string(let a)? = o["$anchor"] { r.anchors[a] = node }
        if case .string(let a)? = o["$dynamicAnchor"] {
            r.anchors[a] = node
            r.dynamicAnchors[a] = node
        }
        if let defs = o["$defs"] {
            guard case .object(let d) = defs else { throw invalid(r, p, "$defs", "must be an object") }
            for m in d { _ = try sub(m.value, r, p, "$defs", m.key, vocab: vocab) }
        }
        if let ref = o["$ref"] {
            guard case .string(let s) = ref else { throw invalid(r, p, "$ref", "must be a string") }
            k.append(.ref(reference(s, r, dynamic: false)))
        }
        if let ref = o["$dynamicRef"] {
            guard case .string(let s) = ref else { throw invalid(r, p, "$dynamicRef", "must be a string") }
            k.append(.dynamicRef(reference(s, r, dynamic: true)))
        }
    }

    /// Validation: the assertions on the value itself.
    private func compileValidation(_ k: inout [SchemaKeyword], _ o: JSONObject, _ r: SchemaResource,
                                   _ p: String) throws(HTTPContentError) {
        if let t = o["type"] { k.append(try compileType(t, r, p)) }
        if let e = o["enum"] {
            guard case .array(let a) = e else { throw invalid(r, p, "enum", "must be an array") }
            k.append(.enumeration(a.elements))
        }
        if let c = o["const"] { k.append(.constant(c)) }
        if let v = try number(o["multipleOf"], r, p, "multipleOf") {
            guard let d = v.doubleValue, d > 0 else { throw invalid(r, p, "multipleOf", "must be greater than 0") }
            k.append(.multipleOf(v))
        }
        if let v = try number(o["maximum"], r, p, "maximum") { k.append(.maximum(v)) }
        if let v = try number(o["exclusiveMaximum"], r, p, "exclusiveMaximum") { k.append(.exclusiveMaximum(v)) }
        if let v = try number(o["minimum"], r, p, "minimum") { k.append(.minimum(v)) }
        if let v = try number(o["exclusiveMinimum"], r, p, "exclusiveMinimum") { k.append(.exclusiveMinimum(v)) }
        if let n = try count(o["maxLength"], r, p, "maxLength") { k.append(.maxLength(n)) }
        if let n = try count(o["minLength"], r, p, "minLength") { k.append(.minLength(n)) }
        if let v = o["pattern"] {
            guard case .string(let s) = v else { throw invalid(r, p, "pattern", "must be a string") }
            k.append(.pattern(try SchemaRegex(s)))
        }
        if let n = try count(o["maxItems"], r, p, "maxItems") { k.append(.maxItems(n)) }
        if let n = try count(o["minItems"], r, p, "minItems") { k.append(.minItems(n)) }
        if o["uniqueItems"] == .bool(true) { k.append(.uniqueItems) }
        if let n = try count(o["maxProperties"], r, p, "maxProperties") { k.append(.maxProperties(n)) }
        if let n = try count(o["minProperties"], r, p, "minProperties") { k.append(.minProperties(n)) }
        if let v = o["required"] { k.append(try compileRequired(v, r, p)) }
        if let v = o["dependentRequired"] { k.append(try compileDependentRequired(v, r, p)) }
    }

    /// Applicators: the keywords with subschemas, on the items, the members, or in place.
    private func compileApplicators(_ k: inout [SchemaKeyword], _ o: JSONObject, _ r: SchemaResource, _ p: String,
                                    _ vocab: SchemaVocabularies) throws(HTTPContentError) {
        var prefixCount = 0
        if let list = try schemaList(o["prefixItems"], r, p, "prefixItems", vocab) {
            prefixCount = list.count
            k.append(.prefixItems(list))
        }
        if let v = o["items"] { k.append(.items(try sub(v, r, p, "items", vocab: vocab), prefix: prefixCount)) }
        if let v = o["contains"] { k.append(try compileContains(v, o, r, p, vocab)) }
        try compileMembers(&k, o, r, p, vocab)
        if let v = o["propertyNames"] { k.append(.propertyNames(try sub(v, r, p, "propertyNames", vocab: vocab))) }
        if let d = try schemaMap(o["dependentSchemas"], r, p, "dependentSchemas", vocab) { k.append(.dependentSchemas(d)) }
        if let l = try schemaList(o["allOf"], r, p, "allOf", vocab) { k.append(.allOf(l)) }
        if let l = try schemaList(o["anyOf"], r, p, "anyOf", vocab) { k.append(.anyOf(l)) }
        if let l = try schemaList(o["oneOf"], r, p, "oneOf", vocab) { k.append(.oneOf(l)) }
        if let v = o["not"] { k.append(.not(try sub(v, r, p, "not", vocab: vocab))) }
        let thenNode = try o["then"].map { v throws(HTTPContentError) in try sub(v, r, p, "then", vocab: vocab) }
        let elseNode = try o["else"].map { v throws(HTTPContentError) in try sub(v, r, p, "else", vocab: vocab) }
        if let v = o["if"] {
            k.append(.conditional(try sub(v, r, p, "if", vocab: vocab), then: thenNode, else: elseNode))
        }
    }

    /// format (asserted when asked or by the vocabulary), contentEncoding, and contentSchema,
    /// whose subschema is an annotation only but may hold identifiers.
    private func compileFormatAndContent(_ k: inout [SchemaKeyword], _ o: JSONObject, _ r: SchemaResource, _ p: String,
                                         _ vocab: SchemaVocabularies) throws(HTTPContentError) {
        if vocab.contains(.format), case .string(let name)? = o["format"] {
            formatNamesUsed.insert(name)
            let asserting = assertFormat || vocab.contains(.formatAssertion)
            k.append(.format(name, asserting ? formats[name] ?? SchemaFormat.builtin[name] : nil))
        }
        if case .string(let encoding)? = o["contentEncoding"] { k.append(.contentEncoding(encoding)) }
        if let v = o["contentSchema"] { _ = try sub(v, r, p, "contentSchema", vocab: vocab) }
    }

    /// unevaluatedItems and unevaluatedProperties: they make the node collect annotations.
    private func compileUnevaluated(_ k: inout [SchemaKeyword], _ node: SchemaNode, _ o: JSONObject, _ r: SchemaResource,
                                    _ p: String, _ vocab: SchemaVocabularies) throws(HTTPContentError) {
        if let v = o["unevaluatedItems"] {
            k.append(.unevaluatedItems(try sub(v, r, p, "unevaluatedItems", vocab: vocab)))
            node.hasUnevaluated = true
        }
        if let v = o["unevaluatedProperties"] {
            k.append(.unevaluatedProperties(try sub(v, r, p, "unevaluatedProperties", vocab: vocab)))
            node.hasUnevaluated = true
        }
    }

    // MARK: - Keywords with a shape of their own

    /// `type`: one name or a list of them.
    private func compileType(_ t: JSONValue, _ r: SchemaResource, _ p: String) throws(HTTPContentError) -> SchemaKeyword {
        var set: SchemaTypes = []
        var names: [String] = []
        let list: [JSONValue]
        if case .array(let a) = t { list = a.elements } else { list = [t] }
        for item in list {
            guard case .string(let name) = item, let bit = SchemaTypes.named(name) else {
                throw invalid(r, p, "type", "unknown type \(item)")
            }
            set.insert(bit)
            names.append(name)
        }
        return .type(set, names)
    }

    private func compileRequired(_ v: JSONValue, _ r: SchemaResource, _ p: String) throws(HTTPContentError) -> SchemaKeyword {
        guard case .array(let a) = v else { throw invalid(r, p, "required", "must be an array of strings") }
        var names: [String] = []
        for item in a {
            guard case .string(let s) = item else { throw invalid(r, p, "required", "must be an array of strings") }
            names.append(s)
        }
        return .required(names.map(SchemaKey.init))
    }

    private func compileDependentRequired(_ v: JSONValue, _ r: SchemaResource,
                                          _ p: String) throws(HTTPContentError) -> SchemaKeyword {
        guard case .object(let d) = v else { throw invalid(r, p, "dependentRequired", "must be an object") }
        var out: [(String, [String])] = []
        for m in d {
            guard case .array(let a) = m.value else { throw invalid(r, p, "dependentRequired", "must hold arrays of strings") }
            out.append((m.key, a.compactMap { $0.stringValue }))
        }
        return .dependentRequired(out)
    }

    /// `contains`, with minContains / maxContains when the validation vocabulary is in effect.
    private func compileContains(_ v: JSONValue, _ o: JSONObject, _ r: SchemaResource, _ p: String,
                                 _ vocab: SchemaVocabularies) throws(HTTPContentError) -> SchemaKeyword {
        let s = try sub(v, r, p, "contains", vocab: vocab)
        let minC = vocab.contains(.validation) ? try count(o["minContains"], r, p, "minContains") ?? 1 : 1
        let maxC = vocab.contains(.validation) ? try count(o["maxContains"], r, p, "maxContains") : nil
        return .contains(s, min: minC, max: maxC)
    }

    /// properties, patternProperties and additionalProperties (which reads the other two's
    /// names and patterns).
    private func compileMembers(_ k: inout [SchemaKeyword], _ o: JSONObject, _ r: SchemaResource, _ p: String,
                                _ vocab: SchemaVocabularies) throws(HTTPContentError) {
        var names = Set<String>()
        if let props = try schemaMap(o["properties"], r, p, "properties", vocab) {
            var dict: [String: SchemaNode] = [:]
            for (name, s) in props { dict[name] = s; names.insert(name) }
            k.append(.properties(props, dict, props.map { SchemaKey($0.0) }))
        }
        var patterns: [SchemaRegex] = []
        if let pp = try schemaMap(o["patternProperties"], r, p, "patternProperties", vocab) {
            var out: [(SchemaRegex, SchemaNode)] = []
            for (pattern, s) in pp {
                let re = try SchemaRegex(pattern)
                patterns.append(re)
                out.append((re, s))
            }
            k.append(.patternProperties(out))
        }
        if let v = o["additionalProperties"] {
            k.append(.additionalProperties(try sub(v, r, p, "additionalProperties", vocab: vocab), names: names,
                                           keys: names.sorted().map(SchemaKey.init), patterns: patterns))
        }
    }

    // MARK: - References

    /// The node an absolute URI (with fragment) names, loading its document when needed.
    private func resolve(_ uri: String) throws(HTTPContentError) -> SchemaNode {
        let (base, fragment) = SchemaURI.split(uri)
        var resource = resources[base]
        if resource == nil {
            guard let doc = remotes[base] ?? SchemaCompiler.metaSchemas[base] else {
                throw HTTPContentError(.invalidArgument,
                                       "cannot resolve the reference \(uri): no such schema (remotes are given by the caller; nothing is fetched)")
            }
            _ = try compileDocument(doc, uri: base)
            resource = resources[base]
        }
        guard let resource else { throw HTTPContentError(.invalidArgument, "cannot resolve the reference \(uri)") }
        if fragment.isEmpty { return resource.root }
        if !fragment.hasPrefix("/") {
            guard let node = resource.anchors[fragment] else {
                throw HTTPContentError(.invalidArgument, "cannot resolve the reference \(uri): no anchor \"\(fragment)\"")
            }
            return node
        }
        if let node = nodes[resource.uri + "#" + fragment] { return node }
        // A pointer to a place not compiled as a subschema (an unknown keyword, or through an
        // embedded resource): walk the document, following `$id`s on the way.
        guard let tokens = SchemaPointer.tokens(fragment) else {
            throw HTTPContentError(.invalidArgument, "cannot resolve the reference \(uri): bad JSON pointer")
        }
        var value = resource.raw
        var current = resource
        var pointer = ""
        for (i, token) in tokens.enumerated() {
            guard let next = value.child(token) else {
                throw HTTPContentError(.invalidArgument, "cannot resolve the reference \(uri): nothing at \(fragment)")
            }
            value = next
            pointer += "/" + SchemaPointer.escape(token)
            if i < tokens.count - 1, case .object(let o) = value, case .string(let id)? = o["$id"] {
                let idURI = SchemaURI.split(SchemaURI.resolve(id, against: current.uri)).base
                if let known = resources[idURI] { current = known; pointer = "" }
            }
        }
        // References found here join `pending`, which the caller's loop drains.
        return try compile(value, resource: current, pointer: pointer, vocab: current.vocabularies)
    }
}
