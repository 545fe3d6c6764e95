/// A decoded image's facts: its bytes, the format sniffed from them, and the pixel size read
/// from its header (no pixels are decoded).
public struct ImageInfo: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case png, jpeg, gif, webp, bmp

        /// The media type a server should declare for this format.
        public var mediaType: String { "image/\(rawValue)" }
    }

    public let format: Format
    public let width: Int
    public let height: Int
    public let data: ByteBuffer
}

/// Keeps an image body and inspects it: sniffs the format from its first bytes, reads the pixel
/// size from its header, and checks that the declared Content-Type agrees with the bytes.
/// Content is nil for an allowed empty response (204, HEAD). Default acceptance: `image/*`.
public final class Image: Accumulator<ImageInfo?> {
    /// Largest width × height accepted; a header claiming more (a decompression bomb, or a lie)
    /// fails with `.decode`. Default: 100 megapixels.
    public let maxPixels: Int

    public init(maxSize: Int? = nil, maxPixels: Int = 100_000_000,
                acceptance: Acceptance = Image.defaultAcceptance()) {
        self.maxPixels = maxPixels
        super.init(maxSize: maxSize, acceptance: acceptance)
    }

    /// The process-wide default status codes, with `image/*` as the content types.
    public static func defaultAcceptance() -> Acceptance {
        var a = Acceptance()
        a.contentTypes = ["image/*"]
        return a
    }

    public override func convert(_ body: ByteBuffer) throws -> ImageInfo? {
        if body.count == 0, let head, acceptance.allowsEmptyBody(head) { return nil }
        let (format, width, height) = try body.withUnsafeBytes { try ImageSniffer.inspect($0) }
        if let declared = head?.contentType, declared.type == "image",
           !ImageSniffer.agrees(declared: declared.subtype, with: format) {
            throw HTTPContentError(.decode, "declared \(declared.essence) but the bytes are \(format.mediaType)",
                                   response: head, offset: 0)
        }
        if width <= 0 || height <= 0 || width.multipliedReportingOverflow(by: height).overflow
            || width * height > maxPixels {
            throw HTTPContentError(.decode, "the \(format.rawValue) header claims \(width)x\(height) pixels, "
                                   + "beyond the limit of \(maxPixels)", response: head)
        }
        return ImageInfo(format: format, width: width, height: height, data: body)
    }
}

/// Reads format and dimensions from the first bytes of PNG, JPEG, GIF, WebP and BMP files.
enum ImageSniffer {
    static func agrees(declared subtype: String, with format: ImageInfo.Format) -> Bool {
        switch subtype {
        case "jpeg", "jpg", "pjpeg": return format == .jpeg
        case "bmp", "x-bmp", "x-ms-bmp": return format == .bmp
        default: return subtype == format.rawValue
        }
    }

    static func inspect(_ b: UnsafeRawBufferPointer) throws(HTTPContentError) -> (ImageInfo.Format, Int, Int) {
        func be16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        func be32(_ i: Int) -> Int { be16(i) << 16 | be16(i + 2) }
        func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func le24(_ i: Int) -> Int { le16(i) | Int(b[i + 2]) << 16 }
        func le32(_ i: Int) -> Int32 { Int32(bitPattern: UInt32(le16(i)) | UInt32(le16(i + 2)) << 16) }
        func starts(_ sig: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + sig.count && sig.indices.allSatisfy { b[offset + $0] == sig[$0] }
        }
        func truncated(_ what: String) -> HTTPContentError {
            HTTPContentError(.decode, "truncated \(what) header", offset: b.count)
        }

        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            guard b.count >= 24, starts(Array("IHDR".utf8), at: 12) else { throw truncated("PNG") }
            return (.png, be32(16), be32(20))
        }
        if starts([0x47, 0x49, 0x46, 0x38]) {
            guard b.count >= 10 else { throw truncated("GIF") }
            return (.gif, le16(6), le16(8))
        }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            guard b.count >= 30 else { throw truncated("WebP") }
            if starts(Array("VP8X".utf8), at: 12) { return (.webp, le24(24) + 1, le24(27) + 1) }
            if starts(Array("VP8L".utf8), at: 12) {
                guard b[20] == 0x2F else { throw HTTPContentError(.decode, "bad VP8L signature", offset: 20) }
                let bits = UInt32(b[21]) | UInt32(b[22]) << 8 | UInt32(b[23]) << 16 | UInt32(b[24]) << 24
                return (.webp, Int(bits & 0x3FFF) + 1, Int((bits >> 14) & 0x3FFF) + 1)
            }
            if starts(Array("VP8 ".utf8), at: 12) { return (.webp, le16(26) & 0x3FFF, le16(28) & 0x3FFF) }
            throw HTTPContentError(.decode, "unknown WebP chunk", offset: 12)
        }
        if starts([0x42, 0x4D]) {
            guard b.count >= 26 else { throw truncated("BMP") }
            return (.bmp, Int(le32(18)), abs(Int(le32(22))))
        }
        if starts([0xFF, 0xD8]) {
            // Walk the markers to the first start-of-frame, which carries the dimensions.
            var i = 2
            while i + 9 < b.count {
                guard b[i] == 0xFF else { throw HTTPContentError(.decode, "bad JPEG marker", offset: i) }
                let marker = b[i + 1]
                if marker == 0xFF { i += 1; continue }
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
                if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                    return (.jpeg, be16(i + 7), be16(i + 5))
                }
                i += 2 + be16(i + 2)
            }
            throw truncated("JPEG")
        }
        throw HTTPContentError(.decode, "the bytes are not a PNG, JPEG, GIF, WebP or BMP image", offset: 0)
    }
}
