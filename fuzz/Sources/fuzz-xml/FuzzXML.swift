// Fuzz target: libxml2's push parser behind `XMLPushParser`, through the three public parsers
// built on it: the tree (`XMLStreamParser`), the events (`XMLEventParser`) and path streaming
// (`XMLElementParser`), each fed whole and in random chunks (seeded from the input).
//
// Input: an options byte (bit 0 keepComments, 1 keepCDATA, 2 a small maxDepth, 3 a small
// maxEntityExpansion, 4 a small maxSize), a chunking seed byte, then the document.
// Checks: errors are decode or tooLarge errors; the tree does not depend on how the input was
// chunked (value or error code); the events rebuild the same tree; path streaming of `*/*`
// delivers exactly the root's child elements; the tree written as text (`xmlString`) parses back
// to an equal tree.
import FuzzSupport
import HTTPContent

func feedAll(_ chunks: [ArraySlice<UInt8>], _ feed: (UnsafeRawBufferPointer) throws(HTTPContentError) -> Bool)
    throws(HTTPContentError) {
    for chunk in chunks {
        var failure: HTTPContentError?
        var more = true
        Array(chunk).withUnsafeBytes { b in
            do { more = try feed(b) } catch { failure = error as? HTTPContentError ?? HTTPContentError(.localIO, "\(error)") }
        }
        if let failure { throw failure }
        if !more { return }
    }
}

func tree(_ chunks: [ArraySlice<UInt8>], _ options: XMLOptions) -> Result<XMLElement, HTTPContentError> {
    let parser = XMLStreamParser(options: options)
    do {
        try feedAll(chunks) { (b) throws(HTTPContentError) -> Bool in try parser.feed(b); return true }
        return .success(try parser.finish())
    } catch {
        return .failure(error)
    }
}

/// The tree the events describe (namespace declarations are not events: compared without them).
func fromEvents(_ chunks: [ArraySlice<UInt8>], _ options: XMLOptions) -> Result<XMLElement, HTTPContentError> {
    var stack: [XMLElement] = []
    var root: XMLElement?
    let parser = XMLEventParser(options: options) { event, depth in
        switch event {
        case .startElement(let name, let namespace, let prefix, let attributes):
            fuzzCheck(depth == stack.count + 1, "start depth \(depth) with \(stack.count) open")
            stack.append(XMLElement(name: name, namespace: namespace, prefix: prefix, attributes: attributes))
        case .text(let s):
            fuzzCheck(!s.isEmpty, "empty text event")
            if case .text = stack[stack.count - 1].children.last { fuzzFail("two text events in a row") }
            stack[stack.count - 1].children.append(.text(s))
        case .cdata(let s): stack[stack.count - 1].children.append(.cdata(s))
        case .comment(let s): stack[stack.count - 1].children.append(.comment(s))
        case .endElement(let name, let namespace):
            fuzzCheck(depth == stack.count, "end depth \(depth) with \(stack.count) open")
            let e = stack.removeLast()
            fuzzCheck(e.name == name && e.namespace == namespace, "end \(name) closes \(e.name)")
            if stack.isEmpty { root = e } else { stack[stack.count - 1].children.append(.element(e)) }
        }
    }
    do {
        try feedAll(chunks) { (b) throws(HTTPContentError) -> Bool in try parser.feed(b) }
        try parser.finish()
    } catch {
        return .failure(error)
    }
    guard let root else { return .failure(HTTPContentError(.decode, "no root element")) }
    return .success(root)
}

func withoutDeclarations(_ e: XMLElement) -> XMLElement {
    var e = e
    e.namespaceDeclarations = []
    e.children = e.children.map { if case .element(let c) = $0 { return .element(withoutDeclarations(c)) } else { return $0 } }
    return e
}

func expectedCode(_ e: HTTPContentError) {
    fuzzCheck(e.code == .decode || e.code == .tooLarge, "unexpected error code \(e.code): \(e.message)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var input = FuzzInput(data, size)
    let flags = input.byte()
    let seed = UInt64(input.byte()) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(size)
    let doc = input.rest()
    var options = XMLOptions()
    options.keepComments = flags & 1 != 0
    options.keepCDATA = flags & 2 != 0
    options.maxDepth = flags & 4 != 0 ? 8 : 64  // recursive checks below stay shallow
    if flags & 8 != 0 { options.maxEntityExpansion = 4096 }
    if flags & 16 != 0 { options.maxSize = 256 }

    let whole = [doc[...]]
    let chunks = randomChunks(doc, seed: seed)
    let a = tree(whole, options)
    let b = tree(chunks, options)
    switch (a, b) {
    case let (.failure(x), .failure(y)):
        expectedCode(x)
        expectedCode(y)
        if let maxSize = options.maxSize, doc.count > maxSize {
            // Whole, the size is refused before a byte is parsed; in chunks, a fault in the
            // first maxSize bytes may be found first.
            fuzzCheck(x.code == .tooLarge, "whole input over maxSize gave \(x.code): \(x.message)")
        } else {
            fuzzCheck(x.code == y.code, "chunking changed the error: \(x.message) / \(y.message)")
        }
    case let (.success(x), .success(y)):
        fuzzCheck(x == y, "chunking changed the tree: \(x.xmlString()) / \(y.xmlString())")
    default:
        fuzzFail("chunking changed success: \(a) / \(b)")
    }
    let events = fromEvents(chunks, options)
    switch (b, events) {  // the same chunks, so the same limit is met first
    case let (.success(x), .success(y)):
        fuzzCheck(withoutDeclarations(x) == y, "events differ from the tree: \(x.xmlString()) / \(y.xmlString())")
    case let (.failure(x), .failure(y)):
        expectedCode(y)
        fuzzCheck(x.code == y.code, "events changed the error: \(x.message) / \(y.message)")
    default:
        fuzzFail("events and tree disagree on success: \(a) / \(events)")
    }
    guard case .success(let root) = a else { return 0 }

    var delivered: [XMLElement] = []
    do {
        let parser = try XMLElementParser(paths: ["*/*"], options: options) { _, e in delivered.append(e) }
        try feedAll(chunks) { (b) throws(HTTPContentError) -> Bool in try parser.feed(b) }
        let summary = try parser.finish()
        fuzzCheck(summary.count == delivered.count && !summary.stoppedEarly, "summary \(summary) for \(delivered.count)")
    } catch {
        fuzzFail("path streaming failed on a document the tree read: \(error.message)")
    }
    // Streamed elements carry their own declarations only; the tree's children too.
    fuzzCheck(delivered == root.elements, "path streaming delivered other elements than the root's children")

    // The tree written as text reads back the same (a document's declarations are kept).
    var again = options
    again.maxSize = nil
    again.maxEntityExpansion = 1 << 20
    switch tree([Array(root.xmlString().utf8)[...]], again) {
    case .success(let back): fuzzCheck(back == root, "round trip: \(root.xmlString()) -> \(back.xmlString())")
    case .failure(let e): fuzzFail("own text does not parse: \(e.message): \(root.xmlString())")
    }
    return 0
}

@main struct FuzzXMLMain {
    static func main() { runFuzzer(fuzzTest) }
}
