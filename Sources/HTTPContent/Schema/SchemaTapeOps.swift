/// The ops of `SchemaTapeRun`, one function per op: what each keyword of a compiled tape
/// program says of tape node `v` (word `w`, tag `tag`). Each is inlined into the run's
/// dispatch (`SchemaTapeRun.op`), so splitting them costs no call.
extension SchemaTapeRun {
    // MARK: - Values

    @inline(__always)
    func enumeration(_ index: Int32, _ v: UInt32) -> Verdict {
        guard case .array(let list) = program.values[Int(index)] else { return .undecided }
        let value = JSONTape.valueOf(tape, v)
        for item in list where SchemaEquality.equal(item, value) { return .valid }
        return .invalid
    }

    /// An enum of strings only, its names compared as keys.
    @inline(__always)
    func enumStrings(_ first: Int32, _ count: Int32, _ w: UInt64, _ v: UInt32) -> Verdict {
        guard isString(w & 0xF) else { return .invalid }
        let text = tape.text(v)
        for j in Int(first)..<Int(first + count) where keyEquals(j, w, text) { return .valid }
        // Invalid UTF-8 is compared repaired by the full validator.
        return JSONStrings.isValidUTF8(text) ? .invalid : .undecided
    }

    @inline(__always)
    func constant(_ index: Int32, _ v: UInt32) -> Verdict {
        SchemaEquality.equal(program.values[Int(index)], JSONTape.valueOf(tape, v)) ? .valid : .invalid
    }

    @inline(__always)
    func multipleOf(_ index: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard isNumber(tag) else { return .valid }
        return SchemaNumbers.isMultiple(JSONTape.valueOf(tape, v), of: program.values[Int(index)]) ? .valid : .invalid
    }

    // MARK: - Strings

    @inline(__always)
    func maxLength(_ limit: Int, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard isString(tag) else { return .valid }
        let text = tape.text(v)
        if text.count <= limit { return .valid }
        guard let n = SchemaTapeRun.scalars(text) else { return .undecided }
        return n > limit ? .invalid : .valid
    }

    @inline(__always)
    func minLength(_ limit: Int, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard isString(tag) else { return .valid }
        let text = tape.text(v)
        if text.count < limit { return .invalid }
        if text.count >= 4 * limit { return .valid }
        guard let n = SchemaTapeRun.scalars(text) else { return .undecided }
        return n < limit ? .invalid : .valid
    }

    @inline(__always)
    func format(_ f: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard isString(tag) else { return .valid }
        let text = tape.text(v)
        guard JSONStrings.isValidUTF8(text) else { return .undecided }
        return program.formats[Int(f)].check(JSONStrings.repaired(text)) ? .valid : .invalid
    }

    // MARK: - Counts

    /// maxItems / maxProperties: a container of `kind` with more than `limit` children fails.
    @inline(__always)
    func count(of kind: Tag, _ tag: UInt64, _ v: UInt32, atMost limit: Int) -> Verdict {
        guard tag == kind.rawValue else { return .valid }
        return tape.count(v) > limit ? .invalid : .valid
    }

    /// minItems / minProperties: a container of `kind` with fewer than `limit` children fails.
    @inline(__always)
    func count(of kind: Tag, _ tag: UInt64, _ v: UInt32, atLeast limit: Int) -> Verdict {
        guard tag == kind.rawValue else { return .valid }
        return tape.count(v) < limit ? .invalid : .valid
    }

    @inline(__always)
    func uniqueItems(_ tag: UInt64, _ v: UInt32) -> Verdict {
        guard tag == Tag.array.rawValue else { return .valid }
        guard case .array(let a) = JSONTape.valueOf(tape, v) else { return .undecided }
        return SchemaEquality.firstDuplicate(a) == nil ? .valid : .invalid
    }

    // MARK: - Objects

    @inline(__always)
    func dependentRequired(_ d: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard tag == Tag.object.rawValue else { return .valid }
        let dep = program.dependencies[Int(d)]
        guard hasKey(Int(dep.key), v) else { return .valid }
        for j in Int(dep.first)..<Int(dep.first + dep.count) where !hasKey(j, v) { return .invalid }
        return .valid
    }

