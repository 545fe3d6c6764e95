import CXML2

/// libxml2's push parser (`xmlCreatePushParserCtxt`, SAX2), fed chunk by chunk: each chunk is
/// parsed at once, events go to the sink as they are found, and nothing of the document is kept
/// here. Secure by default (see `XMLOptions`): no DTD or external entity is ever loaded, no
/// network access, internal entity expansion is bounded, depth and size are limited.
package final class XMLPushParser {
    let options: XMLOptions
    private let sink: any XMLEventSink
    private var ctxt: xmlParserCtxtPtr?
    /// The first bytes, held until there are 4 (libxml2 detects a byte order mark or UTF-16
    /// only from the chunk the context is created with).
    private var head: [UInt8] = []
    package private(set) var bytesFed = 0
    package private(set) var bytesReceived = 0
    /// Set once the sink asked to stop (StopTransfer): later chunks are ignored.
    private(set) var stopped = false
    private var finished = false
    private var failure: HTTPContentError?
    private var depth = 0
    private var entityBytes = 0
    private var errorBody: [UInt8] = []

    package init(options: XMLOptions, sink: any XMLEventSink) {
        XMLPushParser.initialize
        self.options = options
        self.sink = sink
    }

    deinit { release() }

    private static let initialize: Void = { xmlInitParser() }()

    private func release() {
        guard let ctxt else { return }
        if let doc = hc_xml_take_doc(ctxt) { xmlFreeDoc(doc) }
        hc_xml_set_private(ctxt, nil)
        xmlFreeParserCtxt(ctxt)
        self.ctxt = nil
    }

    // MARK: - Feeding

    /// Parses `chunk`.
    /// - Returns: false once the sink stopped the parse (the rest is ignored).
    /// - Throws: `.decode` (message with line and column, `offset`, `body`), `.tooLarge`, or what
    ///   the sink threw.
    @discardableResult
    package func feed(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) -> Bool {
        if let failure { throw failure }
        if stopped || chunk.isEmpty { return !stopped }
        bytesReceived += chunk.count
        if let maxSize = options.maxSize, bytesFed + chunk.count > maxSize {
            throw record(HTTPContentError(.tooLarge, "XML body exceeds the limit of \(maxSize) bytes"))
        }
        if errorBody.count < options.errorBodyLimit {
            errorBody.append(contentsOf: chunk.prefix(options.errorBodyLimit - errorBody.count))
        }
        bytesFed += chunk.count
        if ctxt == nil {
            head.append(contentsOf: chunk)
            if head.count < 4 { return true }
            let first = head
            head = []
            do { try first.withUnsafeBytes { try start($0) } } catch { throw HTTPContentError.wrapping(error) }
            return !stopped
        }
        try push(chunk, terminate: false)
        return !stopped
    }

    func feed(_ bytes: [UInt8]) throws(HTTPContentError) {
        do { try bytes.withUnsafeBytes { _ = try feed($0) } } catch { throw HTTPContentError.wrapping(error) }
    }

    /// Ends the input: a document that is incomplete (or empty) fails with `.decode`.
    package func finish() throws(HTTPContentError) {
        if let failure { throw failure }
        if stopped || finished { return }
        finished = true
        if ctxt == nil {
            if head.isEmpty {
                throw record(HTTPContentError(.decode, "invalid XML: the document is empty", offset: 0))
            }
            let first = head
            head = []
            do { try first.withUnsafeBytes { try start($0) } } catch { throw HTTPContentError.wrapping(error) }
        }
        try push(UnsafeRawBufferPointer(start: nil, count: 0), terminate: true)
    }

    private func start(_ first: UnsafeRawBufferPointer) throws(HTTPContentError) {
        var sax = XMLPushParser.handler
        let override = options.encoding
        // With a charset from outside (Content-Type), the context starts empty so no byte order
        // mark detection runs, and the declaration's encoding is ignored.
        let initial = override == nil ? first : UnsafeRawBufferPointer(start: nil, count: 0)
        let made = initial.withMemoryRebound(to: CChar.self) { chars in
            xmlCreatePushParserCtxt(&sax, nil, chars.baseAddress, Int32(chars.count), nil)
        }
        guard let made else { throw record(HTTPContentError(.decode, "libxml2 could not create a parser")) }
        ctxt = made
        hc_xml_set_private(made, Unmanaged.passUnretained(self).toOpaque())
        // NOENT: internal entities are replaced (as ElementTree does), external ones refused in
        // getEntity; NONET: nothing is fetched from the network even if something tried.
        var flags = Int32(XML_PARSE_NOENT.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_NOWARNING.rawValue)
        if override != nil { flags |= Int32(XML_PARSE_IGNORE_ENC.rawValue) }
        xmlCtxtUseOptions(made, flags)
        if let override {
            guard let handler = xmlFindCharEncodingHandler(override) else {
                throw record(HTTPContentError(.decode, "invalid XML: unknown character encoding \"\(override)\"",
                                              offset: 0))
            }
            if xmlSwitchToEncoding(made, handler) != 0 {
                throw record(HTTPContentError(.decode, "invalid XML: cannot read the encoding \"\(override)\"", offset: 0))
            }
            try push(first, terminate: false)
        } else {
            // The first bytes went in with the context; parse them now (not at the next chunk).
            try push(UnsafeRawBufferPointer(start: nil, count: 0), terminate: false)
        }
    }

    private func push(_ chunk: UnsafeRawBufferPointer, terminate: Bool) throws(HTTPContentError) {
        guard let ctxt else { return }
        var rest = chunk
        repeat {
            if rest.isEmpty && !terminate {
                _ = xmlParseChunk(ctxt, nil, 0, 0)
                if let failure { throw failure }
                if ctxt.pointee.wellFormed == 0 && !stopped {
                    throw record(HTTPContentError(.decode, "invalid XML at byte \(consumed)", offset: consumed))
                }
                return
            }
            let n = min(rest.count, 1 << 30)
            let rc = rest.withMemoryRebound(to: CChar.self) { chars in
                xmlParseChunk(ctxt, chars.baseAddress, Int32(n), terminate && n == rest.count ? 1 : 0)
            }
            if let failure { throw failure }
            if stopped { return }
            if rc != 0 || ctxt.pointee.wellFormed == 0 {
                throw record(HTTPContentError(.decode, "invalid XML at byte \(consumed): libxml2 error \(rc)",
                                              offset: consumed))
            }
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        } while !rest.isEmpty
    }

    private var consumed: Int { ctxt.map { max(0, Int(hc_xml_byte_index($0))) } ?? bytesFed }

    /// Keeps the first failure (with the body's first bytes for a decode error) and stops libxml2.
    @discardableResult
    private func record(_ error: HTTPContentError) -> HTTPContentError {
        if let failure { return failure }
        var error = error
        if error.code == .decode && error.body.isEmpty { error.body = errorBody }
        failure = error
        errorBody = []
        if let ctxt { xmlStopParser(ctxt) }
        return error
    }

    private func fail(_ error: any Error) {
        if error is StopTransfer {
            stopped = true
            if let ctxt { xmlStopParser(ctxt) }
            return
        }
        record(HTTPContentError.wrapping(error))
    }

    // MARK: - SAX callbacks

    private static func parser(_ ctx: UnsafeMutableRawPointer?) -> XMLPushParser? {
        guard let ctx, let p = hc_xml_private(ctx) else { return nil }
        return Unmanaged<XMLPushParser>.fromOpaque(p).takeUnretainedValue()
    }

    private func onStart(_ tag: XMLStartTag) {
        if failure != nil || stopped { return }
        depth += 1
        if depth > options.maxDepth {
            record(HTTPContentError(.decode, "invalid XML: elements nested deeper than \(options.maxDepth) (at byte \(consumed))",
                                    offset: consumed))
            return
        }
        do { try sink.start(tag, depth: depth) } catch { fail(error) }
    }

    private func onEnd() {
        if failure != nil || stopped { return }
        do { try sink.end(depth: depth) } catch { fail(error) }
        depth -= 1
    }

    private func onText(_ p: UnsafePointer<UInt8>?, _ n: Int32, cdata: Bool) {
        if failure != nil || stopped || n <= 0 { return }
        do { try sink.text(UnsafeBufferPointer(start: p, count: Int(n)), cdata: cdata) } catch { fail(error) }
    }

    private func onComment(_ p: UnsafePointer<UInt8>?) {
        if failure != nil || stopped || !options.keepComments || depth == 0 { return }
        guard let p else { return }
        do { try sink.comment(UnsafeBufferPointer(start: p, count: Int(xmlStrlen(p)))) } catch { fail(error) }
    }

    /// An entity reference: internal ones are counted against `maxEntityExpansion`, external ones
    /// refused (libxml2's own xmlSAX2GetEntity would load them).
    private func onEntity(_ ent: xmlEntityPtr?, _ name: UnsafePointer<UInt8>?, parameter: Bool) -> xmlEntityPtr? {
        guard let ent else { return nil }
        let kind = ent.pointee.etype
        if kind == XML_EXTERNAL_GENERAL_PARSED_ENTITY || kind == XML_EXTERNAL_GENERAL_UNPARSED_ENTITY
            || kind == XML_EXTERNAL_PARAMETER_ENTITY {
            let what = parameter ? "%" : "&"
            record(HTTPContentError(.decode,
                "invalid XML: the external entity \(what)\(xmlString(name) ?? "");" + " is refused (external entities are never loaded)",
                offset: consumed))
            return nil
        }
        if kind == XML_INTERNAL_PREDEFINED_ENTITY { return ent }
        entityBytes += Int(hc_xml_entity_length(ent))
        let allowed = options.maxEntityExpansion + bytesFed
        if entityBytes > allowed {
            record(HTTPContentError(.decode,
                "invalid XML: entity expansion exceeds \(allowed) bytes (maxEntityExpansion \(options.maxEntityExpansion) plus the document's size): a billion-laughs or quadratic-blowup document is refused",
                offset: consumed))
            return nil
        }
        return ent
    }

    private func onError(_ error: xmlErrorPtr?) {
        guard let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
        if failure != nil || stopped { return }
        var message = xmlString(UnsafeRawPointer(error.pointee.message)?.assumingMemoryBound(to: UInt8.self)) ?? "error"
        while message.last == "\n" { message.removeLast() }
        let at = consumed
        record(HTTPContentError(.decode,
            "invalid XML at line \(error.pointee.line), column \(error.pointee.int2) (byte \(at)): \(message)",
            offset: at))
    }

    // Copied by libxml2 into each context; never written after it is made.
    nonisolated(unsafe) private static let handler: xmlSAXHandler = {
        var sax = xmlSAXHandler()
        sax.initialized = hc_xml_sax2_magic()
        // libxml2's own callbacks keep the DTD's entity declarations (in ctxt->myDoc), so internal
        // entities can be expanded; nothing of the external subset is ever fetched.
        sax.startDocument = xmlSAX2StartDocument
        sax.internalSubset = xmlSAX2InternalSubset
        sax.entityDecl = xmlSAX2EntityDecl
        sax.isStandalone = xmlSAX2IsStandalone
        sax.hasInternalSubset = xmlSAX2HasInternalSubset
        sax.hasExternalSubset = xmlSAX2HasExternalSubset
        sax.externalSubset = nil
        sax.resolveEntity = { _, _, _ in nil }
        sax.getEntity = { ctx, name in
            guard let ctx, let p = XMLPushParser.parser(ctx) else { return nil }
            let ctxt = hc_xml_ctxt(ctx)!
            var ent: xmlEntityPtr?
            if ctxt.pointee.inSubset == 0 { ent = xmlGetPredefinedEntity(name) }
            if ent == nil { ent = xmlGetDocEntity(ctxt.pointee.myDoc, name) }
            return p.onEntity(ent, name, parameter: false)
        }
        sax.getParameterEntity = { ctx, name in
            guard let ctx, let p = XMLPushParser.parser(ctx) else { return nil }
            let ctxt = hc_xml_ctxt(ctx)!
            return p.onEntity(xmlGetParameterEntity(ctxt.pointee.myDoc, name), name, parameter: true)
        }
        sax.startElementNs = { ctx, localname, prefix, uri, nbNs, namespaces, nbAttrs, _, attributes in
            guard let localname, let p = XMLPushParser.parser(ctx) else { return }
            p.onStart(XMLStartTag(localname: localname, prefix: prefix, uri: uri, nbNamespaces: Int(nbNs),
                                  namespaces: namespaces, nbAttributes: Int(nbAttrs), attributes: attributes))
        }
        sax.endElementNs = { ctx, _, _, _ in XMLPushParser.parser(ctx)?.onEnd() }
        sax.characters = { ctx, ch, len in XMLPushParser.parser(ctx)?.onText(ch, len, cdata: false) }
        sax.ignorableWhitespace = { ctx, ch, len in XMLPushParser.parser(ctx)?.onText(ch, len, cdata: false) }
        sax.cdataBlock = { ctx, ch, len in XMLPushParser.parser(ctx)?.onText(ch, len, cdata: true) }
        sax.comment = { ctx, value in XMLPushParser.parser(ctx)?.onComment(value) }
        sax.serror = { ctx, error in XMLPushParser.parser(ctx)?.onError(error) }
        return sax
    }()
}
