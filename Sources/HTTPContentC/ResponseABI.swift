import HTTPContent

/// An `hc_response`: the Swift response plus the C strings and buffers lent out from it.
final class ResponseBox {
    let response: Response<Any>
    /// The body of a bytes handler, known without casting the content.
    let body: ByteBuffer?
    /// The status, read once (reading it through the generic Response copies the response).
    let status: Int32
    lazy var strings = CStringCache()
    lazy var rawHeaders: ByteBuffer = {
        let buffer = ByteBuffer()
        for field in response.headers {
            var line = "\(field.name): \(field.value)\r\n"
            line.withUTF8 { buffer.append(UnsafeRawBufferPointer($0)) }
        }
        return buffer
    }()

    /// The header fields as Strings, made on first use (a response's headers are kept as bytes).
    lazy var fields: [HeaderField] = response.headers.fields
    /// The links of the Link fields, parsed on first use.
    lazy var links: [Link] = response.headers.links

    init(_ response: consuming Response<Any>, body: ByteBuffer? = nil) {
        // Moved in first, then read: reading the consumed value first would copy it.
        self.response = response
        status = Int32(truncatingIfNeeded: self.response.head.status)
        self.body = body
    }
}

@_cdecl("hc_response_free")
public func hc_response_free(_ response: OpaquePointer?) {
    releaseHandle(response, as: ResponseBox.self)
}

@_cdecl("hc_response_free_many")
public func hc_response_free_many(_ responses: UnsafePointer<OpaquePointer?>?, _ count: Int) {
    guard let responses, count > 0 else { return }
    for i in 0..<count { releaseHandle(responses[i], as: ResponseBox.self) }
}

@_cdecl("hc_response_status")
public func hc_response_status(_ response: OpaquePointer?) -> Int32 {
    borrowHandle(response, as: ResponseBox.self)?.status ?? 0
}

@_cdecl("hc_response_url")
public func hc_response_url(_ response: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    return box.strings.get("url") { box.response.url }
}

@_cdecl("hc_response_reason")
public func hc_response_reason(_ response: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    return box.strings.get("reason") { box.response.head.reason }
}

@_cdecl("hc_response_http_version")
public func hc_response_http_version(_ response: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    return box.strings.get("httpversion") { box.response.head.httpVersion }
}

@_cdecl("hc_response_header")
public func hc_response_header(_ response: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    guard let name = string(name) else { nullArgument("name"); return nil }
    return box.strings.get("header:" + name.lowercased()) { box.response.headers[name] }
}

@_cdecl("hc_response_header_count")
public func hc_response_header_count(_ response: OpaquePointer?) -> Int {
    borrowHandle(response, as: ResponseBox.self)?.response.headers.count ?? 0
}

@_cdecl("hc_response_header_at")
public func hc_response_header_at(_ response: OpaquePointer?, _ index: Int,
                                  _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                  _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    return lendField(box.fields, index, box.strings, name, value, "hc_response_header_at")
}

/// Lends header field `index` of `fields` as two C strings kept in `strings` (so they live as
/// long as the handle): hc_response_header_at and hc_error_header_at.
func lendField(_ fields: [HeaderField], _ index: Int, _ strings: CStringCache,
               _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
               _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ function: String) -> Int32 {
    guard let name, let value else { return nullArgument("name or value", in: function) }
    guard index >= 0, index < fields.count else {
        return fail(.invalidArgument, "\(function): index \(index) out of range (\(fields.count) fields)")
    }
    name.pointee = strings.get("name#\(index)") { fields[index].name }
    value.pointee = strings.get("value#\(index)") { fields[index].value }
    return HC_OK
}

@_cdecl("hc_response_headers_raw")
public func hc_response_headers_raw(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                    _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = UnsafePointer(box.rawHeaders.baseAddress)
    len.pointee = box.rawHeaders.count
    return HC_OK
}

@_cdecl("hc_response_media_type")
public func hc_response_media_type(_ response: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    return box.strings.get("mediatype") { box.response.contentType?.essence }
}

@_cdecl("hc_response_charset")
public func hc_response_charset(_ response: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    return box.strings.get("charset") { box.response.contentType?.charset }
}

@_cdecl("hc_response_bytes")
public func hc_response_bytes(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                              _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let data, let len else { return nullArgument("data or len") }
    guard let bytes = box.body ?? content(box, as: ByteBuffer.self) ?? content(box, as: ImageInfo?.self)??.data else {
        return fail(.invalidArgument, "hc_response_bytes: the response's handler does not keep bytes")
    }
    data.pointee = UnsafePointer(bytes.baseAddress)
    len.pointee = bytes.count
    return HC_OK
}

@_cdecl("hc_response_metrics")
public func hc_response_metrics(_ response: OpaquePointer?, _ wire: UnsafeMutablePointer<Int64>?,
                                _ decoded: UnsafeMutablePointer<Int64>?,
                                _ seconds: UnsafeMutablePointer<Double>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    let m = box.response.metrics
    wire?.pointee = m.wireBytes
    decoded?.pointee = m.decodedBytes
    seconds?.pointee = m.totalTime
    return HC_OK
}

@_cdecl("hc_response_check_status")
public func hc_response_check_status(_ response: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    let kept = box.body ?? content(box, as: ByteBuffer.self)
    let cap = ClientConfiguration().rejectedBodyLimit
    let body = kept.map { Array(UnsafeRawBufferPointer(start: $0.baseAddress, count: min($0.count, cap))) } ?? []
    do {
        try box.response.checkStatus(body: body)
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_response_link_count")
public func hc_response_link_count(_ response: OpaquePointer?) -> Int {
    borrowHandle(response, as: ResponseBox.self)?.links.count ?? 0
}

@_cdecl("hc_response_link_at")
public func hc_response_link_at(_ response: OpaquePointer?, _ index: Int,
                                _ url: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                _ paramCount: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let url else { return nullArgument("url") }
    let links = box.links
    guard index >= 0, index < links.count else {
        return fail(.invalidArgument, "hc_response_link_at: index \(index) out of range (\(links.count) links)")
    }
    url.pointee = box.strings.get("link#\(index)") { links[index].url }
    paramCount?.pointee = links[index].params.count
    return HC_OK
}

@_cdecl("hc_response_link_param_at")
public func hc_response_link_param_at(_ response: OpaquePointer?, _ index: Int, _ param: Int,
                                      _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                      _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let name, let value else { return nullArgument("name or value") }
    let links = box.links
    guard index >= 0, index < links.count, param >= 0, param < links[index].params.count else {
        return fail(.invalidArgument, "hc_response_link_param_at: no parameter \(param) of link \(index)")
    }
    let field = links[index].params[param]
    name.pointee = box.strings.get("link#\(index)name#\(param)") { field.name }
    value.pointee = box.strings.get("link#\(index)value#\(param)") { field.value }
    return HC_OK
}
