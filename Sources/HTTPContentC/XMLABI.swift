import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Options

/// An `hc_xml_options`: the parse options plus the handler-level ones, copied into each handler
/// or parse that uses them.
final class XMLOptionsBox {
    var options = XMLOptions()
    var allowEmpty = false
    var limit: Int? = nil
    var batchBytes = 64 * 1024
}

/// The `hc_xml_option` values.
private enum XMLOption: Int32 {
    case keepComments = 1, keepCDATA, maxDepth, maxSize, maxEntityExpansion, allowEmpty, elementsLimit, batchBytes,
         errorBodyLimit
}

@_cdecl("hc_xml_options_new")
public func hc_xml_options_new() -> OpaquePointer? {
    retainHandle(XMLOptionsBox())
}

@_cdecl("hc_xml_options_free")
public func hc_xml_options_free(_ opts: OpaquePointer?) {
    releaseHandle(opts, as: XMLOptionsBox.self)
}

@_cdecl("hc_xml_options_set")
public func hc_xml_options_set(_ opts: OpaquePointer?, _ option: Int32, _ value: Int64) -> Int32 {
    setOption(opts, option, value, "hc_xml_options_set", wide: { $0 == .maxSize || $0 == .maxEntityExpansion || $0 == .errorBodyLimit }) { (box: XMLOptionsBox, which: XMLOption) -> Int32 in
        let on = value != 0
        let n = Int(value)
        switch which {
        case .keepComments: box.options.keepComments = on
        case .keepCDATA: box.options.keepCDATA = on
        case .maxDepth:
            guard (1...256).contains(n) else { return fail(.invalidArgument, "hc_xml_options_set: max depth must be 1 to 256") }
            box.options.maxDepth = n
        case .maxSize: box.options.maxSize = n > 0 ? n : nil
        case .maxEntityExpansion: box.options.maxEntityExpansion = n
        case .allowEmpty: box.allowEmpty = on
        case .elementsLimit: box.limit = n > 0 ? n : nil
        case .batchBytes:
            guard n >= 1 else { return fail(.invalidArgument, "hc_xml_options_set: batch size must be at least 1") }
            box.batchBytes = n
        case .errorBodyLimit: box.options.errorBodyLimit = n
        }
        return HC_OK
    }
}

@_cdecl("hc_xml_options_get")
public func hc_xml_options_get(_ opts: OpaquePointer?, _ option: Int32, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    getOption(opts, option, out, "hc_xml_options_get") { (box: XMLOptionsBox, which: XMLOption) -> Int64 in
        let o = box.options
        switch which {
        case .keepComments: return optionFlag(o.keepComments)
        case .keepCDATA: return optionFlag(o.keepCDATA)
        case .maxDepth: return Int64(o.maxDepth)
        case .maxSize: return Int64(o.maxSize ?? 0)
        case .maxEntityExpansion: return Int64(o.maxEntityExpansion)
        case .allowEmpty: return optionFlag(box.allowEmpty)
        case .elementsLimit: return Int64(box.limit ?? 0)
        case .batchBytes: return Int64(box.batchBytes)
        case .errorBodyLimit: return Int64(o.errorBodyLimit)
        }
    }
}

func xmlSnapshot(_ opts: OpaquePointer?) -> XMLOptionsBox {
    let copy = XMLOptionsBox()
    if let box = borrowHandle(opts, as: XMLOptionsBox.self) {
        copy.options = box.options
        copy.allowEmpty = box.allowEmpty
        copy.limit = box.limit
        copy.batchBytes = box.batchBytes
    }
    return copy
}

// MARK: - Nodes

/// An `hc_xml`: one node of a tree, lending C strings and child handles made on first use.
final class XMLNodeBox {
    let node: XMLNode
    let ownedByCaller: Bool
    private var children: [XMLNodeBox?] = []
    let strings = CStringCache()
    private(set) lazy var elementChildren: [XMLNode] = {
        if case .element(let e) = node { return e.children }
        return []
    }()

    init(_ node: XMLNode, ownedByCaller: Bool = false) {
        self.node = node
        self.ownedByCaller = ownedByCaller
    }

    var element: XMLElement? {
        if case .element(let e) = node { return e }
        return nil
    }

    func child(_ index: Int) -> XMLNodeBox? {
        let all = elementChildren
        guard index >= 0, index < all.count else { return nil }
        if children.isEmpty { children = Array(repeating: nil, count: all.count) }
        if let c = children[index] { return c }
        let c = XMLNodeBox(all[index])
        children[index] = c
        return c
    }

    var pointer: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }
}

/// The content of a C XML tree response: the root (nil for an empty body).
final class XMLResponseContent {
    let root: XMLNodeBox?
    init(_ element: XMLElement?) { root = element.map { XMLNodeBox(.element($0)) } }
}

public typealias XMLElementCallback = @convention(c) (UnsafeMutableRawPointer?, Int, OpaquePointer?) -> Int32


