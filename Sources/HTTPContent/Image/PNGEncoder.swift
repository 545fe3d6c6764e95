import CImageCodecs
#if canImport(Glibc)
import Glibc
#endif

/// Writes 8-bit pixels as PNG with libpng (the C side keeps libpng's longjmp away from Swift).
public enum PNGEncoder {
    /// - Parameters: `channels` 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA); rows `stride` bytes apart.
    /// - Returns: the PNG file's bytes.
    /// - Throws: `.invalidArgument` for an impossible layout, `.decode` if libpng fails.
    public static func encode(_ pixels: UnsafePointer<UInt8>, width: Int, height: Int, channels: Int,
                              stride: Int) throws(HTTPContentError) -> [UInt8] {
        guard width > 0, height > 0, width <= Int(UInt32.max), height <= Int(UInt32.max),
              (1...4).contains(channels), stride >= width * channels else {
            throw HTTPContentError(.invalidArgument, "PNG encode: \(width)x\(height), \(channels) channels, stride \(stride) is not a valid layout")
        }
        var out: UnsafeMutablePointer<UInt8>?
        var len = 0
        var message = [CChar](repeating: 0, count: 256)
        let rc = hcimg_png_encode(pixels, UInt32(width), UInt32(height), Int32(channels), stride, &out, &len,
                                  &message, message.count)
        guard Int(rc) == HCIMG_OK, let out else {
            throw HTTPContentError(.decode, String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: len))
    }
}
