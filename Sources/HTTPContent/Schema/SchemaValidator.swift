/// What the in-place applicators of a schema evaluated, for `unevaluatedItems` and
/// `unevaluatedProperties` (collected only where such a keyword needs them).
struct SchemaAnnotations {
    var properties: Set<String> = []
    /// Items before this index were evaluated (prefixItems).
    var itemsPrefix = 0
    /// Every item was evaluated (items, unevaluatedItems).
    var allItems = false
    /// Items that matched `contains`.
    var containsIndices: Set<Int> = []

    mutating func merge(_ o: SchemaAnnotations) {
        if !o.properties.isEmpty { properties.formUnion(o.properties) }
        itemsPrefix = max(itemsPrefix, o.itemsPrefix)
        allItems = allItems || o.allItems
        if !o.containsIndices.isEmpty { containsIndices.formUnion(o.containsIndices) }
    }
}

/// A violation being built: its paths grow (in reverse) as the evaluation unwinds, so that a
/// valid value costs no path bookkeeping at all.
struct PendingViolation {
    var instanceReversed: [String] = []
    var schemaReversed: [String]
    let keyword: String
    let message: String

    var violation: SchemaViolation {
        SchemaViolation(instancePath: SchemaPointer.join(instanceReversed.reversed()),
                        schemaPath: SchemaPointer.join(schemaReversed.reversed()),
                        keyword: keyword, message: message)
    }
}

/// One validation run: the options, the violations found, the dynamic scope. Used by one thread
/// at a time, never reentrantly through a property: no dynamic exclusivity checks (they were a
/// twentieth of the validation's instructions).
final class SchemaEvaluation {
    /// Keep evaluating after the first violation and report every one.
    let allErrors: Bool
    /// Whether violations are being recorded (off inside anyOf, oneOf, not, if, contains:
    /// their branches' failures are not the value's errors).
    @exclusivity(unchecked) var recording = true
    @exclusivity(unchecked) var violations: [PendingViolation] = []
    @exclusivity(unchecked) var scope: [SchemaResource] = []
    @exclusivity(unchecked) var depth = 0
    let scratch = SchemaRegexScratch()
    static let maxDepth = 400

    init(allErrors: Bool) { self.allErrors = allErrors }

    /// Stop at the first failing keyword unless every error is wanted and being recorded.
    @inline(__always) var stopAtFirst: Bool { !(recording && allErrors) }

    @inline(__always) func fail(_ keyword: String, _ message: @autoclosure () -> String) {
        guard recording else { return }
        violations.append(PendingViolation(schemaReversed: [keyword], keyword: keyword, message: message()))
    }

    /// Adds path steps to the violations recorded since `mark` (innermost first).
    @inline(__always) func wrap(_ mark: Int, schema: String, _ schema2: String? = nil, instance: String? = nil) {
        guard mark < violations.count else { return }
        for i in mark..<violations.count {
            if let schema2 { violations[i].schemaReversed.append(schema2) }
            violations[i].schemaReversed.append(schema)
            if let instance { violations[i].instanceReversed.append(instance) }
        }
    }

    /// When collecting format annotations (`JSONSchema.formatAnnotations`): the instance path
    /// being evaluated, and the (path, format) pairs of passing `format` keywords.
    @exclusivity(unchecked) var collectingFormats = false
    /// The formats with a transformer, and the scalars each applies to.
    @exclusivity(unchecked) var formatScalars: [String: SchemaTransformer.Scalars] = [:]
    @exclusivity(unchecked) var path: [String] = []
    @exclusivity(unchecked) var formatHits: [(path: [String], format: String)] = []
    /// When validating a property list's view (`SchemaPlistView`): the instance paths of its
    /// `data` values, which `contentEncoding: "base64"` requires; nil for JSON documents.
    @exclusivity(unchecked) var plistDataPaths: Set<[String]>?
    /// Keep `path` up to date (format annotations, property lists).
    @exclusivity(unchecked) var trackPath = false

    /// Evaluates a subschema on a child value (member or element `step`).
    @inline(__always) func child(_ node: SchemaNode, _ value: JSONValue, _ step: @autoclosure () -> String) -> Bool {
        var dummy = SchemaAnnotations()
        if !trackPath { return eval(node, value, &dummy, false) }
        path.append(step())
        defer { path.removeLast() }
        return eval(node, value, &dummy, false)
    }

    // MARK: - Evaluation

    func evaluate(_ node: SchemaNode, _ value: JSONValue) -> Bool {
        var ann = SchemaAnnotations()
        return eval(node, value, &ann, false)
    }

    /// Evaluates `node` against `value`; when `collect`, merges what it evaluated into `ann`.
    func eval(_ node: SchemaNode, _ value: JSONValue, _ ann: inout SchemaAnnotations, _ collect: Bool) -> Bool {
        if let always = node.always {
            if !always { fail("false", "False schema does not allow \(SchemaEvaluation.show(value))") }
            return always
        }
        var pushed = false
        if let owner = node.owner, scope.last !== owner {
            scope.append(owner)
            pushed = true
        }
        depth += 1
        defer {
            depth -= 1
            if pushed { scope.removeLast() }
        }
        if depth > SchemaEvaluation.maxDepth {
            fail("$ref", "schema evaluation deeper than \(SchemaEvaluation.maxDepth) levels (a reference cycle that never reaches the value's end?)")
            return false
        }
        let wantAnn = collect || node.hasUnevaluated
        var local = SchemaAnnotations()
        var ok = true
        let hitMark = formatHits.count
        for keyword in node.keywords {
            if !evalKeyword(keyword, value, &local, wantAnn) {
                ok = false
                if stopAtFirst { break }
            }
        }
        if ok && collect { ann.merge(local) }
        if !ok && formatHits.count > hitMark { formatHits.removeSubrange(hitMark...) }
        return ok
    }

