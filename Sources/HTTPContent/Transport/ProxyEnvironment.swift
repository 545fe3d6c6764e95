#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether the environment names a proxy for http or https URLs, read once when a client is
/// made. libcurl reads these variables itself, with five `getenv` calls on every transfer
/// (about 1.5k instructions, more with a large environment). When none is set, the client says
/// so once per handle (an empty proxy and no-proxy list), which libcurl then takes instead.
/// When one is set, libcurl goes on reading them per transfer, exactly as before.
/// So a variable set after a client is made is seen by clients made later, not by that one.
enum ProxyEnvironment {
    /// What libcurl 7.88 consults for http and https URLs, in its order. (It ignores an
    /// uppercase HTTP_PROXY on purpose: CGI programs get that from a request's Proxy header.)
    /// An empty value names no proxy, as in libcurl; no_proxy matters only when one is named.
    static let variables = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]

    /// True when no variable names a proxy. `lookup` is `getenv`, a parameter for tests.
    static func namesNoProxy(
        _ lookup: (String) -> String? = { getenv($0).map { String(cString: $0) } }
    ) -> Bool {
        variables.allSatisfy { lookup($0)?.isEmpty ?? true }
    }
}
