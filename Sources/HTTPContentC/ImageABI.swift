import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

// Decoded images: hc_image_options, hc_handler_image_decode_new and the hc_response_image_*
// getters. Translates to ImagePixels; decides nothing of its own.

/// An `hc_image_options`: copied into each handler made from it.
final class ImageOptionsBox {
    var options = ImageDecodeOptions()
    var rows: ImageRowsCallback?
    var rowsUserdata: UnsafeMutableRawPointer?
    var allocate: AllocCallback?
    var release: ReleaseCallback?
    var allocUserdata: UnsafeMutableRawPointer?
}

public typealias ImageRowsCallback = @convention(c) (UnsafeMutableRawPointer?, UInt32, UInt32) -> Int32

/// The `hc_image_option` values.
private enum ImageOption: Int32 {
    case mode = 1, maxPixels, applyOrientation, keepEncoded
}

/// The `hc_image_mode` values.
private let modes: [Int32: PixelMode] = [4: .rgba, 3: .rgb, 1: .l]

@_cdecl("hc_image_options_new")
public func hc_image_options_new() -> OpaquePointer? {
    retainHandle(ImageOptionsBox())
}

@_cdecl("hc_image_options_free")
public func hc_image_options_free(_ opts: OpaquePointer?) {
    releaseHandle(opts, as: ImageOptionsBox.self)
}

@_cdecl("hc_image_options_set")
public func hc_image_options_set(_ opts: OpaquePointer?, _ option: Int32, _ value: Int64) -> Int32 {
    setOption(opts, option, value, "hc_image_options_set", checkRange: false) { (box: ImageOptionsBox, which: ImageOption) -> Int32 in
        switch which {
        case .mode:
            guard let mode = Int32(exactly: value).flatMap({ modes[$0] }) else {
                return fail(.invalidArgument, "hc_image_options_set: \(value) is not an hc_image_mode (1, 3 or 4)")
            }
            box.options.mode = mode
        case .maxPixels:
            guard value >= 1 else { return fail(.invalidArgument, "hc_image_options_set: the pixel cap must be at least 1") }
            box.options.maxPixels = Int(value)
        case .applyOrientation: box.options.applyOrientation = value != 0
        case .keepEncoded: box.options.keepEncoded = value != 0
        }
        return HC_OK
    }
}

@_cdecl("hc_image_options_get")
public func hc_image_options_get(_ opts: OpaquePointer?, _ option: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    getOption(opts, option, out, "hc_image_options_get") { (box: ImageOptionsBox, which: ImageOption) -> Int64 in
        switch which {
        case .mode: return Int64(box.options.mode.channels)
        case .maxPixels: return Int64(box.options.maxPixels)
        case .applyOrientation: return box.options.applyOrientation ? 1 : 0
        case .keepEncoded: return box.options.keepEncoded ? 1 : 0
        }
    }
}

@_cdecl("hc_image_options_set_rows_cb")
public func hc_image_options_set_rows_cb(_ opts: OpaquePointer?, _ cb: ImageRowsCallback?,
                                         _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = borrowHandle(opts, as: ImageOptionsBox.self) else { return nullArgument("opts") }
    box.rows = cb
    box.rowsUserdata = userdata
    return HC_OK
}

@_cdecl("hc_image_options_set_allocator")
public func hc_image_options_set_allocator(_ opts: OpaquePointer?, _ allocate: AllocCallback?,
                                           _ release: ReleaseCallback?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = borrowHandle(opts, as: ImageOptionsBox.self) else { return nullArgument("opts") }
    box.allocate = allocate
    box.release = release
    box.allocUserdata = userdata
    return HC_OK
}

@_cdecl("hc_handler_image_decode_new")
public func hc_handler_image_decode_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    let o = borrowHandle(opts, as: ImageOptionsBox.self) ?? ImageOptionsBox()
    let options = o.options
    let rows = o.rows, rowsUserdata = o.rowsUserdata
    let allocate = o.allocate, release = o.release, allocUserdata = o.allocUserdata
    let spec = HandlerSpec(acceptance: Image.defaultAcceptance()) { spec in
        let onRows: ((Int, Int) throws -> Void)? = rows.map { cb in
            { first, count in
                let rc = cb(rowsUserdata, UInt32(first), UInt32(count))
                if rc != 0 { throw callbackError("image rows callback", rc) }
            }
        }
        let handler = ImagePixels(options: options, maxSize: spec.limit, acceptance: spec.acceptance, onRows: onRows)
        if let allocate {
            handler.storage = { size in
                guard let memory = allocate(allocUserdata, size) else { return nil }
                return (memory, { release?(allocUserdata, memory) })
            }
        }
        return handler
    }
    return retainHandle(spec)
}

