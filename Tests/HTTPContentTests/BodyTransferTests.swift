import Foundation
import Testing
@testable import HTTPContent

/// Request bodies end to end: what the test server's /echo and /echo/raw received, byte for byte.
@Suite struct BodyTransferTests {
    let server = BodyTestServer.shared
    let client: Client

    init() throws {
        client = try Client()
    }

    private func echo(_ method: String = "POST", _ path: String = "/echo", headers: Headers = Headers(),
                      body: RequestBody?) throws -> Echo {
        let response = try client.send(Request(method, server.url(path), headers: headers, body: body),
                                       handler: Bytes())
        return try Echo(Array(response.content))
    }

    private func raw(_ body: RequestBody, path: String = "/echo/raw") throws -> Response<ByteBuffer> {
        try client.send(Request("POST", server.url(path), body: body), handler: Bytes())
    }

    // MARK: - In-memory bodies

    @Test func formBodyArrivesByteForByteWithTypeAndLength() throws {
        let e = try echo(body: .form(["name": "Lucas Drance", "age": 1.5, "k&=": "v+/"]))
        let expected = "name=Lucas%20Drance&age=1.5&k%26%3D=v%2B%2F"
        #expect(e.body == Array(expected.utf8))
        #expect(e.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(e.header("Content-Length") == String(expected.utf8.count))
        #expect(e.header("Transfer-Encoding") == nil)
        #expect(e.header("Expect") == nil)
    }

    @Test func callerContentTypeAndLengthWin() throws {
        var headers: Headers = ["Content-Type": "application/x-custom"]
        var e = try echo("PUT", headers: headers, body: .form(["a": "b"]))
        #expect(e.method == "PUT")
        #expect(e.header("Content-Type") == "application/x-custom")

        headers = ["Content-Length": "3"]
        e = try echo(headers: headers, body: .bytes(Array("abc".utf8), contentType: nil))
        #expect(e.body == Array("abc".utf8) && e.header("Content-Length") == "3")

        // A callback of unknown length is sent with the caller's Content-Length, not chunked.
        let data = pattern(5000)
        let offset = Offset()
        e = try echo(headers: ["Content-Length": "5000"], body: .reader { buffer in
            offset.copy(from: data, into: buffer)
        })
        #expect(e.body == data)
        #expect(e.header("Content-Length") == "5000" && e.header("Transfer-Encoding") == nil)
    }

    @Test func contentLengthThatContradictsTheBodyIsRefusedBeforeConnecting() throws {
        let listener = SilentListener()
        let request = Request("POST", listener.url, headers: ["Content-Length": "10"],
                              body: .bytes(Array("abc".utf8), contentType: nil))
        let error = #expect(throws: HTTPContentError.self) { try client.send(request, handler: Discard()) }
        #expect(error?.code == .invalidArgument)
        #expect(listener.connections() == 0)
    }

    @Test func bodyWithoutTypeIsNotLabelledAsAForm() throws {
        let r = try raw(.bytes([0, 1, 2], contentType: nil))
        #expect(Array(r.content) == [0, 1, 2])
        #expect(r.headers["X-Request-Content-Type"] == nil)
    }

    @Test func jsonAndTextBodies() throws {
        var e = try echo("PATCH", body: try .json(encoding: ["a": [1, "x"], "b": nil] as FormValue))
        #expect(e.method == "PATCH")
        #expect(e.body == Array(#"{"a":[1,"x"],"b":null}"#.utf8))
        #expect(e.header("Content-Type") == "application/json")

        e = try echo(body: .json(Array("[1]".utf8)))
        #expect(e.body == Array("[1]".utf8))

        e = try echo(body: try .text("héllo", charset: .iso8859_1))
        #expect(e.body == [0x68, 0xE9, 0x6C, 0x6C, 0x6F])
        #expect(e.header("Content-Type") == "text/plain; charset=iso-8859-1")
        e = try echo(body: try .text("héllo", mediaType: "text/markdown"))
        #expect(e.body == Array("héllo".utf8))
        #expect(e.header("Content-Type") == "text/markdown; charset=utf-8")
    }

