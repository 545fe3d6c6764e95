import Foundation
import Testing
@testable import HTTPContent

private func docURL(_ bytes: [UInt8], ctype: String? = "application/xml", chunk: Int = 0) -> String {
    var u = TestServer.shared.url("/xml/doc?hex=" + bytes.map { String(format: "%02x", $0) }.joined())
    if let ctype { u += "&ctype=" + (ctype.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
    if chunk > 0 { u += "&chunk=\(chunk)" }
    return u
}

private func docURL(_ text: String, ctype: String? = "application/xml", chunk: Int = 0) -> String {
    docURL(Array(text.utf8), ctype: ctype, chunk: chunk)
}

@Suite("XML handlers over HTTP")
struct XMLHandlerTests {
    let client: Client
    init() throws { client = try Client() }

    @Test func treeHandlerParsesWhileTheBodyArrives() throws {
        let r = try client.get(docURL("<r xmlns='urn:r'><a k='v'>t</a></r>", chunk: 3), handler: XML())
        let root = try #require(r.content)
        #expect(root.tag == "{urn:r}r" && root.first("a")?.attribute("k") == "v" && root.first("a")?.text == "t")
    }

    @Test func acceptanceTypesAndEmptyBodies() throws {
        for t in ["application/xml", "text/xml; charset=utf-8", "application/atom+xml", "application/rss+xml"] {
            #expect(try client.get(docURL("<a/>", ctype: t), handler: XML()).content?.name == "a", "\(t)")
        }
        #expect(throws: HTTPContentError.self) { _ = try client.get(docURL("<a/>", ctype: "application/json"), handler: XML()) }
        let e = #expect(throws: HTTPContentError.self) { _ = try client.get(docURL(""), handler: XML()) }
        #expect(e?.code == .decode)
        #expect(try client.get(docURL(""), handler: XML(allowEmpty: true)).content == nil)
        let bad = #expect(throws: HTTPContentError.self) { _ = try client.get(docURL("<a><b></a>"), handler: XML()) }
        #expect(bad?.code == .decode && bad?.message.contains("line 1") == true)
    }

    @Test func contentTypeCharsetDecidesTheEncoding() throws {
        let latin: [UInt8] = Array("<a>caf".utf8) + [0xE9] + Array("</a>".utf8)
        #expect(try client.get(docURL(latin, ctype: "text/xml; charset=iso-8859-1"), handler: XML()).content?.text == "caf\u{e9}")
        #expect(throws: HTTPContentError.self) { _ = try client.get(docURL(latin, ctype: "text/xml"), handler: XML()) }
    }

    @Test func pathStreamingOverAFeedStopsEarlyOnLimit() throws {
        var ids: [String] = []
        let handler = try XMLElements(paths: ["feed/entry"]) { _, e in ids.append(e.first("id")?.text ?? "") }
        let r = try client.get(TestServer.shared.url("/xml/feed?n=1000"), handler: handler)
        #expect(r.content == XMLElementsSummary(count: 1000, stoppedEarly: false))
        #expect(ids.first == "urn:uuid:00000000" && ids.last == "urn:uuid:00000999")
        var n = 0
        let limited = try XMLElements(paths: ["feed/entry"], limit: 3) { _, _ in n += 1 }
        #expect(try client.get(TestServer.shared.url("/xml/feed?n=100000"), handler: limited).content
                == XMLElementsSummary(count: 3, stoppedEarly: true))
        #expect(n == 3)
        var m = 0
        let stopping = try XMLElements(paths: ["rss/channel/item"]) { _, _ in
            m += 1
            if m == 2 { throw StopTransfer() }
        }
        #expect(try client.get(TestServer.shared.url("/xml/feed?n=100000&kind=rss"), handler: stopping).content.stoppedEarly == true)
    }

    @Test func eventsHandlerReportsElementsAndText() throws {
        var starts = 0, ends = 0, text = ""
        let handler = XMLEvents { event, _ in
            switch event {
            case .startElement: starts += 1
            case .endElement: ends += 1
            case .text(let t): text += t
            default: break
            }
        }
        _ = try client.get(docURL("<a>x<b>y</b>z</a>", chunk: 1), handler: handler)
        #expect(starts == 2 && ends == 2 && text == "xyz")
    }

    @Test func hostileBodiesFailWithDecode() throws {
        var doc = "<!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\">"
        for i in 1...9 { doc += "<!ENTITY a\(i) \"" + String(repeating: "&a\(i == 1 ? "" : String(i - 1));", count: 10) + "\">" }
        doc += "]><l>&a9;</l>"
        let e = #expect(throws: HTTPContentError.self) { _ = try client.get(docURL(doc), handler: XML()) }
        #expect(e?.code == .decode)
        let big = #expect(throws: HTTPContentError.self) {
            _ = try client.get(TestServer.shared.url("/xml/feed?n=100000"), handler: XML(options: XMLOptions(maxSize: 100_000)))
        }
        #expect(big?.code == .tooLarge)
    }
}

@Suite("Compound handlers choose JSON, XML or plist by content type")
struct XMLCompoundTests {
    @Test func compoundPicksTheHandlerByContentType() throws {
        let client = try Client()
        // XML before Plist: the plist handler's default types include text/xml and application/xml.
        let every = { () throws -> Compound in Compound([JSON(), XML(), try Plist()]) }
        let json = try client.get(docURL(#"{"a": 1}"#, ctype: "application/json"), handler: try every())
        #expect(json.content.index == 0 && (json.content.content as? JSONValue?) == .some(["a": 1]))
        let xml = try client.get(docURL("<r><a/></r>", ctype: "text/xml"), handler: try every())
        #expect(xml.content.index == 1 && (xml.content.content as? XMLElement?)??.first("a") != nil)
        let value = PlistValue.dictionary([PlistMember(key: "a", value: .int(7)),
                                           PlistMember(key: "s", value: .string("caf\u{e9}"))])
        for (format, ctype) in [(PlistFormat.xml, "application/x-plist"), (.binary, "application/x-bplist")] {
            let hex = try value.serialized(format: format).map { String(format: "%02x", $0) }.joined()
            let plist = try client.get(TestServer.shared.url("/plist?ctype=\(ctype)&hex=\(hex)"), handler: try every())
            #expect(plist.content.index == 2 && (plist.content.content as? PlistValue?) == .some(value), "\(format)")
        }
        #expect(throws: HTTPContentError.self) {
            _ = try client.get(docURL("x", ctype: "text/plain"), handler: try every())
        }
    }
}
