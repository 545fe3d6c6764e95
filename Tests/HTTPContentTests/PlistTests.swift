import Foundation
import Testing
@testable import HTTPContent

private func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.utf8.makeIterator()
    while let a = it.next(), let b = it.next() {
        out.append(UInt8(String(decoding: [a, b], as: UTF8.self), radix: 16)!)
    }
    return out
}

/// What plistlib 3.11 wrote (`plistlib.dumps(doc, fmt=...)`, keys sorted) for the document below.
private let plistlibBinary = hex("62706c6973743030df100f0102030405060708090a0b0c0d0e0f101415161718191a1b1c1d1e1f202151615564313936305564323035305464617461516551665169536d6178536d696e5270695172517351745375696454756d6178a31112131001a0d033c1d31e4fa9c000003341d70b0a89500000430001ff500813fffffffffffffffb137fffffffffffffff13800000000000000023400921f9f01b866e2340080000000000006a006800e9006c006c006f0020263a0020d834dd1e09802a140000000000000000ffffffffffffffff08292b31373c3e4042464a4d4f5153575c606263646d767a7b7c858e97a0a9bebfc100000000000001010000000000000022000000000000000000000000000000d2")
private let plistlibXML = hex("3c3f786d6c2076657273696f6e3d22312e302220656e636f64696e673d225554462d38223f3e0a3c21444f435459504520706c697374205055424c494320222d2f2f4170706c652f2f44544420504c49535420312e302f2f454e222022687474703a2f2f7777772e6170706c652e636f6d2f445444732f50726f70657274794c6973742d312e302e647464223e0a3c706c6973742076657273696f6e3d22312e30223e0a3c646963743e0a093c6b65793e613c2f6b65793e0a093c61727261793e0a09093c696e74656765723e313c2f696e74656765723e0a09093c61727261792f3e0a09093c646963742f3e0a093c2f61727261793e0a093c6b65793e64313936303c2f6b65793e0a093c646174653e313936302d30352d30365430373a30383a30395a3c2f646174653e0a093c6b65793e64323035303c2f6b65793e0a093c646174653e323035302d30312d30325430333a30343a30355a3c2f646174653e0a093c6b65793e646174613c2f6b65793e0a093c646174613e0a094141482f0a093c2f646174613e0a093c6b65793e653c2f6b65793e0a093c737472696e673e3c2f737472696e673e0a093c6b65793e663c2f6b65793e0a093c66616c73652f3e0a093c6b65793e693c2f6b65793e0a093c696e74656765723e2d353c2f696e74656765723e0a093c6b65793e6d61783c2f6b65793e0a093c696e74656765723e393232333337323033363835343737353830373c2f696e74656765723e0a093c6b65793e6d696e3c2f6b65793e0a093c696e74656765723e2d393232333337323033363835343737353830383c2f696e74656765723e0a093c6b65793e70693c2f6b65793e0a093c7265616c3e332e31343135393c2f7265616c3e0a093c6b65793e723c2f6b65793e0a093c7265616c3e332e303c2f7265616c3e0a093c6b65793e733c2f6b65793e0a093c737472696e673e68c3a96c6c6f20e298ba20f09d849e3c2f737472696e673e0a093c6b65793e743c2f6b65793e0a093c747275652f3e0a093c6b65793e756d61783c2f6b65793e0a093c696e74656765723e31383434363734343037333730393535313631353c2f696e74656765723e0a3c2f646963743e0a3c2f706c6973743e0a")

/// The document, keys in plistlib's sorted order; `uid` only in the binary form, and the XML
/// form's 2050 date without its quarter second.
private func expected(binary: Bool) -> PlistValue {
    var members: [PlistMember] = [
        .init(key: "a", value: [1, [], .dictionary([])]),
        .init(key: "d1960", value: .date(PlistDate(secondsSince2001: -1283014311))),
        .init(key: "d2050", value: .date(PlistDate(secondsSince2001: binary ? 1546398245.25 : 1546398245))),
        .init(key: "data", value: .data([0, 1, 0xFF])),
        .init(key: "e", value: ""),
        .init(key: "f", value: false),
        .init(key: "i", value: -5),
        .init(key: "max", value: .int(.max)),
        .init(key: "min", value: .int(.min)),
        .init(key: "pi", value: 3.14159),
        .init(key: "r", value: .real(3)),
        .init(key: "s", value: "héllo ☺ 𝄞"),
        .init(key: "t", value: true),
    ]
    if binary { members.append(.init(key: "uid", value: .uid(42))) }
    members.append(.init(key: "umax", value: .uint(.max)))
    return .dictionary(members)
}

