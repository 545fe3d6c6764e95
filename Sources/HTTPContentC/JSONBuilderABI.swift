import HTTPContent

/// An `hc_json_builder`: a `JSONBuilder` the C caller feeds value by value.
final class JSONBuilderBox {
    var builder = JSONBuilder()
}

@_cdecl("hc_json_builder_new")
public func hc_json_builder_new() -> OpaquePointer? {
    retainHandle(JSONBuilderBox())
}

@_cdecl("hc_json_builder_free")
public func hc_json_builder_free(_ builder: OpaquePointer?) {
    releaseHandle(builder, as: JSONBuilderBox.self)
}

/// One builder step with the NULL guard, errors turned into codes.
private func step(_ builder: OpaquePointer?, _ function: String = #function,
                  _ body: (inout JSONBuilder) throws(HTTPContentError) -> Void) -> Int32 {
    guard let box = borrowHandle(builder, as: JSONBuilderBox.self) else { return nullArgument("builder", in: function) }
    do {
        try body(&box.builder)
    } catch {
        return fail(error)
    }
    return HC_OK
}

/// `len` bytes of UTF-8 from C (NUL allowed inside), or an error naming what is wrong.
private func utf8(_ data: UnsafePointer<CChar>?, _ len: Int, _ what: String) throws(HTTPContentError) -> String {
    guard len >= 0, len <= Int.max / 2 else { throw HTTPContentError(.invalidArgument, "\(what): bad length") }
    guard len == 0 || data != nil else { throw HTTPContentError(.invalidArgument, "\(what) is NULL") }
    guard len > 0, let data else { return "" }
    let bytes = UnsafeRawBufferPointer(start: data, count: len)
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw HTTPContentError(.invalidArgument, "\(what) is not valid UTF-8")
    }
    return text
}

@_cdecl("hc_json_builder_null")
public func hc_json_builder_null(_ builder: OpaquePointer?) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.null() }
}

@_cdecl("hc_json_builder_bool")
public func hc_json_builder_bool(_ builder: OpaquePointer?, _ value: Int32) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.bool(value != 0) }
}

@_cdecl("hc_json_builder_int64")
public func hc_json_builder_int64(_ builder: OpaquePointer?, _ value: Int64) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.int(value) }
}

@_cdecl("hc_json_builder_double")
public func hc_json_builder_double(_ builder: OpaquePointer?, _ value: Double) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.double(value) }
}

@_cdecl("hc_json_builder_number_text")
public func hc_json_builder_number_text(_ builder: OpaquePointer?, _ text: UnsafePointer<CChar>?) -> Int32 {
    guard let text = string(text) else { return nullArgument("text") }
    return step(builder) { b throws(HTTPContentError) in try b.number(text: text) }
}

@_cdecl("hc_json_builder_string")
public func hc_json_builder_string(_ builder: OpaquePointer?, _ data: UnsafePointer<CChar>?, _ len: Int) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.string(utf8(data, len, "string")) }
}

@_cdecl("hc_json_builder_key")
public func hc_json_builder_key(_ builder: OpaquePointer?, _ data: UnsafePointer<CChar>?, _ len: Int) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.key(utf8(data, len, "key")) }
}

@_cdecl("hc_json_builder_begin_array")
public func hc_json_builder_begin_array(_ builder: OpaquePointer?) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.beginArray() }
}

@_cdecl("hc_json_builder_end_array")
public func hc_json_builder_end_array(_ builder: OpaquePointer?) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.endArray() }
}

@_cdecl("hc_json_builder_begin_object")
public func hc_json_builder_begin_object(_ builder: OpaquePointer?) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.beginObject() }
}

@_cdecl("hc_json_builder_end_object")
public func hc_json_builder_end_object(_ builder: OpaquePointer?) -> Int32 {
    step(builder) { b throws(HTTPContentError) in try b.endObject() }
}

@_cdecl("hc_json_builder_finish")
public func hc_json_builder_finish(_ builder: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("out") }
    out.pointee = nil
    var value: JSONValue = .null
    let rc = step(builder) { b throws(HTTPContentError) in value = try b.finish() }
    if rc == HC_OK { out.pointee = retainHandle(JSONNode(value, ownedByCaller: true)) }
    return rc
}
