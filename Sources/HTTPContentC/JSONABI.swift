import HTTPContent

/// An `hc_json_options`: the parse options plus the handler-level ones, copied into each
/// handler or parse that uses them.
final class JSONOptionsBox {
    var options = JSONOptions()
    var allowEmpty = false
    var limit: Int? = nil
    var stopWhenClosed = false
    var requirePrefix = false
    var batchBytes = 64 * 1024
}

/// The `hc_json_option` values.
private enum JSONOption: Int32 {
    case removeNulls = 1, allowComments, allowMultipleValues, maxDepth, maxSize, strictUTF8, keepNumberText,
         allowEmpty, itemsLimit, itemsStopWhenClosed, itemsRequirePrefix, batchBytes, allowTrailingGarbage,
         allowPartialValues, errorBodyLimit
}

@_cdecl("hc_json_options_new")
public func hc_json_options_new() -> OpaquePointer? {
    retainHandle(JSONOptionsBox())
}

@_cdecl("hc_json_options_free")
public func hc_json_options_free(_ opts: OpaquePointer?) {
    releaseHandle(opts, as: JSONOptionsBox.self)
}

@_cdecl("hc_json_options_set")
public func hc_json_options_set(_ opts: OpaquePointer?, _ option: Int32, _ value: Int64) -> Int32 {
    setOption(opts, option, value, "hc_json_options_set", wide: { $0 == .maxSize || $0 == .errorBodyLimit }) { (box: JSONOptionsBox, which: JSONOption) -> Int32 in
        let on = value != 0
        let n = Int(value)
        switch which {
        case .removeNulls: box.options.removeNulls = on
        case .allowComments: box.options.allowComments = on
        case .allowMultipleValues: box.options.allowMultipleValues = on
        case .maxDepth:
            guard n >= 1 else { return fail(.invalidArgument, "hc_json_options_set: max depth must be at least 1") }
            box.options.maxDepth = n
        case .maxSize: box.options.maxSize = n > 0 ? n : nil
        case .strictUTF8: box.options.strictUTF8 = on
        case .keepNumberText: box.options.keepNumberText = on
        case .allowEmpty: box.allowEmpty = on
        case .itemsLimit: box.limit = n > 0 ? n : nil
        case .itemsStopWhenClosed: box.stopWhenClosed = on
        case .itemsRequirePrefix: box.requirePrefix = on
        case .batchBytes:
            guard n >= 1 else { return fail(.invalidArgument, "hc_json_options_set: batch size must be at least 1") }
            box.batchBytes = n
        case .allowTrailingGarbage: box.options.allowTrailingGarbage = on
        case .allowPartialValues: box.options.allowPartialValues = on
        case .errorBodyLimit: box.options.errorBodyLimit = n
        }
        return HC_OK
    }
}

@_cdecl("hc_json_options_get")
public func hc_json_options_get(_ opts: OpaquePointer?, _ option: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    getOption(opts, option, out, "hc_json_options_get") { (box: JSONOptionsBox, which: JSONOption) -> Int64 in
        let o = box.options
        switch which {
        case .removeNulls: return optionFlag(o.removeNulls)
        case .allowComments: return optionFlag(o.allowComments)
        case .allowMultipleValues: return optionFlag(o.allowMultipleValues)
        case .maxDepth: return Int64(o.maxDepth)
        case .maxSize: return Int64(o.maxSize ?? 0)
        case .strictUTF8: return optionFlag(o.strictUTF8)
        case .keepNumberText: return optionFlag(o.keepNumberText)
        case .allowEmpty: return optionFlag(box.allowEmpty)
        case .itemsLimit: return Int64(box.limit ?? 0)
        case .itemsStopWhenClosed: return optionFlag(box.stopWhenClosed)
        case .itemsRequirePrefix: return optionFlag(box.requirePrefix)
        case .batchBytes: return Int64(box.batchBytes)
        case .allowTrailingGarbage: return optionFlag(o.allowTrailingGarbage)
        case .allowPartialValues: return optionFlag(o.allowPartialValues)
        case .errorBodyLimit: return Int64(o.errorBodyLimit)
        }
    }
}

