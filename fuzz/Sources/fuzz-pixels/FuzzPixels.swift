// Fuzz target: the ImagePixels handler (PNG, JPEG, GIF and WebP decoded to pixels by libpng,
// libjpeg-turbo, giflib and libwebp behind CImageCodecs), through the public handler API:
// accept a head, consume the body in random chunks, finish.
//
// Input: [declared] [seed] [options] [pixel limit] body...
//   declared picks the Content-Type; options bits: 0-1 mode, 2 apply orientation.
// Checks: whole and chunked give the same outcome (pixels or error code); success has positive
// dimensions within the pixel limit, width*height*channels pixel bytes, the format of the magic
// bytes, an orientation 1-8, frames >= 1, rows reported that cover every row; every failure is
// `.decode` or `.tooLarge` (the pixel cap), or `.unacceptableContentType` for a non-image type.
import FuzzSupport
import HTTPContent

let declaredTypes: [String?] = [nil, "image/png", "image/jpeg", "image/gif", "image/webp", "image/*",
                                "application/octet-stream"]

enum Outcome: Equatable {
    case image(ImageInfo.Format, Int, Int, [UInt8], Int, Int, Bool)
    case empty
    case failed(HTTPContentError.Code)
}

func run(_ chunks: [ArraySlice<UInt8>], contentType: String?, options: ImageDecodeOptions) -> (Outcome, Set<Int>) {
    var rows = Set<Int>()
    let handler = ImagePixels(options: options, onRows: { first, count in
        fuzzCheck(first >= 0 && count > 0, "rows \(first)+\(count)")
        for y in first..<(first + count) { rows.insert(y) }
    })
    var headers = Headers()
    if let contentType { headers.add("Content-Type", contentType) }
    do {
        _ = try handler.accept(ResponseHead(status: 200, headers: headers))
        for chunk in chunks { try chunk.withUnsafeBytes { try handler.consume($0) } }
        guard let image = try handler.finish() else { return (.empty, rows) }
        return (.image(image.format, image.width, image.height, image.pixels.array, image.orientation,
                       image.frameCount, image.hasAlpha), rows)
    } catch let error as HTTPContentError {
        return (.failed(error.code), rows)
    } catch {
        fuzzFail("unexpected error type: \(error)")
    }
}

/// The format the magic bytes name (FuzzSupport's oracle, apart from the library's sniffer).
func magicFormat(_ b: [UInt8]) -> ImageInfo.Format? { magicImageFormat(b).flatMap(ImageInfo.Format.init(rawValue:)) }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var input = FuzzInput(data, size)
    let declared = declaredTypes[Int(input.byte()) % declaredTypes.count]
    let seed = input.byte()
    let bits = input.byte()
    let limitByte = input.byte()
    var options = ImageDecodeOptions()
    options.mode = [PixelMode.rgba, .rgb, .l, .rgba][Int(bits & 3)]
    options.applyOrientation = bits & 4 != 0
    // Small caps keep each run fast; 0 means 4 megapixels.
    options.maxPixels = limitByte == 0 ? 4_000_000 : Int(limitByte) * Int(limitByte) * 16
    let body = input.rest()

    let (a, rowsA) = run([body[...]], contentType: declared, options: options)
    let (b, rowsB) = run(randomChunks(body, seed: UInt64(seed) &+ UInt64(size) << 8), contentType: declared, options: options)
    fuzzCheck(a == b, "whole and chunked differ")

    switch a {
    case .image(let format, let width, let height, let pixels, let orientation, let frames, _):
        fuzzCheck(width > 0 && height > 0, "non-positive size \(width)x\(height)")
        fuzzCheck(width * height <= options.maxPixels, "\(width)x\(height) beyond \(options.maxPixels)")
        fuzzCheck(pixels.count == width * height * options.mode.channels, "pixel bytes \(pixels.count)")
        fuzzCheck(magicFormat(body) == format, "format \(format) but magic says \(String(describing: magicFormat(body)))")
        fuzzCheck((1...8).contains(orientation) && frames >= 1, "orientation \(orientation), frames \(frames)")
        fuzzCheck(rowsA == Set(0..<height) && rowsB == rowsA, "rows reported do not cover the image")
    case .empty:
        fuzzFail("empty content for a 200 GET")
    case .failed(let code):
        let nonImage = declared.flatMap(MediaType.init(parsing:)).map { $0.type != "image" } ?? true
        fuzzCheck(code == .decode || code == .tooLarge || (nonImage && code == .unacceptableContentType),
                  "unexpected failure \(code)")
    }
    return 0
}

@main struct FuzzPixelsMain {
    static func main() { runFuzzer(fuzzTest) }
}
