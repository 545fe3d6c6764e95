import Foundation
import HTTPContent
import HTTPContentOpenAPI
import HTTPTypes
import Testing

@Suite struct HTTPTypesInteropTests {
    @Test func headersToHTTPFieldsKeepOrderRepeatsAndSpelling() {
        let headers = Headers([("Set-Cookie", "a=1"), ("X-Trace", "t"), ("set-cookie", "b=2")])
        let fields = HTTPFields(headers)
        #expect(fields.map(\.name.rawName) == ["Set-Cookie", "X-Trace", "set-cookie"])
        #expect(fields[values: .setCookie] == ["a=1", "b=2"])
        #expect(Headers(fields) == headers)
    }

    @Test func headerNamesHTTPFieldsCannotHoldAreLeftOut() {
        let fields = HTTPFields(Headers([("bad name", "x"), ("Good", "y")]))
        #expect(fields.map(\.name.rawName) == ["Good"])
    }

    @Test func httpRequestBecomesCoreRequestAgainstItsOwnURL() throws {
        var fields = HTTPFields()
        fields[.accept] = "application/json"
        fields.append(HTTPField(name: HTTPField.Name("X-Multi")!, value: "1"))
        fields.append(HTTPField(name: HTTPField.Name("X-Multi")!, value: "2"))
        let request = HTTPRequest(method: .put, scheme: "https", authority: "example.com:8443",
                                  path: "/a/b?q=1%202", headerFields: fields)
        let core = try Request(request)
        #expect(core.method == "PUT")
        #expect(core.url == "https://example.com:8443/a/b?q=1%202")
        #expect(core.headers["accept"] == "application/json")
        #expect(core.headers.values(for: "x-multi") == ["1", "2"])
    }

    @Test func baseURLPathComesBeforeTheRequestPathAndTheQueryIsTheRequests() throws {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/pets/7?kind=cat%20s")
        let core = try Request(request, baseURL: URL(string: "http://127.0.0.1:9/api/v1?ignored=1")!)
        #expect(core.url == "http://127.0.0.1:9/api/v1/pets/7?kind=cat%20s")
    }

    @Test func requestWithoutAuthorityNeedsABaseURL() {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/x")
        #expect(throws: HTTPContentError.self) { try Request(request) }
    }

    @Test func coreRequestBecomesHTTPRequest() throws {
        let core = Request("PATCH", "http://h.example:81?x=1", headers: ["X-A": "1"])
        let request = try HTTPRequest(core)
        #expect(request.method == .patch)
        #expect(request.scheme == "http")
        #expect(request.authority == "h.example:81")
        #expect(request.path == "/?x=1")
        #expect(request.headerFields[HTTPField.Name("x-a")!] == "1")
        #expect(try HTTPRequest(Request("GET", "https://h.example/p/q#frag")).path == "/p/q")
        #expect(throws: HTTPContentError.self) { try HTTPRequest(Request("GET", "no-scheme")) }
        #expect(throws: HTTPContentError.self) { try HTTPRequest(Request("BAD METHOD", "http://h/")) }
    }

    @Test func responsesConvertBothWays() {
        let head = ResponseHead(status: 418, reason: "I'm a teapot",
                                headers: Headers([("Content-Type", "text/plain"), ("Vary", "a"), ("Vary", "b")]),
                                url: "http://h/", method: "GET")
        let response = HTTPResponse(head)
        #expect(response.status.code == 418)
        #expect(response.status.reasonPhrase == "I'm a teapot")
        #expect(response.headerFields[values: .vary] == ["a", "b"])
        let back = ResponseHead(response, url: "http://h/", method: "GET")
        #expect(back.status == 418)
        #expect(back.reason == "I'm a teapot")
        #expect(back.headers == head.headers)
    }
}
