import Foundation

/// The shared local test server (Tests/server/testserver.py), started once per test process on
/// 127.0.0.1 and a free port. It exits when this process does (its stdin is our pipe).
final class TestServer: @unchecked Sendable {
    static let shared = TestServer()

    let base: String
    private let process = Process()
    private let stdin = Pipe()

    private init() {
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("server/testserver.py").path
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "--port", "0", "--exit-on-stdin-eof", "--lifetime", "600"]
        process.standardInput = stdin
        process.standardOutput = stdout
        do {
            try process.run()
        } catch {
            fatalError("cannot start the test server: \(error)")
        }
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            fatalError("test server said: \(text)")
        }
        base = "http://127.0.0.1:\(port)"
    }

    func url(_ path: String) -> String { base + path }
}

func expectedBytes(_ n: Int) -> [UInt8] { (0..<n).map { UInt8($0 % 251) } }

/// An HTTP/2 server (Tests/server/h2server.py: a real nginx with TLS and ALPN h2, and a
/// certificate made for the test) for one test; nil, with the reason printed, where nginx or
/// openssl is missing. It stops when `stop()` closes its stdin.
final class H2Server {
    let port: Int
    let caFile: String
    let accessLog: String
    private let process: Process
    private let stdin: Pipe
    private let dir: String

    init?() throws {
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("server/h2server.py").path
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hc-h2-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        process = Process()
        stdin = Pipe()
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, dir]
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ").map(String.init)
        guard words.first == "READY", words.count == 4, let port = Int(words[1]) else {
            print("H2Server: \(String(decoding: line, as: UTF8.self))")
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: dir)
            return nil
        }
        self.port = port
        caFile = words[2]
        accessLog = words[3].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
