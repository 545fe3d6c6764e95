import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// One `--as` choice: the handler it sends the request with and how it prints the content.
///
/// To add a mode (a format of the library: plist, xml, events...), write a type conforming to
/// `BodyMode` in a file of its own (`Sources/hc/PlistMode.swift`) and add it to `BodyModes.all`.
/// `exchange.send { handler }` does the rest: retries, progress bar, -v/-i heads, errors.
/// An option only the mode uses goes in `TransferOptions` (Options.swift), under "What becomes
/// of the response", and is read from `exchange.options`.
protocol BodyMode {
    /// The name `--as` takes.
    static var name: String { get }
    /// Sends `exchange`'s request with this mode's handler and prints the content on stdout.
    static func run(_ exchange: Exchange) throws(HTTPContentError)
}

enum BodyModes {
    /// Every `--as` mode, in the order `--help` lists them.
    static var all: [any BodyMode.Type] {
        [
            BytesMode.self,
            TextMode.self,
            JSONMode.self,
            PlistMode.self,
            XMLMode.self,
            ImageMode.self,
            DiscardMode.self,
            EventsMode.self,
            JSONLinesMode.self,
        ]
    }

    static var names: [String] { all.map { $0.name } }

    static func find(_ name: String) -> (any BodyMode.Type)? {
        all.first { $0.name == name }
    }
}

/// The body as it comes, streamed to stdout chunk by chunk (nothing is kept). With --max-size
/// it is held until complete instead, so a body over the limit prints nothing.
enum BytesMode: BodyMode {
    static let name = "bytes"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        let acceptance = exchange.acceptance
        if let max = exchange.options.maxSize {
            let r = try exchange.send { Bytes(maxSize: max, acceptance: acceptance) }
            r.content.withUnsafeBytes { Output.write($0) }
            return
        }
        _ = try exchange.send(streamsToStdout: true) {
            StreamWriter(to: .callback { chunk in Output.write(chunk) }, acceptance: acceptance)
        }
    }
}

/// The body decoded as text (charset from Content-Type, else a BOM, else UTF-8).
enum TextMode: BodyMode {
    static let name = "text"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        let max = exchange.options.maxSize
        let acceptance = exchange.acceptance
        let r = try exchange.send { Text(maxSize: max, acceptance: acceptance) }
        Output.write(r.content)
    }
}

/// The body parsed as JSON and printed indented; --path picks a value, --remove-nulls drops nulls.
enum JSONMode: BodyMode {
    static let name = "json"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        let o = exchange.options
        var acceptance = exchange.acceptance
        if o.acceptType.isEmpty { acceptance.contentTypes = JSON.defaultAcceptance().contentTypes }
        var options = JSONOptions()
        options.removeNulls = o.removeNulls
        if let maxSize = o.maxSize { options.maxSize = maxSize }
        var validator: JSONSchemaCheck?
        if let file = o.schema {
            validator = JSONSchemaCheck(try JSONSchema(parsingDocument: try Input.readFile(file)), allErrors: o.allErrors)
        }
        let r = try exchange.send { JSON(options: options, acceptance: acceptance, validator: validator) }
        guard var value = r.content else {
            Output.write("(empty response)\n")
            return
        }
        if let keyPath = o.keyPath {
            guard let found = value[keyPath] else {
                throw HTTPContentError(.invalidArgument, "no value at \(keyPath)")
            }
            value = found
        }
        let text = try value.serialized(pretty: true)
        text.withUnsafeBytes { Output.write($0) }
        if text.last != 0x0A { Output.write("\n") }
    }
}

/// The body decoded to pixels (ImagePixels): format, size, layout and a CRC-32 of the RGBA pixels
/// are printed; with -o FILE a decoded copy is saved there as PNG (written beside it, then renamed).
enum ImageMode: BodyMode {
    static let name = "image"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        var acceptance = exchange.acceptance
        if exchange.options.acceptType.isEmpty { acceptance.contentTypes = ["image/*"] }
        let max = exchange.options.maxSize
        let r = try exchange.send { ImagePixels(maxSize: max, acceptance: acceptance) }
        guard let image = r.content else {
            Output.write("no image (empty response)\n")
            return
        }
        let crc = image.pixels.withUnsafeBytes { CRC32.of($0) }
        let hex = String(crc, radix: 16)
        Output.write("\(image.format.rawValue) image, \(image.width)x\(image.height) pixels, \(image.mode.rawValue)"
                     + "\(image.hasAlpha ? " (source has alpha)" : ""), \(image.frameCount) frame\(image.frameCount == 1 ? "" : "s")"
                     + ", orientation \(image.orientation), pixels crc32 \(String(repeating: "0", count: 8 - hex.count) + hex)\n")
        if let path = exchange.options.output {
            try save(try image.pngData(), to: path)
            Output.write("saved a decoded copy to \(path) (PNG)\n")
        }
    }

    /// Writes `bytes` to `path` through a temporary file in the same directory: nothing partial is left.
    static func save(_ bytes: [UInt8], to path: String) throws(HTTPContentError) {
        let temporary = "\(path).hc-\(getpid()).tmp"
        guard let file = fopen(temporary, "wb") else {
            throw HTTPContentError(.localIO, "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        let closed = fclose(file) == 0
        guard written == bytes.count, closed, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw HTTPContentError(.localIO, "cannot write \(path): \(reason)")
        }
    }
}

/// CRC-32 (IEEE, as zlib's crc32) of the pixels: a checksum anyone can recompute.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { t in
            for b in bytes { c = t[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        }
        return c ^ 0xFFFF_FFFF
    }
}

/// The body thrown away; the status line is printed (unless -i printed the head already).
enum DiscardMode: BodyMode {
    static let name = "discard"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        let acceptance = exchange.acceptance
        let r = try exchange.send { Discard(acceptance: acceptance) }
        if !exchange.options.include { Output.write("\(r.head.statusLine)\n") }
    }
}
