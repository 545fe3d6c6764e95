import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The local test server (Tests/server/testserver.py), started once for the whole run with
/// Foundation's Process. Its stdin is our pipe, so it exits when the test process does.
final class BodyTestServer: @unchecked Sendable {
    static let shared = BodyTestServer()

    let base: String
    private let process = Process()
    private let input = Pipe()

    private init() {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let script = root.appendingPathComponent("Tests/server/testserver.py").path
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "--port", "0", "--exit-on-stdin-eof", "--lifetime", "900"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            fatalError("cannot start the test server \(script): \(error)")
        }
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let b = byte.first, b != UInt8(ascii: "\n") else { break }
            line.append(b)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            fatalError("the test server did not print its port (got \"\(text)\")")
        }
        base = "http://127.0.0.1:\(port)"
    }

    func url(_ path: String) -> String { base + path }
}

/// A listening socket nobody answers on: counts the connections made to it, to prove that a
/// request refused before connecting sent nothing.
final class SilentListener {
    private let fd: Int32
    let url: String

    init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
        }
        listen(fd, 16)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        self.url = "http://127.0.0.1:\(UInt16(bigEndian: addr.sin_port))/upload"
        _ = fcntl(fd, F_SETFL, O_NONBLOCK)
    }

    deinit { close(fd) }

    /// How many connections arrived since the last call.
    func connections() -> Int {
        var n = 0
        while true {
            let c = accept(fd, nil, nil)
            if c < 0 { return n }
            close(c)
            n += 1
        }
    }
}

/// What /echo saw.
struct Echo {
    let method: String
    let query: String
    let headers: [(String, String)]
    let body: [UInt8]

    init(_ data: [UInt8]) throws {
        let object = try JSONSerialization.jsonObject(with: Data(data)) as? [String: Any] ?? [:]
        method = object["method"] as? String ?? ""
        query = object["query"] as? String ?? ""
        headers = (object["headers"] as? [[String]] ?? []).map { ($0[0], $0[1]) }
        let hex = Array((object["body_hex"] as? String ?? "").utf8)
        body = stride(from: 0, to: hex.count, by: 2).map {
            UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0
        }
    }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// A scratch directory, removed on deinit.
final class TempDir {
    let path: String

    init() {
        var template = Array("/tmp/hc_swift_bodies_XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `count` pattern bytes (byte i = i % 251) and returns the path.
    func file(_ name: String, count: Int) -> String {
        let p = path + "/" + name
        _ = FileManager.default.createFile(atPath: p, contents: Data(pattern(count)))
        return p
    }
}

func pattern(_ count: Int, from offset: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(($0 + offset) % 251) }
}
