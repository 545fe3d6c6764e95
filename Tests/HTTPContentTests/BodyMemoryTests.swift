import Foundation
import XCTest
@testable import HTTPContent

/// Streamed bodies keep memory flat: 1 GiB goes out, or comes in to a discarding or file
/// handler, with no more than a few MiB of growth.
/// XCTest, not Swift Testing, because XCTest runs its tests one at a time, so nothing else
/// allocates while the peak is measured.
final class BodyMemoryTests: XCTestCase {
    static let size: Int64 = 1 << 30
    static let allowedGrowth = 16 << 20

    /// scripts/sanitize.sh sets HC_SKIP_MEMORY_TESTS: AddressSanitizer's shadow memory and
    /// quarantine make peak RSS meaningless there.
    override func setUpWithError() throws {
        try XCTSkipIf(ProcessInfo.processInfo.environment["HC_SKIP_MEMORY_TESTS"] != nil,
                      "peak RSS is not measurable under a sanitizer")
    }

    func testStreamedFileUploadOf1GiBKeepsMemoryFlat() throws {
        let dir = TempDir()
        let path = dir.path + "/sparse-1GiB.bin"
        let fd = open(path, O_CREAT | O_WRONLY, 0o644)
        XCTAssertEqual(ftruncate(fd, off_t(Self.size)), 0)  // sparse: no disk used
        close(fd)
        try assertFlat(body: .file(at: path))
    }

    func testStreamedCallbackUploadOf1GiBKeepsMemoryFlat() throws {
        let sent = Offset()
        try assertFlat(body: .reader(length: Self.size) { buffer in
            let n = min(buffer.count, Int(Self.size) - sent.value)
            buffer.baseAddress?.initializeMemory(as: UInt8.self, repeating: 0x5A, count: n)
            sent.value += n
            return n
        })
    }

    func testDiscardedDownloadOf1GiBKeepsMemoryFlat() throws {
        let response = try assertFlatDownload(handler: Discard())
        XCTAssertEqual(response.metrics.decodedBytes, Self.size)
    }

    func testFileDownloadOf1GiBKeepsMemoryFlat() throws {
        let dir = TempDir()
        var options = File.Options()
        options.fsync = false  // what is measured is the client's memory, not the disk
        let response = try assertFlatDownload(handler: File(path: dir.path + "/1GiB.bin", options: options))
        XCTAssertEqual(response.content.size, Self.size)
        unlink(response.content.path)
    }

    private func assertFlatDownload<Handler: ContentHandler>(
        handler: Handler, file: StaticString = #filePath, line: UInt = #line
    ) throws -> Response<Handler.Content> {
        let source = try SendingSource(size: Self.size)
        let client = try Client()
        let before = try resetPeakRSS()
        let response = try client.get(source.url, handler: handler)
        let growth = try peakRSS() - before
        XCTAssertLessThanOrEqual(growth, Self.allowedGrowth, "peak RSS grew by \(growth >> 10) KiB", file: file, line: line)
        return response
    }

    private func assertFlat(body: RequestBody, file: StaticString = #filePath, line: UInt = #line) throws {
        let sink = try DiscardingSink()
        let client = try Client()
        let before = try resetPeakRSS()
        let response = try client.send(Request("POST", sink.url, body: body), handler: Bytes())
        let growth = try peakRSS() - before
        XCTAssertEqual(String(decoding: Array(response.content), as: UTF8.self), String(Self.size), file: file, line: line)
        XCTAssertEqual(response.metrics.uploadedBytes, Self.size, file: file, line: line)
        XCTAssertLessThanOrEqual(growth, Self.allowedGrowth, "peak RSS grew by \(growth >> 10) KiB", file: file, line: line)
    }
}

/// Resets the kernel's peak-RSS mark (VmHWM) and returns the current RSS, in bytes.
private func resetPeakRSS() throws -> Int {
    try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    return try status("VmRSS")
}

