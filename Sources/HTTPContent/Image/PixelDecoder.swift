import CImageCodecs
#if canImport(Glibc)
import Glibc
#endif

/// A push decoder: feed it an image's bytes chunk by chunk as they arrive, and it decodes while
/// they do (libpng's progressive reader, libjpeg-turbo with a suspending source, libwebp's
/// incremental decoder; GIF is buffered, since giflib has no push API), so the pixels are ready
/// when the last byte is. The format is sniffed from the first bytes.
///
/// Limits: the pixel cap is checked from the header, before the pixel memory is taken; a
/// truncated, corrupt or lying image fails with `.decode`, a header beyond the cap with
/// `.tooLarge`.
public final class PixelDecoder {
    public let options: ImageDecodeOptions
    /// Called after each `feed` (and in `finish`) with rows that became final since the last call,
    /// as (first row, row count) of the output. Throwing stops decoding with that error.
    private let onRows: ((Int, Int) throws -> Void)?
    /// Provides the pixel memory (see `ImagePixels.storage`); nil for the library's own.
    private let storage: ((Int) -> (UnsafeMutableRawPointer, () -> Void)?)?

    /// Called once the first bytes tell the format, before anything is decoded: throw to refuse
    /// it (the handler checks it against the declared Content-Type here, so the outcome never
    /// depends on how the body was split into chunks).
    public var formatCheck: ((ImageInfo.Format) throws -> Void)?
    /// The format, once the first bytes have told it.
    public private(set) var format: ImageInfo.Format?
    /// Bytes fed so far.
    public private(set) var bytesReceived = 0
    private var magic: [UInt8] = []
    private var decoder: OpaquePointer?
    private var pixels: PixelBuffer?
    private var outWidth = 0, outHeight = 0
    private var refusal: HTTPContentError?
    private var pendingFirst = 0, pendingEnd = 0

    public init(options: ImageDecodeOptions = ImageDecodeOptions(),
                storage: ((Int) -> (UnsafeMutableRawPointer, () -> Void)?)? = nil,
                onRows: ((Int, Int) throws -> Void)? = nil) {
        self.options = options
        self.storage = storage
        self.onRows = onRows
    }

    deinit { hcimg_decoder_free(decoder) }

    /// Decodes what `chunk` makes possible.
    public func feed(_ chunk: UnsafeRawBufferPointer) throws {
        guard chunk.count > 0 else { return }
        let offset = bytesReceived
        bytesReceived += chunk.count
        if decoder == nil {
            let held = magic.count   // bytes of earlier chunks, too few to tell the format
            magic.append(contentsOf: chunk.prefix(16 - magic.count))
            guard let found = try Self.sniff(magic) else { return }   // needs more bytes
            try formatCheck?(found)
            format = found
            try start(found)
            if held > 0 {
                let earlier = Array(magic.prefix(held))
                try earlier.withUnsafeBytes { try push($0, offset: offset - held) }
            }
            magic = []
            try push(chunk, offset: offset)
        } else {
            try push(chunk, offset: offset)
        }
        try flushRows()
    }

    /// The body is complete: the decoded image.
    public func finish() throws -> DecodedImage {
        guard let decoder, let format else {
            throw HTTPContentError(.decode, bytesReceived == 0 ? "the body is empty, which is not an image"
                                   : "truncated image: \(bytesReceived) bytes are too few to tell its format",
                                   offset: bytesReceived)
        }
        try check(hcimg_decoder_finish(decoder), offset: bytesReceived)
        try flushRows()
        guard let pixels else { throw HTTPContentError(.decode, "no pixels decoded", offset: bytesReceived) }
        return DecodedImage(format: format, width: outWidth, height: outHeight, mode: options.mode,
                            hasAlpha: hcimg_decoder_has_alpha(decoder) != 0,
                            orientation: Int(hcimg_decoder_orientation(decoder)),
                            frameCount: Int(hcimg_decoder_frame_count(decoder)), pixels: pixels, encoded: nil)
    }

    // MARK: - Sniffing

