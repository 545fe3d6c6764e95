#if canImport(Glibc)
import Glibc
#endif

/// What the tape program says of a value. Only `valid` is acted on alone (as nothing to
/// report); otherwise the full validator runs and makes the errors.
enum SchemaTapeVerdict: UInt8, Comparable {
    /// Certainly valid.
    case valid = 0
    /// The program cannot tell (a number kept as text, invalid UTF-8 under a string keyword,
    /// a regular expression at its backtracking limit, evaluation deeper than the full
    /// validator allows, ...).
    case undecided = 1
    /// Certainly invalid.
    case invalid = 2

    static func < (a: SchemaTapeVerdict, b: SchemaTapeVerdict) -> Bool { a.rawValue < b.rawValue }
}

/// One run of a `SchemaTapeProgram` over a tape: the program's arrays and the tape's buffers
/// borrowed as raw pointers for the run's length (the program and the tape outlive it).
struct SchemaTapeRun {
    let t: SchemaTapeProgram.Tables
    let program: SchemaTapeProgram
    /// The tape's buffers (a streaming check moves a run on to the grown tape between elements).
    var tape: JSONTapeStorage
    /// PCRE2's match state (nil when no pattern needs the regex engine).
    let scratch: SchemaRegexScratch?
    var depth = 0
    /// Containers already proven valid under a program node while the tree was built (a
    /// streaming check's): their verdict is not computed again. Nil for other runs.
    var proven: SchemaTapeProven?

    typealias Tag = JSONTape.Tag
    typealias Verdict = SchemaTapeVerdict

    // MARK: - Nodes

    /// Whether a tape word is an array's or an object's.
    @inline(__always)
    static func isContainer(_ w: UInt64) -> Bool {
        let tag = w & 0xF
        return tag == Tag.array.rawValue || tag == Tag.object.rawValue
    }

    /// Evaluates program node `p` on tape node `v`.
    mutating func eval(_ p: Int32, _ v: UInt32) -> Verdict {
        let n = t.nodes[Int(p)]
        if n.always >= 0 { return n.always == 1 ? .valid : .invalid }
        // Only containers are ever proven: a scalar costs no look-up.
        if let proven, SchemaTapeRun.isContainer(tape.word(v)), proven.contains(p, v) { return .valid }
        // The full validator fails past this depth: leave it the case.
        if depth >= SchemaEvaluation.maxDepth { return .undecided }
        depth += 1
        defer { depth -= 1 }
        var result = Verdict.valid
        var i = Int(n.first)
        let end = i + Int(n.count)
        while i < end {
            let r = op(t.ops[i], v)
            if r == .invalid { return .invalid }
            if r == .undecided { result = .undecided }
            i += 1
        }
        return result
    }

    /// Dispatches one program op to its check (one function per op, in `SchemaTapeOps.swift`
    /// and below).
    @inline(__always)
    private mutating func op(_ op: SchemaTapeOp, _ v: UInt32) -> Verdict {
        let w = tape.word(v)
        let tag = w & 0xF
        switch op {
        case .type(let set): return SchemaTapeRun.typeMatches(w, set, tape, v)
        case .enumeration(let index): return enumeration(index, v)
        case .enumStrings(let first, let count): return enumStrings(first, count, w, v)
        case .constant(let index): return constant(index, v)
        case .multipleOf(let index): return multipleOf(index, tag, v)
        case .bound(let b): return bound(t.bounds[Int(b)], w, v)
        case .maxLength(let limit): return maxLength(limit, tag, v)
        case .minLength(let limit): return minLength(limit, tag, v)
        case .pattern(let r): return isString(tag) ? search(r, tape.text(v)) : .valid
        case .maxItems(let limit): return count(of: .array, tag, v, atMost: limit)
        case .minItems(let limit): return count(of: .array, tag, v, atLeast: limit)
        case .uniqueItems: return uniqueItems(tag, v)
        case .maxProperties(let limit): return count(of: .object, tag, v, atMost: limit)
        case .minProperties(let limit): return count(of: .object, tag, v, atLeast: limit)
        case .object(let plan): return tag == Tag.object.rawValue ? object(t.plans[Int(plan)], v) : .valid
        case .dependentRequired(let d): return dependentRequired(d, tag, v)
        case .dependentSchema(let d): return dependentSchema(d, tag, v)
        case .prefixItems(let first, let count): return prefixItems(first, count, tag, v)
        case .items(let item, let prefix): return items(item, prefix, tag, v)
        case .contains(let item, let minC, let maxC): return contains(item, minC, maxC, tag, v)
        case .propertyNames(let names): return propertyNames(names, tag, v)
        case .allOf(let first, let count): return branches(first, count, v, all: true)
        case .anyOf(let first, let count): return branches(first, count, v, all: false)
        case .oneOf(let first, let count): return oneOf(first, count, v)
        case .not(let x): return not(x, v)
        case .conditional(let c, let then, let otherwise): return conditional(c, then, otherwise, v)
        case .ref(let target): return eval(target, v)
        case .format(let f): return format(f, tag, v)
        }
    }

