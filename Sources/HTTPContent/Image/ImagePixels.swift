/// Decodes an image body to pixels while it arrives (see `PixelDecoder`): the pixels are ready
/// when the last byte is, and the encoded body is not kept unless `options.keepEncoded` asks.
///
/// Content: the `DecodedImage`; nil for an allowed empty response (204, HEAD). Bytes that are not
/// the declared image type fail with `.decode` (as `Image`); so do truncated, corrupt or lying
/// images; a header beyond `options.maxPixels` fails with `.tooLarge` before any pixel memory is
/// taken, and so does a body beyond `maxSize` bytes. Default acceptance: `image/*`.
public final class ImagePixels: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: ImageDecodeOptions
    /// Largest encoded body accepted, in bytes; nil for no limit. Default: nil.
    public let maxSize: Int?
    /// Provides the pixel memory once the header gives its size, so it lands where the caller
    /// wants it with no copy (the Python binding fills a `bytes` object this way); nil for the
    /// library's own. Returns the memory and what to call once it is no longer used, or nil to
    /// decline.
    public var storage: ((Int) -> (UnsafeMutableRawPointer, () -> Void)?)?
    private let onRows: ((Int, Int) throws -> Void)?
    private var head: ResponseHead?
    private var decoder: PixelDecoder?
    private var encoded: ByteBuffer?

    /// - Parameters:
    ///   - options: the pixel format, orientation and size limits of the decode.
    ///   - maxSize: the largest encoded body accepted, in bytes (nil: no limit).
    ///   - acceptance: the statuses and media types taken (default: the image types).
    ///   - onRows: called with (first row, row count) as rows are decoded, at most once per
    ///     chunk received plus once at the end (a viewer can draw them). Interlaced PNGs report
    ///     rows as passes update them, then every row once complete; progressive JPEGs report
    ///     their rows once the last scan is in; with an orientation applied, every row at the end.
    ///     Throwing stops the transfer with that error.
    public init(options: ImageDecodeOptions = ImageDecodeOptions(), maxSize: Int? = nil,
                acceptance: Acceptance = Image.defaultAcceptance(),
                onRows: ((Int, Int) throws -> Void)? = nil) {
        self.options = options
        self.maxSize = maxSize
        self.acceptance = acceptance
        self.onRows = onRows
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        if let maxSize, let length = head.contentLength, length > Int64(maxSize), !head.hasNoBodyByDefinition {
            throw HTTPContentError(.tooLarge, "body of \(length) bytes exceeds the limit of \(maxSize) bytes",
                                   response: head)
        }
        let decoder = PixelDecoder(options: options, storage: storage, onRows: onRows)
        if let declared = head.contentType, declared.type == "image", declared.subtype != "*" {
            decoder.formatCheck = { format in
                guard ImageSniffer.agrees(declared: declared.subtype, with: format) else {
                    throw HTTPContentError(.decode, "declared \(declared.essence) but the bytes are \(format.mediaType)",
                                           response: head, offset: 0)
                }
            }
        }
        self.decoder = decoder
        encoded = options.keepEncoded ? ByteBuffer() : nil
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        guard let decoder else { return }
        if let maxSize, decoder.bytesReceived + chunk.count > maxSize {
            throw HTTPContentError(.tooLarge, "body exceeds the limit of \(maxSize) bytes", response: head)
        }
        encoded?.append(chunk)
        do { try decoder.feed(chunk) } catch { throw attach(error) }
    }

    public func finish() throws -> DecodedImage? {
        guard let decoder, decoder.bytesReceived > 0 || head.map({ !acceptance.allowsEmptyBody($0) }) ?? true else {
            return nil
        }
        do {
            let image = try decoder.finish()
            return DecodedImage(format: image.format, width: image.width, height: image.height, mode: image.mode,
                                hasAlpha: image.hasAlpha, orientation: image.orientation,
                                frameCount: image.frameCount, pixels: image.pixels, encoded: encoded)
        } catch {
            throw attach(error)
        }
    }

    public func cleanup(failed: Bool) {
        decoder = nil
        encoded = nil
    }

    private func attach(_ error: any Error) -> any Error {
        guard var own = error as? HTTPContentError else { return error }
        if own.response == nil { own.response = head }
        return own
    }
}

extension Image {
    /// A handler that decodes the image to pixels: `client.get(url, handler: Image.decoding(.init(mode: .rgb)))`.
    public static func decoding(_ options: ImageDecodeOptions = ImageDecodeOptions(),
                                onRows: ((Int, Int) throws -> Void)? = nil) -> ImagePixels {
        ImagePixels(options: options, onRows: onRows)
    }
}
