#if canImport(Glibc)
import Glibc
#endif

/// The pixel layout a decoded image is delivered in: 8 bits per channel, row-major, tightly
/// packed (stride = width × channels).
public enum PixelMode: String, Sendable, CaseIterable {
    /// Red, green, blue, alpha (the default). Images without alpha get 255.
    case rgba = "RGBA"
    /// Red, green, blue; any alpha is dropped (not composited), as Pillow's convert("RGB") does.
    case rgb = "RGB"
    /// Gray: Rec.601 luma of the colour, L = (19595 R + 38470 G + 7471 B + 32768) >> 16, as Pillow.
    case l = "L"

    public var channels: Int {
        switch self {
        case .rgba: return 4
        case .rgb: return 3
        case .l: return 1
        }
    }
}

/// Decoded pixels in one block of memory whose address never changes, so the C ABI and the
/// Python binding lend it out without copying. The memory is the library's own, or the caller's
/// when the handler was given a `storage` (released when the buffer is freed).
public final class PixelBuffer: @unchecked Sendable, RandomAccessCollection {
    public let baseAddress: UnsafeMutablePointer<UInt8>
    public let count: Int
    private let release: (() -> Void)?

    init(_ memory: UnsafeMutableRawPointer, count: Int, release: (() -> Void)?) {
        baseAddress = memory.assumingMemoryBound(to: UInt8.self)
        self.count = count
        self.release = release
    }

    deinit {
        if let release { release() } else { free(baseAddress) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "PixelBuffer index out of range")
        return baseAddress[position]
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: baseAddress, count: count))
    }

    /// A copy as a Swift array.
    public var array: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// An image decoded to pixels: what `ImagePixels` makes of an image body.
public struct DecodedImage: Sendable {
    /// The source format, sniffed from the bytes.
    public let format: ImageInfo.Format
    /// The size of `pixels` (after the EXIF orientation, when it was applied).
    public let width: Int
    public let height: Int
    public let mode: PixelMode
    /// Whether the source had an alpha channel or a transparent colour (PNG tRNS, GIF).
    public let hasAlpha: Bool
    /// The JPEG's EXIF orientation (1–8; 1 when absent and for other formats), whether or not
    /// it was applied.
    public let orientation: Int
    /// How many frames the file holds (GIF); the first is decoded. 1 for the other formats.
    public let frameCount: Int
    /// width × height × channels bytes, row-major, tightly packed.
    public let pixels: PixelBuffer
    /// The encoded body, when the handler was asked to keep it (`keepEncoded`); else nil.
    public let encoded: ByteBuffer?

    public var channels: Int { mode.channels }
    /// Bytes from one row to the next: always width × channels.
    public var stride: Int { width * mode.channels }

    /// The pixels encoded as PNG (libpng, 8 bits per channel), e.g. to save a decoded copy.
    public func pngData() throws(HTTPContentError) -> [UInt8] {
        try PNGEncoder.encode(pixels.baseAddress, width: width, height: height, channels: channels, stride: stride)
    }
}