    // MARK: - Objects

    /// properties, required, additionalProperties and patternProperties in one pass.
    mutating func object(_ plan: SchemaTapeProgram.ObjectPlan, _ v: UInt32) -> Verdict {
        let n = tape.count(v)
        var seen: UInt64 = 0
        var result = Verdict.valid
        let first = Int(plan.firstKey), end = first + Int(plan.keyCount)
        for i in 0..<n {
            let k = tape.memberKey(v, i)
            let kw = tape.word(k)
            var j = first
            if kw & 0xF == Tag.inlineString.rawValue {
                while j < end && t.keys[j].word != kw { j += 1 }
            } else {
                let text = tape.text(k)
                while j < end && !keyEquals(j, kw, text) { j += 1 }
            }
            var isProperty = false
            if j < end {
                let key = t.keys[j]
                seen |= key.bit
                if key.node >= 0 {
                    isProperty = true
                    let r = eval(key.node, tape.memberValue(v, i))
                    if r == .invalid { return .invalid }
                    result = max(result, r)
                }
            } else if plan.keyCount > 16 && !JSONStrings.isASCII(tape.text(k)) {
                // Past 16 names the full validator looks keys up as Swift strings, which
                // compare by canonical equivalence: leave non-ASCII keys to it.
                return .undecided
            }
            var matchedPattern = false
            if plan.patternCount > 0 {
                let text = tape.text(k)
                for q in Int(plan.firstPattern)..<Int(plan.firstPattern + plan.patternCount) {
                    let (re, sub) = t.patterns[q]
                    switch search(re, text) {
                    case .valid:
                        matchedPattern = true
                        let r = eval(sub, tape.memberValue(v, i))
                        if r == .invalid { return .invalid }
                        result = max(result, r)
                    case .invalid: break
                    case .undecided: return .undecided
                    }
                }
            }
            if plan.additional >= 0 && !isProperty && !matchedPattern {
                let r = eval(plan.additional, tape.memberValue(v, i))
                if r == .invalid { return .invalid }
                result = max(result, r)
            }
        }
        if seen & plan.required != plan.required { return .invalid }
        return result
    }

    /// Whether key `j` of the program equals a tape string (word `w`, bytes `t`).
    @inline(__always)
    func keyEquals(_ j: Int, _ w: UInt64, _ text: UnsafeRawBufferPointer) -> Bool {
        let key = t.keys[j]
        if key.word != 0 && w & 0xF == Tag.inlineString.rawValue { return key.word == w }
        guard Int(key.length) == text.count else { return false }
        guard let b = text.baseAddress, key.length > 0 else { return true }
        return memcmp(t.keyBytes + Int(key.offset), b, text.count) == 0
    }

    func hasKey(_ j: Int, _ v: UInt32) -> Bool {
        for i in 0..<tape.count(v) {
            let k = tape.memberKey(v, i)
            if keyEquals(j, tape.word(k), tape.text(k)) { return true }
        }
        return false
    }

