// Fuzz target: the Text handler and StreamingTextDecoder.
//
// Input: [mode] [seed] body...
//   mode & 7: 0–5 force TextEncoding.allCases[mode]; 6 declares a charset in Content-Type
//             (picked by seed); 7 declares nothing (BOM sniffing, then UTF-8).
//   mode & 8: strict (else lenient).
// Checks: the same body fed whole and in random chunks gives the same text or the same error
// (code and offset); the decoder's raw output is valid UTF-8; lenient decoding with a known
// encoding never fails; lenient UTF-8 equals String(decoding:as: UTF8.self) (maximal-subpart
// replacement); strict success equals lenient output; a strict failure means lenient output has
// a U+FFFD; strict UTF-8/ASCII/Latin-1 success reproduces the input exactly; Text with a forced
// encoding equals the decoder minus a matching BOM, error offsets included.
import FuzzSupport
import HTTPContent

let charsets = ["utf-8", "UTF-16", "utf-16le", "UTF-16BE", "iso-8859-1", "us-ascii", "windows-1252",
                "latin1", "cp1252", " utf8 ", "koi8-r", ""]

enum Outcome: Equatable {
    case text([UInt8])
    case failed(HTTPContentError.Code, Int?)
}

func runText(_ chunks: [ArraySlice<UInt8>], encoding: TextEncoding?, strict: Bool,
             contentType: String?) -> Outcome {
    let handler = Text(encoding: encoding, strict: strict, acceptance: .anything)
    var headers = Headers()
    if let contentType { headers.add("Content-Type", contentType) }
    do {
        _ = try handler.accept(ResponseHead(status: 200, headers: headers))
        for chunk in chunks { try chunk.withUnsafeBytes { try handler.consume($0) } }
        return .text(Array(try handler.finish().utf8))
    } catch let error as HTTPContentError {
        return .failed(error.code, error.offset)
    } catch {
        fuzzFail("unexpected error type: \(error)")
    }
}

/// The decoder alone, fed in chunks: its raw output (before any String repair) and outcome.
func runDecoder(_ chunks: [ArraySlice<UInt8>], encoding: TextEncoding, strict: Bool) -> ([UInt8], Outcome) {
    var decoder = StreamingTextDecoder(encoding: encoding, strict: strict)
    do {
        for chunk in chunks { try chunk.withUnsafeBytes { try decoder.decode($0) } }
        try decoder.finish()
        return (decoder.output, .text(decoder.output))
    } catch let error as HTTPContentError {
        return (decoder.output, .failed(error.code, error.offset))
    } catch {
        fuzzFail("unexpected error type: \(error)")
    }
}

