import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// The one error type of the library. Every failure, on every front (Swift, C, Python), is one of
/// these codes plus a message; the C `hc_code` values and the Python exception classes map one to
/// one onto `Code`.
public struct HTTPContentError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. Raw values are the C ABI's `hc_code` values and never change.
    public enum Code: Int32, Sendable, CaseIterable {
        /// A caller-supplied argument is invalid (bad URL, CR/LF in a header, NULL handle).
        case invalidArgument = 1
        /// libcurl failed to complete the exchange (connection refused, reset, truncated body…).
        case transport = 2
        /// The total, connect or low-speed time limit was hit.
        case timeout = 3
        /// More redirects than the configured maximum.
        case tooManyRedirects = 4
        /// The response's status code is not one the handler accepts.
        case unacceptableStatus = 5
        /// The response's Content-Type is not one the handler accepts.
        case unacceptableContentType = 6
        /// The body could not be decoded (bad charset bytes, malformed JSON, wrong image type).
        case decode = 7
        /// The (decoded) body is larger than the handler allows.
        case tooLarge = 8
        /// The transfer was cancelled by the caller.
        case cancelled = 9
        /// A local file operation failed (download target, upload source): Python's
        /// `LocalIOError`, C's `HC_ELOCAL_IO`.
        case localIO = 10
        /// A callback supplied by the caller (custom handler, progress, upload source) failed.
        case callback = 11
        /// A download's bytes do not match the digest expected of them (given, or the server's).
        case checksumMismatch = 12

        /// A stable lowercase name, used in messages and by the C `hc_code_name`.
        public var name: String {
            switch self {
            case .invalidArgument: return "invalid argument"
            case .transport: return "transport"
            case .timeout: return "timeout"
            case .tooManyRedirects: return "too many redirects"
            case .unacceptableStatus: return "unacceptable status"
            case .unacceptableContentType: return "unacceptable content type"
            case .decode: return "decode"
            case .tooLarge: return "too large"
            case .cancelled: return "cancelled"
            case .localIO: return "I/O"
            case .callback: return "callback"
            case .checksumMismatch: return "checksum mismatch"
            }
        }

        /// The old name of ``localIO``.
        @available(*, deprecated, renamed: "localIO")
        public static var io: Code { .localIO }
        /// The old name of ``checksumMismatch``.
        @available(*, deprecated, renamed: "checksumMismatch")
        public static var checksum: Code { .checksumMismatch }
    }

    /// The fields live in one shared, copy-on-write box: the error is one pointer wide, so
    /// throwing it, and keeping a `HTTPContentError?` that is usually nil, costs next to nothing
    /// on the per-request path.
    private final class Storage: CopyOnWriteStorage, @unchecked Sendable {
        var code: Code
        var message: String
        var curlCode: Int32?
        var response: ResponseHead?
        var body: [UInt8]
        var serverMessage: String?
        var offset: Int?
        var underlying: (any Error)?
        var requestURL: String?
        var requestMethod: String?
        var recordIndex: Int?
        var attempts = 1
        var violations: [SchemaViolation] = []

        init(code: Code, message: String, curlCode: Int32?, response: ResponseHead?, body: [UInt8],
             serverMessage: String?, offset: Int?, underlying: (any Error)?) {
            self.code = code
            self.message = message
            self.curlCode = curlCode
            self.response = response
            self.body = body
            self.serverMessage = serverMessage
            self.offset = offset
            self.underlying = underlying
        }

        func copy() -> Storage {
            let other = Storage(code: code, message: message, curlCode: curlCode, response: response, body: body,
                                serverMessage: serverMessage, offset: offset, underlying: underlying)
            other.requestURL = requestURL
            other.requestMethod = requestMethod
            other.recordIndex = recordIndex
            other.attempts = attempts
            other.violations = violations
            return other
        }
    }

    private var box: CopyOnWrite<Storage>

    /// What kind of failure: the value the C ABI returns as `hc_code`.
    public var code: Code {
        get { box.value.code }
        set { box.unique.code = newValue }
    }
    /// What went wrong, for a person: names the URL, the limit or the byte that failed.
    public var message: String {
        get { box.value.message }
        set { box.unique.message = newValue }
    }
    /// libcurl's `CURLcode` when the failure came from libcurl, else nil.
    public var curlCode: Int32? {
        get { box.value.curlCode }
        set { box.unique.curlCode = newValue }
    }
    /// The response head (status, headers, URL) when a response was received.
    public var response: ResponseHead? {
        get { box.value.response }
        set { box.unique.response = newValue }
    }
    /// The body of a rejected response (capped), or the bytes a decoder could not make sense of.
    public var body: [UInt8] {
        get { box.value.body }
        set { box.unique.body = newValue }
    }
    /// The server's own message, taken from a JSON error document in a rejected response's body.
    public var serverMessage: String? {
        get { box.value.serverMessage }
        set { box.unique.serverMessage = newValue }
    }
    /// For decode errors: the byte offset in the body where decoding failed.
    public var offset: Int? {
        get { box.value.offset }
        set { box.unique.offset = newValue }
    }
    /// For a bad record of a record stream (JSON lines): its index, counting every record
    /// (good, bad or skipped) from 0; blank lines are not records.
    public var recordIndex: Int? {
        get { box.value.recordIndex }
        set { box.unique.recordIndex = newValue }
    }
    /// The error thrown by a caller's callback, when `code == .callback`.
    public var underlying: (any Error)? {
        get { box.value.underlying }
        set { box.unique.underlying = newValue }
    }

    /// The URL of the request that failed: the final response's URL (after redirects) when one
    /// was received, else the URL the request was sent to; nil for a failure not tied to a
    /// request (a bad argument to a setter).
    public var url: String? {
        get { box.value.response?.url ?? box.value.requestURL }
        set { box.unique.requestURL = newValue }
    }
    /// The method of the request that failed, or nil for a failure not tied to a request.
    public var method: String? {
        get { box.value.requestMethod ?? box.value.response?.method }
        set { box.unique.requestMethod = newValue }
    }

    /// Names the request an error belongs to, where the failure did not already.
    func about(_ request: borrowing Request) -> HTTPContentError {
        var error = self
        if box.value.requestURL == nil { error.url = request.url }
        if box.value.requestMethod == nil { error.method = request.method }
        return error
    }
    /// The schema violations behind a failed validation (sub-kind "schema"): on `.decode` for a
    /// response, `.invalidArgument` for a request body. Empty for every other failure.
    public var violations: [SchemaViolation] {
        get { box.value.violations }
        set { box.unique.violations = newValue }
    }

    /// The kind of failure within the code: "schema" when `violations` explain it, else nil.
    public var subKind: String? { violations.isEmpty ? nil : "schema" }

    /// How many times the request was sent (more than 1 when a retry policy sent it again).
    public var attempts: Int {
        get { box.value.attempts }
        set { box.unique.attempts = newValue }
    }

    /// A `.transport` failure to reach the server or to keep the connection: the name did not
    /// resolve (host or proxy), the connection was refused, TLS could not be set up, the
    /// connection closed without a reply, or a send or receive failed at the socket (reset,
    /// broken pipe: `underlying` is a `SocketError`; libcurl reports a malformed body with the
    /// same code as a reset). Python raises these as `ConnectionError` too.
    public var isConnectionFailure: Bool {
        guard code == .transport, let curlCode else { return false }
        let connection: [CURLcode] = [CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT,
                                      CURLE_SSL_CONNECT_ERROR, CURLE_GOT_NOTHING]
        return connection.contains { Int32($0.rawValue) == curlCode } || underlying is SocketError
    }

    /// An error of kind `code`; the library fills in what is known of the response.
    public init(_ code: Code, _ message: String, curlCode: Int32? = nil, response: ResponseHead? = nil,
                body: [UInt8] = [], serverMessage: String? = nil, offset: Int? = nil,
                underlying: (any Error)? = nil) {
        box = CopyOnWrite(Storage(code: code, message: message, curlCode: curlCode, response: response,
                                  body: body, serverMessage: serverMessage, offset: offset,
                                  underlying: underlying))
    }

    public var description: String { "\(code.name) error: \(message)" }

    /// Wraps any error thrown by caller code as a `.callback` error, keeping ours as they are.
    package static func wrapping(_ error: any Error) -> HTTPContentError {
        if let own = error as? HTTPContentError { return own }
        return HTTPContentError(.callback, "callback failed: \(error)", underlying: error)
    }
}

