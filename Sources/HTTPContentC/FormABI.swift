import HTTPContent

/// An `hc_form`: pairs being built, and the options they are encoded with.
final class FormBox {
    var builder = FormBuilder()
    var encoder = FormEncoder()

    /// The pairs, encoded with the form's options.
    func encode() throws(HTTPContentError) -> [UInt8] {
        encoder.encode(try builder.pairs())
    }
}

/// Bytes from a pointer and length; nil (with the error recorded) for NULL with a non-zero length.
func bytes(_ p: UnsafePointer<UInt8>?, _ len: Int, _ name: String, in function: String = #function) -> [UInt8]? {
    if len == 0 { return [] }
    guard len > 0 else {  // a size_t above Int.max: a caller's bug, refused rather than trapped on
        fail(.invalidArgument, "\(function.prefix { $0 != "(" }): \(name) length \(UInt(bitPattern: len)) is too large")
        return nil
    }
    guard let p else {
        nullArgument(name, in: function)
        return nil
    }
    return Array(UnsafeBufferPointer(start: p, count: len))
}

@_cdecl("hc_form_new")
public func hc_form_new() -> OpaquePointer? {
    retainHandle(FormBox())
}

@_cdecl("hc_form_free")
public func hc_form_free(_ form: OpaquePointer?) {
    releaseHandle(form, as: FormBox.self)
}

/// Adds `value` under `key` (a C string, or NULL inside an array) to the form's open container.
private func add(_ form: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: FormValue,
                 _ function: String = #function) -> Int32 {
    guard let box = borrowHandle(form, as: FormBox.self) else { return nullArgument("form", in: function) }
    do {
        try box.builder.add(key: string(key).map { Array($0.utf8) }, value)
    } catch {
        return fail(error)
    }
    return HC_OK
}

@_cdecl("hc_form_add")
public func hc_form_add(_ form: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?) -> Int32 {
    guard let value = string(value) else { return nullArgument("value") }
    return add(form, key, .string(value))
}

@_cdecl("hc_form_add_bytes")
public func hc_form_add_bytes(_ form: OpaquePointer?, _ key: UnsafePointer<UInt8>?, _ keyLen: Int,
                              _ value: UnsafePointer<UInt8>?, _ valueLen: Int) -> Int32 {
    guard let box = borrowHandle(form, as: FormBox.self) else { return nullArgument("form") }
    guard let valueBytes = bytes(value, valueLen, "value") else { return HTTPContentError.Code.invalidArgument.rawValue }
    // NULL key: a value inside an array.
    let keyBytes: [UInt8]?
    if key == nil && keyLen == 0 {
        keyBytes = nil
    } else {
        guard let k = bytes(key, keyLen, "key") else { return HTTPContentError.Code.invalidArgument.rawValue }
        keyBytes = k
    }
    do {
        try box.builder.add(key: keyBytes, .bytes(valueBytes))
    } catch {
        return fail(error)
    }
    return HC_OK
}

@_cdecl("hc_form_add_bool")
public func hc_form_add_bool(_ form: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: Int32) -> Int32 {
    add(form, key, .bool(value != 0))
}

@_cdecl("hc_form_add_null")
public func hc_form_add_null(_ form: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> Int32 {
    add(form, key, .null)
}

@_cdecl("hc_form_open_array")
public func hc_form_open_array(_ form: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(form, as: FormBox.self) else { return nullArgument("form") }
    do { try box.builder.openArray(key: string(key).map { Array($0.utf8) }) } catch { return fail(error) }
    return HC_OK
}

@_cdecl("hc_form_open_dict")
public func hc_form_open_dict(_ form: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(form, as: FormBox.self) else { return nullArgument("form") }
    do { try box.builder.openDictionary(key: string(key).map { Array($0.utf8) }) } catch { return fail(error) }
    return HC_OK
}

@_cdecl("hc_form_close")
public func hc_form_close(_ form: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(form, as: FormBox.self) else { return nullArgument("form") }
    do { try box.builder.close() } catch { return fail(error) }
    return HC_OK
}

// MARK: - Options (values as in the header's enums)

/// Applies an option given as a C enum value, refusing values out of range.
private func setOption<T>(_ form: OpaquePointer?, _ raw: Int32, _ cases: [T], _ function: String = #function,
                          _ apply: (inout FormEncoder, T) -> Void) -> Int32 {
    guard let box = borrowHandle(form, as: FormBox.self) else { return nullArgument("form", in: function) }
    guard raw >= 0, Int(raw) < cases.count else {
        return fail(.invalidArgument, "\(function.prefix { $0 != "(" }): \(raw) is not one of the header's values")
    }
    apply(&box.encoder, cases[Int(raw)])
    return HC_OK
}

@_cdecl("hc_form_set_space_encoding")
public func hc_form_set_space_encoding(_ form: OpaquePointer?, _ value: Int32) -> Int32 {
    setOption(form, value, [.percentEscaped, .plusReplaced] as [FormEncoder.SpaceEncoding]) { $0.spaceEncoding = $1 }
}

@_cdecl("hc_form_default_array_encoding")
public func hc_form_default_array_encoding() -> Int32 {
    let all: [FormEncoder.ArrayEncoding] = [.brackets, .repeat, .indexed]
    return Int32(all.firstIndex(of: FormEncoder().arrayEncoding) ?? 0)
}

@_cdecl("hc_form_set_array_encoding")
public func hc_form_set_array_encoding(_ form: OpaquePointer?, _ value: Int32) -> Int32 {
    setOption(form, value, [.brackets, .repeat, .indexed] as [FormEncoder.ArrayEncoding]) { $0.arrayEncoding = $1 }
}

@_cdecl("hc_form_set_bool_encoding")
public func hc_form_set_bool_encoding(_ form: OpaquePointer?, _ value: Int32) -> Int32 {
    setOption(form, value, [.numeric, .literal] as [FormEncoder.BoolEncoding]) { $0.boolEncoding = $1 }
}

@_cdecl("hc_form_set_null_encoding")
public func hc_form_set_null_encoding(_ form: OpaquePointer?, _ value: Int32) -> Int32 {
    setOption(form, value, [.dropped, .empty] as [FormEncoder.NullEncoding]) { $0.nullEncoding = $1 }
}

@_cdecl("hc_form_set_sort")
public func hc_form_set_sort(_ form: OpaquePointer?, _ sort: Int32) -> Int32 {
    setOption(form, sort != 0 ? 1 : 0, [false, true]) { $0.sortedKeys = $1 }
}

@_cdecl("hc_form_encode")
public func hc_form_encode(_ form: OpaquePointer?, _ buf: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                           _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let buf, let len else { return nullArgument("buf or len") }
    buf.pointee = nil
    len.pointee = 0
    guard let box = borrowHandle(form, as: FormBox.self) else { return nullArgument("form") }
    do {
        let encoded = try box.encode()
        guard let copy = mallocCopy(encoded) else { return fail(.invalidArgument, "hc_form_encode: out of memory") }
        buf.pointee = copy
        len.pointee = encoded.count
        return HC_OK
    } catch {
        return fail(error)
    }
}
