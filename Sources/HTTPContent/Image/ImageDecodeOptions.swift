/// How `ImagePixels` decodes. Every default is stated here once.
public struct ImageDecodeOptions: Sendable, Equatable {
    /// The pixel layout delivered. Default: `.rgba`.
    public var mode: PixelMode = .rgba
    /// Largest width × height decoded, checked from the header before any pixel memory is
    /// taken; a larger image (a decompression bomb, or a lie) fails with `.tooLarge`.
    /// Default: 100 megapixels.
    public var maxPixels: Int = 100_000_000
    /// Rotate/flip a JPEG by its EXIF orientation so the pixels are upright (width and height
    /// swap for 5–8). Default: false (the orientation is reported, the pixels are as stored).
    public var applyOrientation: Bool = false
    /// Keep the encoded body too (`DecodedImage.encoded`). Default: false: only pixels are kept.
    public var keepEncoded: Bool = false

    public init(mode: PixelMode = .rgba, maxPixels: Int = 100_000_000, applyOrientation: Bool = false,
                keepEncoded: Bool = false) {
        self.mode = mode
        self.maxPixels = maxPixels
        self.applyOrientation = applyOrientation
        self.keepEncoded = keepEncoded
    }
}