    @Test func nanInAJSONBodyIsAnErrorAndNothingIsBuilt() {
        let error = #expect(throws: HTTPContentError.self) {
            try RequestBody.json(encoding: ["x": .double(.nan)] as FormValue)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test func queryStringIsMergedAndFragmentDropped() throws {
        var request = Request.get(server.url("/echo?x=1#frag"))
        request.addQuery(["q": "a b", "n": ["1", "2"]])
        let e = try Echo(Array(try client.send(request, handler: Bytes()).content))
        #expect(e.query == "x=1&q=a%20b&n%5B%5D=1&n%5B%5D=2")
    }

    @Test(arguments: [("X-Evil", "a\r\nInjected: yes"), ("X-Evil", "a\nb"), ("Bad\r\nName", "x"), ("X-Nul", "a\u{0}b")])
    func crOrLFInAHeaderIsRefusedAndNothingIsSent(name: String, value: String) {
        let listener = SilentListener()
        let request = Request("POST", listener.url, headers: Headers([(name, value)]), body: .form(["a": "b"]))
        let error = #expect(throws: HTTPContentError.self) { try client.send(request, handler: Discard()) }
        #expect(error?.code == .invalidArgument)
        #expect(listener.connections() == 0)
    }

    // MARK: - Streams

    @Test func fileIsStreamedWithContentLength() throws {
        let dir = TempDir()
        let path = dir.file("up.bin", count: 1_048_583)
        let e = try echo("PUT", body: .file(at: path, contentType: "application/x-up"))
        #expect(e.body == pattern(1_048_583))
        #expect(e.header("Content-Length") == "1048583")
        #expect(e.header("Transfer-Encoding") == nil)
        #expect(e.header("Content-Type") == "application/x-up")
    }

    @Test func missingOrUnreadableUploadFileIsAnIOErrorBeforeConnecting() throws {
        let dir = TempDir()
        let listener = SilentListener()
        for path in [dir.path + "/missing.bin", dir.path] {
            let request = Request("POST", listener.url, body: .file(at: path))
            let error = #expect(throws: HTTPContentError.self) { try client.send(request, handler: Discard()) }
            #expect(error?.code == .localIO)
            #expect(error?.message.contains(path) == true)
        }
        #expect(listener.connections() == 0)
    }

    @Test func descriptorIsReadFromItsOffsetWhichIsLeftAlone() throws {
        let dir = TempDir()
        let path = dir.file("fd.bin", count: 70_000)
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(lseek(fd, 123, SEEK_SET) == 123)
        var e = try echo(body: .fileDescriptor(fd))
        #expect(e.body == pattern(70_000 - 123, from: 123))
        #expect(e.header("Content-Length") == String(70_000 - 123))
        #expect(lseek(fd, 0, SEEK_CUR) == 123)
        e = try echo(body: .fileDescriptor(fd, length: 1000))
        #expect(e.body == pattern(1000, from: 123))
    }

    @Test func pipeIsSentChunked() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let data = pattern(300_000)  // more than a pipe holds: the writer runs alongside
        let writeEnd = fds[1]
        let writer = Thread {
            data.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = write(writeEnd, raw.baseAddress! + done, raw.count - done)
                    if n <= 0 { break }
                    done += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        let e = try echo(body: .fileDescriptor(fds[0]))
        close(fds[0])
        #expect(e.body == data)
        #expect(e.header("Transfer-Encoding") == "chunked")
        #expect(e.header("Content-Length") == nil)
    }

    @Test func callbackOfUnknownLengthIsSentChunked() throws {
        let data = pattern(250_001)
        let offset = Offset()
        let e = try echo(body: .reader(contentType: "application/x-gen") { buffer in
            offset.copy(from: data, into: buffer, atMost: 3333)
        })
        #expect(e.body == data)
        #expect(e.header("Transfer-Encoding") == "chunked")
        #expect(e.header("Content-Type") == "application/x-gen")
    }

    @Test func callbackThatThrowsMidUploadAbortsWithItsError() throws {
        struct SourceFailed: Error, Equatable { let at: Int }
        let offset = Offset()
        let error = #expect(throws: HTTPContentError.self) {
            try echo(body: .reader { buffer in
                if offset.value >= 100_000 { throw SourceFailed(at: offset.value) }
                return offset.copy(from: pattern(200_000), into: buffer, atMost: 10_000)
            })
        }
        #expect(error?.code == .callback)
        #expect(error?.underlying as? SourceFailed == SourceFailed(at: 100_000))
    }

