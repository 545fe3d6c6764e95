import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Options

/// An `hc_plist_options`: the parse options plus the handler's own, copied by each use.
final class PlistOptionsBox {
    var options = PlistOptions()
    var allowEmpty = false
}

/// The `hc_plist_option` values.
private enum PlistOption: Int32 {
    case maxDepth = 1, maxSize, maxObjects, allowEmpty, errorBodyLimit
}

@_cdecl("hc_plist_options_new")
public func hc_plist_options_new() -> OpaquePointer? {
    retainHandle(PlistOptionsBox())
}

@_cdecl("hc_plist_options_free")
public func hc_plist_options_free(_ opts: OpaquePointer?) {
    releaseHandle(opts, as: PlistOptionsBox.self)
}

@_cdecl("hc_plist_options_set")
public func hc_plist_options_set(_ opts: OpaquePointer?, _ option: Int32, _ value: Int64) -> Int32 {
    setOption(opts, option, value, "hc_plist_options_set", checkRange: false) { (box: PlistOptionsBox, which: PlistOption) -> Int32 in
        var o = box.options
        switch which {
        case .maxDepth: o.maxDepth = Int(clamping: value)
        case .maxSize: o.maxSize = Int(clamping: value)
        case .maxObjects: o.maxObjects = Int(clamping: value)
        case .errorBodyLimit: o.errorBodyLimit = Int(clamping: value)
        case .allowEmpty:
            box.allowEmpty = value != 0
            return HC_OK
        }
        do throws(HTTPContentError) {
            try o.validateForABI()
        } catch {
            return fail(HTTPContentError(.invalidArgument, "hc_plist_options_set: \(error.message)"))
        }
        box.options = o
        return HC_OK
    }
}

@_cdecl("hc_plist_options_get")
public func hc_plist_options_get(_ opts: OpaquePointer?, _ option: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    getOption(opts, option, out, "hc_plist_options_get") { (box: PlistOptionsBox, which: PlistOption) -> Int64 in
        switch which {
        case .maxDepth: return Int64(box.options.maxDepth)
        case .maxSize: return Int64(box.options.maxSize)
        case .maxObjects: return Int64(box.options.maxObjects)
        case .errorBodyLimit: return Int64(box.options.errorBodyLimit)
        case .allowEmpty: return box.allowEmpty ? 1 : 0
        }
    }
}

private extension PlistOptions {
    /// The core's validation, reached through a handler (the only public way to run it).
    func validateForABI() throws(HTTPContentError) { _ = try Plist(options: self) }
}

func plistSnapshot(_ opts: OpaquePointer?) -> PlistOptionsBox {
    let copy = PlistOptionsBox()
    if let box = borrowHandle(opts, as: PlistOptionsBox.self) {
        copy.options = box.options
        copy.allowEmpty = box.allowEmpty
    }
    return copy
}

// MARK: - Value handles

/// An `hc_plist`: one value plus what has been lent out from it (child handles, keys, strings),
/// cached so every borrowed pointer lives as long as this node.
final class PlistNode {
    let value: PlistValue
    /// True for roots from hc_plist_parse and hc_plist_builder_finish, which the caller frees.
    let ownedByCaller: Bool
    private var children: [PlistNode?] = []
    private var keys: [Int: (UnsafeMutablePointer<CChar>, Int)] = [:]
    private var text: (UnsafeMutablePointer<CChar>, Int)?

    init(_ value: PlistValue, ownedByCaller: Bool = false) {
        self.value = value
        self.ownedByCaller = ownedByCaller
    }

    private var bytes: UnsafeMutablePointer<UInt8>?

    deinit {
        for (p, _) in keys.values { free(p) }
        if let (p, _) = text { free(p) }
        free(bytes)
    }

    /// Data bytes copied once for C (a pointer into a Swift array may not outlive the call
    /// that lent it); nil for empty data.
    func data() -> (UnsafePointer<UInt8>?, Int)? {
        guard case .data(let d) = value else { return nil }
        if d.isEmpty { return (nil, 0) }
        if bytes == nil { bytes = mallocCopy(d) }
        guard let bytes else { return nil }
        return (UnsafePointer(bytes), d.count)
    }

    func child(_ index: Int) -> PlistNode? {
        let v: PlistValue
        switch value {
        case .array(let a) where index >= 0 && index < a.count: v = a[index]
        case .dictionary(let d) where index >= 0 && index < d.count: v = d[index].value
        default: return nil
        }
        if children.isEmpty { children = Array(repeating: nil, count: value.count) }
        if let c = children[index] { return c }
        let node = PlistNode(v)
        children[index] = node
        return node
    }

