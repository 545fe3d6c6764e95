import Testing
@testable import HTTPContent

/// Inputs the fuzz-plist target found, kept as regression tests.
@Suite struct PlistRegressionTests {
    /// A binary plist whose dictionary key holds a NUL: libplist 2.2 asserted (aborting the
    /// process) on reading it. The scan refuses any string with a NUL before libplist reads it.
    @Test func aStringWithANulIsADecodeErrorNotAnAbort() throws {
        let input = "AGJwbGlzdDAw0gECAwxRZGluZz1dVVRGLTgiPz4KPCFET0NUWVBFIHBsaXN0IFBVQkxJQyAiaXN0LQAAAWEAAAlBAGUAaADpAGwAbABvM8HTR/AAAAAAgAcIKA0PERocajY/QEJNVgAAAAAAAAEBAAAAAAAAAA0AAAAAAAAAAAAAAAAAAABY"
        let bytes = Array(base64(input).dropFirst())   // the fuzz input's first byte is its options
        #expect(throws: HTTPContentError.self) { _ = try PlistParser.parse(bytes, options: PlistOptions()) }
        do {
            _ = try PlistParser.parse(bytes, options: PlistOptions())
        } catch {
            #expect(error.code == .decode && error.message.contains("NUL"))
        }
    }

    private func base64(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        var out: [UInt8] = []
        var acc: UInt32 = 0, bits = 0
        for c in text.utf8 where table[Int(c)] != 0xFF {
            acc = acc << 6 | UInt32(table[Int(c)])
            bits += 6
            if bits >= 8 { bits -= 8; out.append(UInt8((acc >> UInt32(bits)) & 0xFF)) }
        }
        return out
    }
}
