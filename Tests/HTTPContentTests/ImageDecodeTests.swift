import Testing
import Foundation
@testable import HTTPContent

private let server = TestServer.shared

/// Decoded images (issue 17) from Swift: pixels against Pillow's (the test server's
/// /pixels-expected, from Tests/server/imagecorpus.py), the push decoder fed byte by byte, the
/// pixel cap, bad input and the rows callback.
@Suite struct ImageDecodeTests {
    let client = try! Client()

    func expected(_ name: String, _ mode: PixelMode, orient: Bool = false) throws -> (Int, Int, [UInt8], Bool) {
        let r = try client.get(server.url("/pixels-expected/\(name)?mode=\(mode.rawValue)&orient=\(orient ? 1 : 0)"),
                               handler: Bytes())
        return (Int(r.headers["X-Width"] ?? "") ?? -1, Int(r.headers["X-Height"] ?? "") ?? -1, r.content.array,
                r.headers["X-Exact"] == "1")
    }

    func expectMatch(_ image: DecodedImage, _ name: String, _ mode: PixelMode, orient: Bool = false) throws {
        let (width, height, pixels, exact) = try expected(name, mode, orient: orient)
        #expect(image.width == width && image.height == height && image.mode == mode)
        #expect(image.stride == width * mode.channels && image.pixels.count == pixels.count)
        let worst = zip(image.pixels, pixels).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(exact ? worst == 0 : worst <= 2, "\(name) \(mode): a channel differs from Pillow's by \(worst)")
    }

    @Test(arguments: ["png-ct0-2", "png-ct0-16-adam7", "png-ct2-16", "png-ct3-8-adam7", "png-ct4-16", "png-ct6-8",
                      "png-gray-trns", "png-palette4-trns-adam7", "jpeg-baseline", "jpeg-progressive", "jpeg-cmyk",
                      "jpeg-420", "gif-transparent", "gif-interlaced", "webp-lossy", "webp-lossless",
                      "webp-lossless-alpha", "webp-lossy-alpha"])
    func pixelsMatchPillow(name: String) throws {
        for mode in PixelMode.allCases {
            let image = try #require(try client.get(server.url("/pixels/\(name)?chunk=9"),
                                                    handler: Image.decoding(ImageDecodeOptions(mode: mode))).content)
            #expect(image.format.rawValue == name.split(separator: "-")[0].description)
            try expectMatch(image, name, mode)
        }
    }

    /// The push decoder fed one byte at a time gives the same pixels as one feed.
    @Test(arguments: ["png-ct6-16-adam7", "jpeg-progressive", "gif-animated", "webp-lossy-alpha"])
    func oneByteAtATimeDecodesTheSame(name: String) throws {
        let body = try client.get(server.url("/pixels/\(name)"), handler: Bytes()).content.array
        let whole = PixelDecoder()
        try body.withUnsafeBytes { try whole.feed($0) }
        let a = try whole.finish()
        var rows: [Int] = []
        let bytewise = PixelDecoder(onRows: { first, count in rows.append(contentsOf: first..<(first + count)) })
        for byte in body { try [byte].withUnsafeBytes { try bytewise.feed($0) } }
        let b = try bytewise.finish()
        #expect(a.pixels.array == b.pixels.array && a.frameCount == b.frameCount)
        #expect(Set(rows) == Set(0..<b.height))
    }

    @Test func exifOrientationIsAppliedByOption() throws {
        for o in 1...8 {
            let stored = try #require(try client.get(server.url("/pixels/jpeg-exif-\(o)"), handler: Image.decoding()).content)
            #expect(stored.orientation == o && stored.width == 24)
            let upright = try #require(try client.get(server.url("/pixels/jpeg-exif-\(o)"),
                                                      handler: Image.decoding(ImageDecodeOptions(applyOrientation: true))).content)
            try expectMatch(upright, "jpeg-exif-\(o)", .rgba, orient: true)
        }
    }

    @Test func bombIsRefusedFromItsHeaderBeforeAnyAllocation() throws {
        var asked = 0
        let handler = ImagePixels()
        handler.storage = { size in asked += 1; return nil }
        #expect { try client.get(server.url("/pixels/bomb"), handler: handler) } throws: { error in
            (error as? HTTPContentError)?.code == .tooLarge && "\(error)".contains("50000x50000")
        }
        #expect(asked == 0)
    }

    @Test func badBodiesAreDecodeErrors() {
        for path in ["/pixels/png-ct2-8?truncate=200", "/pixels/jpeg-baseline?truncate=600",
                     "/pixels/webp-lossless?truncate=60", "/pixels/gif-opaque?truncate=100",
                     "/pixels/jpeg-baseline?ctype=image/png", "/bytes/40?ctype=image/gif", "/image/bmp"] {
            do {
                _ = try client.get(server.url(path), handler: Image.decoding())
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.code == .decode, "\(path): \(error)")
            }
        }
    }

    @Test func pngEncodeRoundTrips() throws {
        let image = try #require(try client.get(server.url("/pixels/png-ct6-8"), handler: Image.decoding()).content)
        let png = try image.pngData()
        let decoder = PixelDecoder()
        try png.withUnsafeBytes { try decoder.feed($0) }
        #expect(try decoder.finish().pixels.array == image.pixels.array)
    }
}
