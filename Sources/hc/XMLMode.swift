import HTTPContent

/// The body parsed as XML (libxml2, secure defaults) and printed indented. With --path
/// (`feed/entry`, `{uri}name` steps), each matching element is printed as soon as its end tag
/// arrives and then forgotten: a feed of any size streams in flat memory. Each printed element
/// is well-formed XML by itself (it declares the namespaces it inherits).
enum XMLMode: BodyMode {
    static let name = "xml"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        let o = exchange.options
        var acceptance = exchange.acceptance
        if o.acceptType.isEmpty { acceptance.contentTypes = XML.defaultAcceptance().contentTypes }
        var options = XMLOptions()
        if let maxSize = o.maxSize { options.maxSize = maxSize }
        if let path = o.keyPath {
            let paths = [XMLPath(path)]
            let r = try exchange.send(streamsToStdout: true) {
                PrintingElements(paths: paths, options: options, acceptance: acceptance)
            }
            if r.content.count == 0 { Output.write("(no element at \(path))\n") }
            return
        }
        let r = try exchange.send { XML(options: options, acceptance: acceptance) }
        guard let root = r.content else {
            Output.write("(empty response)\n")
            return
        }
        Output.write(root.xmlString(pretty: true) + "\n")
    }
}

/// `XMLElements` printing each element; a bad path fails the transfer at header time.
private final class PrintingElements: ContentHandler {
    private let inner: Result<XMLElements, HTTPContentError>

    init(paths: [XMLPath], options: XMLOptions, acceptance: Acceptance) {
        inner = Result { () throws(HTTPContentError) in
            try XMLElements(paths: paths, options: options, acceptance: acceptance) { _, element in
                // Standalone: xmlString declares the namespaces it inherits from its ancestors.
                Output.write(element.xmlString(pretty: true) + "\n")
            }
        }
    }

    func prepare(_ request: inout Request) throws { try inner.get().prepare(&request) }
    func accept(_ head: ResponseHead) throws -> Bool { try inner.get().accept(head) }
    func consume(_ chunk: UnsafeRawBufferPointer) throws { try inner.get().consume(chunk) }
    func finish() throws -> XMLElementsSummary { try inner.get().finish() }
    func cleanup(failed: Bool) { (try? inner.get())?.cleanup(failed: failed) }
}
