import Testing
@testable import HTTPContent
@Test func mediaTypeParses() {
    #expect(MediaType(parsing: "text/html; charset=UTF-8")?.charset == "utf-8")
}
