import Foundation
import HTTPContent
import HTTPContentFoundation
import HTTPTypes
import OpenAPIRuntime

/// A `ClientTransport` for swift-openapi-runtime over httpcontent: any client made by
/// swift-openapi-generator sends its requests with libcurl through an httpcontent `Client`.
///
///     let client = Client(serverURL: URL(string: "https://api.example.com/v1")!,
///                         transport: try HTTPContentTransport())
///     let response = try await client.getGreeting(query: .init(name: "Jane"))
///
/// Like swift-openapi-async-http-client and swift-openapi-urlsession, it
/// - joins the base URL and the request's path (the base's path, then the operation's);
/// - sends every header field the generated code set, in order;
/// - streams the request body: Content-Length when its length is known, chunked otherwise
///   (small bodies of known length are collected first and sent with the headers);
/// - returns as soon as the response head is in, with the body streaming its chunks as they
///   arrive (with its length when the server declared one and nothing decodes it);
/// - returns every status (the generated client decides what a 404 means) and follows
///   redirects (the client's `followRedirects`, on by default, as AsyncHTTPClient does).
///
/// Cancelling the calling task stops the transfer, before or during the body. Failures are
/// thrown as the core's `HTTPContentError` (the generated client wraps them in its
/// `ClientError`, with this error as `underlyingError`).
public struct HTTPContentTransport: ClientTransport {
    /// What the transport adds to the client's own settings.
    public struct Configuration: Sendable {
        /// Overrides of the client's settings for every request of the transport (time limits,
        /// redirects, proxy, credentials). Default: none (the client's settings).
        public var requestOptions: RequestOptions
        /// A request body of known length up to this many bytes is collected before the request
        /// starts and handed to libcurl in one piece (sent in the same write as the headers under
        /// 64 KiB); a longer one, or one of unknown length, is streamed. Default: 64 KiB.
        public var collectedBodyLimit: Int
        /// Response chunks that may wait between the transfer and the reader; beyond that the
        /// transfer waits for the reader (libcurl stops reading the socket). Default: 8.
        public var bufferedChunks: Int

        public init(requestOptions: RequestOptions = RequestOptions(), collectedBodyLimit: Int = 64 * 1024,
                    bufferedChunks: Int = 8) {
            self.requestOptions = requestOptions
            self.collectedBodyLimit = collectedBodyLimit
            self.bufferedChunks = bufferedChunks
        }
    }

    /// The client that sends the requests (its handles, connections, cookies and defaults).
    public let client: Client
    public var configuration: Configuration

    /// A transport sending with `client`.
    public init(client: Client, configuration: Configuration = Configuration()) {
        self.client = client
        self.configuration = configuration
    }

    /// A transport sending with a new `Client` of the default configuration.
    /// - Throws: `HTTPContentError` if libcurl cannot be initialised.
    public init(configuration: Configuration = Configuration()) throws {
        self.init(client: try Client(), configuration: configuration)
    }

    // MARK: - ClientTransport

    /// Sends `request` with `body` to `baseURL` + the request's path, and returns once the
    /// response head has arrived.
    /// - Returns: the response and its body (nil for HEAD, CONNECT and TRACE), streaming.
    /// - Throws: `HTTPContentError` (`.transport`, `.timeout`, `.cancelled`, `.tooManyRedirects`,
    ///   `.invalidArgument` for a URL that cannot be made, `.callback` with the body's own error
    ///   as `underlying` when reading the request body failed).
    public func send(_ request: HTTPRequest, body: OpenAPIRuntime.HTTPBody?, baseURL: URL,
                     operationID: String) async throws -> (HTTPResponse, OpenAPIRuntime.HTTPBody?) {
        var core = try Request(request, baseURL: baseURL)
        core.options = configuration.requestOptions
        var streamed: UploadPump?
        if let body {
            (core.body, streamed) = try await requestBody(body)
        }
        let pump = streamed
        let (head, chunks): (ResponseHead, HTTPContentFoundation.HTTPBody)
        do {
            (head, chunks) = try await withTaskCancellationHandler {
                try await client.body(for: core, acceptance: .anything, buffered: configuration.bufferedChunks)
            } onCancel: {
                pump?.cancel()
            }
        } catch {
            pump?.cancel()
            throw error
        }
        let owner = ResponseBodyOwner(chunks, pump: pump)
        let response = HTTPResponse(head)
        switch request.method {
        case .head, .connect, .trace:
            owner.close()
            return (response, nil)
        default:
            let sequence = ResponseChunks(owner: owner)
            return (response, OpenAPIRuntime.HTTPBody(sequence, length: Self.length(of: head, client: client),
                                                      iterationBehavior: .single))
        }
    }

    // MARK: - Bodies

    /// The core's body for an OpenAPI request body: collected when its length is known and at
    /// most `collectedBodyLimit`, else streamed through an `UploadPump`.
    private func requestBody(_ body: OpenAPIRuntime.HTTPBody) async throws -> (RequestBody, UploadPump?) {
        switch body.length {
        case .known(let length) where length <= configuration.collectedBodyLimit:
            let bytes = try await [UInt8](collecting: body, upTo: Int(length))
            return (.bytes(bytes, contentType: nil), nil)
        case .known(let length):
            let pump = UploadPump(body)
            return (.stream(.callback(length: length, read: { try pump.read(into: $0) }), contentType: nil), pump)
        case .unknown:
            let pump = UploadPump(body)
            return (.stream(.callback(length: nil, read: { try pump.read(into: $0) }), contentType: nil), pump)
        }
    }

    /// The body's length as it will be read: the declared Content-Length, unless libcurl decodes
    /// the body (a Content-Encoding it undoes changes the length); 0 for a body-less status.
    static func length(of head: ResponseHead, client: Client) -> OpenAPIRuntime.HTTPBody.Length {
        if head.hasNoBodyByDefinition { return .known(0) }
        guard let length = head.contentLength, length != .max else { return .unknown }
        if client.configuration.acceptCompressed, let encoding = head.headers["content-encoding"],
           encoding.lowercased() != "identity" {
            return .unknown
        }
        return .known(length)
    }
}

/// Holds the response body (and the request body's pump) for as long as the OpenAPI body or an
/// iterator of it lives: when the last of them goes, unread, the transfer is stopped (its
/// thread would otherwise wait for a reader forever).
final class ResponseBodyOwner: Sendable {
    let chunks: HTTPContentFoundation.HTTPBody
    let pump: UploadPump?

    init(_ chunks: HTTPContentFoundation.HTTPBody, pump: UploadPump?) {
        self.chunks = chunks
        self.pump = pump
    }

    /// Stops the transfer and the request body's pump (nothing more will be read).
    func close() {
        chunks.cancel()
        pump?.cancel()
    }

    deinit { close() }
}

/// The response body's chunks as OpenAPIRuntime's byte chunks. Ending (or failing) also stops
/// the request body's pump: a server may answer before it read the whole request.
struct ResponseChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let owner: ResponseBodyOwner

    struct AsyncIterator: AsyncIteratorProtocol {
        let owner: ResponseBodyOwner
        var chunks: HTTPContentFoundation.HTTPBody.AsyncIterator

        mutating func next() async throws -> ArraySlice<UInt8>? {
            do {
                guard let data = try await chunks.next() else {
                    owner.pump?.cancel()
                    return nil
                }
                return ArraySlice(data)
            } catch {
                owner.close()
                throw error
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(owner: owner, chunks: owner.chunks.makeAsyncIterator())
    }
}