    /// Dispatches one keyword to its check (one function per keyword, in the extensions of
    /// `SchemaValidatorAssertions.swift`, `SchemaValidatorApplicators.swift` and
    /// `SchemaValidatorCombinators.swift`).
    private func evalKeyword(_ keyword: SchemaKeyword, _ value: JSONValue, _ local: inout SchemaAnnotations,
                             _ wantAnn: Bool) -> Bool {
        switch keyword {
        case .type(let set, let names): return checkType(value, set, names)
        case .enumeration(let list): return checkEnum(value, list)
        case .constant(let c): return checkConst(value, c)
        case .multipleOf(let m): return checkMultipleOf(value, m)
        case .maximum(let m): return checkBound(value, m, .maximum)
        case .exclusiveMaximum(let m): return checkBound(value, m, .exclusiveMaximum)
        case .minimum(let m): return checkBound(value, m, .minimum)
        case .exclusiveMinimum(let m): return checkBound(value, m, .exclusiveMinimum)
        case .maxLength(let n): return checkMaxLength(value, n)
        case .minLength(let n): return checkMinLength(value, n)
        case .pattern(let re): return checkPattern(value, re)
        case .maxItems(let n): return checkMaxItems(value, n)
        case .minItems(let n): return checkMinItems(value, n)
        case .uniqueItems: return checkUniqueItems(value)
        case .maxProperties(let n): return checkMaxProperties(value, n)
        case .minProperties(let n): return checkMinProperties(value, n)
        case .required(let names): return checkRequired(value, names)
        case .dependentRequired(let deps): return checkDependentRequired(value, deps)
        case .prefixItems(let list): return applyPrefixItems(value, list, &local, wantAnn)
        case .items(let node, let prefix): return applyItems(value, node, prefix, &local, wantAnn)
        case .contains(let node, let minC, let maxC): return applyContains(value, node, minC, maxC, &local, wantAnn)
        case .properties(let list, let dict, let keys): return applyProperties(value, list, dict, keys, &local, wantAnn)
        case .patternProperties(let list): return applyPatternProperties(value, list, &local, wantAnn)
        case .additionalProperties(let node, let names, let keys, let patterns):
            return applyAdditionalProperties(value, node, names, keys, patterns, &local, wantAnn)
        case .propertyNames(let node): return applyPropertyNames(value, node)
        case .dependentSchemas(let deps): return applyDependentSchemas(value, deps, &local, wantAnn)
        case .allOf(let list): return applyAllOf(value, list, &local, wantAnn)
        case .anyOf(let list): return applyAnyOf(value, list, &local, wantAnn)
        case .oneOf(let list): return applyOneOf(value, list, &local, wantAnn)
        case .not(let node): return applyNot(value, node)
        case .conditional(let ifNode, let thenNode, let elseNode):
            return applyConditional(value, ifNode, thenNode, elseNode, &local, wantAnn)
        case .ref(let ref): return applyRef(value, ref, &local, wantAnn)
        case .dynamicRef(let ref): return applyDynamicRef(value, ref, &local, wantAnn)
        case .format(let name, let checker): return checkFormat(value, name, checker)
        case .contentEncoding(let encoding): return checkContentEncoding(value, encoding)
        case .unevaluatedItems(let node): return applyUnevaluatedItems(value, node, &local, wantAnn)
        case .unevaluatedProperties(let node): return applyUnevaluatedProperties(value, node, &local, wantAnn)
        }
    }

    // MARK: - Helpers

    static func matches(_ value: JSONValue, _ set: SchemaTypes) -> Bool {
        switch value {
        case .null: return set.contains(.null)
        case .bool: return set.contains(.boolean)
        case .int: return !set.isDisjoint(with: [.integer, .number])
        case .double(let d):
            if set.contains(.number) { return true }
            return set.contains(.integer) && d.isFinite && d.rounded() == d
        case .number(let text):
            if set.contains(.number) { return true }
            guard set.contains(.integer) else { return false }
            if Int64(text) != nil { return true }
            guard let d = JSONValue.number(text).doubleValue else { return false }
            return d.isFinite && d.rounded() == d
        case .string: return set.contains(.string)
        case .array: return set.contains(.array)
        case .object: return set.contains(.object)
        }
    }

    /// Whether `s` has more than `n` code points (counting stops early).
    static func length(_ s: String, exceeds n: Int) -> Bool {
        if s.utf8.count <= n { return false }
        var count = 0
        for _ in s.unicodeScalars { count += 1; if count > n { return true } }
        return false
    }

    static func length(_ s: String, atLeast n: Int) -> Bool {
        if s.utf8.count < n { return false }
        if s.utf8.count >= 4 * n { return true }
        var count = 0
        for _ in s.unicodeScalars { count += 1; if count >= n { return true } }
        return count >= n
    }

    /// A value for a message: its compact JSON, cut at 80 characters.
    static func show(_ value: JSONValue) -> String {
        let text = value.description
        if text.count <= 80 { return text }
        return String(text.prefix(77)) + "..."
    }

    static func quote(_ s: String) -> String { "'" + s + "'" }

    static func list(_ names: [String]) -> String {
        names.prefix(10).map { quote($0) }.joined(separator: ", ") + (names.count > 10 ? ", ..." : "")
    }
}

extension JSONValue {
    var isNumber: Bool {
        switch self {
        case .int, .double, .number: return true
        default: return false
        }
    }
}
