import Foundation
import Testing
@testable import HTTPContent

/// Parses `text` fed in chunks of `chunk` bytes (0: at once).
private func parse(_ text: String, _ options: XMLOptions = XMLOptions(), chunk: Int = 0) throws(HTTPContentError) -> XMLElement {
    try parseBytes(Array(text.utf8), options, chunk: chunk)
}

private func parseBytes(_ bytes: [UInt8], _ options: XMLOptions = XMLOptions(), chunk: Int = 0) throws(HTTPContentError) -> XMLElement {
    let parser = XMLStreamParser(options: options)
    let step = chunk > 0 ? chunk : max(bytes.count, 1)
    var i = 0
    while i < bytes.count {
        try parser.feed(Array(bytes[i..<min(i + step, bytes.count)]))
        i += step
    }
    return try parser.finish()
}

private func decodeError(_ text: String, _ options: XMLOptions = XMLOptions(), chunk: Int = 0) -> HTTPContentError? {
    do {
        _ = try parse(text, options, chunk: chunk)
        return nil
    } catch {
        return error
    }
}

@Suite("XML parsing (libxml2 push parser)")
struct XMLParserTests {
    @Test func optionDefaultsArePinned() {
        let o = XMLOptions()
        #expect(!o.keepComments && !o.keepCDATA && o.maxDepth == 256 && o.maxSize == nil)
        #expect(o.maxEntityExpansion == 1 << 20 && o.encoding == nil && o.errorBodyLimit == 65536)
        #expect(XMLOptions.defaultContentTypes.map(\.description) == ["application/xml", "text/xml", "*/*+xml"])
    }