private func peakRSS() throws -> Int { try status("VmHWM") }

private func status(_ field: String) throws -> Int {
    let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
          let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else {
        throw HTTPContentError(.localIO, "no \(field) in /proc/self/status")
    }
    return kib * 1024
}

/// A one-request HTTP server that reads a Content-Length body, counts and drops it, and answers
/// with the count: the Python server keeps bodies in memory and takes at most 256 MiB.
final class DiscardingSink: @unchecked Sendable {
    let url: String
    private let listener: Int32

    init() throws {
        let (fd, port) = listenOnLoopback()
        listener = fd
        url = "http://127.0.0.1:\(port)/sink"
        Thread { serveOne(fd, DiscardingSink.serve) }.start()
    }

    deinit { close(listener) }

    private static func serve(_ conn: Int32, _ buffer: UnsafeMutableRawBufferPointer) {
        var head: [UInt8] = []
        var body = 0
        while true {  // the head, and whatever body bytes came with it
            let n = read(conn, buffer.baseAddress, buffer.count)
            guard n > 0 else { return }
            head += buffer[0..<n]
            if let end = head.firstRange(of: Array("\r\n\r\n".utf8)) {
                body = head.count - end.upperBound
                head = Array(head[..<end.upperBound])
                break
            }
        }
        let text = String(decoding: head, as: UTF8.self).lowercased()
        guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else { return }
        while body < length {
            let n = read(conn, buffer.baseAddress, min(buffer.count, length - body))
            guard n > 0 else { return }
            body += n
        }
        let answer = String(body)
        let response = "HTTP/1.1 200 OK\r\nContent-Length: \(answer.utf8.count)\r\nConnection: close\r\n\r\n\(answer)"
        _ = response.withCString { write(conn, $0, strlen($0)) }
    }
}

/// A socket listening on 127.0.0.1 on a free port, and the port.
private func listenOnLoopback() -> (Int32, UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
    listen(fd, 1)
    _ = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    return (fd, UInt16(bigEndian: addr.sin_port))
}

/// Accepts one connection on `listener` and serves it with a 256 KiB buffer, then closes it.
private func serveOne(_ listener: Int32, _ serve: (Int32, UnsafeMutableRawBufferPointer) -> Void) {
    let conn = accept(listener, nil, nil)
    guard conn >= 0 else { return }
    defer { close(conn) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 1)
    defer { buffer.deallocate() }
    serve(conn, buffer)
}

/// A one-request HTTP server that answers any request with `size` bytes (Content-Length), written
/// from one 256 KiB buffer: the Python server builds bodies in memory and takes at most 1 GiB
/// slowly.
final class SendingSource: @unchecked Sendable {
    let url: String
    private let listener: Int32

    init(size: Int64) throws {
        let (fd, port) = listenOnLoopback()
        listener = fd
        url = "http://127.0.0.1:\(port)/source"
        Thread { serveOne(fd) { SendingSource.serve($0, $1, size: size) } }.start()
    }

    deinit { close(listener) }

    private static func serve(_ conn: Int32, _ buffer: UnsafeMutableRawBufferPointer, size: Int64) {
        var head: [UInt8] = []
        while head.firstRange(of: Array("\r\n\r\n".utf8)) == nil {  // the request's head
            let n = read(conn, buffer.baseAddress, buffer.count)
            guard n > 0 else { return }
            head += buffer[0..<n]
        }
        let response = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(size)\r\nConnection: close\r\n\r\n"
        _ = response.withCString { write(conn, $0, strlen($0)) }
        buffer.initializeMemory(as: UInt8.self, repeating: 0x5A)
        var sent: Int64 = 0
        while sent < size {
            let n = write(conn, buffer.baseAddress, Int(min(Int64(buffer.count), size - sent)))
            guard n > 0 else { return }
            sent += Int64(n)
        }
    }
}