    // MARK: - Scalars

    @inline(__always) func isString(_ tag: UInt64) -> Bool {
        tag == Tag.inlineString.rawValue || tag == Tag.string.rawValue || tag == Tag.wideString.rawValue
    }

    @inline(__always) func isNumber(_ tag: UInt64) -> Bool {
        tag == Tag.int.rawValue || tag == Tag.double.rawValue || tag == Tag.wideInt.rawValue
            || tag == Tag.wideDouble.rawValue || tag == Tag.number.rawValue || tag == Tag.wideNumber.rawValue
    }

    @inline(__always)
    func search(_ r: Int32, _ text: UnsafeRawBufferPointer) -> Verdict {
        let m = t.matchers[Int(r)]
        switch m.kind {
        case .prefix:
            guard text.count >= Int(m.length), let b = text.baseAddress else { return .invalid }
            return memcmp(t.keyBytes + Int(m.offset), b, Int(m.length)) == 0 ? .valid : .invalid
        case .substring:
            guard text.count >= Int(m.length), let b = text.baseAddress else { return .invalid }
            let needle = t.keyBytes + Int(m.offset), n = Int(m.length)
            let p = b.assumingMemoryBound(to: UInt8.self)
            var i = 0
            while i + n <= text.count {
                if p[i] == needle[0] && memcmp(p + i, needle, n) == 0 { return .valid }
                i += 1
            }
            return .invalid
        case .regex:
            break
        }
        guard JSONStrings.isValidUTF8(text) else { return .undecided }
        guard let scratch else { return .undecided }
        switch program.regexes[Int(r)].search(validUTF8: text, scratch) {
        case true?: return .valid
        case false?: return .invalid
        case nil: return .undecided
        }
    }

    /// A bound, as `SchemaNumbers.compare` decides it.
    @inline(__always)
    func bound(_ b: SchemaTapeProgram.Bound, _ w: UInt64, _ v: UInt32) -> Verdict {
        let c: Int
        switch w & 0xF {
        case Tag.int.rawValue, Tag.wideInt.rawValue:
            let x = w & 0xF == Tag.int.rawValue ? Int64(bitPattern: w) >> 4 : Int64(bitPattern: tape.wide[Int(truncatingIfNeeded: w >> 4)])
            if b.isInt {
                c = x < b.int ? -1 : (x > b.int ? 1 : 0)
            } else {
                let d = Double(x)
                c = d < b.double ? -1 : (d > b.double ? 1 : 0)
            }
        case Tag.double.rawValue, Tag.wideDouble.rawValue:
            let d = w & 0xF == Tag.double.rawValue ? Double(bitPattern: w & ~0xF) : Double(bitPattern: tape.wide[Int(truncatingIfNeeded: w >> 4)])
            c = d < b.double ? -1 : (d > b.double ? 1 : 0)
        case Tag.number.rawValue, Tag.wideNumber.rawValue:
            c = SchemaNumbers.compare(JSONTape.valueOf(tape, v), program.values[Int(b.value)])
        default:
            return .valid
        }
        switch b.kind {
        case 0: return c > 0 ? .invalid : .valid
        case 1: return c >= 0 ? .invalid : .valid
        case 2: return c < 0 ? .invalid : .valid
        default: return c <= 0 ? .invalid : .valid
        }
    }

    /// `type`, as `SchemaEvaluation.matches` decides it.
    @inline(__always)
    static func typeMatches(_ w: UInt64, _ set: UInt8, _ tape: JSONTapeStorage, _ v: UInt32) -> Verdict {
        let types = SchemaTypes(rawValue: set)
        let tag = w & 0xF
        // Most values: the type bits of their tag (integer also passes "number").
        let direct = tagTypes(tag)
        if direct != 0 { return types.rawValue & direct != 0 ? .valid : .invalid }
        let ok: Bool
        switch tag {
        case Tag.double.rawValue, Tag.wideDouble.rawValue:
            if types.contains(.number) {
                ok = true
            } else {
                let d = tag == Tag.double.rawValue ? Double(bitPattern: w & ~0xF) : Double(bitPattern: tape.wide[Int(truncatingIfNeeded: w >> 4)])
                ok = types.contains(.integer) && d.isFinite && d.rounded() == d
            }
        default: ok = SchemaEvaluation.matches(JSONTape.valueOf(tape, v), types)
        }
        return ok ? .valid : .invalid
    }

