import ArgumentParser
import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// `hc`: fetch a URL and decide what becomes of the body, from the command line.
@main
struct HC: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hc",
        abstract: "Fetch HTTP content with httpcontent's handlers.",
        version: HTTPContentVersion.string,
        subcommands: [Get.self])
}

/// How the body is handled, as `--as` names it.
enum HandlerChoice: String, ExpressibleByArgument, CaseIterable {
    case bytes, text, json, image, discard
}

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a request and print what the handler made of the body.")

    @Argument(help: "The URL (http or https).")
    var url: String

    @Option(name: .customLong("as"), help: "What to make of the body: \(HandlerChoice.allCases.map(\.rawValue).joined(separator: ", ")).")
    var handler: HandlerChoice = .bytes

    @Option(name: [.customShort("X"), .long], help: "The request method.")
    var method = "GET"

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value' (repeatable).")
    var headers: [String] = []

    @Option(name: [.customShort("d"), .long], help: "A request body, sent as given.")
    var data: String?

    @Option(help: "Acceptable status codes, e.g. 200-299 or 404 (repeatable; default 200-299).")
    var acceptStatus: [String] = []

    @Option(help: "Acceptable content types, e.g. application/json or image/* (repeatable).")
    var acceptType: [String] = []

    @Option(help: "Total time allowed, in seconds.")
    var timeout: Double?

    @Option(help: "Largest body accepted, in bytes.")
    var maxSize: Int?

    @Option(name: [.customShort("o"), .long], help: "Download the body to this file (atomically: nothing is left on failure).")
    var output: String?

    @Flag(help: "With -o: create missing directories.")
    var makeDirs = false

    @Flag(help: "With -o: continue a partial download (FILE.part) with a Range request.")
    var resume = false

    @Option(name: .customLong("path"), help: "With --as json: print only the value at this key path (e.g. user.followers.0.name).")
    var keyPath: String?

    @Flag(help: "With --as json: drop null-valued members at every depth.")
    var removeNulls = false

    @Flag(name: [.customShort("i"), .long], help: "Print the status line and headers before the content.")
    var include = false

    func run() throws {
        var configuration = ClientConfiguration()
        if let timeout { configuration.timeout = .milliseconds(Int(timeout * 1000)) }
        do {
            let client = try Client(configuration: configuration)
            var request = Request(method, url, body: data.map { .bytes(Array($0.utf8), contentType: nil) })
            for line in headers {
                guard let colon = line.firstIndex(of: ":") else {
                    throw HTTPContentError(.invalidArgument, "header \"\(line)\" is not 'Name: value'")
                }
                request.headers.add(String(line[..<colon]), trimmed(line[line.index(after: colon)...]))
            }
            let acceptance = try makeAcceptance()
            let bar = ProgressBar.forStandardError()
            let progress: ((TransferProgress) -> Void)? = bar.map { bar in { bar.update($0) } }
            defer { bar?.finish() }
            if let output {
                var options = FileWriter.Options()
                options.makeDirectories = makeDirs
                options.resume = resume
                options.maxSize = maxSize.map(Int64.init)
                let r = try client.send(request, handler: FileWriter(path: output, options: options, acceptance: acceptance),
                                        progress: progress)
                printHead(r.head)
                let how = r.content.resumed ? " (resumed)" : ""
                Output.writeError("hc: saved \(r.content.size) bytes to \(r.content.path)\(how)\n")
                return
            }
            switch handler {
            case .bytes:
                let r = try client.send(request, handler: Bytes(maxSize: maxSize, acceptance: acceptance), progress: progress)
                printHead(r.head)
                r.content.withUnsafeBytes { Output.write($0) }
            case .text:
                let r = try client.send(request, handler: Text(maxSize: maxSize, acceptance: acceptance), progress: progress)
                printHead(r.head)
                Output.write(r.content)
            case .json:
                var jsonAcceptance = acceptance
                if acceptType.isEmpty { jsonAcceptance.contentTypes = JSON.defaultAcceptance().contentTypes }
                var options = JSONOptions()
                options.removeNulls = removeNulls
                if let maxSize { options.maxSize = maxSize }
                let r = try client.send(request, handler: JSON(options: options, acceptance: jsonAcceptance),
                                        progress: progress)
                printHead(r.head)
                guard var value = r.content else {
                    Output.write("(empty response)\n")
                    return
                }
                if let keyPath {
                    guard let found = value[keyPath] else {
                        throw HTTPContentError(.invalidArgument, "no value at \(keyPath)")
                    }
                    value = found
                }
                let text = try value.serialized(pretty: true)
                text.withUnsafeBytes { Output.write($0) }
                if text.last != 0x0A { Output.write("\n") }
            case .image:
                var imageAcceptance = acceptance
                if acceptType.isEmpty { imageAcceptance.contentTypes = ["image/*"] }
                let r = try client.send(request, handler: Image(maxSize: maxSize, acceptance: imageAcceptance),
                                        progress: progress)
                printHead(r.head)
                if let image = r.content {
                    Output.write("\(image.format.rawValue) image, \(image.width)x\(image.height) pixels, \(image.data.count) bytes\n")
                } else {
                    Output.write("no image (empty response)\n")
                }
            case .discard:
                let r = try client.send(request, handler: Discard(acceptance: acceptance), progress: progress)
                printHead(r.head)
                if !include { Output.write("\(r.head.statusLine)\n") }
            }
        } catch let error as HTTPContentError {
            Output.error(error)
            throw ExitCode(error.code.rawValue)
        }
    }

    private func makeAcceptance() throws(HTTPContentError) -> Acceptance {
        var acceptance = Acceptance()
        if !acceptStatus.isEmpty {
            acceptance.statusCodes = try acceptStatus.map { text throws(HTTPContentError) in
                let parts = text.split(separator: "-").map { Int(trimmed($0)) }
                guard let low = parts.first ?? nil, parts.count <= 2, let high = parts.last ?? nil, low <= high else {
                    throw HTTPContentError(.invalidArgument, "--accept-status \(text) is not a code or range")
                }
                return low...high
            }
        }
        for text in acceptType {
            guard let range = MediaRange(parsing: text) else {
                throw HTTPContentError(.invalidArgument, "--accept-type \(text) is not a media range")
            }
            acceptance.contentTypes.append(range)
        }
        return acceptance
    }

    private func printHead(_ head: ResponseHead) {
        guard include else { return }
        var text = "\(head.httpVersion) \(head.status) \(head.reason)\n"
        for field in head.headers { text += "\(field.name): \(field.value)\n" }
        Output.write(text + "\n")
    }
}

/// `text` without leading and trailing spaces and tabs.
func trimmed(_ text: Substring) -> String {
    String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
}
