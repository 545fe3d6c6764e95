// Fuzz target: the property-list parser (`PlistParser`: the depth/count/cycle scans, then
// libplist's XML and binary readers) and the writer.
//
// Input: an options byte (bit 0: a small maxObjects, 1: a small maxDepth), then the document
// (sniffed: "bplist00" is binary, anything else XML).
// Checks: errors are decode or tooLarge errors; a parsed value written back in binary parses to
// an equal value, and in XML to the value with whole-second dates (unless the writer refuses
// what the format cannot carry, with invalidArgument).
import FuzzSupport
import HTTPContent

func floorDates(_ v: PlistValue) -> PlistValue {
    switch v {
    case .date(let d): return .date(PlistDate(secondsSince2001: d.secondsSince2001.rounded(.down)))
    case .array(let a): return .array(a.map(floorDates))
    case .dictionary(let m): return .dictionary(m.map { PlistMember(key: $0.key, value: floorDates($0.value)) })
    default: return v
    }
}

/// Whether the value holds something the round trip cannot keep exactly: NaN (never equal to
/// itself), or a date XML cannot write, or duplicate keys (libplist keeps one).
func roundTrips(_ v: PlistValue) -> Bool {
    switch v {
    case .real(let d): return !d.isNaN
    case .date(let d): return d.secondsSince2001.isFinite
    case .array(let a): return a.allSatisfy(roundTrips)
    case .dictionary(let m): return Set(m.map(\.key)).count == m.count && m.allSatisfy { roundTrips($0.value) }
    default: return true
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var input = FuzzInput(data, size)
    let flags = input.byte()
    let doc = input.rest()
    var options = PlistOptions()
    if flags & 1 != 0 { options.maxObjects = 1000 }
    options.maxDepth = flags & 2 != 0 ? 8 : 128
    let value: PlistValue
    do {
        value = try PlistParser.parse(doc, options: options)
    } catch {
        fuzzCheck(error.code == .decode || error.code == .tooLarge, "unexpected error code \(error.code): \(error.message)")
        return 0
    }
    guard roundTrips(value) else { return 0 }
    for format in [PlistFormat.binary, .xml] {
        do {
            let bytes = try value.serialized(format: format)
            let back = try PlistParser.parse(bytes, options: PlistOptions(maxDepth: 200))
            let want = format == .xml ? floorDates(value) : value
            fuzzCheck(back == want, "\(format) round trip changed the value: \(value) -> \(back)")
        } catch {
            fuzzCheck(error.code == .invalidArgument, "\(format) round trip failed: \(error.code): \(error.message)")
        }
    }
    return 0
}

@main struct FuzzPlistMain {
    static func main() { runFuzzer(fuzzTest) }
}