/// Every kind of value, the extremes of each, dates far from 2001 and unicode.
private let everything: PlistValue = [
    "ints": [.int(.min), .int(.max), .uint(.max), .uint(UInt64(Int64.max) + 1), -1, 0, 1],
    "reals": [0.1, 1e-300, 1.2345678901234567, 3.0, -2.5, 1e300],
    "dates": [.date(PlistDate(secondsSince2001: -3187296000)), .date(PlistDate(secondsSince2001: 3124137600)),
              .date(PlistDate(secondsSince2001: -1283014311)), .date(PlistDate(secondsSince2001: 1546398245.25)),
              .date(PlistDate(secondsSince2001: -0.5)), .date(PlistDate(secondsSince2001: 0.123456)),
              .date(PlistDate(secondsSince2001: -62135596800)), .date(PlistDate(secondsSince2001: 252423993599))],
    "strings": ["", "ascii", "héllo ☺ 𝄞 日本語", "<&>\"'", "tab\tline\nend"],
    "data": [.data([]), .data(Array(0...255))],
    "bools": [true, false],
    "nested": [["a": [["b": [[]]]]], .dictionary([])],
    "ключ ☺": "unicode key",
]

/// XML carries whole seconds only: what `everything` becomes there.
private func floorDates(_ v: PlistValue) -> PlistValue {
    switch v {
    case .date(let d): return .date(PlistDate(secondsSince2001: d.secondsSince2001.rounded(.down)))
    case .array(let a): return .array(a.map(floorDates))
    case .dictionary(let m): return .dictionary(m.map { PlistMember(key: $0.key, value: floorDates($0.value)) })
    default: return v
    }
}

/// A binary plist made by hand: `objects` are each object's bytes (references 2 bytes wide).
private func bplist(_ objects: [[UInt8]], top: Int = 0) -> [UInt8] {
    var out = Array("bplist00".utf8)
    var offsets: [Int] = []
    for o in objects { offsets.append(out.count); out += o }
    let table = out.count
    for off in offsets { out += [UInt8(off >> 24 & 0xFF), UInt8(off >> 16 & 0xFF), UInt8(off >> 8 & 0xFF), UInt8(off & 0xFF)] }
    func be8(_ v: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }
    out += [0, 0, 0, 0, 0, 0, 4, 2] + be8(objects.count) + be8(top) + be8(table)
    return out
}

/// An array object of `refs` (2-byte references).
private func arrayObject(_ refs: [Int]) -> [UInt8] {
    var o: [UInt8] = refs.count < 15 ? [0xA0 | UInt8(refs.count)] : [0xAF, 0x11, UInt8(refs.count >> 8), UInt8(refs.count & 0xFF)]
    for r in refs { o += [UInt8(r >> 8), UInt8(r & 0xFF)] }
    return o
}

@Suite("Property lists: parser, writer, limits")
struct PlistParserTests {
    @Test func readsWhatPlistlibWrites() throws {
        #expect(try PlistParser.parse(plistlibBinary) == expected(binary: true))
        #expect(try PlistParser.parse(plistlibXML) == expected(binary: false))
    }

    @Test func roundTripsEveryTypeInBothFormats() throws {
        let binary = try everything.serialized(format: .binary)
        #expect(Array(binary.prefix(8)) == Array("bplist00".utf8))
        #expect(try PlistParser.parse(binary) == everything)
        let xml = try everything.serialized(format: .xml)
        #expect(String(decoding: xml.prefix(5), as: UTF8.self) == "<?xml")
        #expect(try PlistParser.parse(xml) == floorDates(everything))
        // UIDs exist in the binary format, up to 32 bits wide in libplist 2.2.
        let uids: PlistValue = [.uid(0), .uid(42), .uid(300), .uid(70000), .uid(UInt64(UInt32.max))]
        #expect(try PlistParser.parse(uids.serialized(format: .binary)) == uids)
        #expect(throws: HTTPContentError.self) { try PlistValue.uid(UInt64(UInt32.max) + 1).serialized(format: .binary) }
    }

