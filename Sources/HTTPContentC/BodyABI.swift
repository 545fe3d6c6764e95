import HTTPContent

public typealias ReadCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int,
                                                UnsafeMutablePointer<Int>?) -> Int32

/// The C caller's read function and its userdata, which the caller keeps valid while sends run.
private struct CReader: @unchecked Sendable {
    let callback: ReadCallback
    let userdata: UnsafeMutableRawPointer?

    func read(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var written = 0
        let rc = callback(userdata, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count, &written)
        guard rc == 0 else {
            throw HTTPContentError(.callback, "the read callback returned \(rc): upload aborted")
        }
        return written
    }
}

/// Sets a request's body, with the NULL guard every setter needs.
private func setBody(_ request: OpaquePointer?, _ function: String = #function,
                     _ make: () throws(HTTPContentError) -> RequestBody) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request", in: function) }
    do {
        box.request.body = try make()
    } catch {
        return fail(error)
    }
    return HC_OK
}

/// -1 means "unknown"; other negative lengths are refused.
private func length(_ value: Int64, _ function: String = #function) -> Int64?? {
    if value == -1 { return .some(nil) }
    guard value >= 0 else {
        fail(.invalidArgument, "\(function.prefix { $0 != "(" }): length \(value) is neither -1 nor a size")
        return nil
    }
    return .some(value)
}

@_cdecl("hc_request_set_form_body")
public func hc_request_set_form_body(_ request: OpaquePointer?, _ form: OpaquePointer?) -> Int32 {
    guard let formBox = borrowHandle(form, as: FormBox.self) else { return nullArgument("form") }
    return setBody(request) { () throws(HTTPContentError) in
        .form(try formBox.builder.pairs(), encoder: formBox.encoder)
    }
}

@_cdecl("hc_request_add_query")
public func hc_request_add_query(_ request: OpaquePointer?, _ form: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let formBox = borrowHandle(form, as: FormBox.self) else { return nullArgument("form") }
    do {
        box.request.addQuery(try formBox.builder.pairs(), encoder: formBox.encoder)
    } catch {
        return fail(error)
    }
    return HC_OK
}

@_cdecl("hc_request_set_text_body")
public func hc_request_set_text_body(_ request: OpaquePointer?, _ text: UnsafePointer<CChar>?,
                                     _ charset: UnsafePointer<CChar>?) -> Int32 {
    guard let text = string(text) else { return nullArgument("text") }
    let name = string(charset) ?? "utf-8"
    guard let cs = TextCharset(name: name) else {
        return fail(.invalidArgument, "hc_request_set_text_body: unknown charset \"\(name)\"")
    }
    return setBody(request) { () throws(HTTPContentError) in try .text(text, charset: cs) }
}

@_cdecl("hc_request_set_json_body")
public func hc_request_set_json_body(_ request: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int) -> Int32 {
    guard let json = bytes(data, len, "data") else { return HTTPContentError.Code.invalidArgument.rawValue }
    return setBody(request) { .json(json) }
}

@_cdecl("hc_request_set_file_body")
public func hc_request_set_file_body(_ request: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                                     _ contentType: UnsafePointer<CChar>?) -> Int32 {
    guard let path = string(path) else { return nullArgument("path") }
    let type = string(contentType)
    return setBody(request) { .file(at: path, contentType: type) }
}

@_cdecl("hc_request_set_fd_body")
public func hc_request_set_fd_body(_ request: OpaquePointer?, _ fd: Int32, _ len: Int64,
                                   _ contentType: UnsafePointer<CChar>?) -> Int32 {
    guard fd >= 0 else { return fail(.invalidArgument, "hc_request_set_fd_body: invalid descriptor \(fd)") }
    guard let size = length(len) else { return HTTPContentError.Code.invalidArgument.rawValue }
    let type = string(contentType)
    return setBody(request) { .fileDescriptor(fd, length: size, contentType: type) }
}

@_cdecl("hc_request_set_read_body")
public func hc_request_set_read_body(_ request: OpaquePointer?, _ callback: ReadCallback?,
                                     _ userdata: UnsafeMutableRawPointer?, _ len: Int64,
                                     _ contentType: UnsafePointer<CChar>?) -> Int32 {
    guard let callback else { return nullArgument("callback") }
    guard let size = length(len) else { return HTTPContentError.Code.invalidArgument.rawValue }
    let reader = CReader(callback: callback, userdata: userdata)
    let type = string(contentType)
    return setBody(request) { .reader(length: size, contentType: type, reader.read) }
}

// MARK: - Multipart

/// An `hc_multipart`: parts being built.
final class MultipartBox {
    var multipart = Multipart()
}

@_cdecl("hc_multipart_new")
public func hc_multipart_new() -> OpaquePointer? {
    retainHandle(MultipartBox())
}

@_cdecl("hc_multipart_free")
public func hc_multipart_free(_ mp: OpaquePointer?) {
    releaseHandle(mp, as: MultipartBox.self)
}

/// Edits the parts, with the NULL guard every adder needs.
private func addPart(_ mp: OpaquePointer?, _ function: String = #function,
                     _ change: (inout Multipart) throws(HTTPContentError) -> Void) -> Int32 {
    guard let box = borrowHandle(mp, as: MultipartBox.self) else { return nullArgument("multipart", in: function) }
    do {
        try change(&box.multipart)
    } catch {
        return fail(error)
    }
    return HC_OK
}

@_cdecl("hc_multipart_add_field")
public func hc_multipart_add_field(_ mp: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                                   _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let name = string(name), let value = string(value) else { return nullArgument("name or value") }
    return addPart(mp) { (m: inout Multipart) throws(HTTPContentError) in try m.addField(name, value) }
}

@_cdecl("hc_multipart_add_file")
public func hc_multipart_add_file(_ mp: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                                  _ filename: UnsafePointer<CChar>?, _ contentType: UnsafePointer<CChar>?) -> Int32 {
    guard let name = string(name), let path = string(path) else { return nullArgument("name or path") }
    let (file, type) = (string(filename), string(contentType))
    return addPart(mp) { (m: inout Multipart) throws(HTTPContentError) in
        try m.addFile(name, path: path, filename: file, contentType: type)
    }
}

@_cdecl("hc_multipart_add_bytes")
public func hc_multipart_add_bytes(_ mp: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ data: UnsafePointer<UInt8>?,
                                   _ len: Int, _ filename: UnsafePointer<CChar>?,
                                   _ contentType: UnsafePointer<CChar>?) -> Int32 {
    guard let name = string(name) else { return nullArgument("name") }
    guard let content = bytes(data, len, "data") else { return HTTPContentError.Code.invalidArgument.rawValue }
    let (file, type) = (string(filename), string(contentType))
    return addPart(mp) { (m: inout Multipart) throws(HTTPContentError) in
        try m.addBytes(name, content, filename: file, contentType: type)
    }
}

@_cdecl("hc_request_set_multipart")
public func hc_request_set_multipart(_ request: OpaquePointer?, _ mp: OpaquePointer?) -> Int32 {
    guard let parts = borrowHandle(mp, as: MultipartBox.self) else { return nullArgument("multipart") }
    return setBody(request) { .multipart(parts.multipart) }
}