    @Test func namespacesAttributesAndTextAtEveryChunkSize() throws {
        let doc = """
        <?xml version="1.0"?>
        <feed xmlns="http://www.w3.org/2005/Atom" xmlns:m="urn:m" xml:lang="en">
          <entry m:id="7" plain="a &amp; b"><title>T &lt;1&gt; &#x2014; caf\u{e9}</title><m:x/></entry>
        </feed>
        """
        for chunk in [0, 1, 2, 3, 7, 64] {
            let root = try parse(doc, chunk: chunk)
            #expect(root.tag == "{http://www.w3.org/2005/Atom}feed")
            #expect(root.namespaceDeclarations == [XMLNamespaceDeclaration(prefix: nil, uri: "http://www.w3.org/2005/Atom"),
                                                   XMLNamespaceDeclaration(prefix: "m", uri: "urn:m")])
            #expect(root.attribute("lang", namespace: "http://www.w3.org/XML/1998/namespace") == "en")
            let entry = try #require(root.first("entry"))
            #expect(entry.attribute("id", namespace: "urn:m") == "7")
            #expect(entry.attribute("plain") == "a & b")
            #expect(entry.first("title")?.text == "T <1> \u{2014} caf\u{e9}")
            #expect(entry.first("{urn:m}x")?.prefix == "m")
            #expect(entry.first("{}x") == nil)
            #expect(root.elements.count == 1)
        }
    }

    @Test func cdataAndCommentsAreKeptOrDroppedByOption() throws {
        let doc = "<a>x<!-- note --><![CDATA[<raw> & ]]>y<b/>z</a>"
        let plain = try parse(doc)
        #expect(plain.children == [.text("x<raw> & y"), .element(XMLElement(name: "b")), .text("z")])
        let kept = try parse(doc, XMLOptions(keepComments: true, keepCDATA: true))
        #expect(kept.children == [.text("x"), .comment(" note "), .cdata("<raw> & "), .text("y"),
                                  .element(XMLElement(name: "b")), .text("z")])
        #expect(kept.text == "x")
        #expect(kept.textContent == "x<raw> & yz")
    }

    @Test func internalEntitiesAreExpanded() throws {
        let doc = """
        <!DOCTYPE html [<!ENTITY nbsp "&#160;"><!ENTITY co "Example &amp; Co">]>
        <p>a&nbsp;b &co;</p>
        """
        #expect(try parse(doc).text == "a\u{a0}b Example & Co")
    }

    @Test func encodingComesFromTheDeclarationOrTheByteOrderMarkOrTheOption() throws {
        let latin: [UInt8] = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>caf".utf8) + [0xE9] + Array("</a>".utf8)
        #expect(try parseBytes(latin).text == "caf\u{e9}")
        #expect(try parseBytes(latin, chunk: 1).text == "caf\u{e9}")
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in "<?xml version=\"1.0\" encoding=\"UTF-16\"?><a b=\"\u{263a}\">\u{1F600}</a>".utf16 {
            utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)]
        }
        for chunk in [0, 1, 3] {
            let root = try parseBytes(utf16, chunk: chunk)
            #expect(root.text == "\u{1F600}" && root.attribute("b") == "\u{263a}")
        }
        // A charset from outside (Content-Type) wins over the declaration.
        let lying: [UInt8] = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?><a>".utf8) + [0xE9] + Array("</a>".utf8)
        #expect(try parseBytes(lying, XMLOptions(encoding: "iso-8859-1")).text == "\u{e9}")
        #expect(decodeError("<a/>", XMLOptions(encoding: "no-such-charset"))?.message.contains("no-such-charset") == true)
    }

    @Test func malformedDocumentsGiveDecodeErrorsWithLineAndOffset() {
        for bad in ["", "<a>", "<a></b>", "<a><b></a>", "text", "<a x='1' x='2'/>", "<p:a/>", "<a/><b/>", "<a>&undefined;</a>"] {
            let e = decodeError(bad)
            #expect(e?.code == .decode, "\(bad)")
        }
        let e = decodeError("<a>\n<b></c></a>", chunk: 2)
        #expect(e?.message.contains("line 2") == true)
        #expect(e?.offset != nil && e?.body.isEmpty == false)
        #expect(e.map { Array("<a>\n<b></c></a>".utf8).starts(with: $0.body) } == true)
    }

    @Test func depthAndSizeAreLimited() {
        let deep = String(repeating: "<a>", count: 20) + String(repeating: "</a>", count: 20)
        #expect(decodeError(deep, XMLOptions(maxDepth: 19))?.message.contains("deeper than 19") == true)
        #expect(decodeError(deep, XMLOptions(maxDepth: 20)) == nil)
        let tooDeep = String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300)
        #expect(decodeError(tooDeep)?.code == .decode)
        #expect(decodeError("<a>0123456789</a>", XMLOptions(maxSize: 10))?.code == .tooLarge)
    }

    // MARK: - Hostile documents

    @Test func billionLaughsIsRefused() {
        var doc = "<!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        doc += "<!ENTITY lol1 \"" + String(repeating: "&lol;", count: 10) + "\">"
        for i in 2...9 { doc += "<!ENTITY lol\(i) \"" + String(repeating: "&lol\(i - 1);", count: 10) + "\">" }
        doc += "]><lolz>&lol9;</lolz>"
        let started = Date()
        let e = decodeError(doc)
        #expect(e?.code == .decode)
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func quadraticBlowupIsRefused() {
        let big = String(repeating: "x", count: 50_000)
        let doc = "<!DOCTYPE q [<!ENTITY a \"\(big)\">]><q>" + String(repeating: "&a;", count: 2_000) + "</q>"
        let e = decodeError(doc)
        #expect(e?.code == .decode)
        #expect(e?.message.contains("entity expansion") == true)
        // A few references stay within the bound.
        let fine = "<!DOCTYPE q [<!ENTITY a \"\(big)\">]><q>&a;&a;</q>"
        #expect(decodeError(fine) == nil)
    }

    @Test func externalEntitiesAreNeverLoaded() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hc-xxe-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let secret = dir.appendingPathComponent("secret.txt")
        try "TOP-SECRET".write(to: secret, atomically: true, encoding: .utf8)
        let general = "<!DOCTYPE r [<!ENTITY xxe SYSTEM \"file://\(secret.path)\">]><r>&xxe;</r>"
        let e = decodeError(general)
        #expect(e?.code == .decode && e?.message.contains("external entity") == true)
        let parameter = "<!DOCTYPE r [<!ENTITY % p SYSTEM \"file://\(secret.path)\"> %p;]><r/>"
        let pe = decodeError(parameter)
        #expect(pe?.code == .decode && pe?.message.contains("external entity") == true)
        // An external DTD is not fetched: the document parses without it (its entities unknown).
        let dtd = dir.appendingPathComponent("x.dtd")
        try "<!ENTITY s \"TOP-SECRET\">".write(to: dtd, atomically: true, encoding: .utf8)
        let withDTD = "<!DOCTYPE r SYSTEM \"file://\(dtd.path)\"><r>&s;</r>"
        if let root = try? parse(withDTD) {
            #expect(!root.textContent.contains("TOP-SECRET"))
        }
        let network = "<!DOCTYPE r SYSTEM \"http://127.0.0.1:9/x.dtd\"><r>ok</r>"
        #expect(try parse(network).text == "ok")
    }

    // MARK: - Path streaming and events

    @Test func pathStreamingDeliversEachMatchCompleteThenForgetsIt() throws {
        let doc = """
        <feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
        <entry><id>1</id></entry><other><entry><id>no</id></entry></other><entry><id>2</id></entry></feed>
        """
        for chunk in [1, 5, 1000] {
            var got: [String] = []
            let parser = try XMLElementParser(paths: ["feed/entry"]) { index, e in
                #expect(index == 0)
                got.append(e.first("id")?.text ?? "?")
            }
            let bytes = Array(doc.utf8)
            var i = 0
            while i < bytes.count {
                try bytes[i..<min(i + chunk, bytes.count)].withUnsafeBytes { _ = try parser.feed($0) }
                i += chunk
            }
            #expect(try parser.finish() == XMLElementsSummary(count: 2, stoppedEarly: false))
            #expect(got == ["1", "2"])
        }
        var ns: [String] = []
        let p2 = try XMLElementParser(paths: ["{http://www.w3.org/2005/Atom}feed/{http://www.w3.org/2005/Atom}title",
                                              "{}feed/entry"]) { i, e in ns.append("\(i):\(e.text ?? "")") }
        try Array(doc.utf8).withUnsafeBytes { _ = try p2.feed($0) }
        _ = try p2.finish()
        #expect(ns == ["0:t"])
        var limited = 0
        let p3 = try XMLElementParser(paths: ["feed/entry"], limit: 1) { _, _ in limited += 1 }
        let more = try Array(doc.utf8).withUnsafeBytes { try p3.feed($0) }
        #expect(!more)
        #expect(p3.summary == XMLElementsSummary(count: 1, stoppedEarly: true) && limited == 1)
        #expect(throws: HTTPContentError.self) { try XMLElementParser(paths: []) { _, _ in } }
        #expect(throws: HTTPContentError.self) { try XMLElementParser(paths: [""]) { _, _ in } }
    }

    @Test func eventsGiveStartTextEnd() throws {
        var events: [String] = []
        let parser = XMLEventParser { event, depth in
            switch event {
            case .startElement(let name, let ns, _, let attrs):
                events.append("start \(depth) \(XMLElement.clark(name, ns)) \(attrs.map { "\($0.tag)=\($0.value)" })")
            case .text(let t): events.append("text \(depth) \(t)")
            case .endElement(let name, _): events.append("end \(depth) \(name)")
            case .cdata, .comment: events.append("other")
            }
        }
        try Array("<r xmlns='urn:r' a='1'>x<![CDATA[y]]><s/>&amp;z</r>".utf8).withUnsafeBytes { _ = try parser.feed($0) }
        try parser.finish()
        #expect(events == ["start 1 {urn:r}r [\"a=1\"]", "text 1 xy", "start 2 {urn:r}s []", "end 2 s",
                           "text 1 &z", "end 1 r"])
    }

    @Test func serializedTextParsesBackToTheSameElement() throws {
        let doc = "<a:r xmlns:a=\"urn:a\" xmlns=\"urn:d\" k=\"&quot;&lt;\n\"><b>t &amp; u</b><!--c--><c><![CDATA[a]]b]]></c></a:r>"
        let options = XMLOptions(keepComments: true)
        let root = try parse(doc, options)
        #expect(try parse(root.xmlString(), options) == root)
        #expect(try parse(root.xmlString(pretty: true), options).first("b") == root.first("b"))
    }
    @Test func aStreamedElementDeclaresTheNamespacesItInherits() throws {
        let doc = """
        <feed xmlns="urn:atom" xmlns:m="urn:m" xmlns:x="urn:unused">\
        <entry m:id="1" xml:lang="en"><title>t</title><m:thumb/><n:own xmlns:n="urn:n"/><p xmlns=""><q/></p></entry>\
        </feed>
        """
        var streamed: [XMLElement] = []
        let parser = try XMLElementParser(paths: ["feed/entry"]) { _, e in streamed.append(e) }
        try Array(doc.utf8).withUnsafeBytes { _ = try parser.feed($0) }
        _ = try parser.finish()
        let entry = try #require(streamed.first)
        #expect(entry.namespaceDeclarations.isEmpty)  // as written: the declarations are the feed's
        let standalone = entry.declaringInheritedNamespaces()
        // The default namespace and m (used), not x (unused), xml (never declared) or n (its own).
        #expect(standalone.namespaceDeclarations == [XMLNamespaceDeclaration(prefix: nil, uri: "urn:atom"),
                                                     XMLNamespaceDeclaration(prefix: "m", uri: "urn:m")])
        let back = try parse(standalone.xmlString())
        #expect(back.tag == entry.tag && back.elements.map(\.tag) == entry.elements.map(\.tag))
        #expect(back.attribute("id", namespace: "urn:m") == "1")
        #expect(back.first("p")?.first("q")?.namespace == nil)
        // xmlString writes those declarations itself: the streamed element's text stands alone.
        #expect(entry.xmlString() == standalone.xmlString())
        #expect(try parse(entry.xmlString()) == back)
        // Nothing to add: the same element.
        let root = try parse(doc)
        #expect(root.declaringInheritedNamespaces() == root)
    }

    @Test func aChildOfATreeSerializesStandaloneWithItsInheritedNamespaces() throws {
        let doc = "<a:r xmlns:a=\"urn:a\" xmlns=\"urn:d\" xmlns:u=\"urn:u\"><b a:k=\"1\"><a:c/>t</b><e xmlns=\"urn:e\"/></a:r>"
        let root = try parse(doc)
        let b = try #require(root.first("b"))
        #expect(b.xmlString() == "<b xmlns=\"urn:d\" xmlns:a=\"urn:a\" a:k=\"1\"><a:c/>t</b>")
        let back = try parse(b.xmlString())
        #expect(back.tag == "{urn:d}b" && back.attribute("k", namespace: "urn:a") == "1")
        #expect(back.first("{urn:a}c") != nil)
        // A child declaring its own default namespace needs nothing more; a leaf in a prefix gets it.
        #expect(try #require(root.first("e")).xmlString() == "<e xmlns=\"urn:e\"/>")
        #expect(try #require(b.first("c")).xmlString(pretty: true) == "<a:c xmlns:a=\"urn:a\"/>")
        // The root writes what it was parsed with, nothing added.
        #expect(root.xmlString() == doc)
    }
}
