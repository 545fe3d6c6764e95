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

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private func evalKeyword(_ keyword: SchemaKeyword, _ value: JSONValue, _ local: inout SchemaAnnotations,
                             _ wantAnn: Bool) -> Bool {
        switch keyword {
        case .type(let set, let names):
            if SchemaEvaluation.matches(value, set) { return true }
            fail("type", "\(SchemaEvaluation.show(value)) is not of type \(names.map { "'\($0)'" }.joined(separator: ", "))")
            return false

        case .enumeration(let list):
            for item in list where SchemaEquality.equal(item, value) { return true }
            fail("enum", "\(SchemaEvaluation.show(value)) is not one of \(SchemaEvaluation.show(.array(JSONArray(list))))")
            return false

        case .constant(let c):
            if SchemaEquality.equal(c, value) { return true }
            fail("const", "\(SchemaEvaluation.show(c)) was expected")
            return false

        case .multipleOf(let m):
            guard value.isNumber else { return true }
            if SchemaNumbers.isMultiple(value, of: m) { return true }
            fail("multipleOf", "\(SchemaEvaluation.show(value)) is not a multiple of \(SchemaEvaluation.show(m))")
            return false

        case .maximum(let m):
            guard value.isNumber, SchemaNumbers.compare(value, m) > 0 else { return true }
            fail("maximum", "\(SchemaEvaluation.show(value)) is greater than the maximum of \(SchemaEvaluation.show(m))")
            return false
        case .exclusiveMaximum(let m):
            guard value.isNumber, SchemaNumbers.compare(value, m) >= 0 else { return true }
            fail("exclusiveMaximum", "\(SchemaEvaluation.show(value)) is greater than or equal to the maximum of \(SchemaEvaluation.show(m))")
            return false
        case .minimum(let m):
            guard value.isNumber, SchemaNumbers.compare(value, m) < 0 else { return true }
            fail("minimum", "\(SchemaEvaluation.show(value)) is less than the minimum of \(SchemaEvaluation.show(m))")
            return false
        case .exclusiveMinimum(let m):
            guard value.isNumber, SchemaNumbers.compare(value, m) <= 0 else { return true }
            fail("exclusiveMinimum", "\(SchemaEvaluation.show(value)) is less than or equal to the minimum of \(SchemaEvaluation.show(m))")
            return false

        case .maxLength(let n):
            guard case .string(let s) = value, SchemaEvaluation.length(s, exceeds: n) else { return true }
            fail("maxLength", "\(SchemaEvaluation.show(value)) is longer than \(n) character\(n == 1 ? "" : "s")")
            return false
        case .minLength(let n):
            guard case .string(let s) = value, !SchemaEvaluation.length(s, atLeast: n) else { return true }
            fail("minLength", "\(SchemaEvaluation.show(value)) is shorter than \(n) character\(n == 1 ? "" : "s")")
            return false
        case .pattern(let re):
            guard case .string(let s) = value else { return true }
            switch re.search(s, scratch) {
            case true?: return true
            case false?: fail("pattern", "\(SchemaEvaluation.show(value)) does not match \(SchemaEvaluation.quote(re.source))")
            case nil: fail("pattern", "matching \(SchemaEvaluation.quote(re.source)) exceeded the regular expression's backtracking limit")
            }
            return false

        case .maxItems(let n):
            guard case .array(let a) = value, a.count > n else { return true }
            fail("maxItems", "\(SchemaEvaluation.show(value)) has more than \(n) item\(n == 1 ? "" : "s")")
            return false
        case .minItems(let n):
            guard case .array(let a) = value, a.count < n else { return true }
            fail("minItems", "\(SchemaEvaluation.show(value)) should be non-empty".replacing(n == 1, "\(SchemaEvaluation.show(value)) has fewer than \(n) items"))
            return false
        case .uniqueItems:
            guard case .array(let a) = value, let (i, j) = SchemaEquality.firstDuplicate(a) else { return true }
            fail("uniqueItems", "\(SchemaEvaluation.show(value)) has non-unique elements (items \(i) and \(j) are equal)")
            return false

        case .maxProperties(let n):
            guard case .object(let o) = value, o.count > n else { return true }
            fail("maxProperties", "\(SchemaEvaluation.show(value)) has more than \(n) propert\(n == 1 ? "y" : "ies")")
            return false
        case .minProperties(let n):
            guard case .object(let o) = value, o.count < n else { return true }
            fail("minProperties", "\(SchemaEvaluation.show(value)) does not have enough properties (at least \(n))")
            return false
        case .required(let names):
            guard case .object(let o) = value else { return true }
            var ok = true
            for key in names where !o.hasKey(utf8: key.utf8) {
                fail("required", "\(SchemaEvaluation.quote(key.name)) is a required property")
                ok = false
                if stopAtFirst { break }
            }
            return ok
        case .dependentRequired(let deps):
            guard case .object(let o) = value else { return true }
            var ok = true
            for (name, needed) in deps where o.lastIndex(ofKey: name) != nil {
                for other in needed where o.lastIndex(ofKey: other) == nil {
                    fail("dependentRequired", "\(SchemaEvaluation.quote(other)) is a dependency of \(SchemaEvaluation.quote(name))")
                    ok = false
                    if stopAtFirst { return false }
                }
            }
            return ok

        case .prefixItems(let list):
            guard case .array(let a) = value else { return true }
            var ok = true
            let n = min(list.count, a.count)
            for i in 0..<n {
                let mark = violations.count
                if !child(list[i], a[i], String(i)) {
                    wrap(mark, schema: "prefixItems", String(i), instance: String(i))
                    ok = false
                    if stopAtFirst { return false }
                }
            }
            if wantAnn { local.itemsPrefix = max(local.itemsPrefix, n) }
            return ok

        case .items(let node, let prefix):
            guard case .array(let a) = value else { return true }
            if a.count <= prefix { return true }
            if node.always == false {
                fail("items", "Expected at most \(prefix) item\(prefix == 1 ? "" : "s") but found \(a.count - prefix) extra: \(SchemaEvaluation.show(value))")
                return false
            }
            var ok = true
            for i in prefix..<a.count {
                let mark = violations.count
                if !child(node, a[i], String(i)) {
                    wrap(mark, schema: "items", instance: String(i))
                    ok = false
                    if stopAtFirst { return false }
                }
            }
            if wantAnn { local.allItems = true }
            return ok

        case .contains(let node, let minC, let maxC):
            guard case .array(let a) = value else { return true }
            let saved = recording
            recording = false
            var matched = 0
            var indices = Set<Int>()
            for i in 0..<a.count where child(node, a[i], String(i)) {
                matched += 1
                if wantAnn { indices.insert(i) }
                if !wantAnn && maxC == nil && matched >= minC { break }
            }
            recording = saved
            if matched < minC {
                if minC == 1 {
                    fail("contains", "\(SchemaEvaluation.show(value)) does not contain items matching the given schema")
                } else {
                    fail("minContains", "Too few items match the given schema (expected at least \(minC) but only \(matched) matched)")
                }
                return false
            }
            if let maxC, matched > maxC {
                fail("maxContains", "Too many items match the given schema (expected at most \(maxC))")
                return false
            }
            if wantAnn { local.containsIndices.formUnion(indices) }
            return true

        case .properties(let list, let dict, let keys):
            guard case .object(let o) = value else { return true }
            var ok = true
            if list.count > 16 {
                for member in o {
                    guard let node = dict[member.key] else { continue }
                    let mark = violations.count
                    if !child(node, member.value, member.key) {
                        wrap(mark, schema: "properties", member.key, instance: member.key)
                        ok = false
                        if stopAtFirst { return false }
                    }
                    if wantAnn { local.properties.insert(member.key) }
                }
                return ok
            }
            // Few properties: each member's key compared in place with theirs, so that no key
            // is made a String and hashed (most of what validating an object cost).
            for i in 0..<o.count {
                for j in 0..<keys.count where o.key(at: i, equalsUTF8: keys[j].utf8) {
                    let (name, node) = list[j]
                    let mark = violations.count
                    if !child(node, o.value(at: i), name) {
                        wrap(mark, schema: "properties", name, instance: name)
                        ok = false
                        if stopAtFirst { return false }
                    }
                    if wantAnn { local.properties.insert(name) }
                    break
                }
            }
            return ok

        case .patternProperties(let list):
            guard case .object(let o) = value else { return true }
            var ok = true
            for member in o {
                for (re, node) in list where re.search(member.key, scratch) == true {
                    let mark = violations.count
                    if !child(node, member.value, member.key) {
                        wrap(mark, schema: "patternProperties", re.source, instance: member.key)
                        ok = false
                        if stopAtFirst { return false }
                    }
                    if wantAnn { local.properties.insert(member.key) }
                }
            }
            return ok

        case .additionalProperties(let node, let names, let keys, let patterns):
            guard case .object(let o) = value else { return true }
            var ok = true
            var extras: [String] = []
            for i in 0..<o.count {
                // Named properties compared in place (no String made) when they are few.
                if keys.count <= 16 {
                    if keys.contains(where: { o.key(at: i, equalsUTF8: $0.utf8) }) { continue }
                } else if names.contains(o.key(at: i)) {
                    continue
                }
                let key = o.key(at: i)
                if !patterns.isEmpty && patterns.contains(where: { $0.search(key, scratch) == true }) { continue }
                if node.always == false {
                    extras.append(key)
                    if stopAtFirst && !recording { return false }
                    continue
                }
                let mark = violations.count
                if !child(node, o.value(at: i), key) {
                    wrap(mark, schema: "additionalProperties", instance: key)
                    ok = false
                    if stopAtFirst { return false }
                }
                if wantAnn { local.properties.insert(key) }
            }
            if !extras.isEmpty {
                fail("additionalProperties", "Additional properties are not allowed (\(SchemaEvaluation.list(extras)) \(extras.count == 1 ? "was" : "were") unexpected)")
                return false
            }
            return ok

        case .propertyNames(let node):
            guard case .object(let o) = value else { return true }
            var ok = true
            var dummy = SchemaAnnotations()
            for member in o {
                let mark = violations.count
                if !eval(node, .string(member.key), &dummy, false) {
                    wrap(mark, schema: "propertyNames")
                    ok = false
                    if stopAtFirst { return false }
                }
            }
            return ok

        case .dependentSchemas(let deps):
            guard case .object(let o) = value else { return true }
            var ok = true
            for (name, node) in deps where o.lastIndex(ofKey: name) != nil {
                let mark = violations.count
                if !eval(node, value, &local, wantAnn) {
                    wrap(mark, schema: "dependentSchemas", name)
                    ok = false
                    if stopAtFirst { return false }
                }
            }
            return ok

        case .allOf(let list):
            var ok = true
            for (i, node) in list.enumerated() {
                let mark = violations.count
                if !eval(node, value, &local, wantAnn) {
                    wrap(mark, schema: "allOf", String(i))
                    ok = false
                    if stopAtFirst { return false }
                }
            }
            return ok

        case .anyOf(let list):
            let saved = recording
            recording = false
            var any = false
            for node in list where eval(node, value, &local, wantAnn) {
                any = true
                if !wantAnn { break }
            }
            recording = saved
            if !any { fail("anyOf", "\(SchemaEvaluation.show(value)) is not valid under any of the given schemas") }
            return any

        case .oneOf(let list):
            let saved = recording
            recording = false
            var passing: [Int] = []
            var collected = SchemaAnnotations()
            for (i, node) in list.enumerated() where eval(node, value, &collected, wantAnn) {
                passing.append(i)
                if !wantAnn && passing.count > 1 { break }
            }
            recording = saved
            if passing.count == 1 {
                if wantAnn { local.merge(collected) }
                return true
            }
            if passing.isEmpty {
                fail("oneOf", "\(SchemaEvaluation.show(value)) is not valid under any of the given schemas")
            } else {
                fail("oneOf", "\(SchemaEvaluation.show(value)) is valid under more than one of the given schemas (\(passing.map(String.init).joined(separator: ", ")))")
            }
            return false

        case .not(let node):
            let saved = recording
            recording = false
            var dummy = SchemaAnnotations()
            let passed = eval(node, value, &dummy, false)
            recording = saved
            if passed { fail("not", "\(SchemaEvaluation.show(value)) should not be valid under the schema in \"not\"") }
            return !passed

        case .conditional(let ifNode, let thenNode, let elseNode):
            let saved = recording
            recording = false
            var ifAnn = SchemaAnnotations()
            let passed = eval(ifNode, value, &ifAnn, wantAnn)
            recording = saved
            if passed {
                if wantAnn { local.merge(ifAnn) }
                guard let thenNode else { return true }
                let mark = violations.count
                if eval(thenNode, value, &local, wantAnn) { return true }
                wrap(mark, schema: "then")
                return false
            }
            guard let elseNode else { return true }
            let mark = violations.count
            if eval(elseNode, value, &local, wantAnn) { return true }
            wrap(mark, schema: "else")
            return false

        case .ref(let ref):
            guard let target = ref.target else { return true }
            let mark = violations.count
            if eval(target, value, &local, wantAnn) { return true }
            wrap(mark, schema: "$ref")
            return false

        case .dynamicRef(let ref):
            guard var target = ref.target else { return true }
            if let name = ref.dynamicName {
                for resource in scope {
                    if let t = resource.dynamicAnchors[name] { target = t; break }
                }
            }
            let mark = violations.count
            if eval(target, value, &local, wantAnn) { return true }
            wrap(mark, schema: "$dynamicRef")
            return false

        case .format(let name, let checker):
            if collectingFormats, let scalars = formatScalars[name], scalars.accepts(value) { formatHits.append((path, name)) }
            guard let checker, case .string(let s) = value, !checker.check(s) else { return true }
            fail("format", "\(SchemaEvaluation.show(value)) is not a \(SchemaEvaluation.quote(name))")
            return false

        case .contentEncoding(let encoding):
            // An annotation for JSON documents (as the specification says); for a property list,
            // the rule that tells its data values from its strings.
            guard let dataPaths = plistDataPaths, encoding == "base64", case .string = value,
                  !dataPaths.contains(path) else { return true }
            fail("contentEncoding", "\(SchemaEvaluation.show(value)) is a string, not data (in a property list, contentEncoding 'base64' matches data values only)")
            return false

        case .unevaluatedItems(let node):
            guard case .array(let a) = value, !local.allItems else { return true }
            var ok = true
            var extras: [Int] = []
            for i in local.itemsPrefix..<max(local.itemsPrefix, a.count) where !local.containsIndices.contains(i) {
                if node.always == false { extras.append(i); continue }
                let mark = violations.count
                if !child(node, a[i], String(i)) {
                    wrap(mark, schema: "unevaluatedItems", instance: String(i))
                    ok = false
                    if stopAtFirst { return false }
                }
            }
            if !extras.isEmpty {
                fail("unevaluatedItems", "Unevaluated items are not allowed (\(extras.map { SchemaEvaluation.show(a[$0]) }.joined(separator: ", ")) \(extras.count == 1 ? "was" : "were") unexpected)")
                return false
            }
            if ok && wantAnn { local.allItems = true }
            return ok

        case .unevaluatedProperties(let node):
            guard case .object(let o) = value else { return true }
            var ok = true
            var extras: [String] = []
            for member in o where !local.properties.contains(member.key) {
                if node.always == false { extras.append(member.key); continue }
                let mark = violations.count
                if !child(node, member.value, member.key) {
                    wrap(mark, schema: "unevaluatedProperties", instance: member.key)
                    ok = false
                    if stopAtFirst { return false }
                }
                if wantAnn { local.properties.insert(member.key) }
            }
            if !extras.isEmpty {
                fail("unevaluatedProperties", "Unevaluated properties are not allowed (\(SchemaEvaluation.list(extras)) \(extras.count == 1 ? "was" : "were") unexpected)")
                return false
            }
            return ok
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

extension String {
    /// `alternative` when `condition` is false (message wording for singular / plural).
    fileprivate func replacing(_ condition: Bool, _ alternative: String) -> String { condition ? self : alternative }
}

extension JSONValue {
    var isNumber: Bool {
        switch self {
        case .int, .double, .number: return true
        default: return false
        }
    }
}