    @Test func scalarAndEmptyRoots() throws {
        for v: PlistValue in ["x", 5, .int(.min), .uint(.max), 2.5, true, .data([]), [], .dictionary([]),
                              .date(PlistDate(secondsSince2001: -3187296000))] {
            #expect(try PlistParser.parse(v.serialized(format: .binary)) == v)
            #expect(try PlistParser.parse(v.serialized(format: .xml)) == floorDates(v))
        }
    }

    @Test func fractionalDatesAreExact() throws {
        // Every date within int32 seconds of 2001 with a fraction, both signs, read exactly.
        var dates: [PlistValue] = []
        var s = -2_000_000_000.0
        while s < 2_000_000_000 {
            for f in [0.0, 0.000001, 0.1, 0.5, 0.999999, 0.123456789] { dates.append(.date(PlistDate(secondsSince2001: s + f))) }
            s += 123_456_789.5
        }
        let v = PlistValue.array(dates)
        #expect(try PlistParser.parse(v.serialized(format: .binary)) == v)
    }

    @Test func writerRefusesWhatTheFormatCannotCarry() throws {
        #expect(throws: HTTPContentError.self) { try PlistValue.string("a\u{0}b").serialized(format: .binary) }
        do {
            _ = try PlistValue.string("bell\u{7}").serialized(format: .xml)
            Issue.record("control character written to XML")
        } catch {
            #expect(error.code == .invalidArgument)
        }
        // The binary format carries control characters.
        #expect(try PlistParser.parse(PlistValue.string("bell\u{7}").serialized(format: .binary)) == "bell\u{7}")
    }

    @Test func malformedInputIsADecodeError() throws {
        for bad in ["", "<plist><dict><key>a</key></plist>", "not a plist", "<plist version=\"1.0\"><integer>x",
                    "bplist00", "bplist00\u{0}\u{0}\u{0}"] {
            do {
                _ = try PlistParser.parse(Array(bad.utf8))
                Issue.record("accepted \(bad)")
            } catch {
                #expect(error.code == .decode, "\(bad): \(error)")
                #expect(!error.message.isEmpty)
            }
        }
        // A trailer pointing outside the document.
        var b = try PlistValue.array([1, 2]).serialized(format: .binary)
        b[b.count - 1] = 0xFF
        #expect(throws: HTTPContentError.self) { try PlistParser.parse(b) }
    }

    @Test func deepXMLIsRefusedBeforeLibplist() throws {
        let depth = 100_000
        let doc = "<plist version=\"1.0\">" + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</plist>"
        do {
            _ = try PlistParser.parse(Array(doc.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .decode)
            #expect(error.message.contains("depth"))
        }
        // At the limit it parses; one deeper it does not.
        let ok = "<plist>" + String(repeating: "<array>", count: 512) + String(repeating: "</array>", count: 512) + "</plist>"
        #expect(try PlistParser.parse(Array(ok.utf8)).count == 1)
        let over = "<plist>" + String(repeating: "<array>", count: 513) + String(repeating: "</array>", count: 513) + "</plist>"
        #expect(throws: HTTPContentError.self) { try PlistParser.parse(Array(over.utf8)) }
    }

    @Test func deepBinaryIsRefused() throws {
        let depth = 5000
        var objects = (0..<depth - 1).map { arrayObject([$0 + 1]) }
        objects.append(arrayObject([]))
        do {
            _ = try PlistParser.parse(bplist(objects))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .decode)
            #expect(error.message.contains("depth"))
        }
        let ok = bplist((0..<511).map { arrayObject([$0 + 1]) } + [arrayObject([])])
        #expect(try PlistParser.parse(ok).count == 1)
    }