func hasReplacement(_ utf8: [UInt8]) -> Bool {
    guard utf8.count >= 3 else { return false }
    return (0...(utf8.count - 3)).contains { utf8[$0] == 0xEF && utf8[$0 + 1] == 0xBF && utf8[$0 + 2] == 0xBD }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var input = FuzzInput(data, size)
    let mode = input.byte()
    let seedByte = input.byte()
    let body = input.rest()
    let strict = mode & 8 != 0
    let kind = Int(mode & 7)
    let encoding: TextEncoding? = kind < 6 ? TextEncoding.allCases[kind] : nil
    let contentType: String? = kind == 6 ? "text/plain; charset=\(charsets[Int(seedByte) % charsets.count])" : nil
    let whole = [body[...]]
    let chunks = randomChunks(body, seed: UInt64(seedByte) &* 0x0100_0193 &+ UInt64(size))

    // 1. Chunking never changes the outcome.
    let a = runText(whole, encoding: encoding, strict: strict, contentType: contentType)
    let b = runText(chunks, encoding: encoding, strict: strict, contentType: contentType)
    fuzzCheck(a == b, "whole \(a) != chunked \(b) for \(encoding?.rawValue ?? contentType ?? "sniffed"), "
              + "strict \(strict), chunks \(chunks.map(\.count)), body \(hex(body.prefix(64)))")

    // 2. The decoder's own output is valid UTF-8, and chunk-independent.
    for enc in TextEncoding.allCases {
        let (raw, outcome) = runDecoder(chunks, encoding: enc, strict: strict)
        fuzzCheck(String(validating: raw, as: UTF8.self) != nil,
                  "\(enc.rawValue) decoder produced invalid UTF-8 from \(hex(body.prefix(64)))")
        let (_, wholeOutcome) = runDecoder(whole, encoding: enc, strict: strict)
        fuzzCheck(outcome == wholeOutcome, "\(enc.rawValue) decoder: whole \(wholeOutcome) != chunked \(outcome), "
                  + "strict \(strict), chunks \(chunks.map(\.count)), body \(hex(body.prefix(64)))")
        if !strict, case .failed = outcome { fuzzFail("lenient \(enc.rawValue) decoding failed: \(outcome)") }
        if !strict && enc == .utf8 {
            // Lenient UTF-8 replaces maximal subparts, exactly as the standard library does.
            fuzzCheck(raw == Array(String(decoding: body, as: UTF8.self).utf8),
                      "lenient UTF-8 differs from String(decoding:) on \(hex(body.prefix(64)))")
        }
    }

    // 3. Strict and lenient agree where strict succeeds; strict fails only where lenient replaced.
    if let encoding {
        let strictOutcome = runText(whole, encoding: encoding, strict: true, contentType: nil)
        let lenientOutcome = runText(whole, encoding: encoding, strict: false, contentType: nil)
        guard case .text(let lenient) = lenientOutcome else {
            fuzzFail("lenient Text(\(encoding.rawValue)) failed: \(lenientOutcome)")
        }
        switch strictOutcome {
        case .text(let text):
            fuzzCheck(text == lenient, "strict and lenient \(encoding.rawValue) differ on \(hex(body.prefix(64)))")
            var expected = body
            if encoding == .utf8, body.starts(with: [0xEF, 0xBB, 0xBF]) { expected.removeFirst(3) }
            switch encoding {
            case .utf8, .ascii:
                fuzzCheck(text == expected, "strict \(encoding.rawValue) success but output != input")
            case .isoLatin1:
                let latin = String(String.UnicodeScalarView(body.map { Unicode.Scalar($0) }))
                fuzzCheck(text == Array(latin.utf8), "Latin-1 output differs from the code points")
            default: break
            }
        case .failed(let code, let offset):
            fuzzCheck(code == .decode, "strict failure with code \(code)")
            fuzzCheck(offset.map { $0 >= 0 && $0 <= body.count } ?? false, "strict failure offset \(String(describing: offset)) outside the body of \(body.count)")
            fuzzCheck(hasReplacement(lenient), "strict \(encoding.rawValue) failed but lenient output has no U+FFFD")
        }
    }

    // 4. Text with a forced encoding is the decoder minus a matching byte order mark: same text,
    //    same error, and an error's offset counts from the start of the body (BOM included).
    if let encoding {
        let bom: [UInt8] = encoding == .utf8 ? [0xEF, 0xBB, 0xBF]
            : encoding == .utf16LE ? [0xFF, 0xFE] : encoding == .utf16BE ? [0xFE, 0xFF] : []
        let dropsBOM = !bom.isEmpty && body.starts(with: bom)
        let viaText = runText(whole, encoding: encoding, strict: strict, contentType: nil)
        var (_, direct) = runDecoder(whole, encoding: encoding, strict: strict)
        if dropsBOM, case .text(let t) = direct {
            fuzzCheck(t.starts(with: [0xEF, 0xBB, 0xBF]), "decoded BOM is not U+FEFF")
            direct = .text(Array(t.dropFirst(3)))
        }
        fuzzCheck(viaText == direct, "Text(\(encoding.rawValue), strict \(strict)) \(viaText) != decoder \(direct) "
                  + "on \(hex(body.prefix(64)))")
    }
    return 0
}

@main struct FuzzTextMain {
    static func main() { runFuzzer(fuzzTest) }
}
