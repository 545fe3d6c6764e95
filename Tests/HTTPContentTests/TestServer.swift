import Foundation
import Testing
import HTTPContent

/// The shared local test server (Tests/server/testserver.py), started once per test process on
/// 127.0.0.1 and a free port. It exits when this process does (its stdin is our pipe). A suite
/// that counts its connections starts one of its own (`TestServer()`).
final class TestServer: @unchecked Sendable {
    static let shared = TestServer()

    let base: String
    let port: Int
    private let process: Process
    private let stdin = Pipe()

    init() {
        let text: String
        do {
            (process, text) = try launchServerScript("testserver.py",
                ["--port", "0", "--exit-on-stdin-eof", "--lifetime", "600"], stdin: stdin)
        } catch {
            fatalError("cannot start the test server: \(error)")
        }
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            fatalError("test server said: \(text)")
        }
        self.port = port
        base = "http://127.0.0.1:\(port)"
    }

    func url(_ path: String) -> String { base + path }
}

/// Starts `Tests/server/<script>` with `arguments` under python3, its stdin our `stdin` pipe (it
/// stops when that closes), and returns it with the first line it prints (how it says it is
/// ready, and where). Pass `stdout` to read what it prints later (`readServerLine`).
func launchServerScript(_ script: String, _ arguments: [String], stdin: Pipe,
                        stdout: Pipe = Pipe()) throws -> (Process, String) {
    let path = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("server/\(script)").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", path] + arguments
    process.standardInput = stdin
    process.standardOutput = stdout
    try process.run()
    return (process, readServerLine(stdout))
}

/// The next line a server script prints, trimmed ("" once it has closed its stdout). The
/// scripts print one line per request of ours, so no line is split between two reads.
func readServerLine(_ stdout: Pipe) -> String {
    var line = Data()
    while !line.contains(0x0A) {
        let chunk = stdout.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
    }
    return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Stops a server from `launchServerScript`: closes its stdin (and with `terminate` sends SIGTERM),
/// then waits at most 20 s. A server still running then is killed and the test fails, rather than
/// the whole run hanging on it.
func stopServerScript(_ process: Process, stdin: Pipe, terminate: Bool) {
    try? stdin.fileHandleForWriting.close()
    if terminate { process.terminate() }
    let deadline = Date().addingTimeInterval(20)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        Issue.record("\(process.arguments?.dropFirst().first ?? "server") did not exit within 20 s; killed")
    }
    process.waitUntilExit()
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

    /// `arguments`: h2server.py's options (`--fresh`, `--tls12`).
    init?(_ arguments: [String] = []) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("hc-h2-\(UInt64.random(in: 0...UInt64.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        stdin = Pipe()
        let text: String
        (process, text) = try launchServerScript("h2server.py", [dir] + arguments, stdin: stdin)
        let words = text.split(separator: " ").map(String.init)
        guard words.first == "READY", words.count == 4, let port = Int(words[1]) else {
            print("H2Server: \(text)")
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: dir)
            return nil
        }
        self.port = port
        caFile = words[2]
        accessLog = words[3]
    }

    /// The fields of each request nginx logged ("<connection> <protocol> <uri>..."), once
    /// `count` are there: nginx writes a request's line after sending its response, so a client
    /// can hold the response first (waits at most 10 s).
    func loggedRequests(atLeast count: Int) -> [[String]] {
        var lines: [Substring] = []
        for _ in 0..<500 {  // bounded: 500 x 20 ms
            lines = ((try? String(contentsOfFile: accessLog, encoding: .utf8)) ?? "").split(separator: "\n")
            if lines.count >= count { break }
            usleep(20_000)
        }
        return lines.map { $0.split(separator: " ").map(String.init) }
    }

    /// The folder of its certificates (ca.pem, client.pem...) and Unix socket (nginx.sock).
    var folder: String { dir }

    func stop() {
        stopServerScript(process, stdin: stdin, terminate: false)  // h2server.py stops nginx itself
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// A link that misbehaves (Tests/server/faultproxy.py): a TCP proxy on 127.0.0.1 in front of
/// the shared test server that caps bandwidth, adds latency and jitter, stalls, resets after N
/// bytes, drips the response head. `arguments` are its command-line options
/// (`["--reset-after", "1200000", "--faulty", "1"]`). It stops with `stop()`, or with us.
final class FaultProxy {
    let port: Int
    private let process: Process
    private let stdin = Pipe()
    private let stdout = Pipe()

    init(_ arguments: [String], upstream: Int = TestServer.shared.port) throws {
        let text: String
        (process, text) = try launchServerScript("faultproxy.py", [String(upstream)] + arguments,
                                                 stdin: stdin, stdout: stdout)
        guard text.hasPrefix("READY "), let port = Int(text.dropFirst(6)) else {
            throw HTTPContentError(.localIO, "faultproxy.py said: \(text)")
        }
        self.port = port
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Connections accepted and connections reset so far: a test checks its fault did happen.
    func stats() -> (connections: Int, resets: Int) {
        stdin.fileHandleForWriting.write(Data("stats\n".utf8))
        let words = readServerLine(stdout).split(separator: " ")
        guard words.count == 3, words[0] == "STATS", let c = Int(words[1]), let r = Int(words[2]) else { return (-1, -1) }
        return (c, r)
    }

    func stop() { stopServerScript(process, stdin: stdin, terminate: true) }
}
