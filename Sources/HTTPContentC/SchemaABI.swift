import HTTPContent

// MARK: - Options

/// An `hc_schema_options`: remote documents and flags, copied into each schema made with it.
final class SchemaOptionsBox {
    var remotes: [String: JSONValue] = [:]
    var assertFormat = false
    /// Format names the caller transforms itself (listed by the format annotations).
    var transformerNames: [String] = []
    /// Transformers with C callbacks (hc_schema_options_set_transformer_cb), by format.
    var callbacks: [String: CSchemaTransformer] = [:]
}

@_cdecl("hc_schema_options_new")
public func hc_schema_options_new() -> OpaquePointer? {
    retainHandle(SchemaOptionsBox())
}

@_cdecl("hc_schema_options_free")
public func hc_schema_options_free(_ opts: OpaquePointer?) {
    releaseHandle(opts, as: SchemaOptionsBox.self)
}

@_cdecl("hc_schema_options_add_remote")
public func hc_schema_options_add_remote(_ opts: OpaquePointer?, _ uri: UnsafePointer<CChar>?,
                                         _ data: UnsafePointer<UInt8>?, _ len: Int) -> Int32 {
    guard let box = borrowHandle(opts, as: SchemaOptionsBox.self) else { return nullArgument("opts") }
    guard let uri = string(uri) else { return nullArgument("uri") }
    guard let data, len >= 0 else { return nullArgument("data") }
    do {
        box.remotes[uri] = try JSONValue(parsing: UnsafeBufferPointer(start: data, count: len))
        return HC_OK
    } catch {
        return fail(.invalidArgument, "hc_schema_options_add_remote: \(uri) is not valid JSON: \(error.message)")
    }
}

@_cdecl("hc_schema_options_add_transformer")
public func hc_schema_options_add_transformer(_ opts: OpaquePointer?, _ format: UnsafePointer<CChar>?) -> Int32 {
    guard let box = borrowHandle(opts, as: SchemaOptionsBox.self) else { return nullArgument("opts") }
    guard let format = string(format) else { return nullArgument("format") }
    if !box.transformerNames.contains(format) { box.transformerNames.append(format) }
    return HC_OK
}

@_cdecl("hc_schema_options_set_assert_format")
public func hc_schema_options_set_assert_format(_ opts: OpaquePointer?, _ on: Int32) -> Int32 {
    guard let box = borrowHandle(opts, as: SchemaOptionsBox.self) else { return nullArgument("opts") }
    box.assertFormat = on != 0
    return HC_OK
}

// MARK: - Schemas

/// An `hc_schema`: a compiled, immutable `JSONSchema`.
final class SchemaBox {
    let schema: JSONSchema
    init(_ schema: JSONSchema) { self.schema = schema }
}

private let allErrorsFlag: Int32 = 1
private let skipInvalidFlag: Int32 = 2

@_cdecl("hc_schema_new_from_json")
public func hc_schema_new_from_json(_ data: UnsafePointer<UInt8>?, _ len: Int, _ opts: OpaquePointer?) -> OpaquePointer? {
    guard let data, len >= 0 else { nullArgument("data"); return nil }
    let options = borrowHandle(opts, as: SchemaOptionsBox.self)
    do {
        let schema = try JSONSchema(parsing: UnsafeBufferPointer(start: data, count: len),
                                    remotes: options?.remotes ?? [:], assertFormat: options?.assertFormat ?? false,
                                    transformers: callerTransformers(options))
        return retainHandle(SchemaBox(schema))
    } catch {
        fail(error)
        return nil
    }
}

/// The caller's transformers: names only (Python's run on its side: here they only mark the
/// format as one whose scalars the format annotations list; built-in ones keep their own), then
/// those with C callbacks, which replace any other of their format.
private func callerTransformers(_ options: SchemaOptionsBox?) -> [SchemaTransformer] {
    let named = (options?.transformerNames ?? []).filter { SchemaTransformer.builtin[$0] == nil }.map { name in
        // Any scalar: Python decides nothing here, it converts what the annotations list.
        SchemaTransformer(format: name, decodeValue: { $0 }, encodeValue: { $0 as? JSONValue })
    }
    let withCallbacks = (options?.callbacks ?? [:]).keys.sorted().compactMap { options?.callbacks[$0]?.transformer }
    return named + withCallbacks
}

@_cdecl("hc_schema_free")
public func hc_schema_free(_ schema: OpaquePointer?) {
    releaseHandle(schema, as: SchemaBox.self)
}

