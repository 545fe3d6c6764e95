/// Decodes the body to a String as it arrives. The encoding is, in order: the one given
/// explicitly, the Content-Type's charset, a byte order mark, UTF-8. A BOM that matches the
/// chosen encoding is dropped. Default acceptance: status 200–299, any type.
public final class Text: SelectiveHandler {
    public var acceptance: Acceptance
    /// Forces this encoding whatever the response says.
    public let encoding: TextEncoding?
    /// Strict: an invalid byte fails with `.decode` and its offset in the body. Lenient: each
    /// invalid sequence (maximal subpart) becomes U+FFFD, as `String(decoding:as:)` does,
    /// however the body is split into chunks.
    public let strict: Bool
    /// Maximum body size in bytes (decoded from the wire, before charset decoding).
    public let maxSize: Int?
    /// The encoding used, once known.
    public private(set) var chosenEncoding: TextEncoding?

    private var decoder: StreamingTextDecoder?
    private var sniffing: [UInt8] = []
    private var fromCharset = false
    private var received = 0
    private var head: ResponseHead?
    /// Strict only: the body's first bytes as received, for a decode error's `body` (as the
    /// JSON handlers keep theirs); at most `errorBodyLimit`.
    private var errorBody: [UInt8] = []

    /// How many leading body bytes a strict decode error carries (as JSON's errorBodyLimit).
    public static let errorBodyLimit = 64 * 1024

    /// Text decoded while it arrives; `maxSize` caps the decoded bytes (nil: no cap).
    public init(encoding: TextEncoding? = nil, strict: Bool = true, maxSize: Int? = nil,
                acceptance: Acceptance = Acceptance()) {
        self.encoding = encoding
        self.strict = strict
        self.maxSize = maxSize
        self.acceptance = acceptance
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        if let encoding {
            start(encoding)
        } else if let charset = head.contentType?.charset {
            guard let named = TextEncoding(charset: charset) else {
                throw HTTPContentError(.decode, "unsupported charset \"\(charset)\"", response: head)
            }
            fromCharset = true
            start(named)
        }
        return true
    }

    private func start(_ encoding: TextEncoding) {
        chosenEncoding = encoding
        decoder = StreamingTextDecoder(encoding: encoding, strict: strict)
        if let length = head?.contentLength, length > 0 { decoder?.reserve(Int(min(length, 64 << 20))) }
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        received += chunk.count
        if strict, errorBody.count < Text.errorBodyLimit {
            errorBody.append(contentsOf: chunk.prefix(Text.errorBodyLimit - errorBody.count))
        }
        if let maxSize, received > maxSize {
            throw HTTPContentError(.tooLarge, "body exceeds the limit of \(maxSize) bytes", response: head)
        }
        // The first bytes are held until a byte order mark can be recognised (at most 3).
        if sniffing.count < 3 && received - chunk.count == sniffing.count {
            let take = min(3 - sniffing.count, chunk.count)
            sniffing.append(contentsOf: chunk.prefix(take))
            if sniffing.count < 3 { return }
            try flushSniffed()
            try feed(UnsafeRawBufferPointer(rebasing: chunk[take...]))
            return
        }
        try feed(chunk)
    }

    private func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0 else { return }
        do {
            try decoder!.decode(bytes)
        } catch {
            throw withResponse(error)
        }
    }

    /// Decides the encoding from a BOM if nothing else did, drops a matching BOM, and feeds
    /// what was held.
    private func flushSniffed() throws {
        let held = sniffing
        sniffing = [0, 0, 0, 0] // never matches again
        var bomLength = 0
        var bomEncoding: TextEncoding?
        if held.starts(with: [0xEF, 0xBB, 0xBF]) {
            (bomEncoding, bomLength) = (.utf8, 3)
        } else if held.starts(with: [0xFF, 0xFE]) {
            (bomEncoding, bomLength) = (.utf16LE, 2)
        } else if held.starts(with: [0xFE, 0xFF]) {
            (bomEncoding, bomLength) = (.utf16BE, 2)
        }
        if decoder == nil {
            start(bomEncoding ?? .utf8)
        } else if fromCharset, chosenEncoding == .utf16BE, bomEncoding == .utf16LE,
                  head?.contentType?.charset == "utf-16" {
            start(.utf16LE) // plain "utf-16": the BOM says which byte order
        }
        if bomEncoding != chosenEncoding { bomLength = 0 }
        decoder!.skip(bomLength) // error offsets count the dropped BOM
        try held.dropFirst(bomLength).withUnsafeBytes { try feed($0) }
    }

    public func finish() throws -> String {
        if sniffing.count < 3 { try flushSniffed() }
        do {
            try decoder!.finish()
        } catch {
            throw withResponse(error)
        }
        return String(decoding: decoder!.output, as: UTF8.self)
    }

    /// Decodes a body already received (a `Bytes` response's) by the rules the handler applies
    /// while it arrives: `encoding`, else the charset of `contentType`, else a BOM, else UTF-8.
    /// - Parameters:
    ///   - body: the body's bytes.
    ///   - encoding: the encoding to use whatever the response says (nil: the rules below).
    ///   - contentType: the response's Content-Type header value, nil when it had none.
    ///   - strict: an invalid byte throws `.decode` with its offset; lenient: U+FFFD.
    /// - Throws: `.decode` for an unsupported charset or, when strict, an invalid byte.
    public static func decode(_ body: UnsafeRawBufferPointer, contentType: String?, encoding: TextEncoding? = nil,
                              strict: Bool = false) throws(HTTPContentError) -> String {
        let text = Text(encoding: encoding, strict: strict, acceptance: .anything)
        let fields: [(String, String)] = contentType.map { [("Content-Type", $0)] } ?? []
        do {
            _ = try text.accept(ResponseHead(status: 200, headers: Headers(fields)))
            try text.consume(body)
            return try text.finish()
        } catch {
            throw HTTPContentError.wrapping(error)
        }
    }

    private func withResponse(_ error: HTTPContentError) -> HTTPContentError {
        var error = error
        error.response = head
        if error.body.isEmpty { error.body = errorBody }
        return error
    }
}
