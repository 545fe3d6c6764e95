import Foundation
import Testing
@testable import HTTPContent

private let server = TestServer.shared

/// Issue 28 ("Mends"): decisions the core makes for every front.
@Suite struct MendsTests {
    let client = try! Client()

    // MARK: - A status checked after the fact

    @Test func checkingAStatusThrowsWhatARejectionThrows() throws {
        let url = server.url("/status/404?json=1&message=gone")
        var rejected: HTTPContentError?
        do { _ = try client.get(url, handler: Bytes()) } catch { rejected = error }
        let r = try client.get(url, handler: Bytes(acceptance: .anything))
        var checked: HTTPContentError?
        do { try r.checkStatus(body: r.content.array) } catch { checked = error }
        #expect(rejected?.message == "HTTP 404 Not Found: gone")
        #expect(checked?.message == rejected?.message)
        #expect(checked?.code == .unacceptableStatus && checked?.serverMessage == "gone")
        #expect(checked?.response?.method == "GET" && checked?.response?.url == url)
        let fine = try client.get(server.url("/status/201"), handler: Bytes(acceptance: .anything))
        try fine.checkStatus()
    }
}