/// A copy of the options (the defaults for NULL).
private func snapshot(_ opts: OpaquePointer?) -> JSONOptionsBox {
    let copy = JSONOptionsBox()
    if let box = borrowHandle(opts, as: JSONOptionsBox.self) {
        copy.options = box.options
        copy.allowEmpty = box.allowEmpty
        copy.limit = box.limit
        copy.stopWhenClosed = box.stopWhenClosed
        copy.requirePrefix = box.requirePrefix
        copy.batchBytes = box.batchBytes
    }
    return copy
}

// MARK: - Handlers

/// The content of a C JSON tree response: the root node (nil for an empty body), which lends
/// out every borrowed hc_json of the response.
final class JSONResponseContent {
    let root: JSONNode?
    init(_ value: JSONValue?) { root = value.map { JSONNode($0) } }
}

/// The content of hc_handler_json_pymarshal_new: nil for an empty body.
final class JSONPythonMarshalContent {
    let bytes: JSONPythonMarshalBytes?
    /// With a schema that has transformers: the format annotations as JSON text (SchemaABI).
    var formats: [UInt8] = []
    init(bytes: JSONPythonMarshalBytes?) { self.bytes = bytes }
}

/// The settings of the JSON handlers that take a schema (hc_handler_json_set_schema): the check,
/// and whether path streaming skips invalid items instead of failing.
class JSONSchemaSettings: HandlerSettings {
    @exclusivity(unchecked) var validator: (any JSONValueValidator)?
    @exclusivity(unchecked) var skipInvalid = false
}

@_cdecl("hc_handler_json_new")
public func hc_handler_json_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    let o = snapshot(opts)
    let schema = JSONSchemaSettings()
    return retainHandle(HandlerSpec(acceptance: JSON.defaultAcceptance(), settings: schema) { spec in
        MappedHandler(JSON(options: o.options, allowEmpty: o.allowEmpty, acceptance: spec.acceptance,
                           validator: schema.validator)) {
            JSONResponseContent($0)
        }
    })
}

public typealias JSONItemCallback = @convention(c) (UnsafeMutableRawPointer?, Int, OpaquePointer?) -> Int32
public typealias JSONBatchCallback = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafePointer<UInt8>?, Int, Int) -> Int32

/// The callback's verdict: 0 continues, HC_JSON_STOP (-1) stops with success, others abort.
private func verdict(_ rc: Int32, _ what: String) throws {
    if rc == 0 { return }
    if rc == -1 { throw StopTransfer() }
    throw HTTPContentError(.callback, "the \(what) callback returned \(rc)")
}

