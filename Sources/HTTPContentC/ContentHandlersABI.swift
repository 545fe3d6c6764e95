import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

// The built-in handlers beyond discard and bytes, and the response getters for their content.

/// hc_encoding's values, in order (HC_ENCODING_AUTO: nil).
private let textEncodings: [TextEncoding?] = [nil, .utf8, .utf16LE, .utf16BE, .isoLatin1, .ascii, .windows1252]

@_cdecl("hc_handler_text_new")
public func hc_handler_text_new(_ encoding: Int32, _ strict: Int32) -> OpaquePointer? {
    guard encoding >= 0, Int(encoding) < textEncodings.count else {
        fail(.invalidArgument, "hc_handler_text_new: unknown encoding \(encoding)")
        return nil
    }
    let chosen = textEncodings[Int(encoding)]
    return retainHandle(HandlerSpec {
        Text(encoding: chosen, strict: strict != 0, maxSize: $0.limit, acceptance: $0.acceptance)
    })
}

@_cdecl("hc_text_decode")
public func hc_text_decode(_ data: UnsafePointer<UInt8>?, _ len: Int, _ contentType: UnsafePointer<CChar>?,
                           _ encoding: Int32, _ strict: Int32,
                           _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                           _ outLen: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let out, let outLen else { return nullArgument("out or out_len") }
    guard data != nil || len == 0 else { return nullArgument("data") }
    guard encoding >= 0, Int(encoding) < textEncodings.count else {
        return fail(.invalidArgument, "hc_text_decode: unknown encoding \(encoding)")
    }
    do {
        let text = try Text.decode(UnsafeRawBufferPointer(start: data, count: len),
                                   contentType: contentType.map { String(cString: $0) },
                                   encoding: textEncodings[Int(encoding)], strict: strict != 0)
        guard let copy = mallocCopy(Array(text.utf8)) else { return fail(.transport, "out of memory") }
        out.pointee = copy
        outLen.pointee = text.utf8.count
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_handler_image_new")
public func hc_handler_image_new() -> OpaquePointer? {
    retainHandle(HandlerSpec(acceptance: Image.defaultAcceptance()) {
        Image(maxSize: $0.limit, acceptance: $0.acceptance)
    })
}

public typealias WriteCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int) -> Int32

@_cdecl("hc_handler_stream_fd_new")
public func hc_handler_stream_fd_new(_ fd: Int32) -> OpaquePointer? {
    guard fd >= 0 else {
        fail(.invalidArgument, "hc_handler_stream_fd_new: invalid descriptor \(fd)")
        return nil
    }
    return retainHandle(HandlerSpec { StreamWriter(to: .fileDescriptor(fd), acceptance: $0.acceptance) })
}

@_cdecl("hc_handler_stream_file_new")
public func hc_handler_stream_file_new(_ file: UnsafeMutablePointer<FILE>?) -> OpaquePointer? {
    guard let file else {
        nullArgument("file")
        return nil
    }
    return retainHandle(HandlerSpec { StreamWriter(to: .file(file), acceptance: $0.acceptance) })
}

@_cdecl("hc_handler_stream_cb_new")
public func hc_handler_stream_cb_new(_ cb: WriteCallback?, _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    guard let cb else {
        nullArgument("cb")
        return nil
    }
    return retainHandle(HandlerSpec {
        StreamWriter(to: .callback { chunk in
            let rc = cb(userdata, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count)
            if rc != 0 { throw callbackError("stream write callback", rc) }
        }, acceptance: $0.acceptance)
    })
}

let HC_FILE_MAKE_DIRS: UInt32 = 1
let HC_FILE_NO_OVERWRITE: UInt32 = 2
let HC_FILE_RESUME: UInt32 = 4
let HC_FILE_NO_FSYNC: UInt32 = 8

/// A file handler's settings: the digest the download must have (hc_handler_file_set_digest).
final class FileSettings: HandlerSettings {
    @exclusivity(unchecked) var digest: ExpectedDigest?
}

@_cdecl("hc_handler_file_new")
public func hc_handler_file_new(_ path: UnsafePointer<CChar>?, _ flags: UInt32) -> OpaquePointer? {
    guard let path = string(path) else {
        nullArgument("path")
        return nil
    }
    guard flags & ~(HC_FILE_MAKE_DIRS | HC_FILE_NO_OVERWRITE | HC_FILE_RESUME | HC_FILE_NO_FSYNC) == 0 else {
        fail(.invalidArgument, "hc_handler_file_new: unknown flags 0x\(String(flags, radix: 16))")
        return nil
    }
    let download = FileSettings()
    return retainHandle(HandlerSpec(settings: download) { spec in
        var options = File.Options()
        options.makeDirectories = flags & HC_FILE_MAKE_DIRS != 0
        options.overwrite = flags & HC_FILE_NO_OVERWRITE == 0
        options.resume = flags & HC_FILE_RESUME != 0
        options.fsync = flags & HC_FILE_NO_FSYNC == 0
        options.maxSize = spec.limit.map(Int64.init)
        options.digest = download.digest
        return File(path: path, options: options, acceptance: spec.acceptance)
    })
}

@_cdecl("hc_handler_compound_new")
public func hc_handler_compound_new(_ handlers: UnsafePointer<OpaquePointer?>?, _ count: Int) -> OpaquePointer? {
    guard let handlers, count > 0 else {
        fail(.invalidArgument, "hc_handler_compound_new: no handlers")
        return nil
    }
    var specs: [HandlerSpec] = []
    for i in 0..<count {
        guard let spec = borrowHandle(handlers[i], as: HandlerSpec.self) else {
            fail(.invalidArgument, "hc_handler_compound_new: handler \(i) is NULL")
            return nil
        }
        specs.append(spec)
    }
    return retainHandle(HandlerSpec(acceptance: .anything) { _ in Compound(specs.map { $0.make() }) })
}

// MARK: - Content getters

/// The content as the given type, looking through a compound's choice.
func content<T>(_ box: ResponseBox, as _: T.Type) -> T? {
    let value = box.response.content
    // A type test first: a failed `as?` from Any costs as much as a small request's parsing.
    if type(of: value) == CompoundContent.self, let compound = value as? CompoundContent {
        return compound.content as? T
    }
    return value as? T
}

@_cdecl("hc_response_text")
public func hc_response_text(_ response: OpaquePointer?, _ text: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                             _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let text, let len else { return nullArgument("text or len") }
    guard let string = content(box, as: String.self) else {
        return fail(.invalidArgument, "hc_response_text: the response's handler does not make text")
    }
    // Lent from a NUL-terminated copy that lives as long as the response.
    text.pointee = box.strings.get("text") { string }
    len.pointee = string.utf8.count
    return HC_OK
}

@_cdecl("hc_response_image")
public func hc_response_image(_ response: OpaquePointer?, _ format: UnsafeMutablePointer<Int32>?,
                              _ width: UnsafeMutablePointer<Int64>?, _ height: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let found = content(box, as: ImageInfo?.self) else {
        return fail(.invalidArgument, "hc_response_image: the response's handler does not inspect images")
    }
    let formats: [ImageInfo.Format] = [.png, .jpeg, .gif, .webp, .bmp]
    format?.pointee = found.map { Int32((formats.firstIndex(of: $0.format) ?? -1) + 1) } ?? 0
    width?.pointee = Int64(found?.width ?? 0)
    height?.pointee = Int64(found?.height ?? 0)
    return HC_OK
}

@_cdecl("hc_response_file")
public func hc_response_file(_ response: OpaquePointer?, _ path: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                             _ written: UnsafeMutablePointer<Int64>?, _ size: UnsafeMutablePointer<Int64>?,
                             _ resumed: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let download = content(box, as: FileDownload.self) else {
        return fail(.invalidArgument, "hc_response_file: the response's handler does not download to a file")
    }
    path?.pointee = box.strings.get("file") { download.path }
    written?.pointee = download.bytesWritten
    size?.pointee = download.size
    resumed?.pointee = download.resumed ? 1 : 0
    return HC_OK
}

@_cdecl("hc_response_streamed")
public func hc_response_streamed(_ response: OpaquePointer?) -> Int64 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return -1 }
    return content(box, as: Int64.self) ?? -1
}

@_cdecl("hc_response_handler_index")
public func hc_response_handler_index(_ response: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self),
          let compound = box.response.content as? CompoundContent else { return -1 }
    return Int32(compound.index)
}

/// The error a C callback's non-zero return stands for: its hc_code when it is one, else
/// HC_ECALLBACK.
func callbackError(_ what: String, _ rc: Int32) -> HTTPContentError {
    let code = HTTPContentError.Code(rawValue: rc) ?? .callback
    return HTTPContentError(code, "the \(what) returned \(rc) (\(code.name))")
}
