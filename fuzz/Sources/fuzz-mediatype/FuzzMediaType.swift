// Fuzz target: the Content-Type parser `MediaType(parsing:)`, charset lookup, `MediaRange`
// matching and `Acceptance.check`.
//
// Input: a Content-Type value and a media range, separated by the first newline (0x0A).
// Checks: a parsed type has non-empty lowercase token type/subtype and lowercase parameter names;
// its essence re-parses to itself; the range made from its essence, `type/*` and `*/*` match it;
// a range matches exactly as its definition says; a description whose values are all tokens
// re-parses to an equal type; Acceptance agrees with MediaRange.matches.
import FuzzSupport
import HTTPContent

func isToken(_ s: String) -> Bool {
    !s.isEmpty && s.utf8.allSatisfy { b in
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

func isLowercase(_ s: String) -> Bool { !s.utf8.contains { $0 >= 0x41 && $0 <= 0x5A } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let split = bytes.firstIndex(of: 0x0A) ?? bytes.count
    let typeText = String(decoding: bytes[..<split], as: UTF8.self)
    let rangeText = String(decoding: bytes[min(split + 1, bytes.count)...], as: UTF8.self)

    let media = MediaType(parsing: typeText)
    let range = MediaRange(parsing: rangeText)

    if let media {
        fuzzCheck(isToken(media.type) && isToken(media.subtype), "type/subtype not tokens: \(media.essence)")
        fuzzCheck(isLowercase(media.type) && isLowercase(media.subtype), "not lowercased: \(media.essence)")
        for p in media.parameters {
            fuzzCheck(isToken(p.name) && isLowercase(p.name), "parameter name \(p.name)")
        }
        let again = MediaType(parsing: media.essence)
        fuzzCheck(again?.type == media.type && again?.subtype == media.subtype && again?.parameters.isEmpty == true,
                  "essence \(media.essence) does not re-parse to itself")
        if media.parameters.allSatisfy({ isToken($0.value) }) {
            fuzzCheck(MediaType(parsing: media.description) == media, "description \(media.description) does not re-parse")
        }
        if let charset = media.charset {
            fuzzCheck(isLowercase(charset), "charset not lowercased: \(charset)")
            _ = TextEncoding(charset: charset)
        }
        _ = media.suffix
        fuzzCheck(MediaRange(parsing: media.essence)?.matches(media) == true, "own essence does not match \(media.essence)")
        fuzzCheck(MediaRange(parsing: media.type + "/*")?.matches(media) == true, "type/* does not match \(media.essence)")
        fuzzCheck(MediaRange(parsing: "*/*")!.matches(media), "*/* does not match \(media.essence)")
        if let suffix = media.suffix, !suffix.isEmpty {
            fuzzCheck(MediaRange(parsing: "*/*+" + suffix)?.matches(media) == true, "*/*+\(suffix) does not match \(media.essence)")
        }
    }

    if let range {
        fuzzCheck(isToken(range.type) && isToken(range.subtype), "range not tokens: \(range)")
        fuzzCheck(MediaRange(parsing: range.description) == range, "range \(range) does not re-parse")
        if let media {
            let expected = (range.type == "*" || range.type == media.type)
                && (range.subtype == "*" || range.subtype == media.subtype
                    || (range.subtype.hasPrefix("*+") && media.suffix.map { "*+" + $0 } == range.subtype))
            fuzzCheck(range.matches(media) == expected, "\(range) matches \(media.essence): \(range.matches(media))")
        }
        // Acceptance: the response head carries the raw header text.
        var headers = Headers()
        headers.add("Content-Type", typeText)
        let head = ResponseHead(status: 200, headers: headers)
        let acceptance = Acceptance(statusCodes: [200...299], contentTypes: [range])
        var accepted = true
        do { try acceptance.check(head) } catch {
            accepted = false
            fuzzCheck(error.code == .unacceptableContentType, "unexpected code \(error.code)")
        }
        let expected = media.map(range.matches) ?? head.bodyIsEmpty
        fuzzCheck(accepted == expected, "Acceptance(\(range)) on \"\(typeText)\": \(accepted), expected \(expected)")
    }
    return 0
}

@main struct FuzzMediaTypeMain {
    static func main() { runFuzzer(fuzzTest) }
}
