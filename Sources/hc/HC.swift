import ArgumentParser
import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// `hc [options] URL`: fetch a URL with curl's habits and decide what becomes of the body.
/// `hc get ...` and `hc post ...` are the same command with GET or POST as the default method
/// (aliases kept from earlier versions; a URL is never named "get" or "post").
@main
struct HC: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hc",
        abstract: "Send an HTTP request and decide what becomes of the response body.",
        usage: """
            hc [options] URL
            hc get [options] URL      (GET unless -X says otherwise)
            hc post [options] URL     (POST unless -X says otherwise)
            """,
        discussion: Help.discussion,
        version: HTTPContentVersion.string)

    @OptionGroup var options: TransferOptions

    /// The method `hc get`/`hc post` set, read by `run`.
    nonisolated(unsafe) static var aliasMethod: String?

    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if let first = arguments.first, first == "get" || first == "post" {
            aliasMethod = first.uppercased()
            arguments.removeFirst()
        }
        main(arguments)
    }

    func run() throws { try Run.main(options, defaultMethod: HC.aliasMethod) }
}

enum Help {
    static let discussion = """
        Options follow curl's: -d implies POST and a form Content-Type, -L follows redirects \
        (off by default), -o/-O save to a file. The body is decompressed by default \
        (--no-compressed to turn that off). A response whose status is not 200-299 fails \
        (exit code 5) unless --accept-status allows it; its body is not printed.

        EXAMPLES:
          hc https://example.org/                  # print the body
          hc -i https://example.org/               # status line, headers, body
          hc --as json --path user.name https://api.example.org/me
          hc -d 'name=Ada&lang=en' https://example.org/form      # POST a form
          hc --data-urlencode 'q=a b&c' https://example.org/s    # q=a%20b%26c
          hc --json '{"name":"Ada"}' https://example.org/users   # POST JSON
          hc --json @user.json -X PUT https://example.org/users/1
          hc -F title=Report -F 'file=@report.pdf;type=application/pdf' \\
             https://example.org/upload                # multipart POST
          hc -H 'Accept: text/plain' -H @headers.txt https://example.org/
          hc -u ada:secret -L --max-redirs 3 https://example.org/private
          hc -O -C - --retry 5 https://example.org/big.iso    # resumable
          hc -O -J 'https://example.org/get?id=7'  # Content-Disposition name
          hc --cacert ca.pem https://internal.example/
          hc -k https://self-signed.example/       # no TLS verification

        A progress bar (size, rate, ETA) is drawn on stderr when it is a terminal; -s hides it.

        EXIT CODES:
          0   success
          1   invalid argument (bad URL, header, option value)
          2   transport error (connection refused or reset, DNS, TLS...)
          3   timeout
          4   too many redirects
          5   unacceptable status (not 200-299, or not --accept-status)
          6   unacceptable content type (--accept-type, or --as json/image)
          7   the body could not be decoded (--as text/json/image)
          8   the body is larger than --max-size
          9   cancelled
          10  local I/O error (output file, @file, -F file)
          11  callback error
          64  usage error (unknown option, bad combination)
        """
}

/// What every form of the command does.
enum Run {
    static func main(_ options: TransferOptions, defaultMethod: String?) throws {
        do {
            try send(options, defaultMethod: defaultMethod)
        } catch {
            Output.error(error, hintRedirects: !options.followRedirects)
            throw ExitCode(error.code.rawValue)
        }
    }

    static func send(_ o: TransferOptions, defaultMethod: String?) throws(HTTPContentError) {
        var configuration = ClientConfiguration()
        if let timeout = o.timeout { configuration.timeout = .milliseconds(Int(timeout * 1000)) }
        if let connect = o.connectTimeout { configuration.connectTimeout = .milliseconds(Int(connect * 1000)) }
        configuration.followRedirects = o.followRedirects
        if let max = o.maxRedirects { configuration.maxRedirects = max }
        configuration.verify = !o.insecure
        configuration.caFile = o.caFile
        configuration.acceptCompressed = o.compressed
        if let agent = o.userAgent { configuration.userAgent = agent }
        if let directory = o.cacheDirectory {
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw HTTPContentError(.io, "cannot make the cache directory \(directory)")
            }
            configuration.cache = try .file(directory + "/httpcontent-cache.sqlite")
        }
        let client = try Client(configuration: configuration)

        var request = Request(o.method ?? defaultMethod ?? "GET", o.url)
        for (name, value) in try Input.headers(o.headers) { request.headers.add(name, value) }
        if let user = o.user {
            guard user.contains(":") else {
                throw HTTPContentError(.invalidArgument, "-u takes 'user:password'")
            }
            request.headers.set("Authorization", "Basic " + Input.base64(Array(user.utf8)))
        }
        try setBody(&request, o, explicitMethod: o.method != nil || defaultMethod != nil)

