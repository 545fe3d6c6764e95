import Testing
@testable import HTTPContent

/// Inputs the libFuzzer targets in `fuzz/` found, kept as regression tests. Each test names the
/// target and the input (the crash file's bytes) and checks what the target's oracle checked.
@Suite struct FuzzRegressionTests {
    /// Drives a handler as a transfer would: accept, consume each chunk, finish.
    private func run<H: ContentHandler>(_ handler: H, contentType: String? = nil,
                                        _ chunks: [[UInt8]]) throws -> H.Content {
        var headers = Headers()
        if let contentType { headers.add("Content-Type", contentType) }
        _ = try handler.accept(ResponseHead(status: 200, headers: headers))
        for chunk in chunks { try chunk.withUnsafeBytes { try handler.consume($0) } }
        return try handler.finish()
    }

    private func decodeError(_ body: () throws -> Any) -> HTTPContentError? {
        do { _ = try body(); return nil } catch { return error as? HTTPContentError }
    }

    /// fuzz-text, input `3a fa fe ff 29 be ff` (UTF-16BE, strict): the body `fe ff 29 be ff` has
    /// a BOM, then an odd byte at the end. The error's offset was 2, counted from after the
    /// dropped BOM; it is 4, an offset in the body as documented.
    @Test func strictErrorOffsetCountsTheDroppedBOM() {
        let body: [UInt8] = [0xFE, 0xFF, 0x29, 0xBE, 0xFF]
        for chunks in [[body], body.map { [$0] }] {
            let error = decodeError { try run(Text(encoding: .utf16BE, strict: true), chunks) }
            #expect(error?.code == .decode)
            #expect(error?.offset == 4)
        }
        // Same for UTF-8 with its BOM: the invalid byte 0xFF is byte 3 of the body.
        let utf8 = decodeError { try run(Text(encoding: .utf8, strict: true), [[0xEF, 0xBB, 0xBF, 0xFF]]) }
        #expect(utf8?.offset == 3)
        // And for a BOM found by sniffing, with no charset declared.
        let sniffed = decodeError { try run(Text(strict: true), [[0xFF, 0xFE, 0x00, 0xDC]]) }
        #expect(sniffed?.offset == 2)
    }

    /// fuzz-text, input `60 f7 f0 8d 8d 7a f0 86 86 ...` (UTF-8, lenient): after an invalid
    /// sequence the decoder skipped every following continuation byte, within the chunk only, so
    /// the number of U+FFFD depended on where the network split the body. Invalid sequences are
    /// now replaced per maximal subpart, whatever the chunking, exactly as the standard library.
    @Test func lenientUTF8DoesNotDependOnChunking() throws {
        let body: [UInt8] = [0xF0, 0x8D, 0x8D, 0x7A, 0xF0, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86, 0x86,
                             0x86, 0x86, 0x86, 0xD7, 0x86, 0x86, 0x86, 0xFF]
        let expected = String(decoding: body, as: UTF8.self)
        var splits: [[[UInt8]]] = [[body], body.map { [$0] }]
        splits.append([Array(body[0..<1]), [], Array(body[1..<8]), Array(body[8..<9]), Array(body[9..<11]), Array(body[11...])])
        for chunks in splits {
            #expect(try run(Text(encoding: .utf8, strict: false), chunks) == expected)
        }
        // The cases that differed: an overlong E0 80 80 then a stray continuation byte.
        #expect(try run(Text(encoding: .utf8, strict: false), [[0xE0, 0x80, 0x80], [0x80]])
                == String(decoding: [0xE0, 0x80, 0x80, 0x80] as [UInt8], as: UTF8.self))
        #expect(try run(Text(encoding: .utf8, strict: false), [[0xE0, 0x80, 0x80, 0x80]]) == "\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}")
    }

    /// fuzz-pixels, input `02 07 01 00` + a 180-byte lossless WebP (RIFF, VP8L) claiming
    /// 8353x3509 pixels, declared image/jpeg, with a 4-megapixel cap: whole, the header came with
    /// the first chunk and the pixel cap refused it (.tooLarge); split, the first chunk told only
    /// the format and the declared type refused it (.decode). The declared type is now checked as
    /// soon as the format is known, before anything is decoded, so the outcome is .decode either way.
    @Test func declaredTypeIsCheckedBeforeThePixelCapWhateverTheChunking() {
        var body = Array("RIFF".utf8) + [0x52, 0, 0, 0] + Array("WEBPVP8L".utf8) + [0x45, 0, 0, 0, 0x2F]
        // 14-bit width-1 and height-1: 8353x3509, then enough bytes to read the header.
        let bits: UInt32 = (8353 - 1) | (3509 - 1) << 14
        body += [UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24)]
        body += [UInt8](repeating: 0, count: 40)
        for chunks in [[body], [Array(body[0..<12]), Array(body[12...])], body.map { [$0] }] {
            let error = decodeError {
                try run(ImagePixels(options: ImageDecodeOptions(maxPixels: 4_000_000)), contentType: "image/jpeg", chunks)
            }
            #expect(error?.code == .decode && error?.message.contains("declared image/jpeg") == true)
        }
        // Declared as what it is, the cap refuses it from its header.
        let capped = decodeError {
            try run(ImagePixels(options: ImageDecodeOptions(maxPixels: 4_000_000)), contentType: "image/webp", [body])
        }
        #expect(capped?.code == .tooLarge)
    }
}