    /// The format once enough bytes are in, nil while more are needed.
    static func sniff(_ b: [UInt8]) throws(HTTPContentError) -> ImageInfo.Format? {
        func matches(_ sig: [UInt8], at offset: Int = 0) -> Bool? {
            for (i, byte) in sig.enumerated() {
                guard offset + i < b.count else { return nil }
                if b[offset + i] != byte { return false }
            }
            return true
        }
        let checks: [(ImageInfo.Format, () -> Bool?)] = [
            (.png, { matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) }),
            (.jpeg, { matches([0xFF, 0xD8]) }),
            (.gif, { matches(Array("GIF8".utf8)) }),
            (.webp, { matches(Array("RIFF".utf8)).flatMap { $0 ? matches(Array("WEBP".utf8), at: 8) : false } }),
            (.bmp, { matches(Array("BM".utf8)) }),
        ]
        var undecided = false
        for (format, test) in checks {
            switch test() {
            case true?:
                if format == .bmp {
                    throw HTTPContentError(.decode, "BMP images are not decoded (PNG, JPEG, GIF and WebP are)", offset: 0)
                }
                return format
            case nil: undecided = true
            case false?: break
            }
        }
        if undecided { return nil }
        throw HTTPContentError(.decode, "the bytes are not a PNG, JPEG, GIF or WebP image", offset: 0)
    }

    // MARK: - Driving the C decoder

    private func start(_ format: ImageInfo.Format) throws {
        let codec: hcimg_format
        switch format {
        case .png: codec = HCIMG_PNG
        case .jpeg: codec = HCIMG_JPEG
        case .gif: codec = HCIMG_GIF
        case .webp: codec = HCIMG_WEBP
        case .bmp: throw HTTPContentError(.decode, "BMP images are not decoded", offset: 0)
        }
        var sink = hcimg_sink()
        sink.ctx = Unmanaged.passUnretained(self).toOpaque()
        sink.begin = { ctx, width, height, channels in
            Unmanaged<PixelDecoder>.fromOpaque(ctx!).takeUnretainedValue()
                .begin(Int(width), Int(height), Int(channels))
        }
        sink.rows = { ctx, first, count in
            Unmanaged<PixelDecoder>.fromOpaque(ctx!).takeUnretainedValue().rowsDone(Int(first), Int(count))
            return 0
        }
        guard let made = hcimg_decoder_new(codec, Int32(options.mode.channels), options.applyOrientation ? 1 : 0, &sink) else {
            throw HTTPContentError(.decode, "could not create the \(format.rawValue) decoder (out of memory)")
        }
        decoder = made
    }

    private func push(_ bytes: UnsafeRawBufferPointer, offset: Int) throws {
        guard let decoder, let base = bytes.baseAddress, bytes.count > 0 else { return }
        try check(hcimg_decoder_feed(decoder, base.assumingMemoryBound(to: UInt8.self), bytes.count),
                  offset: offset + bytes.count)
    }

    private func check(_ rc: Int32, offset: Int) throws {
        switch Int(rc) {
        case HCIMG_OK: return
        case HCIMG_STOPPED:
            throw refusal ?? HTTPContentError(.decode, "decoding stopped", offset: offset)
        default:
            let message = decoder.map { String(cString: hcimg_decoder_message($0)) } ?? "decode failed"
            throw HTTPContentError(.decode, message, offset: offset)
        }
    }

    /// The header is read: check the pixel cap, then take the memory.
    private func begin(_ width: Int, _ height: Int, _ channels: Int) -> UnsafeMutablePointer<UInt8>? {
        let (pixelCount, overflow) = width.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !overflow, pixelCount <= options.maxPixels else {
            refusal = HTTPContentError(.tooLarge, "the \(format?.rawValue ?? "image") header claims \(width)x\(height) pixels, "
                                       + "beyond the limit of \(options.maxPixels)", offset: bytesReceived)
            return nil
        }
        let size = pixelCount * channels
        if let storage, let (memory, release) = storage(size) {
            pixels = PixelBuffer(memory, count: size, release: release)
        } else {
            guard let memory = malloc(size) else {
                refusal = HTTPContentError(.tooLarge, "no memory for \(width)x\(height) pixels")
                return nil
            }
            pixels = PixelBuffer(memory, count: size, release: nil)
        }
        outWidth = width
        outHeight = height
        return pixels?.baseAddress
    }

    private func rowsDone(_ first: Int, _ count: Int) {
        guard onRows != nil else { return }
        if pendingEnd > pendingFirst, first == pendingEnd {
            pendingEnd += count
            return
        }
        if pendingEnd > pendingFirst {   // not contiguous (an interlaced pass): hand on what we have
            let (f, e) = (pendingFirst, pendingEnd)
            pendingFirst = first
            pendingEnd = first + count
            deferred.append((f, e - f))
            return
        }
        pendingFirst = first
        pendingEnd = first + count
    }

    private var deferred: [(Int, Int)] = []

    private func flushRows() throws {
        guard let onRows else { return }
        let ranges = deferred + (pendingEnd > pendingFirst ? [(pendingFirst, pendingEnd - pendingFirst)] : [])
        deferred = []
        pendingFirst = 0
        pendingEnd = 0
        for (first, count) in ranges {
            do { try onRows(first, count) } catch { throw HTTPContentError.wrapping(error) }
        }
    }
}
