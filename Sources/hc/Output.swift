import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// Writing to stdout and stderr without Foundation.
enum Output {
    static func write(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(1, p, left)
            if n <= 0 { return }
            p += n
            left -= n
        }
    }

    static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    }

    static func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// One clear line on stderr: what failed and why, with the server's own words if it sent any.
    static func error(_ error: HTTPContentError) {
        var line = "hc: \(error.code.name) error: \(error.message)"
        if let said = error.serverMessage, !error.message.contains(said) { line += " — server says: \(said)" }
        if let curl = error.curlCode { line += " [libcurl \(curl)]" }
        if let offset = error.offset, !error.message.contains("byte \(offset)") { line += " [at byte \(offset)]" }
        Output.writeError(line + "\n")
    }
}