        let exchange = Exchange(options: o, client: client, request: request, acceptance: try acceptance(o))
        if o.savesToFile && o.mode != ImageMode.name {   // --as image -o saves a decoded PNG copy
            try download(exchange)
        } else {
            try BodyModes.find(o.schema != nil ? JSONMode.name : o.mode)!.run(exchange)
        }
    }

    /// -d, --data-binary, --data-urlencode (joined with &, in that order), --json or -F.
    static func setBody(_ request: inout Request, _ o: TransferOptions, explicitMethod: Bool) throws(HTTPContentError) {
        var contentType: String?
        if !o.form.isEmpty {
            request.body = .multipart(try Input.multipart(o.form))
        } else if !o.json.isEmpty {
            var bytes: [UInt8] = []
            for value in o.json { bytes += try Input.dataValue(value, dropNewlines: false) }
            contentType = "application/json"
            if !request.headers.contains("accept") { request.headers.set("Accept", "application/json") }
            request.body = .bytes(bytes, contentType: nil)
        } else if !(o.data.isEmpty && o.dataBinary.isEmpty && o.dataURLEncode.isEmpty) {
            var pieces: [[UInt8]] = []
            for value in o.data { pieces.append(try Input.dataValue(value, dropNewlines: true)) }
            for value in o.dataBinary { pieces.append(try Input.dataValue(value, dropNewlines: false)) }
            for value in o.dataURLEncode { pieces.append(try Input.urlencoded(value)) }
            var bytes: [UInt8] = []
            for (i, piece) in pieces.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: "&")) }
                bytes += piece
            }
            contentType = "application/x-www-form-urlencoded"
            request.body = .bytes(bytes, contentType: nil)
        } else {
            return
        }
        if let contentType, !request.headers.contains("content-type") {
            request.headers.set("Content-Type", contentType)
        }
        if !explicitMethod { request.method = "POST" }
    }

    static func acceptance(_ o: TransferOptions) throws(HTTPContentError) -> Acceptance {
        var acceptance = Acceptance()
        if !o.followRedirects {
            // As curl without -L: a redirect is the answer, its body printed.
            acceptance.statusCodes = [200...299, 300...399]
        }
        if !o.acceptStatus.isEmpty {
            acceptance.statusCodes = try o.acceptStatus.map { text throws(HTTPContentError) in
                let parts = text.split(separator: "-").map { Int(trimmed($0)) }
                guard let low = parts.first ?? nil, parts.count <= 2, let high = parts.last ?? nil, low <= high else {
                    throw HTTPContentError(.invalidArgument, "--accept-status \(text) is not a code or range")
                }
                return low...high
            }
        }
        for text in o.acceptType {
            guard let range = MediaRange(parsing: text) else {
                throw HTTPContentError(.invalidArgument, "--accept-type \(text) is not a media range")
            }
            acceptance.contentTypes.append(range)
        }
        return acceptance
    }

    /// -o FILE, -O, -O -J: the body goes to a file, atomically (File), continued with -C -.
    static func download(_ exchange: Exchange) throws(HTTPContentError) {
        let o = exchange.options
        var target: String
        if let output = o.output {
            target = output
        } else {
            guard let name = SafeName.fromURL(o.url) else {
                throw HTTPContentError(.invalidArgument, "-O: the URL has no file name to save under (use -o FILE)")
            }
            target = name
        }
        var writerOptions = File.Options()
        writerOptions.makeDirectories = o.makeDirs
        writerOptions.resume = o.resumes
        writerOptions.maxSize = o.maxSize.map(Int64.init)
        var path = target
        if o.remoteHeaderName {
            // The name is known only once the response arrives: download beside it under a
            // hidden temporary name, then move it to the header's name (never replacing a file).
            path = ".\(target).hc-\(getpid()).download"
        }
        let acceptance = exchange.acceptance
        let finalPath = path
        let r = try exchange.send { File(path: finalPath, options: writerOptions, acceptance: acceptance) }
        var saved = r.content.path
        if o.remoteHeaderName {
            let named = r.head.headers["content-disposition"].flatMap(SafeName.fromContentDisposition) ?? target
            if access(named, F_OK) == 0 {
                unlink(path)
                throw HTTPContentError(.localIO, "-J: \"\(named)\" exists already; not replacing it")
            }
            if link(path, named) != 0 {
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw HTTPContentError(.localIO, "-J: cannot create \"\(named)\": \(reason)")
            }
            unlink(path)
            saved = named
        }
        if !o.silent {
            let how = r.content.resumed ? " (resumed)" : ""
            Output.writeError("hc: saved \(r.content.size) bytes to \(saved)\(how)\n")
        }
    }
}