    @Test func sharedReferencesThatExpandHugelyAreTooLarge() throws {
        // 40 arrays of 10 references each to the next: 10^39 values once expanded.
        var objects = (0..<40).map { i in arrayObject(Array(repeating: i + 1, count: 10)) }
        objects.append([0x10, 7])
        let doc = bplist(objects)
        #expect(doc.count < 2000)
        do {
            _ = try PlistParser.parse(doc)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .tooLarge)
        }
        // A modest sharing is fine and counted per reference.
        let small = bplist([arrayObject([1, 1, 1]), arrayObject([2, 2]), [0x10, 7]])
        #expect(try PlistParser.parse(small) == [[7, 7], [7, 7], [7, 7]])
        #expect(throws: HTTPContentError.self) { try PlistParser.parse(small, options: PlistOptions(maxObjects: 9)) }
        #expect(try PlistParser.parse(small, options: PlistOptions(maxObjects: 10)).count == 3)
    }

    @Test func cyclesAreRefused() throws {
        let doc = bplist([arrayObject([1]), arrayObject([0])])
        do {
            _ = try PlistParser.parse(doc)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .decode)
            #expect(error.message.contains("contains itself"))
        }
    }

    @Test func manyXMLValuesAreTooLarge() throws {
        let doc = "<plist><array>" + String(repeating: "<true/>", count: 1000) + "</array></plist>"
        #expect(try PlistParser.parse(Array(doc.utf8)).count == 1000)
        do {
            _ = try PlistParser.parse(Array(doc.utf8), options: PlistOptions(maxObjects: 500))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }

    @Test func entitiesAndDTDsAreNeverResolved() throws {
        for doc in ["<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><plist><string>&x;</string></plist>",
                    "<?xml version=\"1.0\"?><!DOCTYPE plist [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><plist><string>&b;&b;&b;</string></plist>",
                    "<plist><string>&undefined;</string></plist>"] {
            do {
                let v = try PlistParser.parse(Array(doc.utf8))
                Issue.record("accepted: \(v)")
            } catch {
                #expect(error.code == .decode)
            }
        }
        // The five predefined entities and character references are fine.
        #expect(try PlistParser.parse(Array("<plist><string>&lt;&amp;&gt;&quot;&apos;&#x263a;&#65;</string></plist>".utf8)) == "<&>\"'☺A")
    }

    @Test func sizeLimit() throws {
        let doc = try PlistValue.array(Array(repeating: "0123456789", count: 100)).serialized(format: .binary)
        #expect(throws: HTTPContentError.self) { try PlistParser.parse(doc, options: PlistOptions(maxSize: doc.count - 1)) }
        #expect(try PlistParser.parse(doc, options: PlistOptions(maxSize: doc.count)).count == 100)
    }

    @Test func optionDefaults() throws {
        let o = PlistOptions()
        #expect(o.maxDepth == 512)
        #expect(o.maxSize == 64 << 20)
        #expect(o.maxObjects == 10_000_000)
        #expect(o.errorBodyLimit == 64 * 1024)
        #expect(throws: HTTPContentError.self) { try Plist(options: PlistOptions(maxDepth: 0)) }
        #expect(throws: HTTPContentError.self) { try Plist(options: PlistOptions(maxDepth: PlistOptions.depthCeiling + 1)) }
        #expect(PlistFormat.binary.contentType == "application/x-bplist")
        #expect(PlistFormat.xml.contentType == "application/x-plist")
    }

    struct Item: Decodable, Equatable {
        var name: String
        var count: Int32
        var big: UInt64
        var score: Double
        var ok: Bool
        var blob: [UInt8]
        var when: PlistDate
        var tags: [String]
        var missing: String?
    }

    @Test func decodableFromValues() throws {
        let v: PlistValue = ["name": "a", "count": 7, "big": .uint(.max), "score": 2, "ok": true, "blob": .data([1, 2]),
                             "when": .date(PlistDate(secondsSince1970: 0)), "tags": ["x", "y"]]
        let item = try v.decode(Item.self)
        #expect(item == Item(name: "a", count: 7, big: .max, score: 2, ok: true, blob: [1, 2],
                             when: PlistDate(secondsSince2001: -978_307_200), tags: ["x", "y"], missing: nil))
        do {
            let v: PlistValue = ["name": "a", "count": .int(1 << 40)]
            _ = try v.decode(Item.self)
            Issue.record("decoded")
        } catch {
            #expect(error.code == .decode)
            #expect(error.message.contains("count"))
        }
    }
}

@Suite("Property-list handler end to end", .enabled(if: JSONTestServer.shared != nil, "python3 test server could not start"))
struct PlistHandlerTests {
    let client: Client
    let s: JSONTestServer

    init() throws {
        client = try Client()
        s = try #require(JSONTestServer.shared)
    }

    private func echo(_ body: [UInt8], ctype: String = "application/x-plist", extra: String = "") -> Request {
        var r = Request("POST", s.url("/plist?ctype=\(ctype)\(extra)"))
        r.body = .bytes(body, contentType: "application/octet-stream")
        return r
    }