    /// The node at a path, one cached step at a time.
    func descend(_ components: [String]) -> PlistNode? {
        var node = self
        for c in components {
            let index: Int?
            switch node.value {
            case .dictionary(let d): index = d.lastIndex { $0.key == c }
            case .array(let a): index = Int(c).flatMap { $0 >= 0 && $0 < a.count && c.first != "+" ? $0 : nil }
            default: index = nil
            }
            guard let index, let next = node.child(index) else { return nil }
            node = next
        }
        return node
    }

    func key(_ index: Int) -> (UnsafeMutablePointer<CChar>, Int)? {
        if let k = keys[index] { return k }
        guard case .dictionary(let d) = value, index >= 0, index < d.count, let copy = cCopy(d[index].key) else { return nil }
        keys[index] = copy
        return copy
    }

    func string() -> (UnsafeMutablePointer<CChar>, Int)? {
        if let text { return text }
        guard case .string(let s) = value else { return nil }
        text = cCopy(s)
        return text
    }
}

private func borrowed(_ node: PlistNode) -> OpaquePointer {
    OpaquePointer(Unmanaged.passUnretained(node).toOpaque())
}

@_cdecl("hc_plist_free")
public func hc_plist_free(_ value: OpaquePointer?) {
    guard let node = borrowHandle(value, as: PlistNode.self), node.ownedByCaller else { return }
    releaseHandle(value, as: PlistNode.self)
}

@_cdecl("hc_plist_type")
public func hc_plist_type(_ value: OpaquePointer?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return -1 }
    switch node.value {
    case .dictionary: return 0
    case .array: return 1
    case .string: return 2
    case .int: return 3
    case .uint: return 4
    case .real: return 5
    case .bool: return 6
    case .date: return 7
    case .data: return 8
    case .uid: return 9
    }
}

@_cdecl("hc_plist_get")
public func hc_plist_get(_ value: OpaquePointer?, _ keyPath: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let node = borrowHandle(value, as: PlistNode.self) else { nullArgument("value"); return nil }
    guard let path = string(keyPath) else { nullArgument("key_path"); return nil }
    let parts = path.isEmpty ? [] : path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard let found = node.descend(parts) else {
        fail(.invalidArgument, "hc_plist_get: no value at \"\(path)\"")
        return nil
    }
    return borrowed(found)
}

@_cdecl("hc_plist_array_length")
public func hc_plist_array_length(_ value: OpaquePointer?) -> Int {
    guard let node = borrowHandle(value, as: PlistNode.self), case .array(let a) = node.value else { return 0 }
    return a.count
}

@_cdecl("hc_plist_array_at")
public func hc_plist_array_at(_ value: OpaquePointer?, _ index: Int) -> OpaquePointer? {
    guard let node = borrowHandle(value, as: PlistNode.self) else { nullArgument("value"); return nil }
    guard case .array(let a) = node.value else { fail(.invalidArgument, "hc_plist_array_at: not an array"); return nil }
    guard let child = node.child(index) else {
        fail(.invalidArgument, "hc_plist_array_at: index \(index) out of range (\(a.count) elements)")
        return nil
    }
    return borrowed(child)
}

@_cdecl("hc_plist_dict_size")
public func hc_plist_dict_size(_ value: OpaquePointer?) -> Int {
    guard let node = borrowHandle(value, as: PlistNode.self), case .dictionary(let d) = node.value else { return 0 }
    return d.count
}

@_cdecl("hc_plist_dict_member_at")
public func hc_plist_dict_member_at(_ value: OpaquePointer?, _ index: Int,
                                   _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                   _ keyLen: UnsafeMutablePointer<Int>?) -> OpaquePointer? {
    guard let node = borrowHandle(value, as: PlistNode.self) else { nullArgument("value"); return nil }
    guard case .dictionary(let d) = node.value else { fail(.invalidArgument, "hc_plist_dict_member_at: not a dictionary"); return nil }
    guard let child = node.child(index), let k = node.key(index) else {
        fail(.invalidArgument, "hc_plist_dict_member_at: index \(index) out of range (\(d.count) members)")
        return nil
    }
    key?.pointee = UnsafePointer(k.0)
    keyLen?.pointee = k.1
    return borrowed(child)
}

@_cdecl("hc_plist_string")
public func hc_plist_string(_ value: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                            _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let data, let len else { return nullArgument("data or len") }
    guard let t = node.string() else { return fail(.invalidArgument, "hc_plist_string: the value is \(node.value.kindName), not a string") }
    data.pointee = UnsafePointer(t.0)
    len.pointee = t.1
    return HC_OK
}

@_cdecl("hc_plist_data")
public func hc_plist_data(_ value: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                          _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let data, let len else { return nullArgument("data or len") }
    guard let (p, n) = node.data() else {
        return fail(.invalidArgument, "hc_plist_data: the value is \(node.value.kindName), not data")
    }
    data.pointee = p
    len.pointee = n
    return HC_OK
}