private func prefixList(_ prefixes: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> [JSONPrefix]? {
    guard let prefixes, count > 0 else { return nil }
    var list: [JSONPrefix] = []
    for i in 0..<count {
        guard let p = string(prefixes[i]) else { return nil }
        list.append(JSONPrefix(p))
    }
    return list
}

@_cdecl("hc_handler_json_items_new")
public func hc_handler_json_items_new(_ prefixes: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                      _ opts: OpaquePointer?, _ cb: JSONItemCallback?,
                                      _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    guard let list = prefixList(prefixes, count) else { nullArgument("prefixes"); return nil }
    guard let cb else { nullArgument("cb"); return nil }
    let o = snapshot(opts)
    func make(_ acceptance: Acceptance, _ validator: (any JSONValueValidator)? = nil,
              _ skipInvalid: Bool = false) throws(HTTPContentError) -> JSONItems {
        // One node lent to every call (borrowed for the call's duration, so never kept), emptied
        // after each so the item's tape goes back to the parser for the next item.
        let node = JSONNode(.null)
        guard validator != nil else {
            // The item is swapped into the node and back out: no copy of it per call.
            return try JSONItems(prefixes: list, options: o.options, limit: o.limit,
                                 stopWhenPrefixCloses: o.stopWhenClosed, requirePrefix: o.requirePrefix,
                                 allowEmpty: o.allowEmpty, acceptance: acceptance) { index, value in
                node.exchange(&value)
                defer { node.exchange(&value) }
                let rc = cb(userdata, index, OpaquePointer(Unmanaged.passUnretained(node).toOpaque()))
                // Checked here first: the call (and its message argument) only when not 0.
                if rc != 0 { try verdict(rc, "item") }
            }
        }
        return try JSONItems(prefixes: list, options: o.options, limit: o.limit, stopWhenPrefixCloses: o.stopWhenClosed,
                      requirePrefix: o.requirePrefix, allowEmpty: o.allowEmpty, acceptance: acceptance,
                      validator: validator, skipInvalid: skipInvalid) { item in
            node.reset(to: item.value)
            defer { node.reset(to: .null) }
            let rc = cb(userdata, item.prefixIndex, OpaquePointer(Unmanaged.passUnretained(node).toOpaque()))
            try verdict(rc, "item")
        }
    }
    do { _ = try make(JSON.defaultAcceptance()) } catch { fail(error); return nil }
    let schema = JSONSchemaSettings()
    return retainHandle(HandlerSpec(acceptance: JSON.defaultAcceptance(), settings: schema) { spec -> any ContentHandler in
        do { return try make(spec.acceptance, schema.validator, schema.skipInvalid) } catch { return FailingHandler(reason: error) }
    })
}

private func makeBatchesHandler(_ prefixes: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                        _ opts: OpaquePointer?, _ cb: JSONBatchCallback?,
                                        _ userdata: UnsafeMutableRawPointer?, pythonMarshal: Bool) -> OpaquePointer? {
    guard let list = prefixList(prefixes, count) else { nullArgument("prefixes"); return nil }
    guard let cb else { nullArgument("cb"); return nil }
    let o = snapshot(opts)
    func make(_ acceptance: Acceptance) throws(HTTPContentError) -> JSONItemBatches {
        let deliver: JSONItemBatches.OnBatch = { index, json, n in
            let rc = cb(userdata, index, json.baseAddress?.assumingMemoryBound(to: UInt8.self), json.count, n)
            try verdict(rc, "batch")
        }
        guard pythonMarshal else {
            return try JSONItemBatches(prefixes: list, options: o.options, limit: o.limit,
                                       stopWhenPrefixCloses: o.stopWhenClosed, requirePrefix: o.requirePrefix,
                                       allowEmpty: o.allowEmpty, batchBytes: o.batchBytes, acceptance: acceptance,
                                       onBatch: deliver)
        }
        return try JSONItemBatches(prefixes: list, options: o.options, limit: o.limit,
                                   stopWhenPrefixCloses: o.stopWhenClosed, requirePrefix: o.requirePrefix,
                                   allowEmpty: o.allowEmpty, acceptance: acceptance,
                                   capture: PythonMarshalBatchCapture(options: o.options, batchBytes: o.batchBytes,
                                                                      deliver: deliver))
    }
    do { _ = try make(JSON.defaultAcceptance()) } catch { fail(error); return nil }
    let spec = HandlerSpec(acceptance: JSON.defaultAcceptance()) { spec -> any ContentHandler in
        do { return try make(spec.acceptance) } catch { return FailingHandler(reason: error) }
    }
    return retainHandle(spec)
}

@_cdecl("hc_handler_json_batches_new")
public func hc_handler_json_batches_new(_ prefixes: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                        _ opts: OpaquePointer?, _ cb: JSONBatchCallback?,
                                        _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    makeBatchesHandler(prefixes, count, opts, cb, userdata, pythonMarshal: false)
}

@_cdecl("hc_handler_json_batches_pymarshal_new")
public func hc_handler_json_batches_pymarshal_new(_ prefixes: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                                  _ opts: OpaquePointer?, _ cb: JSONBatchCallback?,
                                                  _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    makeBatchesHandler(prefixes, count, opts, cb, userdata, pythonMarshal: true)
}

@_cdecl("hc_handler_json_pymarshal_new")
public func hc_handler_json_pymarshal_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    let o = snapshot(opts)
    func make(_ acceptance: Acceptance) throws(HTTPContentError) -> MappedHandler<JSONPythonMarshalHandler, JSONPythonMarshalContent> {
        MappedHandler(try JSONPythonMarshalHandler(options: o.options, allowEmpty: o.allowEmpty, acceptance: acceptance)) {
            JSONPythonMarshalContent(bytes: $0)
        }
    }
    do { _ = try make(JSON.defaultAcceptance()) } catch { fail(error); return nil }
    let schema = JSONSchemaSettings()
    let spec = HandlerSpec(acceptance: JSON.defaultAcceptance(), settings: schema) { spec -> any ContentHandler in
        // With a schema, the tree is built, validated, then written in marshal's format.
        if let validator = schema.validator {
            return ValidatedMarshalHandler(JSON(options: o.options, allowEmpty: o.allowEmpty,
                                                acceptance: spec.acceptance, validator: validator))
        }
        do { return try make(spec.acceptance) } catch { return FailingHandler(reason: error) }
    }
    return retainHandle(spec)
}

