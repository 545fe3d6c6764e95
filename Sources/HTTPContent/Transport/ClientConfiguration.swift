/// A client's defaults. Every default is stated here once (and pinned by a test).
public struct ClientConfiguration: Sendable {
    /// Total time allowed for one request, connect + transfer (CURLOPT_TIMEOUT_MS). Default: none.
    public var timeout: Duration? = nil
    /// Time allowed to establish the connection. Default: 30 s.
    public var connectTimeout: Duration? = .seconds(30)
    /// The longest silence allowed while a request runs: no byte received (or sent) for this
    /// long fails it with `.timeout` (the right limit for streams, which `timeout` would cut
    /// however healthy). Default: none.
    public var readTimeout: Duration? = nil
    /// Abort when fewer than `bytesPerSecond` arrive for `seconds` in a row. Default: off.
    /// libcurl averages the speed over its last 5 seconds: after a burst, a stall fires this
    /// about 5 s late (`readTimeout` fires on time).
    public var lowSpeedLimit: LowSpeedLimit? = nil
    /// Follow 3xx redirects (http and https targets only). Default: true.
    public var followRedirects = true
    /// Maximum redirects followed before failing with `.tooManyRedirects`. Default: 10.
    public var maxRedirects = 10
    /// User-Agent sent unless the request sets its own. Default: `httpcontent/<version>`.
    public var userAgent = "httpcontent/\(HTTPContentVersion.string)"
    /// Headers sent with every request unless the request sets the same name. Default: none.
    public var headers = Headers()
    /// Verify the server's TLS certificate and host name. Default: true. (Python's `verify`,
    /// C's `hc_client_set_verify`.)
    public var verify = true
    /// The old name of ``verify``.
    @available(*, deprecated, renamed: "verify")
    public var verifyTLS: Bool {
        get { verify }
        set { verify = newValue }
    }
    /// A PEM file of CA certificates to trust instead of the system's. Default: nil (system's).
    public var caFile: String? = nil
    /// A client certificate (PEM file, CURLOPT_SSLCERT) sent when a server asks for one, and its
    /// private key (PEM file, CURLOPT_SSLKEY; nil: in the certificate's file). Default: none.
    public var clientCertificate: String? = nil
    public var clientKey: String? = nil
    /// Accept TLS 1.2 session tickets, so that a new connection to a server seen before resumes
    /// its session (an abbreviated handshake) where the server keeps no session-ID cache, as
    /// nginx by default (libcurl 7.88 turns tickets off; TLS 1.3 resumes either way). Sessions
    /// are shared by every handle of the client (`ConnectionShare`). Default: true.
    public var tlsSessionTickets = true
    /// The proxy for every request, as a URL: `http://host:port`, `https://…` (TLS to the
    /// proxy), `socks4://`, `socks4a://`, `socks5://`, `socks5h://` (the proxy resolves names);
    /// credentials as `scheme://user:password@host:port`. `""` sends directly, whatever the
    /// environment says. Default: nil, the environment's `http_proxy`/`https_proxy`/`all_proxy`
    /// as libcurl reads them (`ProxyEnvironment`).
    public var proxy: String? = nil
    /// Hosts reached without the proxy: a comma-separated list of host names, domains
    /// (`example.com` covers its subdomains), IP addresses or CIDR ranges, or `*` for all.
    /// Default: nil, the environment's `no_proxy`, or none when `proxy` is set here.
    public var noProxy: String? = nil
    /// Read the proxy variables of the environment (`http_proxy`, `https_proxy`, `all_proxy`,
    /// `no_proxy`) when `proxy` is nil. False ignores them: requests go directly unless a proxy
    /// is set here or on the request (requests' and httpx's `trust_env`). Default: true.
    public var trustEnvironment = true
    /// libcurl's receive buffer (CURLOPT_BUFFERSIZE), in bytes: the most one chunk handed to a
    /// handler holds. Default: nil, 256 KiB for a request sent alone (`send`, or an `async`
    /// request while no other of the client's is in flight), where it takes about a third
    /// less CPU per byte than libcurl's 16 KiB (BENCHMARKS.md), and 128 KiB for `Batch` and
    /// `async` transfers among others, which may be thousands at once (each holds its buffer,
    /// touched only as far as a body reaches; libcurl's 16 KiB for a streaming handler, whose
    /// memory is counted in buffers): below that, libcurl 7.88 stalls an HTTP/2
    /// connection whenever one stream's buffer fills, and many streams on one connection
    /// then cost a third more CPU (BENCHMARKS.md, "HTTP/2 multiplexing"). Between 1 KiB and
    /// 10 MiB.
    public var receiveBufferSize: Int? = nil
    /// libcurl's upload buffer (CURLOPT_UPLOAD_BUFFERSIZE), in bytes: the most one read of a
    /// streamed body asks for. Default: nil, 1 MiB for a request sent alone (the least CPU per
    /// byte in bench/bodies.sh's sweep), libcurl's 64 KiB in batches. Between 16 KiB and 2 MiB.
    public var uploadBufferSize: Int? = nil
    /// Ask for compressed bodies (every encoding libcurl supports) and decode them. Default: true.
    public var acceptCompressed = true
    /// Where connections go and how TLS is set up beyond the above: DNS overrides, a Unix
    /// socket, certificates from memory, TLS versions and ciphers, pinning, happy eyeballs
    /// (`TransportOptions`). Default: none of them.
    public var transport = TransportOptions()

    /// Most transfers the client's `async` requests run at once; more wait their turn.
    /// Default: `defaultMaxConcurrentTransfers` (64).
    public var maxConcurrentTransfers = ClientConfiguration.defaultMaxConcurrentTransfers
    /// The library's one default for transfers in flight at once: the client's `async`
    /// requests, a C batch (`hc_batch_new`), Python's `map` and `amap`.
    public static let defaultMaxConcurrentTransfers = 64
    /// Most connections to one host at once for `async` requests and the client's batches
    /// (0: no limit; a batch's own `maxPerHost` overrides it). Over h2 one connection carries
    /// every stream, so this bounds HTTP/1.1 fan-out. Default: 0.
    public var maxConnectionsPerHost = 0
    /// How much of a rejected response's body is kept in the error. Default: 64 KiB.
    public var rejectedBodyLimit = 64 * 1024

    // MARK: Session layers (Sources/HTTPContent/Session)
    /// Keep cookies between requests, in one jar per client (libcurl's engine). Default: true.
    public var cookies = true
    /// A Netscape cookie file the jar starts from and is saved to. Default: nil (none).
    public var cookieFile: String? = nil
    /// Credentials sent with every request unless the request has its own. Default: nil.
    public var auth: Auth? = nil
    /// Send failed requests again (`send` on the calling thread). Default: nil (never).
    public var retry: RetryPolicy? = nil
    /// The HTTP cache (RFC 9111) requests go through; nil, the default: none.
    public var cache: HTTPCache? = nil

    public init() {}

    public struct LowSpeedLimit: Sendable, Equatable {
        public var bytesPerSecond: Int
        public var seconds: Int
        public init(bytesPerSecond: Int, seconds: Int) {
            self.bytesPerSecond = bytesPerSecond
            self.seconds = seconds
        }
    }
}

/// The library version, also returned by the C `hc_version()`; the repository's VERSION file is
/// the one place it is written (VersionTests pins these numbers to it).
public enum HTTPContentVersion {
    public static let major = 0
    public static let minor = 1
    public static let patch = 0
    public static var string: String { "\(major).\(minor).\(patch)" }
}