@_cdecl("hc_schema_validate")
public func hc_schema_validate(_ schema: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int, _ flags: Int32) -> Int32 {
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let data, len >= 0 else { return nullArgument("data") }
    do {
        let value = try JSONValue(parsing: UnsafeBufferPointer(start: data, count: len))
        try box.schema.validate(value, allErrors: flags & allErrorsFlag != 0)
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_schema_validate_json")
public func hc_schema_validate_json(_ schema: OpaquePointer?, _ value: OpaquePointer?, _ flags: Int32) -> Int32 {
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    do {
        try box.schema.validate(node.value, allErrors: flags & allErrorsFlag != 0)
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_handler_json_set_schema")
public func hc_handler_json_set_schema(_ handler: OpaquePointer?, _ schema: OpaquePointer?, _ flags: Int32) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard let settings = spec.settings(JSONSchemaSettings.self) else {
        return fail(.invalidArgument, "hc_handler_json_set_schema: the handler is not a JSON tree, JSON items or JSON lines handler")
    }
    guard let schema else {
        settings.validator = nil
        settings.skipInvalid = false
        return HC_OK
    }
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    settings.validator = JSONSchemaCheck(box.schema, allErrors: flags & allErrorsFlag != 0)
    settings.skipInvalid = flags & skipInvalidFlag != 0
    return HC_OK
}

@_cdecl("hc_request_set_json_body_schema")
public func hc_request_set_json_body_schema(_ request: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int,
                                            _ schema: OpaquePointer?, _ flags: Int32) -> Int32 {
    guard let req = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let data, len >= 0 else { return nullArgument("data") }
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    do {
        let value = try JSONValue(parsing: UnsafeBufferPointer(start: data, count: len))
        req.request.body = try RequestBody.json(value, schema: box.schema, allErrors: flags & allErrorsFlag != 0)
        return HC_OK
    } catch {
        var e = error
        if e.code == .decode && e.violations.isEmpty { e.code = .invalidArgument; e.message = "the JSON body is not valid JSON: " + e.message }
        return fail(e)
    }
}

// MARK: - Violations on errors

@_cdecl("hc_error_sub_kind")
public func hc_error_sub_kind(_ err: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { nullArgument("err"); return nil }
    guard box !== ErrorBox.none, box.error.subKind != nil else { return nil }
    return staticString("schema")
}

@_cdecl("hc_error_schema_count")
public func hc_error_schema_count(_ err: OpaquePointer?) -> Int {
    guard let box = borrowHandle(err, as: ErrorBox.self), box !== ErrorBox.none else { return 0 }
    return box.error.violations.count
}

/// NULL for a NULL error (HC_EINVALID_ARG) or an index out of range (the last error left as it
/// was: the caller may be reading it).
private func violationField(_ err: OpaquePointer?, _ index: Int, _ name: String, function: String = #function,
                            _ pick: (SchemaViolation) -> String) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { nullArgument("err", in: function); return nil }
    guard box !== ErrorBox.none, index >= 0, index < box.error.violations.count else { return nil }
    return box.strings.get("schema:\(index):\(name)") { pick(box.error.violations[index]) }
}

@_cdecl("hc_error_schema_instance_path")
public func hc_error_schema_instance_path(_ err: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    violationField(err, index, "instance") { $0.instancePath }
}

@_cdecl("hc_error_schema_path")
public func hc_error_schema_path(_ err: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    violationField(err, index, "schema") { $0.schemaPath }
}

@_cdecl("hc_error_schema_keyword")
public func hc_error_schema_keyword(_ err: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    violationField(err, index, "keyword") { $0.keyword }
}

@_cdecl("hc_error_schema_message")
public func hc_error_schema_message(_ err: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    violationField(err, index, "message") { $0.message }
}

// MARK: - Format annotations (value transformers)

/// `[["/json/pointer","format"],...]` for the strings of `value` that have a transformable format.
func formatAnnotationsText(_ schema: JSONSchema, _ value: JSONValue) -> [UInt8] {
    annotationsText(schema.formatAnnotations(of: value))
}

func annotationsText(_ hits: [(path: [String], format: String)]) -> [UInt8] {
    if hits.isEmpty { return [] }
    var list: [JSONValue] = []
    for hit in hits {
        var pointer = ""
        for token in hit.path {
            pointer += "/" + token.split(separator: "~", omittingEmptySubsequences: false).joined(separator: "~0")
                .split(separator: "/", omittingEmptySubsequences: false).joined(separator: "~1")
        }
        list.append(.array(JSONArray([.string(pointer), .string(hit.format)])))
    }
    return (try? JSONGenerator.serialize(.array(JSONArray(list)))) ?? []
}

@_cdecl("hc_schema_format_annotations")
public func hc_schema_format_annotations(_ schema: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int,
                                         _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                                         _ outLen: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let out, let outLen else { return nullArgument("out or out_len") }
    out.pointee = nil
    outLen.pointee = 0
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let data, len >= 0 else { return nullArgument("data") }
    do {
        let value = try JSONValue(parsing: UnsafeBufferPointer(start: data, count: len))
        var text = formatAnnotationsText(box.schema, value)
        if text.isEmpty { text = Array("[]".utf8) }
        guard let copy = mallocCopy(text) else { return fail(.invalidArgument, "out of memory") }
        out.pointee = copy
        outLen.pointee = text.count
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_response_json_format_annotations")
public func hc_response_json_format_annotations(_ response: OpaquePointer?,
                                                _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                                _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = nil
    len.pointee = 0
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let content = content(box, as: JSONPythonMarshalContent.self) else {
        return fail(.invalidArgument, "hc_response_json_format_annotations: not a Python marshal JSON response")
    }
    if content.formats.isEmpty { return HC_OK }
    content.formats.withUnsafeBufferPointer { buf in
        data.pointee = buf.baseAddress
        len.pointee = buf.count
    }
    return HC_OK
}

@_cdecl("hc_schema_date_time")
public func hc_schema_date_time(_ text: UnsafePointer<CChar>?, _ seconds: UnsafeMutablePointer<Int64>?,
                                _ nanosecond: UnsafeMutablePointer<Int32>?, _ offsetMinutes: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let text = string(text) else { return nullArgument("text") }
    guard let dt = SchemaDateTimeText.parse(text) else {
        return fail(.invalidArgument, "hc_schema_date_time: \"\(text)\" is not an RFC 3339 date-time")
    }
    seconds?.pointee = dt.epochSeconds
    nanosecond?.pointee = Int32(dt.nanosecond)
    offsetMinutes?.pointee = Int32(dt.offsetMinutes)
    return HC_OK
}

// MARK: - Property lists

@_cdecl("hc_schema_new_from_plist")
public func hc_schema_new_from_plist(_ data: UnsafePointer<UInt8>?, _ len: Int, _ opts: OpaquePointer?) -> OpaquePointer? {
    guard let data, len >= 0 else { nullArgument("data"); return nil }
    let options = borrowHandle(opts, as: SchemaOptionsBox.self)
    let plist: PlistValue
    do {
        plist = try PlistParser.parse(UnsafeRawBufferPointer(start: data, count: len))
    } catch {
        fail(.invalidArgument, "hc_schema_new_from_plist: the schema is not a valid property list: \(error.message)")
        return nil
    }
    do {
        let schema = try JSONSchema(plist: plist, remotes: options?.remotes ?? [:],
                                    assertFormat: options?.assertFormat ?? false,
                                    transformers: callerTransformers(options))
        return retainHandle(SchemaBox(schema))
    } catch {
        fail(error)
        return nil
    }
}

@_cdecl("hc_schema_validate_plist")
public func hc_schema_validate_plist(_ schema: OpaquePointer?, _ value: OpaquePointer?, _ flags: Int32) -> Int32 {
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    do {
        try box.schema.validate(plist: node.value, allErrors: flags & allErrorsFlag != 0)
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_handler_plist_set_schema")
public func hc_handler_plist_set_schema(_ handler: OpaquePointer?, _ schema: OpaquePointer?, _ flags: Int32) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard let settings = spec.settings(PlistSchemaSettings.self) else {
        return fail(.invalidArgument, "hc_handler_plist_set_schema: the handler is not a plist handler")
    }
    guard let schema else {
        settings.validator = nil
        return HC_OK
    }
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    settings.validator = JSONSchemaCheck(box.schema, allErrors: flags & allErrorsFlag != 0)
    return HC_OK
}

@_cdecl("hc_request_set_plist_value_schema")
public func hc_request_set_plist_value_schema(_ request: OpaquePointer?, _ value: OpaquePointer?, _ fmt: Int32,
                                              _ schema: OpaquePointer?, _ flags: Int32) -> Int32 {
    guard let req = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let f = plistFormat(fmt) else {
        return fail(.invalidArgument, "hc_request_set_plist_value_schema: unknown format \(fmt)")
    }
    do {
        req.request.body = try RequestBody.plist(node.value, format: f, schema: box.schema,
                                                 allErrors: flags & allErrorsFlag != 0)
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_schema_plist_format_annotations")
public func hc_schema_plist_format_annotations(_ schema: OpaquePointer?, _ value: OpaquePointer?,
                                               _ out: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                                               _ outLen: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let out, let outLen else { return nullArgument("out or out_len") }
    out.pointee = nil
    outLen.pointee = 0
    guard let box = borrowHandle(schema, as: SchemaBox.self) else { return nullArgument("schema") }
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    do {
        try box.schema.validate(plist: node.value)
    } catch {
        return fail(error)
    }
    var text = annotationsText(box.schema.formatAnnotations(ofPlist: node.value))
    if text.isEmpty { text = Array("[]".utf8) }
    guard let copy = mallocCopy(text) else { return fail(.invalidArgument, "out of memory") }
    out.pointee = copy
    outLen.pointee = text.count
    return HC_OK
}
