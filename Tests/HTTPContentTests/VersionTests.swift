import Foundation
import Testing
import HTTPContent

/// The version is written once, in the repository's VERSION file: CMake generates the C header's
/// HC_VERSION_* from it and the Python package reads it. SwiftPM cannot generate code without a
/// plugin, so the core's `HTTPContentVersion` is pinned to that file here (and ctest pins
/// `hc_version()` to HC_VERSION_STRING): a bump that misses one fails.
@Suite struct VersionTests {
    @Test func theCoreVersionIsTheVersionFile() throws {
        let root = String(#filePath).components(separatedBy: "/Tests/HTTPContentTests/")[0]
        let text = try String(contentsOfFile: root + "/VERSION", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(text == HTTPContentVersion.string)
        #expect(text.split(separator: ".").map { Int($0) } == [HTTPContentVersion.major, HTTPContentVersion.minor,
                                                               HTTPContentVersion.patch])
    }
}
