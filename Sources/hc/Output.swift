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
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            p += n
            left -= n
        }
    }

    static func writeError(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var p = buffer.baseAddress
            var left = buffer.count
            while left > 0, let q = p {
                let n = Glibc.write(2, q, left)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                p = q + n
                left -= n
            }
        }
    }

    static func write(_ text: String) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// One clear line on stderr: what failed and why, with the server's own words if it sent any.
    static func error(_ error: HTTPContentError, hintRedirects: Bool = false) {
        var line = "hc: \(error.code.name) error: \(error.message)"
        if let said = error.serverMessage, !error.message.contains(said) { line += " — server says: \(said)" }
        if let curl = error.curlCode { line += " [libcurl \(curl)]" }
        if let offset = error.offset, !error.message.contains("byte \(offset)") { line += " [at byte \(offset)]" }
        if hintRedirects, error.code == .unacceptableStatus, let head = error.response,
           [301, 302, 303, 307, 308].contains(head.status) {
            line += " (a redirect: -L follows it)"
        }
        Output.writeError(line + "\n")
        if error.violations.count > 1 {
            for v in error.violations { Output.writeError("hc:   \(v)\n") }
        }
    }
}
