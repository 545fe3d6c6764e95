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
    /// Outcome of decoding `body` to RGB pixels split into `chunks` pieces of `size` bytes.
    private func webpOutcome(_ body: [UInt8], contentType: String, split size: Int) -> String {
        let chunks = stride(from: 0, to: body.count, by: size).map { Array(body[$0..<min($0 + size, body.count)]) }
        do {
            let image = try run(ImagePixels(options: ImageDecodeOptions(mode: .rgb, maxPixels: 4_000_000)),
                                contentType: contentType, chunks)
            return "image \(image?.width ?? -1)x\(image?.height ?? -1) \(image?.pixels.array.hashValue ?? 0)"
        } catch let error as HTTPContentError {
            return "error \(error.code)"
        } catch {
            return "unexpected \(error)"
        }
    }

    /// fuzz-pixels, input `27 07 01 00` + an 85-byte lossless WebP whose VP8L chunk claims 0
    /// bytes, then a valid stream: libwebp's incremental decoder tells "wait" from "corrupt" by
    /// comparing what it holds with the chunk size, so fed whole it decoded a 48x32 image and fed
    /// a few bytes at a time it failed. It is now fed nothing past the declared chunk: a failure
    /// (.decode) however the body is split, as libwebp's one-shot WebPDecode says.
    @Test func webpChunkSizeBoundsWhatTheDecoderSees() {
        let body: [UInt8] = [
            0x52, 0x49, 0x46, 0x46, 0x52, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4C,
            0x00, 0x00, 0x00, 0x00, 0x2F, 0x2F, 0xC0, 0x07, 0x00, 0x28, 0x65, 0x44, 0xFF, 0x63, 0xA1, 0xFF,
            0x69, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x08, 0xA6, 0xFE, 0x6D, 0xEF, 0x4A, 0x88,
            0x23, 0x01, 0xEF, 0xFF, 0x10, 0x5B, 0x04, 0xFA, 0x30, 0xDB, 0x86, 0xC9, 0x96, 0xFC, 0x7F, 0x42,
            0x6F, 0x6F, 0x6C, 0x20, 0x6D, 0x03, 0x16, 0x75, 0x57, 0x42, 0x70, 0x27, 0x07, 0xED, 0x07, 0x24,
            0xCB, 0x64, 0x38, 0x00, 0x00]
        let whole = webpOutcome(body, contentType: "image/webp", split: body.count)
        #expect(whole == "error decode")
        for size in 1...24 { #expect(webpOutcome(body, contentType: "image/webp", split: size) == whole, "split \(size)") }
    }

    /// fuzz-pixels, input `60 07 01 00` + an extended WebP (VP8X) declaring a 30x10.5M canvas,
    /// then no image chunk: libwebp's feature probe reports the canvas from the VP8X chunk alone
    /// when the data ends there, so split early the pixel cap refused it (.tooLarge), while whole
    /// the bytes after it were read as a broken chunk (.decode). The image chunk's header is now
    /// awaited before the size is trusted, so the outcome no longer depends on the split.
    @Test func webpExtendedHeaderWaitsForTheImageChunk() {
        let body: [UInt8] = [
            0x52, 0x49, 0x46, 0x46, 0x14, 0x01, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x58,
            0x0A, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x1D, 0x00, 0x00, 0xF7, 0x3A, 0xA0, 0xC8, 0x22,
            0xD0, 0x8D, 0xCE, 0xCE, 0xE0, 0xBA, 0xCF, 0x28, 0x11, 0x4D, 0x81, 0xE8, 0x4A, 0xCB, 0x38, 0xFF,
            0x91, 0x59, 0xD9, 0x16, 0xA8, 0x98, 0xDE, 0x25, 0x9F, 0xF8, 0xBE, 0x66, 0x19, 0x99, 0x4B, 0xF3,
            0x18, 0xA9, 0xF2, 0x7F, 0x1D, 0xBF, 0xDF, 0x6C, 0x60, 0xBE, 0xF9, 0xD8, 0xF9, 0xBC, 0x52, 0x73,
            0x8E, 0x47, 0xFE, 0x5C, 0x9F, 0xC8, 0xFA, 0x83, 0xD3, 0x63, 0x2E, 0xC7, 0x65, 0x4E, 0x8C, 0x55,
            0x2B, 0xD0, 0x00, 0x00, 0x3C, 0xC7, 0x65, 0x51, 0x8C, 0x55, 0x2B, 0xD0, 0x2C, 0x00]
        let whole = webpOutcome(body, contentType: "image/*", split: body.count)
        #expect(whole.hasPrefix("error"))
        for size in 1...40 { #expect(webpOutcome(body, contentType: "image/*", split: size) == whole, "split \(size)") }
    }
}