func xmlVerdict(_ rc: Int32, _ what: String) throws {
    if rc == 0 { return }
    if rc == -1 { throw StopTransfer() }
    throw HTTPContentError(.callback, "the \(what) callback returned \(rc)")
}

func xmlPathList(_ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> [XMLPath]? {
    guard let paths, count > 0 else { return nil }
    var list: [XMLPath] = []
    for i in 0..<count {
        guard let p = string(paths[i]) else { return nil }
        list.append(XMLPath(p))
    }
    return list
}

/// The options with the handler's size limit (hc_handler_set_max_size), when one is set.
func xmlLimited(_ options: XMLOptions, _ spec: HandlerSpec) -> XMLOptions {
    guard let limit = spec.limit else { return options }
    var o = options
    o.maxSize = limit
    return o
}

func xmlFailing(_ error: any Error) -> FailingHandler {
    FailingHandler(reason: error)
}

// MARK: - Handlers

@_cdecl("hc_handler_xml_new")
public func hc_handler_xml_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    let o = xmlSnapshot(opts)
    return retainHandle(HandlerSpec(acceptance: XML.defaultAcceptance()) { spec in
        MappedHandler(XML(options: xmlLimited(o.options, spec), allowEmpty: o.allowEmpty, acceptance: spec.acceptance)) {
            XMLResponseContent($0)
        }
    })
}

@_cdecl("hc_handler_xml_elements_new")
public func hc_handler_xml_elements_new(_ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                        _ opts: OpaquePointer?, _ cb: XMLElementCallback?,
                                        _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    xmlElementsHandle(paths, count, opts, cb) { cb, _, options in
        XMLTreeBuilder(options: options) { index, element in
            let node = XMLNodeBox(.element(element))
            let rc = withExtendedLifetime(node) { cb(userdata, index, node.pointer) }
            try xmlVerdict(rc, "element")
        }
    }
}

/// A path-streaming handle (hc_handler_xml_elements_new and the binding's batches): the paths
/// and options are checked and copied now (a bad path or a NULL callback gives NULL and the last
/// error), and each request gets an `XMLElements` streaming into `makeCapture`'s capture.
func xmlElementsHandle<Callback>(_ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int, _ opts: OpaquePointer?,
                                 _ cb: Callback?,
                                 _ makeCapture: @escaping (Callback, XMLOptionsBox, XMLOptions) -> any XMLStreamCapture)
    -> OpaquePointer? {
    guard let list = xmlPathList(paths, count) else { nullArgument("paths"); return nil }
    guard let cb else { nullArgument("cb"); return nil }
    let o = xmlSnapshot(opts)
    func make(_ acceptance: Acceptance, _ options: XMLOptions) throws(HTTPContentError) -> XMLElements {
        try XMLElements(paths: list, options: options, limit: o.limit, allowEmpty: o.allowEmpty,
                        acceptance: acceptance) { makeCapture(cb, o, $0) }
    }
    do { _ = try make(XML.defaultAcceptance(), o.options) } catch { fail(error); return nil }
    return retainHandle(HandlerSpec(acceptance: XML.defaultAcceptance()) { spec -> any ContentHandler in
        do { return try make(spec.acceptance, xmlLimited(o.options, spec)) } catch { return xmlFailing(error) }
    })
}

// MARK: - Responses

@_cdecl("hc_response_xml")
public func hc_response_xml(_ response: OpaquePointer?) -> OpaquePointer? {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { nullArgument("response"); return nil }
    guard let content = content(box, as: XMLResponseContent.self) else {
        fail(.invalidArgument, "hc_response_xml: the response's handler is not an XML tree handler")
        return nil
    }
    guard let root = content.root else {
        ErrorBox.clearLast()
        return nil
    }
    return root.pointer
}

@_cdecl("hc_response_xml_elements")
public func hc_response_xml_elements(_ response: OpaquePointer?, _ count: UnsafeMutablePointer<Int>?,
                                     _ stoppedEarly: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    guard let summary = content(box, as: XMLElementsSummary.self) else {
        return fail(.invalidArgument, "hc_response_xml_elements: the response's handler is not an XML elements handler")
    }
    count?.pointee = summary.count
    stoppedEarly?.pointee = summary.stoppedEarly ? 1 : 0
    return HC_OK
}

// MARK: - Parsing and reading trees

@_cdecl("hc_xml_parse")
public func hc_xml_parse(_ data: UnsafePointer<UInt8>?, _ len: Int, _ opts: OpaquePointer?,
                         _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return nullArgument("out") }
    out.pointee = nil
    guard data != nil || len == 0, len >= 0 else { return nullArgument("data") }
    let parser = XMLStreamParser(options: xmlSnapshot(opts).options)
    do {
        try parser.feed(UnsafeRawBufferPointer(start: data, count: len))
        out.pointee = retainHandle(XMLNodeBox(.element(try parser.finish()), ownedByCaller: true))
        return HC_OK
    } catch {
        return fail(error)
    }
}

