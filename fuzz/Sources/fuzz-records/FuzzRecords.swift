// Fuzz target: the record-stream parsers (Sources/HTTPContent/Records) under random chunking:
// the Server-Sent Events parser (with its UTF-8 decoding and line splitting) and the JSON record
// reader in its three framings, with and without skipping bad records.
//
// Input: a flags byte (bit 0: JSON records instead of SSE; bits 1-2: framing 0 lines,
// 1 sequence, 2 concatenated; bit 3: skip bad records; bit 4: small limits), 8 bytes seeding the
// chunking, then the stream.
// Checks: errors are decode or tooLarge errors (JSON) or tooLarge (SSE); what comes out (events,
// records, skipped indices, the error's code and record index) does not depend on how
// the stream was chunked; a skipped record's index is below the next record's. (Offsets are not
// compared: yajl's offset of a bad byte inside a string is off by one with some chunkings.)
import FuzzSupport
import HTTPContent

struct Outcome: Equatable {
    var items: [String] = []
    var error: String?
}

func sse(_ chunks: [ArraySlice<UInt8>], small: Bool) -> Outcome {
    var out = Outcome()
    let parser = SSEParser(maxLineSize: small ? 64 : 1 << 20, maxEventSize: small ? 128 : 1 << 20,
                           onComment: { out.items.append("comment \($0.debugDescription)") }) {
        out.items.append("\($0)")
    }
    do {
        for chunk in chunks { try parser.feed(Array(chunk)) }
        try parser.finish()
    } catch let e as HTTPContentError {
        fuzzCheck(e.code == .tooLarge, "SSE: unexpected error \(e.code): \(e.message)")
        out.error = "\(e.code)"
    } catch {
        fuzzFail("SSE: not an HTTPContentError: \(error)")
    }
    out.items.append("last id \(parser.lastEventId.debugDescription) retry \(String(describing: parser.reconnectionTime))")
    return out
}

func records(_ chunks: [ArraySlice<UInt8>], _ options: JSONRecordOptions) -> Outcome {
    var out = Outcome()
    var lastSkipped = -1
    var delivered = 0
    let parser = JSONRecordParser(options: options, onSkip: { e in
        fuzzCheck(e.code == .decode, "skipped a record for \(e.code)")
        let index = e.recordIndex ?? -1
        fuzzCheck(index > lastSkipped && index >= delivered, "skip index \(index) out of order")
        lastSkipped = index
        out.items.append("skip \(index)")
    }) { value in
        delivered += 1
        out.items.append("\(value)")
    }
    do {
        for chunk in chunks { try parser.feed(Array(chunk)) }
        let summary = try parser.finish()
        fuzzCheck(summary.records == delivered, "summary says \(summary.records), delivered \(delivered)")
    } catch let e as HTTPContentError {
        fuzzCheck(e.code == .decode || e.code == .tooLarge, "JSON records: unexpected error \(e.code): \(e.message)")
        fuzzCheck(e.recordIndex != nil && e.offset != nil, "error without its record: \(e.message)")
        out.error = "\(e.code) record \(e.recordIndex ?? -1)"
    } catch {
        fuzzFail("JSON records: not an HTTPContentError: \(error)")
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var input = FuzzInput(data, size)
    let flags = input.byte()
    var seed: UInt64 = 0
    for _ in 0..<8 { seed = seed << 8 | UInt64(input.byte()) }
    let stream = input.rest()
    let small = flags & 16 != 0
    let whole = [stream[...]]
    let pieces = randomChunks(stream, seed: seed)
    if flags & 1 == 0 {
        let a = sse(whole, small: small), b = sse(pieces, small: small)
        fuzzCheck(a == b, "SSE: chunking changed the outcome:\n\(a)\n\(b)")
    } else {
        let framing = JSONRecordFraming(rawValue: Int(flags >> 1) & 3) ?? .lines
        var options = JSONRecordOptions(framing: framing, skipBadRecords: flags & 8 != 0,
                                        maxRecordSize: small ? 64 : 1 << 20)
        options.json.maxDepth = 64
        let a = records(whole, options), b = records(pieces, options)
        fuzzCheck(a == b, "JSON records: chunking changed the outcome:\n\(a)\n\(b)")
    }
    return 0
}

@main struct FuzzRecordsMain {
    static func main() { runFuzzer(fuzzTest) }
}
