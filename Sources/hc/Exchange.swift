import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// One request of `hc` ready to send: the client, the request, the acceptance and the options.
/// `send` is what every `--as` mode calls.
struct Exchange {
    let options: TransferOptions
    let client: Client
    let request: Request
    let acceptance: Acceptance

    /// Sends the request with a fresh handler from `makeHandler` for each attempt, retrying a
    /// transient failure (--retry), with the progress bar and the -v/-i heads.
    /// `streamsToStdout`: the handler writes the body to stdout as it arrives, so an attempt
    /// that already wrote some is not retried (that would print it twice).
    func send<Handler: ContentHandler>(streamsToStdout: Bool = false,
                                       _ makeHandler: () -> Handler) throws(HTTPContentError) -> Response<Handler.Content> {
        var attempt = 0
        var delay = options.retryDelay ?? 1
        while true {
            let traced = Traced(makeHandler(), options: options, configuration: client.configuration)
            let bar = options.silent ? nil : ProgressBar.forStandardError()
            let progress: ((TransferProgress) -> Void)? = bar.map { bar in { bar.update($0) } }
            do {
                let r = try client.send(request, handler: traced, progress: progress)
                bar?.finish()
                return r
            } catch {
                bar?.finish()
                let wroteOutput = streamsToStdout && traced.consumed > 0
                guard attempt < options.retries, !wroteOutput, Exchange.isTransient(error) else {
                    throw error
                }
                attempt += 1
                var wait = delay
                if options.retryDelay == nil, let after = error.response?.headers["retry-after"],
                   let seconds = Int(after), seconds >= 0 {
                    wait = Double(min(seconds, 600))
                }
                if !options.silent {
                    Output.writeError("hc: \(Exchange.describe(error)); retrying in \(formatSeconds(wait)) (\(attempt) of \(options.retries))\n")
                }
                sleepSeconds(wait)
                if options.retryDelay == nil { delay = min(delay * 2, 600) }
            }
        }
    }

    /// Failures worth another attempt: the network (timeouts, connection errors) and the
    /// statuses that say "later" (408, 429, 500, 502, 503, 504), as curl's --retry.
    static func isTransient(_ error: HTTPContentError) -> Bool {
        switch error.code {
        case .transport, .timeout:
            return true
        case .unacceptableStatus:
            return [408, 429, 500, 502, 503, 504].contains(error.response?.status ?? 0)
        default:
            return false
        }
    }

    static func describe(_ error: HTTPContentError) -> String {
        if error.code == .unacceptableStatus, let head = error.response { return head.statusLine }
        return "\(error.code.name) error: \(error.message)"
    }
}

/// A handler passed through: prints the request head (-v, on stderr) before sending and the
/// response head (-v on stderr, -i on stdout) when it arrives, and counts the body bytes.
final class Traced<Inner: ContentHandler>: ContentHandler {
    let inner: Inner
    let verbose: Bool
    let include: Bool
    let configuration: ClientConfiguration
    private(set) var consumed: Int64 = 0

    init(_ inner: Inner, options: TransferOptions, configuration: ClientConfiguration) {
        self.inner = inner
        self.verbose = options.verbose
        self.include = options.include
        self.configuration = configuration
    }

    func prepare(_ request: inout Request) throws {
        try inner.prepare(&request)
        guard verbose else { return }
        // The head as this program sends it, with the fields libcurl adds from the client's
        // configuration (Host, User-Agent, Accept, Accept-Encoding); the HTTP version is
        // chosen by libcurl while connecting.
        var text = "> \(request.method) \(request.url)\n"
        if let host = hostOf(request.url), !request.headers.contains("host") { text += "> Host: \(host)\n" }
        if !request.headers.contains("user-agent") && !configuration.headers.contains("user-agent") {
            text += "> User-Agent: \(configuration.userAgent)\n"
        }
        if !request.headers.contains("accept") && !configuration.headers.contains("accept") { text += "> Accept: */*\n" }
        if configuration.acceptCompressed && !request.headers.contains("accept-encoding") {
            text += "> Accept-Encoding: (what libcurl decodes: gzip, deflate...)\n"
        }
        for field in configuration.headers where !request.headers.contains(field.name) {
            text += "> \(field.name): \(field.value)\n"
        }
        for field in request.headers {
            let shown = field.name.lowercased() == "authorization" ? redacted(field.value) : field.value
            text += "> \(field.name): \(shown)\n"
        }
        if let body = request.body {
            switch body {
            case .bytes(let bytes, let type):
                if let type, !request.headers.contains("content-type") { text += "> Content-Type: \(type)\n" }
                text += "> Content-Length: \(bytes.count)\n"
            case .stream(_, let type):
                if let type, !request.headers.contains("content-type") { text += "> Content-Type: \(type)\n" }
            case .multipart:
                text += "> Content-Type: multipart/form-data; boundary=(libcurl's)\n"
            }
        }
        Output.writeError(text + ">\n")
    }

    func accept(_ head: ResponseHead) throws -> Bool {
        if verbose || include {
            var text = "\(head.httpVersion) \(head.status) \(head.reason)\n"
            for field in head.headers { text += "\(field.name): \(field.value)\n" }
            if verbose {
                Output.writeError(text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
                    .map { "< " + $0 }.joined(separator: "\n") + "\n<\n")
            }
            if include { Output.write(text + "\n") }
        }
        return try inner.accept(head)
    }

    func consume(_ chunk: UnsafeRawBufferPointer) throws {
        consumed += Int64(chunk.count)
        try inner.consume(chunk)
    }

    func finish() throws -> Inner.Content { try inner.finish() }

    func cleanup(failed: Bool) { inner.cleanup(failed: failed) }

    private func redacted(_ value: String) -> String {
        guard let space = value.firstIndex(of: " ") else { return "(hidden)" }
        return "\(value[..<space]) (hidden)"
    }
}

/// The host[:port] of an http(s) URL.
func hostOf(_ url: String) -> String? {
    guard let scheme = url.firstRange(of: "://") else { return nil }
    let rest = url[scheme.upperBound...]
    let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
    let authority = rest[..<end]
    let host = authority.split(separator: "@").last.map(String.init) ?? ""
    return host.isEmpty ? nil : host
}

func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var left = timespec()
    while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == Double(Int(seconds)) ? "\(Int(seconds)) s" : "\(Int(seconds * 10) / 10).\(Int(seconds * 10) % 10) s"
}

/// The inner handler's status codes and types show through (a redirect it takes on its own,
/// without -L, keeps its body: the transfer asks `SelectiveHandler.acceptance`).
extension Traced: SelectiveHandler where Inner: SelectiveHandler {
    var acceptance: Acceptance { inner.acceptance }
}
