/// A completed response: its head, the handler's content, and figures about the transfer.
public struct Response<Content> {
    /// The final response's status line and headers (after redirects).
    public let head: ResponseHead
    /// What the request's handler made of the body (``ContentHandler/finish()``).
    public let content: Content
    /// Bytes and times of the transfer.
    public let metrics: TransferMetrics

    /// A response made of its parts (the client makes them; tests and wrappers may too).
    public init(head: ResponseHead, content: Content, metrics: TransferMetrics) {
        self.head = head
        self.content = content
        self.metrics = metrics
    }

    /// The status code of the final response.
    public var status: Int { head.status }
    /// How the client's cache answered: a miss, a hit, a stored response revalidated by a 304,
    /// or a stale one served (nil: no cache, or it did not apply to the request).
    public var cacheStatus: CacheStatus? { head.cacheStatus }
    /// Whether the body came from the cache (a hit, a revalidated or a stale response).
    public var fromCache: Bool { head.cacheStatus.map { $0 != .miss } ?? false }
    /// The final response's headers.
    public var headers: Headers { head.headers }
    /// The URL of the final response, after redirects.
    public var url: String { head.url }
    /// The parsed Content-Type, or nil when absent or malformed.
    public var contentType: MediaType? { head.contentType }

    /// Throws what a handler refusing the status would have thrown (`.unacceptableStatus`,
    /// same message, response and server message) when the status is 400 or more, as
    /// `requests`' `raise_for_status`: for a response taken whatever its status
    /// (`Acceptance.anything`). A redirect not followed is not an error.
    /// - Parameter body: the body to keep with the error (a `Bytes` response's content).
    public func checkStatus(body: [UInt8] = []) throws(HTTPContentError) {
        guard status >= 400 else { return }
        throw HTTPContentError.unacceptableStatus(head, body: body)
    }

    /// The same response with its content transformed (decoding a JSON tree into your type...).
    public func map<T>(_ transform: (Content) throws -> T) rethrows -> Response<T> {
        Response<T>(head: head, content: try transform(content), metrics: metrics)
    }
}

extension Response: Sendable where Content: Sendable {}

/// Figures libcurl reports about one transfer.
public struct TransferMetrics: Sendable, Equatable {
    /// Body bytes received on the wire (compressed size when the body was compressed).
    public var wireBytes: Int64 = 0
    /// Body bytes handed to the handler (after decompression).
    public var decodedBytes: Int64 = 0
    /// Body bytes sent.
    public var uploadedBytes: Int64 = 0
    /// Seconds from start to the end of the transfer.
    public var totalTime: Double = 0
    /// Seconds from start until the connection was established.
    public var connectTime: Double = 0
    /// Redirects followed.
    public var redirectCount = 0
    /// Connections libcurl had to open for this transfer (0 when a kept-alive one was reused).
    public var newConnections = 0
    /// When each phase ended, from libcurl's own clock (`TransferTimings`).
    public var timings = TransferTimings()

    public init() {}
}

/// Progress of one transfer, reported while it runs.
public struct TransferProgress: Sendable, Equatable {
    /// Body bytes received on the wire so far, and the expected total (0 when unknown). A
    /// resumed download (`ResumingHandler`) counts the part it continues in both: `received`
    /// starts at the part's size and `expected` is the whole file's.
    public var received: Int64
    public var expected: Int64
    /// Body bytes handed to the handler so far (decompressed).
    public var decoded: Int64
    /// Request body bytes sent so far, and the total (0 when unknown).
    public var sent: Int64
    public var toSend: Int64
}
