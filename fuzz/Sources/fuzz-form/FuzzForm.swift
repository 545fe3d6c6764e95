// Fuzz target: FormEncoder (application/x-www-form-urlencoded) on arbitrary byte pairs and
// nested values, under every option.
//
// Input: [options] then values: [tag] [length] bytes..., where a tag picks bytes, string, int,
// double, bool, null, or an array/dictionary of the next few values.
// Checks: the output is only unreserved bytes, %XX with uppercase hex, '&', '=' and (in '+' mode)
// '+'; every pair has exactly one '='; flat byte pairs decode back to the input, in order (or
// sorted by key, stably).
import FuzzSupport
import HTTPContent

func isUnreserved(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
        || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "~")
}

func isUpperHex(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) }

func hexValue(_ b: UInt8) -> UInt8 { b <= 0x39 ? b - 0x30 : b - 0x41 + 10 }

/// Decodes one escaped component; nil if it holds a byte the encoder must never write.
func unescape(_ s: ArraySlice<UInt8>, plus: Bool) -> [UInt8]? {
    var out: [UInt8] = []
    var i = s.startIndex
    while i < s.endIndex {
        let b = s[i]
        if isUnreserved(b) { out.append(b); i += 1 }
        else if plus && b == UInt8(ascii: "+") { out.append(0x20); i += 1 }
        else if b == UInt8(ascii: "%"), i + 2 < s.endIndex, isUpperHex(s[i + 1]), isUpperHex(s[i + 2]) {
            out.append(hexValue(s[i + 1]) << 4 | hexValue(s[i + 2]))
            i += 3
        } else { return nil }
    }
    return out
}

func readValue(_ input: inout FuzzInput, depth: Int) -> FormValue {
    let tag = input.byte()
    switch tag % 10 {
    case 0, 1, 2: return .bytes(input.lengthPrefixed())
    case 3: return .string(String(decoding: input.lengthPrefixed(), as: UTF8.self))
    case 4:
        let raw = input.take(8)
        return .int(Int64(bitPattern: raw.reduce(0) { $0 << 8 | UInt64($1) }))
    case 5:
        let raw = input.take(8)
        return .double(Double(bitPattern: raw.reduce(0) { $0 << 8 | UInt64($1) }))
    case 6: return .bool(tag & 0x10 != 0)
    case 7: return .null
    case 8 where depth < 4:
        return .array((0..<Int(input.byte() % 5)).map { _ in readValue(&input, depth: depth + 1) })
    case 9 where depth < 4:
        return .dictionary((0..<Int(input.byte() % 5)).map { _ in
            FormPair(bytes: input.lengthPrefixed(), readValue(&input, depth: depth + 1))
        })
    default: return .bytes(input.lengthPrefixed())
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var input = FuzzInput(data, size)
    let options = input.byte()
    let encoder = FormEncoder(
        spaceEncoding: options & 1 != 0 ? .plusReplaced : .percentEscaped,
        arrayEncoding: [.brackets, .repeat, .indexed, .brackets][Int(options >> 1) & 3],
        boolEncoding: options & 8 != 0 ? .literal : .numeric,
        nullEncoding: options & 16 != 0 ? .empty : .dropped,
        sortedKeys: options & 32 != 0)
    let plus = options & 1 != 0
    var pairs: [FormPair] = []
    while !input.isAtEnd && pairs.count < 64 {
        pairs.append(FormPair(bytes: input.lengthPrefixed(), readValue(&input, depth: 0)))
    }

    let out = encoder.encode(pairs)
    fuzzCheck(encoder.encodeString(pairs).utf8.elementsEqual(out), "encodeString differs from encode")
    let components = out.isEmpty ? [] : out.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
    var decoded: [([UInt8], [UInt8])] = []
    for component in components {
        let equals = component.indices.filter { component[$0] == UInt8(ascii: "=") }
        fuzzCheck(equals.count == 1, "pair without exactly one '=': \(String(decoding: component, as: UTF8.self))")
        guard let key = unescape(component[..<equals[0]], plus: plus),
              let value = unescape(component[(equals[0] + 1)...], plus: plus) else {
            fuzzFail("forbidden byte in \(String(decoding: component, as: UTF8.self))")
        }
        decoded.append((key, value))
    }

    // Flat pairs of bytes round-trip exactly.
    var flat: [([UInt8], [UInt8])] = []
    var allFlat = true
    for pair in pairs {
        if case .bytes(let v) = pair.value { flat.append((pair.key, v)) } else { allFlat = false }
    }
    if allFlat {
        if options & 32 != 0 {
            flat = flat.enumerated().sorted { a, b in
                a.element.0 == b.element.0 ? a.offset < b.offset : a.element.0.lexicographicallyPrecedes(b.element.0)
            }.map(\.element)
        }
        fuzzCheck(decoded.count == flat.count && zip(decoded, flat).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 },
                  "flat pairs do not round-trip: \(decoded.count) decoded, \(flat.count) sent")
    }
    return 0
}

@main struct FuzzFormMain {
    static func main() { runFuzzer(fuzzTest) }
}