    @inline(__always)
    mutating func dependentSchema(_ d: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard tag == Tag.object.rawValue else { return .valid }
        let dep = program.dependentSchemas[Int(d)]
        guard hasKey(Int(dep.key), v) else { return .valid }
        return eval(dep.node, v)
    }

    @inline(__always)
    mutating func propertyNames(_ names: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard tag == Tag.object.rawValue else { return .valid }
        let n = tape.count(v)
        var result = Verdict.valid
        for i in 0..<n {
            let r = eval(names, tape.memberKey(v, i))
            if r == .invalid { return .invalid }
            result = max(result, r)
        }
        return result
    }

    // MARK: - Arrays

    @inline(__always)
    mutating func prefixItems(_ first: Int32, _ count: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard tag == Tag.array.rawValue else { return .valid }
        let n = min(Int(count), tape.count(v))
        var result = Verdict.valid
        for i in 0..<n {
            let r = eval(t.lists[Int(first) + i], tape.element(v, i))
            if r == .invalid { return .invalid }
            result = max(result, r)
        }
        return result
    }

    @inline(__always)
    mutating func items(_ item: Int32, _ prefix: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard tag == Tag.array.rawValue else { return .valid }
        let n = tape.count(v)
        var result = Verdict.valid
        var i = Int(prefix)
        while i < n {
            let r = eval(item, tape.element(v, i))
            if r == .invalid { return .invalid }
            result = max(result, r)
            i += 1
        }
        return result
    }

    /// contains with minContains / maxContains (-1: none): undecided items count either way.
    @inline(__always)
    mutating func contains(_ item: Int32, _ minC: Int32, _ maxC: Int32, _ tag: UInt64, _ v: UInt32) -> Verdict {
        guard tag == Tag.array.rawValue else { return .valid }
        let n = tape.count(v)
        var matched = 0, unknown = 0
        for i in 0..<n {
            switch eval(item, tape.element(v, i)) {
            case .valid: matched += 1
            case .undecided: unknown += 1
            case .invalid: break
            }
            if maxC < 0 && matched >= minC { return .valid }
            if maxC >= 0 && matched > maxC { return .invalid }
        }
        if matched + unknown < minC { return .invalid }
        if matched >= minC && (maxC < 0 || matched + unknown <= Int(maxC)) { return .valid }
        return .undecided
    }

    // MARK: - In place

    /// allOf (`all`: every branch, the worst verdict, certain at the first invalid one) and
    /// anyOf (some branch: the best verdict, certain at the first valid one).
    @inline(__always)
    mutating func branches(_ first: Int32, _ count: Int32, _ v: UInt32, all: Bool) -> Verdict {
        let decisive: Verdict = all ? .invalid : .valid
        var result: Verdict = all ? .valid : .invalid
        for i in Int(first)..<Int(first + count) {
            let r = eval(t.lists[i], v)
            if r == decisive { return r }
            result = all ? max(result, r) : min(result, r)
        }
        return result
    }

    @inline(__always)
    mutating func oneOf(_ first: Int32, _ count: Int32, _ v: UInt32) -> Verdict {
        var passing = 0, unknown = 0
        for i in Int(first)..<Int(first + count) {
            switch eval(t.lists[i], v) {
            case .valid: passing += 1
            case .undecided: unknown += 1
            case .invalid: break
            }
            if passing > 1 { return .invalid }
        }
        if unknown > 0 { return .undecided }
        return passing == 1 ? .valid : .invalid
    }

    @inline(__always)
    mutating func not(_ x: Int32, _ v: UInt32) -> Verdict {
        switch eval(x, v) {
        case .valid: return .invalid
        case .invalid: return .valid
        case .undecided: return .undecided
        }
    }

    /// if / then / else (-1: none).
    @inline(__always)
    mutating func conditional(_ c: Int32, _ then: Int32, _ otherwise: Int32, _ v: UInt32) -> Verdict {
        let taken: Int32
        switch eval(c, v) {
        case .valid: taken = then
        case .invalid: taken = otherwise
        case .undecided:
            // Either branch may apply: certain only when both agree.
            let a = then < 0 ? .valid : eval(then, v)
            let b = otherwise < 0 ? .valid : eval(otherwise, v)
            return a == b ? a : .undecided
        }
        return taken < 0 ? .valid : eval(taken, v)
    }
}
