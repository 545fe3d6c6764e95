// Fuzz target: the Image handler (format sniffing and header dimensions), through the public
// Accumulator API: accept a head, consume the body in random chunks, finish.
//
// Input: [declared] [seed] [pixel limit] body...
//   declared picks the Content-Type (none, image/png, image/jpeg, ..., application/octet-stream).
// Checks: whole and chunked give the same outcome; success means positive dimensions within the
// pixel limit, a format matching the magic bytes, the body kept intact, and a declared image
// type that agrees; every failure is `.decode` (or `.unacceptableContentType` for a non-image).
import FuzzSupport
import HTTPContent

let declaredTypes: [String?] = [nil, "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp",
                                "image/x-ms-bmp", "image/jpg", "image/svg+xml", "IMAGE/PNG; q=1",
                                "application/octet-stream", "image/*"]

enum Outcome: Equatable {
    case image(ImageInfo.Format, Int, Int, [UInt8])
    case empty
    case failed(HTTPContentError.Code, Int?)
}

func run(_ chunks: [ArraySlice<UInt8>], contentType: String?, maxPixels: Int) -> Outcome {
    let handler = Image(maxPixels: maxPixels)
    var headers = Headers()
    if let contentType { headers.add("Content-Type", contentType) }
    do {
        _ = try handler.accept(ResponseHead(status: 200, headers: headers))
        for chunk in chunks { try chunk.withUnsafeBytes { try handler.consume($0) } }
        guard let info = try handler.finish() else { return .empty }
        return .image(info.format, info.width, info.height, info.data.array)
    } catch let error as HTTPContentError {
        return .failed(error.code, error.offset)
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
    let limitByte = input.byte()
    let maxPixels = limitByte == 0 ? 100_000_000 : Int(limitByte) * Int(limitByte) * 64
    let body = input.rest()

    let a = run([body[...]], contentType: declared, maxPixels: maxPixels)
    let b = run(randomChunks(body, seed: UInt64(seed) &+ UInt64(size) << 8), contentType: declared, maxPixels: maxPixels)
    fuzzCheck(a == b, "whole \(a) != chunked \(b)")

    switch a {
    case .image(let format, let width, let height, let kept):
        fuzzCheck(width > 0 && height > 0, "non-positive size \(width)x\(height)")
        fuzzCheck(width * height <= maxPixels, "\(width)x\(height) beyond \(maxPixels)")
        fuzzCheck(magicFormat(body) == format, "format \(format) but magic says \(String(describing: magicFormat(body)))")
        fuzzCheck(kept == body, "body not kept intact")
        if let declared, let media = MediaType(parsing: declared), media.type == "image", media.subtype != "*" {
            let sub = media.subtype
            let agrees = ["jpeg", "jpg", "pjpeg"].contains(sub) ? format == .jpeg
                : ["bmp", "x-bmp", "x-ms-bmp"].contains(sub) ? format == .bmp : sub == format.rawValue
            fuzzCheck(agrees, "declared \(declared) accepted for \(format)")
        }
    case .empty:
        fuzzFail("empty content for a 200 GET")
    case .failed(let code, let offset):
        let nonImage = declared.flatMap(MediaType.init(parsing:)).map { $0.type != "image" } ?? true
        fuzzCheck(code == .decode || (nonImage && code == .unacceptableContentType), "unexpected failure \(code)")
        if let offset { fuzzCheck(offset >= 0 && offset <= body.count, "offset \(offset) outside \(body.count)") }
    }
    return 0
}

@main struct FuzzImageMain {
    static func main() { runFuzzer(fuzzTest) }
}
