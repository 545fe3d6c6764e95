import Foundation
@testable import HTTPContent

/// The shared test server (Tests/server/testserver.py), started once per test process on a free
/// port. Its stdin is our pipe: when the test process exits, the server does too.
final class JSONTestServer: @unchecked Sendable {
    let base: String
    private let process: Process
    private let stdin: Pipe

    static let shared: JSONTestServer? = try? JSONTestServer()

    private init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("server/testserver.py")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--port", "0", "--exit-on-stdin-eof", "--lifetime", "600"]
        stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let byte = stdout.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            process.terminate()
            throw HTTPContentError(.localIO, "test server did not start: \(text)")
        }
        base = "http://127.0.0.1:\(port)"
    }

    func url(_ path: String) -> String { base + path }

    /// `/json?doc=...` with the document percent-encoded.
    func jsonURL(_ doc: String, ctype: String? = nil) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        var u = url("/json?doc=" + (doc.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""))
        if let ctype { u += "&ctype=" + (ctype.addingPercentEncoding(withAllowedCharacters: allowed) ?? "") }
        return u
    }
}
