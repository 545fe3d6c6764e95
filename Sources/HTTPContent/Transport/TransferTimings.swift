import CCurl

/// When each phase of a transfer ended, in seconds from its start, as libcurl measured them
/// (CURLINFO_*_TIME_T): what users of every peer ask for to tell a slow DNS from a slow
/// handshake or a slow server. A phase that did not happen (a kept connection: no DNS,
/// connect or TLS) ends when the one before it did; after redirects, `redirect` is the time
/// spent on them and the others count from the start of the first.
public struct TransferTimings: Sendable, Equatable {
    /// The host name resolved (CURLINFO_NAMELOOKUP_TIME_T).
    public var dns: Double = 0
    /// The TCP (or Unix socket) connection made (CURLINFO_CONNECT_TIME_T).
    public var connect: Double = 0
    /// The TLS handshake done (CURLINFO_APPCONNECT_TIME_T; 0 for plain http).
    public var tls: Double = 0
    /// The request about to be sent (CURLINFO_PRETRANSFER_TIME_T).
    public var pretransfer: Double = 0
    /// The first byte of the response received (CURLINFO_STARTTRANSFER_TIME_T).
    public var firstByte: Double = 0
    /// The whole transfer (CURLINFO_TOTAL_TIME_T).
    public var total: Double = 0
    /// Redirects followed before the final request (CURLINFO_REDIRECT_TIME_T).
    public var redirect: Double = 0

    public init() {}

    /// Read from libcurl once the transfer is over.
    init(_ easy: EasyHandle) {
        func seconds(_ key: CURLINFO) -> Double { Double(easy.info(offset: key)) / 1e6 }
        dns = seconds(CURLINFO_NAMELOOKUP_TIME_T)
        connect = seconds(CURLINFO_CONNECT_TIME_T)
        tls = seconds(CURLINFO_APPCONNECT_TIME_T)
        pretransfer = seconds(CURLINFO_PRETRANSFER_TIME_T)
        firstByte = seconds(CURLINFO_STARTTRANSFER_TIME_T)
        total = seconds(CURLINFO_TOTAL_TIME_T)
        redirect = seconds(CURLINFO_REDIRECT_TIME_T)
    }
}
