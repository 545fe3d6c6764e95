import Testing
import Foundation
@testable import HTTPContent

private let server = TestServer.shared

@Suite struct TextHandlerTests {
    let client = try! Client()

    @Test(arguments: [
        ("/text?charset=iso-8859-1&text=caf%C3%A9", "café"),
        ("/text?nocharset=1&raw_hex=fffe68006900", "hi"),
        ("/text?nocharset=1&raw_hex=efbbbf6869", "hi"),
        ("/text?charset=windows-1252&raw_hex=80", "€"),
        ("/text?charset=utf-16be&raw_hex=d83dde00", "😀"),
        ("/text?charset=utf-16&raw_hex=fffe6100", "a"),
        ("/text?charset=us-ascii&raw_hex=4142", "AB"),
    ])
    func decodesByCharsetThenBOMThenUTF8(path: String, expected: String) throws {
        #expect(try client.get(server.url(path), handler: Text()).content == expected)
    }

    @Test func strictModeReportsTheOffset() throws {
        do {
            _ = try client.get(server.url("/text?charset=utf-8&raw_hex=616263ff6465"), handler: Text())
            Issue.record("invalid UTF-8 was accepted")
        } catch {
            #expect(error.code == .decode)
            #expect(error.offset == 3)
        }
        let lenient = try client.get(server.url("/text?charset=utf-8&raw_hex=616263ff6465"), handler: Text(strict: false))
        #expect(lenient.content == "abc\u{FFFD}de")
    }

    @Test func decoderCarriesSequencesAcrossChunks() throws {
        let text = String(repeating: "é€😀a", count: 300)
        let bytes = Array(text.utf8)
        for size in [1, 2, 3, 7] {
            var decoder = StreamingTextDecoder(encoding: .utf8, strict: true)
            var i = 0
            while i < bytes.count {
                let end = min(i + size, bytes.count)
                try bytes[i..<end].withUnsafeBytes { try decoder.decode($0) }
                i = end
            }
            try decoder.finish()
            #expect(String(decoding: decoder.output, as: UTF8.self) == text)
        }
        var utf16 = StreamingTextDecoder(encoding: .utf16LE, strict: true)
        let le: [UInt8] = text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        for byte in le { try [byte].withUnsafeBytes { try utf16.decode($0) } }
        try utf16.finish()
        #expect(String(decoding: utf16.output, as: UTF8.self) == text)
    }

    @Test func truncatedSequenceAtTheEndIsAnError() throws {
        var decoder = StreamingTextDecoder(encoding: .utf8, strict: true)
        try [UInt8(0x61), 0xE2, 0x82].withUnsafeBytes { try decoder.decode($0) }
        #expect(throws: HTTPContentError.self) { try decoder.finish() }
    }

    @Test func charsetNamesAndAliases() {
        #expect(TextEncoding(charset: "Latin1") == .isoLatin1)
        #expect(TextEncoding(charset: "UTF8") == .utf8)
        #expect(TextEncoding(charset: "cp1252") == .windows1252)
        #expect(TextEncoding(charset: "ebcdic") == nil)
    }
}

@Suite struct ImageHandlerTests {
    let client = try! Client()

    @Test(arguments: ImageInfo.Format.allCases)
    func formatAndSizeComeFromTheHeader(format: ImageInfo.Format) throws {
        let info = try #require(try client.get(server.url("/image/\(format.rawValue)"), handler: Image()).content)
        #expect(info.format == format && info.width == 3 && info.height == 2)
    }

    @Test func declaredTypeMustAgreeAndHeadersMustNotLie() {
        for path in ["/image/jpeg?ctype=image/png", "/image/lying-png", "/ctype?type=image/png&body=notanimage"] {
            do {
                _ = try client.get(server.url(path), handler: Image())
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.code == .decode)
            }
        }
    }

    @Test func emptyResponsesAreEmptyContent() throws {
        #expect(try client.get(server.url("/status/204"), handler: Image()).content == nil)
        #expect(try client.send(Request("HEAD", server.url("/image/png")), handler: Image()).content == nil)
    }
}

