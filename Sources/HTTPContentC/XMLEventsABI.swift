import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

// The XML events section of the header: a handler (and a parse of one buffer) that calls the
// caller's `hc_xml_callbacks` with the core's `XMLEvent`s (XMLEventParser / XMLEvents), for
// handlers of one's own that keep only what they need.

typealias XMLStartCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                                             UnsafePointer<CChar>?, UnsafePointer<UnsafePointer<CChar>?>?, Int, Int) -> Int32
typealias XMLTextCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int, Int32, Int) -> Int32
typealias XMLEndCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int) -> Int32
typealias XMLCommentCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int, Int) -> Int32

/// `hc_xml_callbacks`: a version, then four nullable function pointers, read from C memory
/// field by field at C's offsets (an unsigned int padded to pointer alignment, then pointers),
/// as `HandlerVTable` is.
struct XMLCallbacks {
    static let version: UInt32 = 1
    var start: XMLStartCallback?
    var text: XMLTextCallback?
    var end: XMLEndCallback?
    var comment: XMLCommentCallback?

    /// The callbacks at `raw`, or the error for NULL or a version this library does not know.
    static func read(_ raw: UnsafeRawPointer?, in function: String) -> Result<XMLCallbacks, HTTPContentError> {
        guard let raw else { return .failure(HTTPContentError(.invalidArgument, "\(function): callbacks is NULL")) }
        let version = raw.load(as: UInt32.self)
        guard version == XMLCallbacks.version else {
            return .failure(HTTPContentError(.invalidArgument,
                "\(function): callbacks version \(version) is not HC_XML_CALLBACKS_VERSION (\(XMLCallbacks.version))"))
        }
        let p = MemoryLayout<UnsafeRawPointer>.stride
        return .success(XMLCallbacks(start: raw.load(fromByteOffset: p, as: XMLStartCallback?.self),
                                     text: raw.load(fromByteOffset: 2 * p, as: XMLTextCallback?.self),
                                     end: raw.load(fromByteOffset: 3 * p, as: XMLEndCallback?.self),
                                     comment: raw.load(fromByteOffset: 4 * p, as: XMLCommentCallback?.self)))
    }

    /// Calls the callback for `event` with borrowed C strings (valid during the call only).
    func deliver(_ event: XMLEvent, depth: Int, userdata: UnsafeMutableRawPointer?) throws {
        let rc: Int32
        switch event {
        case .startElement(let name, let namespace, let prefix, let attributes):
            guard let start else { return }
            // Attributes as (local name, namespace URI or NULL, value) triples.
            var strings: [UnsafeMutablePointer<CChar>?] = []
            strings.reserveCapacity(3 * attributes.count + 3)
            defer { for s in strings { free(s) } }
            for a in attributes {
                strings.append(strdup(a.name))
                strings.append(a.namespace.flatMap { strdup($0) })
                strings.append(strdup(a.value))
            }
            let triples = strings.map { UnsafePointer($0) }
            rc = name.withCString { n in
                withOptionalCString(namespace) { ns in
                    withOptionalCString(prefix) { pre in
                        triples.withUnsafeBufferPointer { t in
                            start(userdata, n, ns, pre, attributes.isEmpty ? nil : t.baseAddress, attributes.count, depth)
                        }
                    }
                }
            }
        case .text(let s), .cdata(let s):
            guard let text else { return }
            var cdata: Int32 = 0
            if case .cdata = event { cdata = 1 }
            rc = s.withCString { text(userdata, $0, s.utf8.count, cdata, depth) }
        case .endElement(let name, let namespace):
            guard let end else { return }
            rc = name.withCString { n in withOptionalCString(namespace) { end(userdata, n, $0, depth) } }
        case .comment(let s):
            guard let comment else { return }
            rc = s.withCString { comment(userdata, $0, s.utf8.count, depth) }
        }
        try xmlVerdict(rc, "XML event")
    }
}

private func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

@_cdecl("hc_handler_xml_events_new")
public func hc_handler_xml_events_new(_ opts: OpaquePointer?, _ callbacks: UnsafeRawPointer?,
                                      _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    let cbs: XMLCallbacks
    switch XMLCallbacks.read(callbacks, in: "hc_handler_xml_events_new") {
    case .success(let c): cbs = c
    case .failure(let error): fail(error); return nil
    }
    let o = xmlSnapshot(opts)
    return retainHandle(HandlerSpec(acceptance: XML.defaultAcceptance()) { spec in
        XMLEvents(options: xmlLimited(o.options, spec), allowEmpty: o.allowEmpty, acceptance: spec.acceptance) {
            try cbs.deliver($0, depth: $1, userdata: userdata)
        }
    })
}

@_cdecl("hc_xml_events_parse")
public func hc_xml_events_parse(_ data: UnsafePointer<UInt8>?, _ len: Int, _ opts: OpaquePointer?,
                                _ callbacks: UnsafeRawPointer?, _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard data != nil || len == 0, len >= 0 else { return nullArgument("data") }
    let cbs: XMLCallbacks
    switch XMLCallbacks.read(callbacks, in: "hc_xml_events_parse") {
    case .success(let c): cbs = c
    case .failure(let error): return fail(error)
    }
    let parser = XMLEventParser(options: xmlSnapshot(opts).options) { try cbs.deliver($0, depth: $1, userdata: userdata) }
    do {
        if try parser.feed(UnsafeRawBufferPointer(start: data, count: len)) { try parser.finish() }
        return HC_OK
    } catch {
        return fail(error)
    }
}