@_cdecl("hc_xml_free")
public func hc_xml_free(_ node: OpaquePointer?) {
    guard let box = borrowHandle(node, as: XMLNodeBox.self), box.ownedByCaller else { return }
    releaseHandle(node, as: XMLNodeBox.self)
}

@_cdecl("hc_xml_kind")
public func hc_xml_kind(_ node: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { return -1 }
    switch box.node {
    case .element: return 1
    case .text: return 2
    case .cdata: return 3
    case .comment: return 4
    }
}

@_cdecl("hc_xml_name")
public func hc_xml_name(_ node: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { nullArgument("node"); return nil }
    guard let e = box.element else { return nil }
    return box.strings.get("name") { e.name }
}

@_cdecl("hc_xml_namespace")
public func hc_xml_namespace(_ node: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { nullArgument("node"); return nil }
    guard let e = box.element else { return nil }
    return box.strings.get("ns") { e.namespace }
}

@_cdecl("hc_xml_prefix")
public func hc_xml_prefix(_ node: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { nullArgument("node"); return nil }
    guard let e = box.element else { return nil }
    return box.strings.get("prefix") { e.prefix }
}

@_cdecl("hc_xml_attribute_count")
public func hc_xml_attribute_count(_ node: OpaquePointer?) -> Int {
    borrowHandle(node, as: XMLNodeBox.self)?.element?.attributes.count ?? 0
}

@_cdecl("hc_xml_attribute_at")
public func hc_xml_attribute_at(_ node: OpaquePointer?, _ index: Int,
                                _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                _ namespace: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { return nullArgument("node") }
    let attrs = box.element?.attributes ?? []
    guard index >= 0, index < attrs.count else {
        return fail(.invalidArgument, "hc_xml_attribute_at: index \(index) out of range (\(attrs.count) attributes)")
    }
    let a = attrs[index]
    name?.pointee = box.strings.get("an#\(index)") { a.name }
    namespace?.pointee = box.strings.get("ans#\(index)") { a.namespace }
    value?.pointee = box.strings.get("av#\(index)") { a.value }
    return HC_OK
}

@_cdecl("hc_xml_attribute")
public func hc_xml_attribute(_ node: OpaquePointer?, _ name: UnsafePointer<CChar>?,
                             _ namespace: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { nullArgument("node"); return nil }
    guard let n = string(name) else { nullArgument("name"); return nil }
    guard let e = box.element else { return nil }
    let ns = string(namespace)
    guard let i = e.attributes.firstIndex(where: { $0.name == n && $0.namespace == ns }) else { return nil }
    return box.strings.get("av#\(i)") { e.attributes[i].value }
}

@_cdecl("hc_xml_child_count")
public func hc_xml_child_count(_ node: OpaquePointer?) -> Int {
    borrowHandle(node, as: XMLNodeBox.self)?.elementChildren.count ?? 0
}

@_cdecl("hc_xml_child_at")
public func hc_xml_child_at(_ node: OpaquePointer?, _ index: Int) -> OpaquePointer? {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { nullArgument("node"); return nil }
    guard let child = box.child(index) else {
        fail(.invalidArgument, "hc_xml_child_at: index \(index) out of range (\(box.elementChildren.count) children)")
        return nil
    }
    return child.pointer
}

@_cdecl("hc_xml_first")
public func hc_xml_first(_ node: OpaquePointer?, _ step: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let box = borrowHandle(node, as: XMLNodeBox.self), let s = string(step) else {
        nullArgument("node or step")
        return nil
    }
    let match = XMLPathStep(s)
    for (i, child) in box.elementChildren.enumerated() {
        if case .element(let e) = child, match.matches(e.name, e.namespace) { return box.child(i)?.pointer }
    }
    ErrorBox.clearLast()
    return nil
}

@_cdecl("hc_xml_text")
public func hc_xml_text(_ node: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                        _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { return nullArgument("node") }
    let text: String
    switch box.node {
    case .element(let e): text = e.textContent
    case .text(let s), .cdata(let s), .comment(let s): text = s
    }
    data?.pointee = box.strings.get("text") { text }
    len?.pointee = text.utf8.count
    return HC_OK
}

@_cdecl("hc_xml_serialize")
public func hc_xml_serialize(_ node: OpaquePointer?, _ pretty: Int32, _ data: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?,
                             _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let data, let len else { return nullArgument("data or len") }
    data.pointee = nil
    len.pointee = 0
    guard let box = borrowHandle(node, as: XMLNodeBox.self) else { return nullArgument("node") }
    guard let e = box.element else { return fail(.invalidArgument, "hc_xml_serialize: the node is not an element") }
    var text = e.xmlString(pretty: pretty != 0)
    let n = text.utf8.count
    guard let p = malloc(n + 1)?.assumingMemoryBound(to: UInt8.self) else {
        return fail(.localIO, "hc_xml_serialize: out of memory")
    }
    text.withUTF8 { u in if let b = u.baseAddress { memcpy(p, b, n) } }
    p[n] = 0
    data.pointee = p
    len.pointee = n
    return HC_OK
}