    /// The `SchemaTypes` bits a tag's values always have, a byte per tag (0: it depends on the
    /// value): null 1, bool 2, int and wide int 4|8 (integers are numbers too), strings 16,
    /// array 32, object 64; doubles and number text are decided by value.
    private static let tagTypesLow: UInt64 = 0x1010_0000_0C0C_0201
    private static let tagTypesHigh: UInt64 = 0x0000_0010_4020_0000

    @inline(__always)
    private static func tagTypes(_ tag: UInt64) -> UInt8 {
        UInt8(truncatingIfNeeded: tag < 8 ? tagTypesLow >> (tag * 8) : tagTypesHigh >> ((tag - 8) * 8))
    }

    /// Code points of UTF-8 text, nil when it is not valid UTF-8 (the full validator counts
    /// the repaired string's).
    static func scalars(_ t: UnsafeRawBufferPointer) -> Int? {
        if JSONStrings.isASCII(t) { return t.count }
        guard JSONStrings.isValidUTF8(t) else { return nil }
        var n = 0
        for b in t where b & 0xC0 != 0x80 { n += 1 }
        return n
    }
}

extension JSONTape {
    /// A scalar node's value, or a container's, from the storage alone (the rare paths of the
    /// tape validator: number text, enum, const; containers become owned copies).
    static func valueOf(_ storage: JSONTapeStorage, _ node: UInt32) -> JSONValue {
        // A container's value refers to a tape object, which the run does not hold: copy.
        storage.scalar(node) ?? ownedValue(storage, node)
    }

    private static func ownedValue(_ s: JSONTapeStorage, _ node: UInt32) -> JSONValue {
        switch s.kind(node) {
        case .array:
            return .array(JSONArray((0..<s.count(node)).map { valueOf(s, s.element(node, $0)) }))
        case .object:
            return .object(JSONObject((0..<s.count(node)).map {
                JSONMember(key: JSONStrings.repaired(s.text(s.memberKey(node, $0))), value: valueOf(s, s.memberValue(node, $0)))
            }))
        default:
            return valueOf(s, node)
        }
    }
}

extension SchemaTapeProgram {
    /// Match state for one run when a pattern needs PCRE2 (literal patterns do not): nil
    /// otherwise, which saves its allocations per validated value (path streaming validates
    /// many small ones).
    func makeScratch() -> SchemaRegexScratch? {
        needsRegexEngine ? SchemaRegexScratch() : nil
    }

    /// The verdict on a parsed document's node (`proven`: containers a streaming check
    /// already proved).
    func verdict(_ tape: JSONTape, _ node: UInt32, _ scratch: SchemaRegexScratch?,
                 proven: SchemaTapeProven? = nil) -> SchemaTapeVerdict {
        guard let tables else { return .undecided }
        var run = SchemaTapeRun(t: tables, program: self, tape: tape.storage, scratch: scratch, proven: proven)
        return run.eval(0, node)
    }

    /// The verdict on `value` when it is a container of a parsed document; nil otherwise (values
    /// built in Swift, scalars at the root: the full validator alone).
    func verdict(_ value: JSONValue, _ scratch: SchemaRegexScratch?, proven: SchemaTapeProven? = nil) -> SchemaTapeVerdict? {
        switch value {
        case .array(let a):
            guard let t = a.tape else { return nil }
            return withExtendedLifetime(t) { verdict(t, a.node, scratch, proven: proven) }
        case .object(let o):
            guard let t = o.tape else { return nil }
            return withExtendedLifetime(t) { verdict(t, o.node, scratch, proven: proven) }
        default:
            return nil
        }
    }
}