@_cdecl("hc_plist_int64")
public func hc_plist_int64(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard case .int(let i) = node.value else {
        return fail(.invalidArgument, "hc_plist_int64: the value is \(node.value.kindName) that does not fit int64")
    }
    out.pointee = i
    return HC_OK
}

@_cdecl("hc_plist_uint64")
public func hc_plist_uint64(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let u = node.value.uint64Value else {
        return fail(.invalidArgument, "hc_plist_uint64: the value is not a non-negative integer")
    }
    out.pointee = u
    return HC_OK
}

@_cdecl("hc_plist_real")
public func hc_plist_real(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let d = node.value.doubleValue else { return fail(.invalidArgument, "hc_plist_real: the value is not a number") }
    out.pointee = d
    return HC_OK
}

@_cdecl("hc_plist_bool")
public func hc_plist_bool(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let b = node.value.boolValue else { return fail(.invalidArgument, "hc_plist_bool: the value is not a boolean") }
    out.pointee = b ? 1 : 0
    return HC_OK
}

@_cdecl("hc_plist_date")
public func hc_plist_date(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let d = node.value.dateValue else { return fail(.invalidArgument, "hc_plist_date: the value is not a date") }
    out.pointee = d.secondsSince1970
    return HC_OK
}

@_cdecl("hc_plist_uid")
public func hc_plist_uid(_ value: OpaquePointer?, _ out: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let out else { return nullArgument("out") }
    guard let u = node.value.uidValue else { return fail(.invalidArgument, "hc_plist_uid: the value is not a UID") }
    out.pointee = u
    return HC_OK
}

func plistFormat(_ raw: Int32) -> PlistFormat? {
    switch raw {
    case 0: return .xml
    case 1: return .binary
    default: return nil
    }
}

@_cdecl("hc_plist_serialize")
public func hc_plist_serialize(_ value: OpaquePointer?, _ fmt: Int32,
                               _ data: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                               _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = nil
    len.pointee = 0
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let f = plistFormat(fmt) else { return fail(.invalidArgument, "hc_plist_serialize: unknown format \(fmt)") }
    do {
        let bytes = try node.value.serialized(format: f)
        guard let p = mallocCopy(bytes) else { return fail(.invalidArgument, "hc_plist_serialize: out of memory") }
        data.pointee = p
        len.pointee = bytes.count
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_plist_parse")
public func hc_plist_parse(_ data: UnsafePointer<UInt8>?, _ len: Int, _ opts: OpaquePointer?,
                           _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("out") }
    out.pointee = nil
    guard data != nil || len == 0, len >= 0 else { return nullArgument("data") }
    do {
        let v = try PlistParser.parse(UnsafeRawBufferPointer(start: data, count: len), options: plistSnapshot(opts).options)
        out.pointee = retainHandle(PlistNode(v, ownedByCaller: true))
        return HC_OK
    } catch {
        return fail(error)
    }
}

// MARK: - Handler, response, request body

/// The content of a C plist response: the root node (nil for an empty body).
final class PlistResponseContent {
    let root: PlistNode?
    init(_ value: PlistValue?) { root = value.map { PlistNode($0) } }
}

/// A plist handler's settings: the schema check (hc_handler_plist_set_schema; a
/// `JSONSchemaCheck` validates plists too).
final class PlistSchemaSettings: HandlerSettings {
    @exclusivity(unchecked) var validator: (any PlistValueValidator)?
}

@_cdecl("hc_handler_plist_new")
public func hc_handler_plist_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    let o = plistSnapshot(opts)
    let schema = PlistSchemaSettings()
    return retainHandle(HandlerSpec(acceptance: Plist.defaultAcceptance(), settings: schema) { spec -> any ContentHandler in
        var options = o.options
        if spec.maxSize > 0 { options.maxSize = min(spec.maxSize, Int(UInt32.max)) }
        do {
            return MappedHandler(try Plist(options: options, allowEmpty: o.allowEmpty, acceptance: spec.acceptance,
                                           validator: schema.validator)) {
                PlistResponseContent($0)
            }
        } catch {
            return FailingHandler(reason: error)
        }
    })
}

@_cdecl("hc_response_plist")
public func hc_response_plist(_ response: OpaquePointer?) -> OpaquePointer? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    guard let content = content(box, as: PlistResponseContent.self) else {
        fail(.invalidArgument, "hc_response_plist: the response's handler is not a plist handler")
        return nil
    }
    guard let root = content.root else { return nil }
    return borrowed(root)
}

