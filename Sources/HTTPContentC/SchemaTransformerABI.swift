import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Transformers of the caller's own, from C

public typealias SchemaDecodeCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> UnsafeMutableRawPointer?
public typealias SchemaEncodeCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> UnsafeMutablePointer<CChar>?
public typealias SchemaFreeCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void

/// A transformer registered from C: the caller's callbacks and userdata, turned into the core's
/// `SchemaTransformer` (the ABI translates; the core decides where the formats are).
struct CSchemaTransformer: @unchecked Sendable {
    let format: String
    let decode: SchemaDecodeCallback
    let encode: SchemaEncodeCallback?
    let freeValue: SchemaFreeCallback?
    let userdata: UnsafeMutableRawPointer?

    /// The callbacks speak JSON text both ways (hc_schema_options_set_transformer_json_cb)
    /// rather than a scalar's text and a string.
    let json: Bool

    var transformer: SchemaTransformer {
        let c = self
        return SchemaTransformer(format: format, decodeValue: { value in
            let text = c.json ? String(decoding: (try? value.serialized()) ?? [], as: UTF8.self) : SchemaTransformer.text(of: value)
            guard let made = c.callDecode(text) else { throw CTransformerRefused(format: c.format, text: text) }
            return CTransformedValue(made, c)
        }, encodeValue: { value in
            guard let encode = c.encode else { return nil }
            let pointer: UnsafeRawPointer?
            if let v = value as? CTransformedValue { pointer = UnsafeRawPointer(v.pointer) }
            else if let v = value as? CValuePointer { pointer = v.pointer }
            else { return nil }
            guard let text = encode(c.userdata, pointer) else { return nil }
            defer { free(text) }
            guard c.json else { return .string(String(cString: text)) }
            let bytes = UnsafeRawBufferPointer(start: text, count: strlen(text))
            return try? JSONValue(parsing: bytes)
        })
    }

    /// The decode callback on `text`, NUL-terminated for its convenience (`len` counts the bytes).
    private func callDecode(_ text: String) -> UnsafeMutableRawPointer? {
        var copy = text
        return copy.withUTF8 { utf8 in
            let buf = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
            defer { buf.deallocate() }
            if let base = utf8.baseAddress { memcpy(buf, base, utf8.count) }
            buf[utf8.count] = 0
            return decode(userdata, buf, utf8.count)
        }
    }
}

struct CTransformerRefused: Error, CustomStringConvertible {
    let format: String, text: String
    var description: String { "the C decode callback returned NULL" }
}

/// A value a C decode callback made; freed by its `free_value` when the last reference goes
/// (with the `hc_schema_values` that lent it).
final class CTransformedValue: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    private let owner: CSchemaTransformer
    init(_ pointer: UnsafeMutableRawPointer, _ owner: CSchemaTransformer) {
        self.pointer = pointer
        self.owner = owner
    }
    deinit { owner.freeValue?(owner.userdata, pointer) }
}

/// The caller's value given to `hc_schema_encode` (not owned).
struct CValuePointer: @unchecked Sendable {
    let pointer: UnsafeRawPointer?
}

@_cdecl("hc_schema_options_set_transformer_cb")
public func hc_schema_options_set_transformer_cb(_ opts: OpaquePointer?, _ format: UnsafePointer<CChar>?,
                                                 _ decode: SchemaDecodeCallback?, _ encode: SchemaEncodeCallback?,
                                                 _ freeValue: SchemaFreeCallback?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    setTransformer(opts, format, decode, encode, freeValue, userdata, json: false)
}

@_cdecl("hc_schema_options_set_transformer_json_cb")
public func hc_schema_options_set_transformer_json_cb(_ opts: OpaquePointer?, _ format: UnsafePointer<CChar>?,
                                                      _ decode: SchemaDecodeCallback?, _ encode: SchemaEncodeCallback?,
                                                      _ freeValue: SchemaFreeCallback?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    setTransformer(opts, format, decode, encode, freeValue, userdata, json: true)
}

private func setTransformer(_ opts: OpaquePointer?, _ format: UnsafePointer<CChar>?, _ decode: SchemaDecodeCallback?,
                            _ encode: SchemaEncodeCallback?, _ freeValue: SchemaFreeCallback?,
                            _ userdata: UnsafeMutableRawPointer?, json: Bool, function: String = #function) -> Int32 {
    guard let box = borrowHandle(opts, as: SchemaOptionsBox.self) else { return nullArgument("opts", in: function) }
    guard let format = string(format) else { return nullArgument("format", in: function) }
    guard let decode else { return nullArgument("decode", in: function) }
    box.callbacks[format] = CSchemaTransformer(format: format, decode: decode, encode: encode, freeValue: freeValue,
                                               userdata: userdata, json: json)
    return HC_OK
}

// MARK: - Transformed values

/// An `hc_schema_values`: what `JSONSchema.transformed` gave, plus the C strings lent from it.
final class SchemaValuesBox {
    let entries: [SchemaTransformedValue]
    let strings = CStringCache()
    init(_ entries: [SchemaTransformedValue]) { self.entries = entries }
}