/// The socket error (errno) under a transport failure: the connection was reset, or broken.
public struct SocketError: Error, Sendable, Equatable {
    public let errno: Int32

    /// The errnos of a connection that broke while in use.
    static let brokenConnection: Set<Int32> = [ECONNRESET, EPIPE, ECONNABORTED, ENETRESET, ENOTCONN]
}

// MARK: - A response refused for its status

extension HTTPContentError {
    /// The error of a response refused for its status, as a handler's acceptance refuses it and
    /// as `Response.checkStatus` (Python's `raise_for_status`) reports it: "HTTP 404 Not Found",
    /// with the response (status, headers, URL, method) and, when the body is a JSON error
    /// document, the server's message after a colon.
    /// - Parameters:
    ///   - head: the response refused.
    ///   - body: the body kept with the error (the caller caps it).
    ///   - detail: words after the status line, as "(rejected by the handler)".
    public static func unacceptableStatus(_ head: ResponseHead, body: [UInt8] = [],
                                          detail: String? = nil) -> HTTPContentError {
        var error = HTTPContentError(.unacceptableStatus,
                                     detail.map { "\(head.statusLine) \($0)" } ?? head.statusLine,
                                     response: head)
        error.addBody(body)
        return error
    }

    /// Keeps `body` (capped by the caller) and, when it is a JSON error document, the server's
    /// message in it: an unacceptable status's message then ends with it.
    mutating func addBody(_ body: [UInt8]) {
        self.body = body
        guard serverMessage == nil else { return }
        serverMessage = ServerMessage.extract(from: body, head: response)
        if let said = serverMessage, code == .unacceptableStatus { message += ": " + said }
    }
}