// MARK: - Responses, parsing, request bodies

@_cdecl("hc_response_json")
public func hc_response_json(_ response: OpaquePointer?) -> OpaquePointer? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    guard let content = content(box, as: JSONResponseContent.self) else {
        fail(.invalidArgument, "hc_response_json: the response's handler is not a JSON tree handler")
        return nil
    }
    // An empty body is no value, and not a failure: the thread's last error stays as it was
    // (hc_error_last's promise: only a failing call replaces it).
    guard let root = content.root else { return nil }
    return OpaquePointer(Unmanaged.passUnretained(root).toOpaque())
}

@_cdecl("hc_response_json_pymarshal")
public func hc_response_json_pymarshal(_ response: OpaquePointer?,
                                       _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                       _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = nil
    len.pointee = 0
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let content = content(box, as: JSONPythonMarshalContent.self) else {
        return fail(.invalidArgument, "hc_response_json_pymarshal: the response's handler is not a Python marshal JSON handler")
    }
    guard let bytes = content.bytes else { return HC_OK }
    data.pointee = UnsafePointer(bytes.pointer)
    len.pointee = bytes.count
    return HC_OK
}

@_cdecl("hc_response_json_items")
public func hc_response_json_items(_ response: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?,
                                   _ stoppedEarly: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let summary = content(box, as: JSONItemsSummary.self) else {
        return fail(.invalidArgument, "hc_response_json_items: the response's handler is not a JSON items handler")
    }
    count?.pointee = summary.count
    stoppedEarly?.pointee = summary.stoppedEarly ? 1 : 0
    return HC_OK
}

@_cdecl("hc_json_parse")
public func hc_json_parse(_ data: UnsafePointer<UInt8>?, _ len: Int, _ opts: OpaquePointer?,
                          _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("out") }
    out.pointee = nil
    guard data != nil || len == 0, len >= 0 else { return nullArgument("data") }
    let parser = JSONStreamParser(options: snapshot(opts).options)
    do {
        try parser.feed(UnsafeRawBufferPointer(start: data, count: len))
        out.pointee = retainHandle(JSONNode(try parser.finish(), ownedByCaller: true))
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_request_set_json_value")
public func hc_request_set_json_value(_ request: OpaquePointer?, _ value: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let node = borrowHandle(value, as: JSONNode.self) else { return nullArgument("value") }
    do {
        box.request.body = try RequestBody.json(node.value)
        return HC_OK
    } catch {
        return fail(error)
    }
}

/// The Python JSON handler with a schema: the tree is parsed and validated, then written in
/// marshal's format.
final class ValidatedMarshalHandler: ContentHandler {
    let inner: JSON
    init(_ inner: JSON) { self.inner = inner }
    func prepare(_ request: inout Request) throws { try inner.prepare(&request) }
    func accept(_ head: ResponseHead) throws -> Bool { try inner.accept(head) }
    func consume(_ chunk: UnsafeRawBufferPointer) throws { try inner.consume(chunk) }
    func finish() throws -> JSONPythonMarshalContent {
        guard let value = try inner.finish() else { return JSONPythonMarshalContent(bytes: nil) }
        let content = JSONPythonMarshalContent(bytes: try JSONPythonMarshalBytes(encoding: value))
        if let check = inner.validator as? JSONSchemaCheck {
            content.formats = formatAnnotationsText(check.schema, value)
        }
        return content
    }
    func cleanup(failed: Bool) { inner.cleanup(failed: failed) }
}
