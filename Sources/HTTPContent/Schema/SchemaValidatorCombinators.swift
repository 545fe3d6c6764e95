/// The in-place applicators of `SchemaEvaluation`: the keywords that evaluate subschemas on
/// the same value (allOf, anyOf, oneOf, not, if/then/else, $ref, $dynamicRef), one function
/// per keyword. Branches whose failures are not the value's errors (anyOf, oneOf, not, if)
/// run with `recording` off.
extension SchemaEvaluation {
    func applyAllOf(_ value: JSONValue, _ list: [SchemaNode], _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
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
    }

    func applyAnyOf(_ value: JSONValue, _ list: [SchemaNode], _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
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
    }

    func applyOneOf(_ value: JSONValue, _ list: [SchemaNode], _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
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
    }

    func applyNot(_ value: JSONValue, _ node: SchemaNode) -> Bool {
        let saved = recording
        recording = false
        var dummy = SchemaAnnotations()
        let passed = eval(node, value, &dummy, false)
        recording = saved
        if passed { fail("not", "\(SchemaEvaluation.show(value)) should not be valid under the schema in \"not\"") }
        return !passed
    }

    func applyConditional(_ value: JSONValue, _ ifNode: SchemaNode, _ thenNode: SchemaNode?, _ elseNode: SchemaNode?,
                          _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
        let saved = recording
        recording = false
        var ifAnn = SchemaAnnotations()
        let passed = eval(ifNode, value, &ifAnn, wantAnn)
        recording = saved
        if passed {
            if wantAnn { local.merge(ifAnn) }
            guard let thenNode else { return true }
            return applyIn(thenNode, value, "then", &local, wantAnn)
        }
        guard let elseNode else { return true }
        return applyIn(elseNode, value, "else", &local, wantAnn)
    }

    func applyRef(_ value: JSONValue, _ ref: SchemaReference, _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
        guard let target = ref.target else { return true }
        return applyIn(target, value, "$ref", &local, wantAnn)
    }

    /// `$dynamicRef`: the outermost resource of the dynamic scope with the anchor wins over
    /// the static target.
    func applyDynamicRef(_ value: JSONValue, _ ref: SchemaReference, _ local: inout SchemaAnnotations,
                         _ wantAnn: Bool) -> Bool {
        guard var target = ref.target else { return true }
        if let name = ref.dynamicName {
            for resource in scope {
                if let t = resource.dynamicAnchors[name] { target = t; break }
            }
        }
        return applyIn(target, value, "$dynamicRef", &local, wantAnn)
    }

    /// Evaluates one subschema on the same value under `keyword` (its schema path step).
    @inline(__always)
    private func applyIn(_ node: SchemaNode, _ value: JSONValue, _ keyword: String, _ local: inout SchemaAnnotations,
                         _ wantAnn: Bool) -> Bool {
        let mark = violations.count
        if eval(node, value, &local, wantAnn) { return true }
        wrap(mark, schema: keyword)
        return false
    }
}