    @Test func bothFormatsArriveWithTheirContentTypes() throws {
        for (body, ctype) in [(plistlibBinary, "application/x-bplist"), (plistlibXML, "text/xml"),
                              (plistlibXML, "application/xml"), (plistlibBinary, "application/plist")] {
            let r = try client.send(echo(body, ctype: ctype), handler: Plist())
            #expect(r.content == expected(binary: body == plistlibBinary), "\(ctype)")
        }
        // Chunked: no declared length.
        let r = try client.send(echo(plistlibBinary, ctype: "application/x-plist", extra: "&chunked=1"), handler: Plist())
        #expect(r.content == expected(binary: true))
    }

    @Test func requestBodiesCarryTheirFormatAndType() throws {
        for format in [PlistFormat.xml, .binary] {
            var req = Request("POST", s.url("/echo/raw"))
            req.body = try .plist(everything, format: format)
            let r = try client.send(req, handler: Bytes())
            #expect(r.headers["x-request-content-type"] == format.contentType)
            let back = try PlistParser.parse(r.content.array)
            #expect(back == (format == .xml ? floorDates(everything) : everything))
        }
    }

    @Test func sendsAcceptAndRefusesOtherTypes() throws {
        let r = try client.get(s.url("/echo"), handler: JSON())
        #expect(r.content?["headers"]?.arrayValue?.contains { $0["0"] == "Accept" && $0["1"] == "application/json" } == true)
        var req = Request("POST", s.url("/plist?ctype=application/json"))
        req.body = .bytes(plistlibXML, contentType: "text/xml")
        do {
            _ = try client.send(req, handler: Plist())
            Issue.record("accepted")
        } catch {
            #expect(error.code == .unacceptableContentType)
        }
        do {
            _ = try client.send(echo(plistlibXML, extra: "&status=500"), handler: Plist())
            Issue.record("accepted")
        } catch {
            #expect(error.code == .unacceptableStatus)
        }
    }

    @Test func decodeErrorKeepsTheBody() throws {
        let bad = Array("<plist><dict><key>a</key></plist>".utf8)
        do {
            _ = try client.send(echo(bad), handler: Plist())
            Issue.record("accepted")
        } catch {
            #expect(error.code == .decode)
            #expect(error.body == bad)
            #expect(error.response?.status == 200)
        }
    }

    @Test func emptyBodies() throws {
        do {
            _ = try client.send(echo([]), handler: Plist())
            Issue.record("empty 200 accepted")
        } catch {
            #expect(error.code == .decode)
        }
        #expect(try client.send(echo([]), handler: Plist(allowEmpty: true)).content == nil)
        var accept204 = Plist.defaultAcceptance()
        accept204.contentTypes = []
        #expect(try client.send(echo([], extra: "&status=204"), handler: Plist(acceptance: accept204)).content == nil)
    }

    @Test func declaredLengthOverTheLimitFailsAtHeaderTime() throws {
        do {
            _ = try client.send(echo(plistlibBinary), handler: Plist(options: PlistOptions(maxSize: 100)))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .tooLarge)
        }
        do {
            _ = try client.send(echo(plistlibBinary, extra: "&chunked=1"), handler: Plist(options: PlistOptions(maxSize: 100)))
            Issue.record("accepted")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }

    @Test func decodesTypes() throws {
        struct Doc: Decodable { var s: String; var umax: UInt64; var min: Int64; var data: [UInt8]; var d1960: PlistDate }
        let r = try client.send(echo(plistlibBinary), handler: Plist.decoding(Doc.self))
        #expect(r.content.s == "héllo ☺ 𝄞")
        #expect(r.content.umax == .max)
        #expect(r.content.min == .min)
        #expect(r.content.data == [0, 1, 0xFF])
        #expect(r.content.d1960.secondsSince1970 == -1283014311 + 978_307_200)
    }
}

@Suite("Value decoders' errors (JSON and plist share their words)")
struct ValueDecoderErrorTests {
    struct Needs: Decodable { let a: [Int] }

    private func message(_ body: () throws -> Void) -> String {
        do { try body() } catch let error as HTTPContentError { return error.message } catch { return "\(error)" }
        return "no error"
    }

