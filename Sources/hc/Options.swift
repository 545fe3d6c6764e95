import ArgumentParser

/// Every option of `hc [options] URL` (and of its aliases `hc get`, `hc post`): curl's names
/// and habits where curl has the option, httpcontent's own for what curl does not have.
struct TransferOptions: ParsableArguments {
    @Argument(help: "The URL (http or https).")
    var url: String

    // MARK: The request

    @Option(name: [.customShort("X"), .customLong("request"), .customLong("method")],
            help: ArgumentHelp("The request method (default GET, or POST when a body is given).", valueName: "METHOD"))
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")],
            help: ArgumentHelp("A request header 'Name: value', or @FILE with one header per line (repeatable).", valueName: "HEADER"))
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")],
            help: ArgumentHelp("A body sent exactly as given (POST, form Content-Type); @FILE reads a file (newlines dropped, as curl does), - or @- reads stdin. Repeated: joined with &.", valueName: "DATA"))
    var data: [String] = []

    @Option(name: .customLong("data-binary"),
            help: ArgumentHelp("Like -d, but @FILE is sent byte for byte.", valueName: "DATA"))
    var dataBinary: [String] = []

    @Option(name: .customLong("data-urlencode"),
            help: ArgumentHelp("A form field, percent-encoded: 'content', 'name=content', '=content', '@file' or 'name@file' (repeatable).", valueName: "DATA"))
    var dataURLEncode: [String] = []

    @Option(name: [.customShort("F"), .customLong("form")],
            help: ArgumentHelp("A multipart part: 'name=value', 'name=@file[;type=TYPE][;filename=NAME]', 'name=<file' (value read from a file). Repeatable; sends a multipart POST.", valueName: "PART"))
    var form: [String] = []

    @Option(name: .customLong("json"),
            help: ArgumentHelp("A JSON body (@FILE, - or @- read it): POST, Content-Type and Accept application/json.", valueName: "JSON"))
    var json: [String] = []

    @Option(name: [.customShort("u"), .customLong("user")],
            help: ArgumentHelp("Basic authentication, 'user:password'.", valueName: "USER:PASSWORD"))
    var user: String?

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: ArgumentHelp("The User-Agent header.", valueName: "NAME"))
    var userAgent: String?

    // MARK: The connection

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects (off by default, as curl).")
    var followRedirects = false

    @Option(name: .customLong("max-redirs"), help: ArgumentHelp("With -L: how many redirects at most (default 10).", valueName: "N"))
    var maxRedirects: Int?

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: "Do not verify the server's TLS certificate.")
    var insecure = false

    @Option(name: .customLong("cacert"), help: ArgumentHelp("Verify TLS with the CA certificates in this PEM file.", valueName: "FILE"))
    var caFile: String?

    @Flag(inversion: .prefixedNo, help: "Ask for a compressed body and decode it (on by default).")
    var compressed = true

    @Option(name: .customLong("cache"),
            help: ArgumentHelp("Answer from, and store in, an HTTP cache (RFC 9111) kept in DIR/httpcontent-cache.sqlite.", valueName: "DIR"))
    var cacheDirectory: String?

    @Option(name: [.customShort("m"), .customLong("max-time"), .customLong("timeout")],
            help: ArgumentHelp("Total time allowed, in seconds.", valueName: "SECONDS"))
    var timeout: Double?

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Time allowed to connect, in seconds (default 30).", valueName: "SECONDS"))
    var connectTimeout: Double?

    @Option(name: .customLong("retry"),
            help: ArgumentHelp("Retry a transient failure (timeout, connection error, 408, 429, 500, 502, 503, 504) up to N times.", valueName: "N"))
    var retries = 0

    @Option(name: .customLong("retry-delay"),
            help: ArgumentHelp("Seconds between retries (default: 1, doubling each time, or the server's Retry-After).", valueName: "SECONDS"))
    var retryDelay: Double?

    // MARK: What becomes of the response

    @Option(name: .customLong("as"),
            help: ArgumentHelp("What to make of the body: \(BodyModes.names.joined(separator: ", ")) (default bytes).", valueName: "MODE"))
    var mode = "bytes"

    @Option(name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp("Save the body to this file (atomically: nothing is left on failure); with --as image, a decoded copy as PNG.", valueName: "FILE"))
    var output: String?

    @Flag(name: [.customShort("O"), .customLong("remote-name")], help: "Save the body in the current folder under the URL's file name.")
    var remoteName = false

    @Flag(name: [.customShort("J"), .customLong("remote-header-name")],
          help: "With -O: use the file name of the Content-Disposition header (its last component; an existing file is never replaced).")
    var remoteHeaderName = false

    @Flag(name: [.customLong("create-dirs"), .customLong("make-dirs")], help: "With -o: create missing directories.")
    var makeDirs = false

    @Option(name: [.customShort("C"), .customLong("continue-at")],
            help: ArgumentHelp("'-': with -o/-O, continue a partial download (FILE.part) with a Range request.", valueName: "-"))
    var continueAt: String?

    @Flag(help: "Same as -C -.")
    var resume = false

    @Option(help: ArgumentHelp("Acceptable status codes, e.g. 200-299 or 404 (repeatable; default 200-299).", valueName: "RANGE"))
    var acceptStatus: [String] = []

    @Option(help: ArgumentHelp("Acceptable content types, e.g. application/json or image/* (repeatable).", valueName: "TYPE"))
    var acceptType: [String] = []

    @Option(help: ArgumentHelp("Largest body accepted, in bytes.", valueName: "BYTES"))
    var maxSize: Int?

    @Option(name: .customLong("path"), help: ArgumentHelp("With --as json or plist: print only the value at this key path (e.g. user.followers.0.name). With --as xml: stream each element at this element path (feed/entry, {uri}name steps), printed as it arrives.", valueName: "KEYPATH"))
    var keyPath: String?

    @Flag(help: "With --as json: drop null-valued members at every depth.")
    var removeNulls = false

    @Option(help: ArgumentHelp("Validate the JSON body against this JSON Schema (draft 2020-12) file, JSON or a property list; implies --as json. Exit code 7 when invalid.", valueName: "FILE"))
    var schema: String?

    @Flag(help: "With --schema: report every violation, not only the first.")
    var allErrors = false

    // MARK: What is shown

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the response's status line and headers before the body.")
    var include = false

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Print the request and response heads on stderr.")
    var verbose = false

    @Flag(name: [.customShort("s"), .customLong("silent")], help: "No progress bar and no notes on stderr (errors are still printed).")
    var silent = false

    mutating func validate() throws {
        guard BodyModes.find(mode) != nil else {
            throw ValidationError("--as \(mode): choose one of \(BodyModes.names.joined(separator: ", "))")
        }
        if let continueAt, continueAt != "-" {
            throw ValidationError("-C takes '-' (continue where the partial download stopped); offsets are not supported")
        }
        if (continueAt != nil || resume) && output == nil && !remoteName {
            throw ValidationError("-C - needs -o FILE or -O")
        }
        if remoteHeaderName && !remoteName {
            throw ValidationError("-J works with -O")
        }
        if remoteHeaderName && (continueAt != nil || resume) {
            throw ValidationError("-J cannot be combined with -C - (the file name is known only from the response)")
        }
        if mode == "image" && (remoteName || continueAt != nil || resume) {
            throw ValidationError("--as image saves a decoded copy with -o FILE (PNG) only: not -O or -C")
        }
        if output != nil && remoteName {
            throw ValidationError("-o and -O both name the output file: give one")
        }
        if !form.isEmpty && !(data.isEmpty && dataBinary.isEmpty && dataURLEncode.isEmpty && json.isEmpty) {
            throw ValidationError("-F sends a multipart body: it cannot be combined with -d, --data-urlencode or --json")
        }
        if !json.isEmpty && !(data.isEmpty && dataBinary.isEmpty && dataURLEncode.isEmpty) {
            throw ValidationError("--json cannot be combined with -d or --data-urlencode")
        }
        if retries < 0 { throw ValidationError("--retry takes a count of 0 or more") }
        if let maxRedirects, maxRedirects < 0 { throw ValidationError("--max-redirs takes a count of 0 or more") }
        if let retryDelay, retryDelay < 0 { throw ValidationError("--retry-delay cannot be negative") }
        if let timeout, timeout < 0 { throw ValidationError("--max-time cannot be negative") }
        if let connectTimeout, connectTimeout < 0 { throw ValidationError("--connect-timeout cannot be negative") }
    }

    /// Whether the body goes to a file rather than to --as's printing.
    var savesToFile: Bool { output != nil || remoteName }
    var resumes: Bool { continueAt != nil || resume }
}