// MARK: - Content getters

private func decoded(_ response: OpaquePointer?, _ function: String) -> (DecodedImage?, Int32) {
    guard let box = borrowHandle(response, as: ResponseBox.self) else {
        return (nil, fail(.invalidArgument, "\(function): response is NULL"))
    }
    guard let found = content(box, as: DecodedImage?.self) else {
        return (nil, fail(.invalidArgument, "\(function): the response's handler does not decode images"))
    }
    return (found, HC_OK)
}

/// The `hc_image_attr` values.
private enum ImageAttribute: Int32 {
    case format = 1, width, height, channels, stride, hasAlpha, orientation, frameCount
}

@_cdecl("hc_response_image_attr")
public func hc_response_image_attr(_ response: OpaquePointer?, _ attr: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    let (image, rc) = decoded(response, "hc_response_image_attr")
    guard rc == HC_OK else { return rc }
    guard let out else { return nullArgument("value") }
    guard let which = ImageAttribute(rawValue: attr) else {
        return fail(.invalidArgument, "hc_response_image_attr: unknown attribute \(attr)")
    }
    guard let image else {   // an allowed empty response: no image
        out.pointee = 0
        return HC_OK
    }
    let formats: [ImageInfo.Format] = [.png, .jpeg, .gif, .webp, .bmp]
    switch which {
    case .format: out.pointee = Int64((formats.firstIndex(of: image.format) ?? -1) + 1)
    case .width: out.pointee = Int64(image.width)
    case .height: out.pointee = Int64(image.height)
    case .channels: out.pointee = Int64(image.channels)
    case .stride: out.pointee = Int64(image.stride)
    case .hasAlpha: out.pointee = image.hasAlpha ? 1 : 0
    case .orientation: out.pointee = Int64(image.orientation)
    case .frameCount: out.pointee = Int64(image.frameCount)
    }
    return HC_OK
}

@_cdecl("hc_response_image_pixels")
public func hc_response_image_pixels(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                     _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    let (image, rc) = decoded(response, "hc_response_image_pixels")
    guard rc == HC_OK else { return rc }
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = image.map { UnsafePointer($0.pixels.baseAddress) }
    len.pointee = image?.pixels.count ?? 0
    return HC_OK
}

@_cdecl("hc_response_image_encoded")
public func hc_response_image_encoded(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                      _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    let (image, rc) = decoded(response, "hc_response_image_encoded")
    guard rc == HC_OK else { return rc }
    guard let data, let len else { return nullArgument("data or len") }
    guard let image, let encoded = image.encoded else {
        data.pointee = nil
        len.pointee = 0
        return image == nil ? HC_OK : fail(.invalidArgument, "hc_response_image_encoded: the body was not kept (HC_IMAGE_KEEP_ENCODED)")
    }
    data.pointee = encoded.baseAddress.map { UnsafePointer($0) }
    len.pointee = encoded.count
    return HC_OK
}

@_cdecl("hc_image_encode_png")
public func hc_image_encode_png(_ pixels: UnsafePointer<UInt8>?, _ width: UInt32, _ height: UInt32, _ channels: Int32,
                                _ stride: Int, _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                                _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let pixels else { return nullArgument("pixels") }
    guard let out, let len else { return nullArgument("out or len") }
    do {
        let png = try PNGEncoder.encode(pixels, width: Int(width), height: Int(height), channels: Int(channels),
                                        stride: stride)
        guard let buf = malloc(max(png.count, 1))?.assumingMemoryBound(to: UInt8.self) else {
            return fail(.tooLarge, "hc_image_encode_png: out of memory")
        }
        png.withUnsafeBufferPointer { buf.update(from: $0.baseAddress!, count: png.count) }
        out.pointee = buf
        len.pointee = png.count
        return HC_OK
    } catch {
        return fail(error)
    }
}