private func transform(_ box: SchemaBox, _ value: JSONValue, _ out: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
    do {
        out.pointee = retainHandle(SchemaValuesBox(try box.schema.transformed(value)))
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_schema_transform")
public func hc_schema_transform(_ schema: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("out") }
    out.pointee = nil
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let data, len >= 0 else { return nullArgument("data") }
    do {
        return transform(box, try JSONValue(parsing: UnsafeBufferPointer(start: data, count: len)), out)
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_schema_transform_json")
public func hc_schema_transform_json(_ schema: OpaquePointer?, _ value: OpaquePointer?,
                                     _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("out") }
    out.pointee = nil
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    return transform(box, node.value, out)
}

@_cdecl("hc_schema_values_free")
public func hc_schema_values_free(_ values: OpaquePointer?) {
    releaseHandle(values, as: SchemaValuesBox.self)
}

@_cdecl("hc_schema_values_count")
public func hc_schema_values_count(_ values: OpaquePointer?) -> Int {
    borrowHandle(values, as: SchemaValuesBox.self)?.entries.count ?? 0
}

/// Entry `index`'s field as a borrowed C string; NULL with HC_EINVALID_ARG for NULL `values` or
/// an index out of range.
private func entryField(_ values: OpaquePointer?, _ index: Int, _ name: String, function: String = #function,
                        _ pick: (SchemaTransformedValue) -> String) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(values, as: SchemaValuesBox.self) else { nullArgument("values", in: function); return nil }
    guard index >= 0, index < box.entries.count else {
        fail(.invalidArgument, "\(function.prefix { $0 != "(" }): index \(index) is out of range (\(box.entries.count) values)")
        return nil
    }
    return box.strings.get("\(index):\(name)") { pick(box.entries[index]) }
}

@_cdecl("hc_schema_values_path")
public func hc_schema_values_path(_ values: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    entryField(values, index, "path") { $0.path }
}

@_cdecl("hc_schema_values_format")
public func hc_schema_values_format(_ values: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    entryField(values, index, "format") { $0.format }
}

@_cdecl("hc_schema_values_text")
public func hc_schema_values_text(_ values: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    entryField(values, index, "text") { $0.text }
}

@_cdecl("hc_schema_values_value")
public func hc_schema_values_value(_ values: OpaquePointer?, _ index: Int) -> UnsafeMutableRawPointer? {
    guard let box = borrowHandle(values, as: SchemaValuesBox.self) else { nullArgument("values"); return nil }
    guard index >= 0, index < box.entries.count else {
        fail(.invalidArgument, "hc_schema_values_value: index \(index) is out of range (\(box.entries.count) values)")
        return nil
    }
    // Values of built-in formats without a C transformer are Swift values: the caller reads
    // their text (hc_schema_values_text, hc_schema_date_time).
    return (box.entries[index].value as? CTransformedValue)?.pointer
}

@_cdecl("hc_schema_values_find")
public func hc_schema_values_find(_ values: OpaquePointer?, _ pointer: UnsafePointer<CChar>?) -> Int {
    guard let box = borrowHandle(values, as: SchemaValuesBox.self), let pointer = string(pointer) else { return -1 }
    return box.entries.firstIndex { $0.path == pointer } ?? -1
}

@_cdecl("hc_schema_encode")
public func hc_schema_encode(_ schema: OpaquePointer?, _ format: UnsafePointer<CChar>?, _ value: UnsafeRawPointer?,
                             _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                             _ outLen: UnsafeMutablePointer<Int>?) -> Int32 {
    encode(schema, format, value, out, outLen, json: false)
}

@_cdecl("hc_schema_encode_json")
public func hc_schema_encode_json(_ schema: OpaquePointer?, _ format: UnsafePointer<CChar>?, _ value: UnsafeRawPointer?,
                                  _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                                  _ outLen: UnsafeMutablePointer<Int>?) -> Int32 {
    encode(schema, format, value, out, outLen, json: true)
}

private func encode(_ schema: OpaquePointer?, _ format: UnsafePointer<CChar>?, _ value: UnsafeRawPointer?,
                    _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, _ outLen: UnsafeMutablePointer<Int>?,
                    json: Bool, function: String = #function) -> Int32 {
    guard let out, let outLen else { return nullArgument("out or out_len", in: function) }
    out.pointee = nil
    outLen.pointee = 0
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema", in: function) }
    guard let format = string(format) else { return nullArgument("format", in: function) }
    do {
        let encoded = try box.schema.encodeValue(CValuePointer(pointer: value), format: format)
        let text = json ? try encoded.serialized() : Array(SchemaTransformer.text(of: encoded).utf8)
        // NUL-terminated for convenience; *out_len counts the text only.
        guard let copy = mallocCopy(text + [0]) else { return fail(.invalidArgument, "\(function): out of memory") }
        out.pointee = copy
        outLen.pointee = text.count
        return HC_OK
    } catch {
        return fail(error)
    }
}
