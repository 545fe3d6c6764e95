/// The assertions of `SchemaEvaluation`: the keywords that check a value itself (type, enum,
/// const, numbers, strings, counts, required names, format), one function per keyword. Each
/// returns whether the value passes and records the violation when it does not.
extension SchemaEvaluation {
    // MARK: - Any type

    func checkType(_ value: JSONValue, _ set: SchemaTypes, _ names: [String]) -> Bool {
        if SchemaEvaluation.matches(value, set) { return true }
        fail("type", "\(SchemaEvaluation.show(value)) is not of type \(names.map { "'\($0)'" }.joined(separator: ", "))")
        return false
    }

    func checkEnum(_ value: JSONValue, _ list: [JSONValue]) -> Bool {
        for item in list where SchemaEquality.equal(item, value) { return true }
        fail("enum", "\(SchemaEvaluation.show(value)) is not one of \(SchemaEvaluation.show(.array(JSONArray(list))))")
        return false
    }

    func checkConst(_ value: JSONValue, _ c: JSONValue) -> Bool {
        if SchemaEquality.equal(c, value) { return true }
        fail("const", "\(SchemaEvaluation.show(c)) was expected")
        return false
    }

    // MARK: - Numbers

    func checkMultipleOf(_ value: JSONValue, _ m: JSONValue) -> Bool {
        guard value.isNumber else { return true }
        if SchemaNumbers.isMultiple(value, of: m) { return true }
        fail("multipleOf", "\(SchemaEvaluation.show(value)) is not a multiple of \(SchemaEvaluation.show(m))")
        return false
    }

    /// The four numeric bounds: which comparison fails each, and the words of its message.
    enum Bound {
        case maximum, exclusiveMaximum, minimum, exclusiveMinimum

        /// Whether `SchemaNumbers.compare(value, bound)` gives a value outside the bound.
        @inline(__always) func fails(_ c: Int) -> Bool {
            switch self {
            case .maximum: return c > 0
            case .exclusiveMaximum: return c >= 0
            case .minimum: return c < 0
            case .exclusiveMinimum: return c <= 0
            }
        }

        var keyword: String {
            switch self {
            case .maximum: return "maximum"
            case .exclusiveMaximum: return "exclusiveMaximum"
            case .minimum: return "minimum"
            case .exclusiveMinimum: return "exclusiveMinimum"
            }
        }

        var words: String {
            switch self {
            case .maximum: return "is greater than the maximum of"
            case .exclusiveMaximum: return "is greater than or equal to the maximum of"
            case .minimum: return "is less than the minimum of"
            case .exclusiveMinimum: return "is less than or equal to the minimum of"
            }
        }
    }

    func checkBound(_ value: JSONValue, _ m: JSONValue, _ bound: Bound) -> Bool {
        guard value.isNumber, bound.fails(SchemaNumbers.compare(value, m)) else { return true }
        fail(bound.keyword, "\(SchemaEvaluation.show(value)) \(bound.words) \(SchemaEvaluation.show(m))")
        return false
    }

    // MARK: - Strings

    func checkMaxLength(_ value: JSONValue, _ n: Int) -> Bool {
        guard case .string(let s) = value, SchemaEvaluation.length(s, exceeds: n) else { return true }
        fail("maxLength", "\(SchemaEvaluation.show(value)) is longer than \(n) character\(n == 1 ? "" : "s")")
        return false
    }

    func checkMinLength(_ value: JSONValue, _ n: Int) -> Bool {
        guard case .string(let s) = value, !SchemaEvaluation.length(s, atLeast: n) else { return true }
        fail("minLength", "\(SchemaEvaluation.show(value)) is shorter than \(n) character\(n == 1 ? "" : "s")")
        return false
    }

    func checkPattern(_ value: JSONValue, _ re: SchemaRegex) -> Bool {
        guard case .string(let s) = value else { return true }
        switch re.search(s, scratch) {
        case true?: return true
        case false?: fail("pattern", "\(SchemaEvaluation.show(value)) does not match \(SchemaEvaluation.quote(re.source))")
        case nil: fail("pattern", "matching \(SchemaEvaluation.quote(re.source)) exceeded the regular expression's backtracking limit")
        }
        return false
    }

    func checkFormat(_ value: JSONValue, _ name: String, _ checker: SchemaFormat?) -> Bool {
        if collectingFormats, let scalars = formatScalars[name], scalars.accepts(value) { formatHits.append((path, name)) }
        guard let checker, case .string(let s) = value, !checker.check(s) else { return true }
        fail("format", "\(SchemaEvaluation.show(value)) is not a \(SchemaEvaluation.quote(name))")
        return false
    }

    /// An annotation for JSON documents (as the specification says); for a property list, the
    /// rule that tells its data values from its strings.
    func checkContentEncoding(_ value: JSONValue, _ encoding: String) -> Bool {
        guard let dataPaths = plistDataPaths, encoding == "base64", case .string = value,
              !dataPaths.contains(path) else { return true }
        fail("contentEncoding", "\(SchemaEvaluation.show(value)) is a string, not data (in a property list, contentEncoding 'base64' matches data values only)")
        return false
    }

    // MARK: - Arrays

    func checkMaxItems(_ value: JSONValue, _ n: Int) -> Bool {
        guard case .array(let a) = value, a.count > n else { return true }
        fail("maxItems", "\(SchemaEvaluation.show(value)) has more than \(n) item\(n == 1 ? "" : "s")")
        return false
    }

    func checkMinItems(_ value: JSONValue, _ n: Int) -> Bool {
        guard case .array(let a) = value, a.count < n else { return true }
        fail("minItems", "\(SchemaEvaluation.show(value)) should be non-empty".replacing(n == 1, "\(SchemaEvaluation.show(value)) has fewer than \(n) items"))
        return false
    }

    func checkUniqueItems(_ value: JSONValue) -> Bool {
        guard case .array(let a) = value, let (i, j) = SchemaEquality.firstDuplicate(a) else { return true }
        fail("uniqueItems", "\(SchemaEvaluation.show(value)) has non-unique elements (items \(i) and \(j) are equal)")
        return false
    }

    // MARK: - Objects

    func checkMaxProperties(_ value: JSONValue, _ n: Int) -> Bool {
        guard case .object(let o) = value, o.count > n else { return true }
        fail("maxProperties", "\(SchemaEvaluation.show(value)) has more than \(n) propert\(n == 1 ? "y" : "ies")")
        return false
    }

    func checkMinProperties(_ value: JSONValue, _ n: Int) -> Bool {
        guard case .object(let o) = value, o.count < n else { return true }
        fail("minProperties", "\(SchemaEvaluation.show(value)) does not have enough properties (at least \(n))")
        return false
    }

    func checkRequired(_ value: JSONValue, _ names: [SchemaKey]) -> Bool {
        guard case .object(let o) = value else { return true }
        var ok = true
        for key in names where !o.hasKey(utf8: key.utf8) {
            fail("required", "\(SchemaEvaluation.quote(key.name)) is a required property")
            ok = false
            if stopAtFirst { break }
        }
        return ok
    }

    func checkDependentRequired(_ value: JSONValue, _ deps: [(String, [String])]) -> Bool {
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
    }
}

extension String {
    /// `alternative` when `condition` is false (message wording for singular / plural).
    fileprivate func replacing(_ condition: Bool, _ alternative: String) -> String { condition ? self : alternative }
}
