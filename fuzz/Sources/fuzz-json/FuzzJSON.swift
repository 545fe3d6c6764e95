// Fuzz target: the JSON tree parser (`JSONStreamParser` onto the tape) and the tape-backed
// `JSONArray`/`JSONObject` read API.
//
// Input: an options byte (bit 0 removeNulls, 1 allowComments, 2 allowMultipleValues,
// 3 keepNumberText, 4 strictUTF8 off, 5 allowTrailingGarbage, 6 allowPartialValues), a chunk size
// byte, then the document.
// Checks: errors are decode or tooLarge errors; the value does not depend on how the input was
// chunked; a deep copy made through the public API (owned containers) equals it both ways and
// serializes to the same text; that text parses back to an equal value (unless it nests deeper
// than the generator's 128 levels, which must then fail cleanly).
import FuzzSupport
import HTTPContent

func parse(_ bytes: [UInt8], _ options: JSONOptions, chunk: Int) -> Result<JSONValue, HTTPContentError> {
    let parser = JSONStreamParser(options: options)
    do {
        var i = 0
        while i < bytes.count {
            let end = min(bytes.count, i + chunk)
            try parser.feed(Array(bytes[i..<end]))
            i = end
        }
        return .success(try parser.finish())
    } catch {
        return .failure(error)
    }
}

/// The same value with every container rebuilt as an owned one, through the public API only.
func ownedCopy(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let a): return .array(JSONArray(a.map(ownedCopy)))
    case .object(let o): return .object(JSONObject(o.map { JSONMember(key: $0.key, value: ownedCopy($0.value)) }))
    default: return value
    }
}

func depth(_ value: JSONValue) -> Int {
    switch value {
    case .array(let a): return 1 + (a.map(depth).max() ?? 0)
    case .object(let o): return 1 + (o.map { depth($0.value) }.max() ?? 0)
    default: return 0
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var input = FuzzInput(data, size)
    let flags = input.byte()
    let chunk = Int(input.byte()) + 1
    let doc = input.take(size)
    var options = JSONOptions()
    options.removeNulls = flags & 1 != 0
    options.allowComments = flags & 2 != 0
    options.allowMultipleValues = flags & 4 != 0
    options.keepNumberText = flags & 8 != 0
    options.strictUTF8 = flags & 16 == 0
    options.allowTrailingGarbage = flags & 32 != 0
    options.allowPartialValues = flags & 64 != 0
    options.maxDepth = 200  // recursive checks below stay shallow

    let whole = parse(doc, options, chunk: max(doc.count, 1))
    let chunked = parse(doc, options, chunk: chunk)
    switch (whole, chunked) {
    case let (.failure(a), .failure(b)):
        fuzzCheck(a.code == .decode || a.code == .tooLarge, "unexpected error code \(a.code): \(a.message)")
        fuzzCheck(a.code == b.code, "chunking changed the error: \(a.message) / \(b.message)")
        return 0
    case let (.success(a), .success(b)):
        fuzzCheck(a == b, "chunking changed the value: \(a) / \(b)")
    default:
        // Partial values may end differently only if the input ends inside a value; otherwise a
        // document either parses or not, however it arrives.
        fuzzCheck(options.allowPartialValues, "chunking changed success: \(whole) / \(chunked)")
        return 0
    }
    guard case .success(let value) = whole else { return 0 }
    let copy = ownedCopy(value)
    fuzzCheck(copy == value && value == copy, "owned copy differs: \(copy) / \(value)")
    fuzzCheck(copy.description == value.description, "descriptions differ")
    if depth(value) < 128 {
        var again = JSONOptions()
        again.keepNumberText = options.keepNumberText
        again.maxDepth = 200
        switch parse(Array(value.description.utf8), again, chunk: 1 << 20) {
        case .success(let reparsed): fuzzCheck(reparsed == value, "round trip: \(value) -> \(reparsed)")
        case .failure(let e): fuzzCheck(false, "own text does not parse: \(e.message): \(value)")
        }
    }
    return 0
}

@main struct FuzzJSONMain {
    static func main() { runFuzzer(fuzzTest) }
}
