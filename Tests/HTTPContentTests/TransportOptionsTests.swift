import Testing
import Foundation
@testable import HTTPContent

/// Issue 31 on the Swift front, against a real nginx with TLS (Tests/server/h2server.py): TLS
/// sessions resumed and shared (`ConnectionShare`), the transport options, the per-phase
/// timings. Each test returns early, with the reason printed, where nginx or openssl is missing.
@Suite struct TransportOptionsTests {
    /// The resumption field ("r" or ".") of each request nginx logged, once `count` are there.
    private func resumed(_ h2: H2Server, count: Int) throws -> [String] {
        h2.loggedRequests(atLeast: count).map { $0[3] }
    }

    private func logged(_ h2: H2Server) -> Int {
        ((try? String(contentsOfFile: h2.accessLog, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    private func config(_ h2: H2Server) -> ClientConfiguration {
        var config = ClientConfiguration()
        config.caFile = h2.caFile
        config.cookies = false
        // Directly: other suites running at the same time set proxy variables (ProxyTests).
        config.trustEnvironment = false
        return config
    }

    @Test func newConnectionsResumeTheTLS12SessionByTicket() throws {
        guard let h2 = try H2Server(["--fresh", "--tls12", "--http1"]) else { return }
        defer { h2.stop() }
        let client = try Client(configuration: config(h2))
        for _ in 0..<3 {
            let r = try client.get("https://127.0.0.1:\(h2.port)/f1.bin", handler: Bytes())
            #expect(r.content.array == [UInt8](repeating: 1, count: 1001))
        }
        #expect(try resumed(h2, count: 3) == [".", "r", "r"])
    }

    @Test func ticketsOffMeansAFullHandshakeEachTime() throws {
        guard let h2 = try H2Server(["--fresh", "--tls12", "--http1"]) else { return }
        defer { h2.stop() }
        var config = config(h2)
        config.tlsSessionTickets = false
        let client = try Client(configuration: config)
        for _ in 0..<2 { _ = try client.get("https://127.0.0.1:\(h2.port)/f1.bin", handler: Discard()) }
        #expect(try resumed(h2, count: 2) == [".", "."])
    }

    @Test func clientsGivenOneShareResumeEachOthersSessions() throws {
        guard let h2 = try H2Server(["--fresh", "--tls12", "--http1"]) else { return }
        defer { h2.stop() }
        let share = ConnectionShare()
        let first = try Client(configuration: config(h2), share: share)
        let second = try Client(configuration: config(h2), share: share)
        let alone = try Client(configuration: config(h2))
        for client in [first, second, alone] {
            _ = try client.get("https://127.0.0.1:\(h2.port)/f2.bin", handler: Discard())
        }
        #expect(try resumed(h2, count: 3) == [".", "r", "."])
        // With cookies on, a client shares its jar's connections; another share is refused.
        var withCookies = config(h2)
        withCookies.cookies = true
        #expect(throws: HTTPContentError.self) { try Client(configuration: withCookies, share: share) }
    }

    @Test func resolveCAFromMemoryAndTimings() throws {
        guard let h2 = try H2Server() else { return }
        defer { h2.stop() }
        var config = ClientConfiguration()
        config.transport.resolve = ["hc.test:\(h2.port):127.0.0.1"]
        config.transport.caPEM = Array(try Data(contentsOf: URL(fileURLWithPath: h2.caFile)))
        let client = try Client(configuration: config)
        let r = try client.get("https://hc.test:\(h2.port)/f3.bin", handler: Bytes())
        #expect(r.content.array == [UInt8](repeating: 3, count: 1003))
        let t = r.metrics.timings
        #expect(0 <= t.dns && t.dns <= t.connect && t.connect < t.tls && t.tls <= t.pretransfer)
        #expect(t.pretransfer <= t.firstByte && t.firstByte <= t.total && t.total == r.metrics.totalTime)
        // The same host name without the override is not found.
        let plain = try Client(configuration: { var c = ClientConfiguration(); c.caPEM(from: config); return c }())
        #expect(throws: HTTPContentError.self) {
            _ = try plain.get("https://hc.test:\(h2.port)/f3.bin", handler: Discard())
        }
    }

    @Test func unixSocketAndClientCertificateFromMemory() throws {
        guard let h2 = try H2Server() else { return }
        defer { h2.stop() }
        var config = config(h2)
        config.transport.unixSocket = h2.folder + "/nginx.sock"
        let cert = Array(try Data(contentsOf: URL(fileURLWithPath: h2.folder + "/client.pem")))
        let key = Array(try Data(contentsOf: URL(fileURLWithPath: h2.folder + "/client.key")))
        config.transport.clientCertificateBlob = .pem(certificate: cert, key: key)
        let client = try Client(configuration: config)
        // Port 1 is closed: only the socket can answer.
        let r = try client.get("https://127.0.0.1:1/whoami", handler: Text())
        #expect(r.content == "SUCCESS CN=hc-client")
    }

    @Test func aPinThatMatchesNoKeyFailsTheTransfer() throws {
        guard let h2 = try H2Server() else { return }
        defer { h2.stop() }
        var config = config(h2)
        config.transport.pinnedPublicKey = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        let client = try Client(configuration: config)
        do {
            _ = try client.get("https://127.0.0.1:\(h2.port)/f4.bin", handler: Discard())
            Issue.record("a pinned key that matches nothing was accepted")
        } catch {
            #expect(error.code == .transport && error.curlCode == 90)  // CURLE_SSL_PINNEDPUBKEYNOTMATCH
        }
    }

    @Test func badOptionsAreRefusedWhenTheClientIsMade() {
        for change: (inout TransportOptions) -> Void in [
            { $0.resolve = ["hc.test:443"] }, { $0.unixSocket = "" }, { $0.caPEM = [] },
            { $0.happyEyeballsTimeout = .milliseconds(-1) }, { $0.ciphers = "" },
        ] {
            var config = ClientConfiguration()
            change(&config.transport)
            #expect(throws: HTTPContentError.self) { try Client(configuration: config) }
        }
    }
}

private extension ClientConfiguration {
    /// The same trust store as `other`'s, and nothing else of its transport options.
    mutating func caPEM(from other: ClientConfiguration) { transport.caPEM = other.transport.caPEM }
}