    @Test func errorsNameThePathAndWhatWasMissing() {
        let json: JSONValue = ["a": [1, nil]]
        #expect(message { _ = try json.decode(Needs.self) } == "cannot decode Needs: expected Int at a.1, found null")
        #expect(message { _ = try PlistValue.dictionary([]).decode(Needs.self) }.contains("no member \"a\" at the top-level value"))
        #expect(message { _ = try PlistValueDecoder().decodeEmpty(Int.self) }
                == "cannot decode Int: expected Int at the top-level value: found nothing")
    }
}

/// The reader's reports of `doc` as a value; nil when it leaves the document to `PlistParser`.
private func readDirectly(_ doc: [UInt8], options: PlistOptions = PlistOptions()) throws(HTTPContentError) -> (PlistValue?, Int) {
    var visitor = PlistValueBuilder()
    let result = doc.withUnsafeBytes { raw in
        Result { () throws(HTTPContentError) -> Bool in try PlistBinaryReader.read(raw, options: options, into: &visitor) }
    }
    let read = try result.get()
    if read { #expect(visitor.consistent) }
    return read ? (visitor.result, visitor.repeats) : (nil, visitor.repeats)
}

@Suite("Property lists: the binary reader against libplist")
struct PlistBinaryReaderTests {
    /// fuzz-plist's finds: a UID above UInt32.max and an empty UTF-16 string, which libplist
    /// refuses, were read by the direct reader; it now leaves them to libplist, so the Python
    /// front fails on them as the C and Swift fronts do.
    /// fuzz-plist: an offset-table entry beyond Int.max for an object the scan never reaches
    /// trapped the reader (converting it to Int while counting references); it is skipped now.
    @Test func anUnreachedObjectsHugeOffsetIsSkipped() throws {
        let doc: [UInt8] = [
            0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0xD2, 0x5D, 0x02, 0x03, 0x0C, 0xFF, 0xFF, 0xFF,
            0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00,
            0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x6C, 0x00, 0x6C, 0x00, 0x6F, 0x33, 0xC1, 0xD3,
            0x47, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x80, 0x07, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3D,
            0x22, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0xFF, 0xFF, 0xFF, 0xFB, 0x14, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xFF, 0xFF, 0x23, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x71, 0xFF, 0xFF, 0xFF, 0xFF,
            0x23, 0x40, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x41, 0x00, 0x65, 0x00, 0x68, 0x00,
            0xE8, 0xFF, 0xFF, 0xFF, 0xE9, 0x00, 0x6C, 0x00, 0x6C, 0x00, 0x6F, 0x33, 0xC1, 0xD3, 0x47, 0xF0,
            0x00, 0x00, 0x00, 0x00, 0x80, 0x07, 0x08, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0D,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x58]
        let parsed = Result { () throws(HTTPContentError) -> PlistValue in try PlistParser.parse(doc) }
        switch (Result { () throws(HTTPContentError) -> PlistValue? in try readDirectly(doc).0 }, parsed) {
        case (.success(let v?), .success(let p)): #expect(v == p)
        case (.success(.some), .failure): Issue.record("read a value where the parser failed")
        case (.failure, .success): Issue.record("failed where the parser read a value")
        default: break
        }
    }

    @Test func whatLibplistRefusesIsLeftToIt() throws {
        let bigUID: [UInt8] = [
            0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0xD2, 0x01, 0x02, 0x03, 0x0C, 0xFF, 0xFF, 0xFF,
            0xFF, 0x01, 0x00, 0x70, 0x6C, 0x65, 0x2F, 0x2F, 0x44, 0x54, 0x44, 0x20, 0x50, 0x4C, 0x49, 0x53,
            0x54, 0x20, 0x31, 0x2E, 0x30, 0x2F, 0x2F, 0x45, 0x4E, 0x22, 0x20, 0x22, 0x68, 0x74, 0x74, 0x70,
            0x3A, 0x2F, 0x2F, 0x00, 0x00, 0x00, 0x17, 0x77, 0x77, 0x77, 0x2E, 0x61, 0x70, 0x70, 0x6C, 0x65,
            0x2E, 0x63, 0x6F, 0x6D, 0x2F, 0x44, 0x54, 0x44, 0x73, 0x2F, 0x50, 0x72, 0x6F, 0x90, 0x94, 0x9A,
            0x86, 0x86, 0xB3, 0x96, 0x9E, 0x73, 0x74, 0x20, 0x50, 0x55, 0x42, 0x4C, 0x30, 0x22, 0x3E, 0x0A,
            0x3C, 0x61, 0x72, 0x72, 0x61, 0x79, 0x2F, 0x50, 0x72, 0x65, 0x6F, 0x70, 0x72, 0x74, 0x00, 0x00,
            0x00, 0x80, 0x07, 0x08, 0x0D, 0x0F, 0x11, 0x1A, 0x1C, 0x27, 0x25, 0x35, 0x3F, 0x40, 0x42, 0x4D,
            0x56, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x0D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x58]
        let emptyUTF16: [UInt8] = [
            0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0xA1, 0x01, 0x60, 0x02, 0x3C, 0x72, 0xD1, 0x04,
            0x05, 0x51, 0x78, 0x90, 0x08, 0x0A, 0x0C, 0x0E, 0x11, 0x13, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14]
        for doc in [bigUID, emptyUTF16] {
            #expect(try readDirectly(doc).0 == nil)
            #expect(throws: HTTPContentError.self) { try PlistParser.parse(doc) }
        }
    }

    @Test func readsWhatLibplistReads() throws {
        #expect(try readDirectly(plistlibBinary).0 == PlistParser.parse(plistlibBinary))
        let uids: PlistValue = [.uid(0), .uid(42), .uid(300), .uid(70000), .uid(UInt64(UInt32.max))]
        var dates: [PlistValue] = []
        for s in stride(from: -62135596800.0, to: 252423993599, by: 9_876_543_210.123) {
            dates.append(.date(PlistDate(secondsSince2001: s)))
        }
        let big: PlistValue = ["s": .string(String(repeating: "é☺𝄞x", count: 300)), "d": .data(Array(repeating: 7, count: 70000)),
                               "f": .real(Double(Float(1.5)))]
        for v in [everything, uids, .array(dates), big, "x", 5, .int(.min), .uint(.max), true, .data([]), [], .dictionary([])] {
            let doc = try v.serialized(format: .binary)
            #expect(try readDirectly(doc).0 == PlistParser.parse(doc))
            #expect(try readDirectly(doc).0 == v)
        }
    }

    @Test func sharedStringsAreReportedOnceThenRepeated() throws {
        // Two dictionaries sharing one key object, a UTF-16 string with a surrogate pair, a
        // 4-byte real and a 16-byte integer (as plistlib writes those above Int64.max).
        let doc = bplist([arrayObject([1, 2, 6, 7]), [0xD1, 0, 3, 0, 4], [0xD1, 0, 3, 0, 5], [0x53] + Array("key".utf8), [0x10, 7],
                          [0x63, 0x26, 0x3A, 0xD8, 0x34, 0xDD, 0x1E], [0x22, 0x3F, 0xC0, 0, 0],
                          [0x14] + Array(repeating: 0, count: 8) + Array(repeating: 0xFF, count: 8)])
        let (value, repeats) = try readDirectly(doc)
        #expect(value == .array([["key": 7], ["key": "☺𝄞"], 1.5, .uint(.max)]))
        #expect(value == (try PlistParser.parse(doc)))
        #expect(repeats == 1)
    }

    @Test func leavesToLibplistWhatItDoesNotReadExactly() throws {
        let unusual: [[[UInt8]]] = [
            [[0xD1, 0, 1, 0, 1], [0x10, 7]],  // an integer key
            [arrayObject([1]), [0x00]],  // null
            [arrayObject([1]), [0x14, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]],  // beyond 64 bits
            [arrayObject([1]), [0x51, 0xE9]],  // not ASCII
            [arrayObject([1]), [0x61, 0xD8, 0x34]],  // a lone surrogate
            [arrayObject([1]), [0x43, 1, 2]],  // data running past the object area
        ]
        for objects in unusual {
            #expect(try readDirectly(bplist(objects)).0 == nil)
        }
        // XML is not its to read; limits and malformed structure throw as PlistParser's do.
        #expect(try readDirectly(plistlibXML).0 == nil)
        #expect(throws: HTTPContentError.self) { try readDirectly(bplist([arrayObject([1]), arrayObject([0])])) }
        let small = bplist([arrayObject([1, 1, 1]), arrayObject([2, 2]), [0x10, 7]])
        #expect(throws: HTTPContentError.self) { try readDirectly(small, options: PlistOptions(maxObjects: 9)) }
        #expect(try readDirectly(small, options: PlistOptions(maxObjects: 10)).0 == [[7, 7], [7, 7], [7, 7]])
    }
}