@Suite struct FileAndStreamTests {
    let client = try! Client()

    private func tempDir() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hc-\(UInt64.random(in: 0...UInt64.max))").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func downloadIsAtomicAndLeavesNothingOnFailure() throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let target = dir + "/out.bin"
        let r = try client.get(server.url("/bytes/100000"), handler: File(path: target))
        #expect(r.content == FileDownload(path: target, bytesWritten: 100000, size: 100000, resumed: false))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: target))) == expectedBytes(100000))
        for path in ["/reset?bytes=20000", "/truncated?bytes=100", "/status/503"] {
            #expect(throws: HTTPContentError.self) {
                _ = try client.get(server.url(path), handler: File(path: target))
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.bin"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)).count == 100000)
    }

    @Test func aResponseWithNoBodyLeavesTheDownloadAsItWas() throws {
        // A HEAD or a 204 says nothing of the file: it was replaced by an empty one.
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let target = dir + "/out.bin"
        _ = try client.get(server.url("/bytes/1000"), handler: File(path: target))
        for request in [Request("HEAD", server.url("/bytes/500")), .get(server.url("/status/204"))] {
            let r = try client.send(request, handler: File(path: target))
            #expect(r.content == FileDownload(path: target, bytesWritten: 0, size: 1000, resumed: false))
        }
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: target))) == expectedBytes(1000))
        // Nor is a kept part started over.
        let part = dir + "/new.bin.part"
        try Data(expectedBytes(300)).write(to: URL(fileURLWithPath: part))
        var resume = File.Options()
        resume.resume = true
        let r = try client.send(Request("HEAD", server.url("/bytes/1000")), handler: File(path: dir + "/new.bin", options: resume))
        #expect(r.content.bytesWritten == 0 && r.content.size == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: part)).count == 300)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["new.bin.part", "out.bin"])
    }

    @Test func cancellingRemovesThePartialFile() throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let token = CancelToken()
        #expect(throws: HTTPContentError.self) {
            _ = try client.send(.get(server.url("/slow?bytes=1000&delay=0.02&chunk=10")),
                                handler: File(path: dir + "/x"), cancel: token,
                                progress: { if $0.received >= 30 { token.cancel() } })
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test func unwritableDirectoryFailsBeforeSending() {
        do {
            _ = try client.get(server.url("/bytes/1"), handler: File(path: "/nonexistent-dir/x"))
            Issue.record("a download into a missing directory was attempted")
        } catch {
            #expect(error.code == .localIO)
        }
    }

    @Test func streamWriterPassesChunksOn() throws {
        var received: [UInt8] = []
        let r = try client.get(server.url("/bytes/50000?chunked=1&chunk=3000"),
                               handler: StreamWriter(to: .callback { received.append(contentsOf: $0) }))
        #expect(r.content == 50000 && received == expectedBytes(50000))
    }

    @Test func compoundPicksTheFirstThatAccepts() throws {
        let r = try client.get(server.url("/text?text=hey"), handler: Compound([Image(), Text()]))
        #expect(r.content.index == 1 && r.content.content as? String == "hey")
    }

    @Test func accumulatorSubclassConvertsTheWholeBody() throws {
        final class Count: Accumulator<Int> {
            override func convert(_ body: ByteBuffer) -> Int { body.count }
        }
        #expect(try client.get(server.url("/bytes/777"), handler: Count()).content == 777)
    }

    @Test func processWideDefaultsApplyToNewHandlers() throws {
        // 418 is used by no other test, which may create handlers while this one runs.
        Acceptance.setDefaultStatusCodes([200...299, 418...418])
        let accepting = Bytes()
        Acceptance.resetDefaults()
        #expect(try client.get(server.url("/status/418"), handler: accepting).status == 418)
        #expect(Bytes().acceptance.statusCodes == [200...299])
    }
}
