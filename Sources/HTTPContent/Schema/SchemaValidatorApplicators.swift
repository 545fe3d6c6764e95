/// The applicators of `SchemaEvaluation` over an array's items and an object's members
/// (prefixItems, items, contains, properties, patternProperties, additionalProperties,
/// propertyNames, dependentSchemas, unevaluatedItems, unevaluatedProperties), one function per
/// keyword. Each evaluates its subschemas on the children, adds the child's path step to
/// their violations, and records in `local` what it evaluated when `wantAnn`.
extension SchemaEvaluation {
    // MARK: - Arrays

    func applyPrefixItems(_ value: JSONValue, _ list: [SchemaNode], _ local: inout SchemaAnnotations,
                          _ wantAnn: Bool) -> Bool {
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
    }

    func applyItems(_ value: JSONValue, _ node: SchemaNode, _ prefix: Int, _ local: inout SchemaAnnotations,
                    _ wantAnn: Bool) -> Bool {
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
    }

    func applyContains(_ value: JSONValue, _ node: SchemaNode, _ minC: Int, _ maxC: Int?,
                       _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
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
    }

    func applyUnevaluatedItems(_ value: JSONValue, _ node: SchemaNode, _ local: inout SchemaAnnotations,
                               _ wantAnn: Bool) -> Bool {
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
    }

    // MARK: - Objects

    func applyProperties(_ value: JSONValue, _ list: [(String, SchemaNode)], _ dict: [String: SchemaNode],
                         _ keys: [SchemaKey], _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
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
    }

    func applyPatternProperties(_ value: JSONValue, _ list: [(SchemaRegex, SchemaNode)],
                                _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
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
    }

    func applyAdditionalProperties(_ value: JSONValue, _ node: SchemaNode, _ names: Set<String>, _ keys: [SchemaKey],
                                   _ patterns: [SchemaRegex], _ local: inout SchemaAnnotations, _ wantAnn: Bool) -> Bool {
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
    }

    func applyPropertyNames(_ value: JSONValue, _ node: SchemaNode) -> Bool {
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
    }

    func applyDependentSchemas(_ value: JSONValue, _ deps: [(String, SchemaNode)], _ local: inout SchemaAnnotations,
                               _ wantAnn: Bool) -> Bool {
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
    }

    func applyUnevaluatedProperties(_ value: JSONValue, _ node: SchemaNode, _ local: inout SchemaAnnotations,
                                    _ wantAnn: Bool) -> Bool {
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