    @Test func callbackThatLiesOrEndsEarlyIsACallbackError() {
        let tooMuch = #expect(throws: HTTPContentError.self) {
            try echo(body: .reader { buffer in buffer.count + 1 })
        }
        #expect(tooMuch?.code == .callback)
        let short = #expect(throws: HTTPContentError.self) {
            try echo(body: .reader(length: 100) { _ in 0 })
        }
        #expect(short?.code == .callback)
    }

    @Test func cancellingDuringAnUploadStopsIt() {
        let token = CancelToken()
        let sent = Offset()
        let request = Request("POST", server.url("/echo"), body: .reader { buffer in
            if sent.value >= 200_000 { token.cancel() }
            guard sent.value < 64 << 20 else { return 0 }  // a bound, so a failure cannot hang
            buffer.initializeMemory(as: UInt8.self, repeating: 7)
            sent.value += buffer.count
            return buffer.count
        })
        let error = #expect(throws: HTTPContentError.self) {
            try client.send(request, handler: Discard(), cancel: token)
        }
        #expect(error?.code == .cancelled)
        #expect(sent.value < 64 << 20)
    }

    @Test func badDescriptorsAreRefusedBeforeConnecting() {
        let listener = SilentListener()
        // 999_999 is above any descriptor limit here, so never open (a closed low number could
        // be reused at once by a test running in parallel).
        for (fd, code) in [(Int32(-1), HTTPContentError.Code.invalidArgument), (999_999, .localIO)] {
            let error = #expect(throws: HTTPContentError.self) {
                try client.send(Request("POST", listener.url, body: .fileDescriptor(fd)), handler: Discard())
            }
            #expect(error?.code == code)
        }
        #expect(listener.connections() == 0)
    }

    @Test func redirectThatResendsTheBodyRewindsIt() throws {
        let dir = TempDir()
        let path = dir.file("again.bin", count: 100_000)
        // Small bodies go through COPYPOSTFIELDS, larger ones through the read callback.
        for (body, size): (RequestBody, Int) in [(.bytes(pattern(1000), contentType: nil), 1000),
                                                 (.bytes(pattern(100_000), contentType: nil), 100_000),
                                                 (.file(at: path), 100_000)] {
            let r = try raw(body, path: "/redirect-to?url=/echo/raw&status=307")
            #expect(Array(r.content) == pattern(size))
            #expect(r.url.hasSuffix("/echo/raw"))
        }
    }

    // MARK: - Multipart

    @Test func multipartCarriesFieldsFilesAndBytes() throws {
        let dir = TempDir()
        let path = dir.path + "/notes.txt"
        _ = FileManager.default.createFile(atPath: path, contents: Data("file contents\n".utf8))
        var mp = Multipart()
        try mp.addField("title", "a b")
        try mp.addFile("doc", path: path, contentType: "text/plain")
        try mp.addBytes("blob", [0, 1, 255], filename: "b.bin", contentType: "application/x-blob")
        let r = try raw(.multipart(mp))
        let text = String(decoding: Array(r.content), as: UTF8.self)
        let type = try #require(r.headers["X-Request-Content-Type"])
        #expect(type.hasPrefix("multipart/form-data; boundary="))
        let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
        #expect(text.contains("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\na b\r\n"))
        #expect(text.contains("name=\"doc\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\nfile contents\n\r\n"))
        #expect(text.contains("name=\"blob\"; filename=\"b.bin\"\r\nContent-Type: application/x-blob\r\n\r\n"))
        #expect(Array(r.content).firstRange(of: [0, 1, 255]) != nil)
        #expect(text.hasSuffix("--\(boundary)--\r\n"))
    }

    @Test func multipartRefusesBadNamesAndMissingFiles() {
        var mp = Multipart()
        #expect(throws: HTTPContentError.self) { try mp.addField("a\r\nb", "x") }
        #expect(throws: HTTPContentError.self) { try mp.addBytes("a", [], filename: "x\ny") }
        let missing = #expect(throws: HTTPContentError.self) { try mp.addFile("f", path: "/nonexistent/x") }
        #expect(missing?.code == .localIO)
        #expect(mp.parts.isEmpty)
    }

    @Test func multipartFileThatVanishesBeforeSendingIsAnIOErrorBeforeConnecting() throws {
        let dir = TempDir()
        let path = dir.file("gone.bin", count: 10)
        var mp = Multipart()
        try mp.addFile("f", path: path)
        #expect(unlink(path) == 0)
        let listener = SilentListener()
        let error = #expect(throws: HTTPContentError.self) {
            try client.send(Request("POST", listener.url, body: .multipart(mp)), handler: Discard())
        }
        #expect(error?.code == .localIO)
        #expect(listener.connections() == 0)
    }
}

/// A position shared with a @Sendable read closure (each test's closure runs on one thread).
final class Offset: @unchecked Sendable {
    var value = 0

    /// Copies the next bytes of `data` into `buffer`; returns how many.
    func copy(from data: [UInt8], into buffer: UnsafeMutableRawBufferPointer, atMost limit: Int = .max) -> Int {
        let n = min(buffer.count, data.count - value, limit)
        data.withUnsafeBytes { src in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: src[value..<value + n]))
        }
        value += n
        return n
    }
}
