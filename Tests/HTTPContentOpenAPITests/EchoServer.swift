import Foundation

/// Tests/server/testserver.py on 127.0.0.1 and a free port, started once per test process; it
/// exits when this process does (its stdin is our pipe, and it has a lifetime of 600 s).
final class EchoServer: @unchecked Sendable {
    static let shared = EchoServer()

    let baseURL: URL
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
        do { try process.run() } catch { fatalError("cannot start testserver.py: \(error)") }
        var said = Data()
        while !said.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said.append(chunk)
        }
        let line = String(decoding: said, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            fatalError("testserver.py said: \(line)")
        }
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }
}