@_cdecl("hc_request_set_plist_value")
public func hc_request_set_plist_value(_ request: OpaquePointer?, _ value: OpaquePointer?, _ fmt: Int32) -> Int32 {
    guard let box = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let node = borrowHandle(value, as: PlistNode.self) else { return nullArgument("value") }
    guard let f = plistFormat(fmt) else { return fail(.invalidArgument, "hc_request_set_plist_value: unknown format \(fmt)") }
    do {
        box.request.body = try RequestBody.plist(node.value, format: f)
        return HC_OK
    } catch {
        return fail(error)
    }
}

// MARK: - Builder

final class PlistBuilderBox {
    var builder = PlistBuilder()
}

private func build(_ b: OpaquePointer?, _ step: (inout PlistBuilder) throws(HTTPContentError) -> Void) -> Int32 {
    guard let box = borrowHandle(b, as: PlistBuilderBox.self) else { return nullArgument("builder") }
    do {
        try step(&box.builder)
        return HC_OK
    } catch {
        return fail(error)
    }
}

private func utf8(_ data: UnsafePointer<CChar>?, _ len: Int, what: String) throws(HTTPContentError) -> String {
    guard len >= 0, data != nil || len == 0 else { throw HTTPContentError(.invalidArgument, "\(what) is NULL") }
    let raw = UnsafeRawBufferPointer(start: data, count: len)
    guard let s = String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) else {
        throw HTTPContentError(.invalidArgument, "\(what) is not valid UTF-8")
    }
    return s
}

@_cdecl("hc_plist_builder_new")
public func hc_plist_builder_new() -> OpaquePointer? { retainHandle(PlistBuilderBox()) }

@_cdecl("hc_plist_builder_free")
public func hc_plist_builder_free(_ b: OpaquePointer?) { releaseHandle(b, as: PlistBuilderBox.self) }

@_cdecl("hc_plist_builder_string")
public func hc_plist_builder_string(_ b: OpaquePointer?, _ data: UnsafePointer<CChar>?, _ len: Int) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.value(.string(try utf8(data, len, what: "the string"))) }
}

@_cdecl("hc_plist_builder_key")
public func hc_plist_builder_key(_ b: OpaquePointer?, _ data: UnsafePointer<CChar>?, _ len: Int) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.key(try utf8(data, len, what: "the key")) }
}

@_cdecl("hc_plist_builder_int64")
public func hc_plist_builder_int64(_ b: OpaquePointer?, _ v: Int64) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.value(.int(v)) }
}

@_cdecl("hc_plist_builder_uint64")
public func hc_plist_builder_uint64(_ b: OpaquePointer?, _ v: UInt64) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.value(.integer(v)) }
}

@_cdecl("hc_plist_builder_real")
public func hc_plist_builder_real(_ b: OpaquePointer?, _ v: Double) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.value(.real(v)) }
}

@_cdecl("hc_plist_builder_bool")
public func hc_plist_builder_bool(_ b: OpaquePointer?, _ v: Int32) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.value(.bool(v != 0)) }
}

@_cdecl("hc_plist_builder_date")
public func hc_plist_builder_date(_ b: OpaquePointer?, _ secondsSince1970: Double) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in
        guard secondsSince1970.isFinite else { throw HTTPContentError(.invalidArgument, "a plist date must be finite") }
        try x.value(.date(PlistDate(secondsSince1970: secondsSince1970)))
    }
}

@_cdecl("hc_plist_builder_data")
public func hc_plist_builder_data(_ b: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ len: Int) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in
        guard len >= 0, data != nil || len == 0 else { throw HTTPContentError(.invalidArgument, "the data is NULL") }
        try x.value(.data(Array(UnsafeBufferPointer(start: data, count: len))))
    }
}

@_cdecl("hc_plist_builder_uid")
public func hc_plist_builder_uid(_ b: OpaquePointer?, _ v: UInt64) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.value(.uid(v)) }
}

@_cdecl("hc_plist_builder_begin_array")
public func hc_plist_builder_begin_array(_ b: OpaquePointer?) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.beginArray() }
}

@_cdecl("hc_plist_builder_end_array")
public func hc_plist_builder_end_array(_ b: OpaquePointer?) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.endArray() }
}

@_cdecl("hc_plist_builder_begin_dict")
public func hc_plist_builder_begin_dict(_ b: OpaquePointer?) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.beginDictionary() }
}

@_cdecl("hc_plist_builder_end_dict")
public func hc_plist_builder_end_dict(_ b: OpaquePointer?) -> Int32 {
    build(b) { (x) throws(HTTPContentError) in try x.endDictionary() }
}

@_cdecl("hc_plist_builder_finish")
public func hc_plist_builder_finish(_ b: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("out") }
    out.pointee = nil
    guard let box = borrowHandle(b, as: PlistBuilderBox.self) else { return nullArgument("builder") }
    do {
        out.pointee = retainHandle(PlistNode(try box.builder.finish(), ownedByCaller: true))
        return HC_OK
    } catch {
        return fail(error)
    }
}
