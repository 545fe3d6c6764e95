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
