#if canImport(Glibc)
import Glibc
#endif

/// How JSON records are laid out in a stream.
public enum JSONRecordFraming: Int, Sendable, CaseIterable {
    /// JSON Lines / NDJSON: one value per line (LF or CRLF); blank lines are skipped.
    case lines = 0
    /// RFC 7464 JSON text sequences (`application/json-seq`): each record follows an RS (0x1E);
    /// a top-level number, true, false or null not followed by whitespace may have been cut
    /// short, and is a bad record.
    case sequence = 1
    /// Concatenated JSON: values one after another (`{..}{..}`), whitespace optional. A bad
    /// value cannot be skipped here (nothing marks where the next one starts).
    case concatenated = 2
    /// The response decides: `.sequence` when its Content-Type is `application/json-seq`, else
    /// `.lines` (a stream with no response, `JSONRecordParser`, is read as `.lines`).
    case auto = 3

    /// The framing a response of media type `type` is read with.
    public func resolved(for type: MediaType?) -> JSONRecordFraming {
        guard self == .auto else { return self }
        return type?.essence == "application/json-seq" ? .sequence : .lines
    }
}

/// Options of a JSON record stream. Every default is in the initializer.
public struct JSONRecordOptions: Sendable, Equatable {
    /// Default `.auto` (RFC 7464 for `application/json-seq`, else JSON Lines).
    public var framing: JSONRecordFraming
    /// A bad record is reported (`onSkip`) and skipped instead of failing the stream
    /// (`.lines` and `.sequence`). Default false.
    public var skipBadRecords: Bool
    /// The largest record in bytes (`.tooLarge` beyond, never skipped), for `.lines` and
    /// `.sequence` (concatenated values have no boundary to count from: limit them with
    /// `json.maxDepth` and the handler's acceptance). Default 16 MiB.
    public var maxRecordSize: Int?
    /// How each record is parsed (`allowMultipleValues`, `maxSize` and `errorBodyLimit` are
    /// the stream's business and ignored). Default `JSONOptions()`.
    public var json: JSONOptions
    /// Hand over the value at this key path inside each record (`JSONValue[keyPath:]`: member
    /// names and array indices joined with dots) instead of the record; a record without it is
    /// an invalid record. Default nil: the whole record.
    public var path: String?
    /// A record that fails the handler's validator (its schema), or has no value at `path`, is
    /// reported (`onSkip`) and skipped instead of failing the stream. Default false.
    public var skipInvalidRecords: Bool

    public init(framing: JSONRecordFraming = .auto, skipBadRecords: Bool = false, maxRecordSize: Int? = 16 << 20,
                json: JSONOptions = JSONOptions(), path: String? = nil, skipInvalidRecords: Bool = false) {
        self.framing = framing
        self.skipBadRecords = skipBadRecords
        self.maxRecordSize = maxRecordSize
        self.json = json
        self.path = path
        self.skipInvalidRecords = skipInvalidRecords
    }

    /// The media ranges the JSON record handlers accept by default (concatenated JSON arrives
    /// as application/json).
    public static let defaultContentTypes: [MediaRange] =
        ["application/x-ndjson", "application/jsonl", "application/json-seq", "application/json",
         "application/x-jsonlines", "application/jsonlines"]
}

/// Where the parsed records go: the Swift tree (`JSONLines`), or the Python binding's marshal
/// batches (Sources/HTTPContentC/Binding).
package protocol JSONRecordTarget: AnyObject {
    /// The sink of a new parser (asked again after a bad record).
    func makeSink() -> any JSONEventSink
    /// Records completed since the last `commit` or `drop`.
    var pending: Int { get }
    /// Takes the completed records.
    func commit() throws
    /// Forgets what was written since the last commit (a bad record).
    func drop()
    /// Hands over what can be (before a skip is reported, at the end of the stream).
    func flush() throws
    /// The end of a received chunk: hands over what can be, unless the target waits for the
    /// end of libcurl's round of reads (`ReceivePauseHandler`).
    func chunkEnded() throws
    /// Parses one whole line (its LF not included) by a fast path of the target's own, if it
    /// has one (`JSONLineScanner`): true when done (the record written as pending, or nothing
    /// for a blank line), false when the line needs yajl (nothing of it is left written).
    func scanLine(_ line: UnsafeRawBufferPointer, options: JSONOptions) -> Bool
}

extension JSONRecordTarget {
    package func scanLine(_ line: UnsafeRawBufferPointer, options: JSONOptions) -> Bool { false }
    package func chunkEnded() throws { try flush() }
}

/// A JSON record stream without a transfer: feed chunks; each record is parsed by yajl as its
/// bytes arrive (no record text is gathered) and handed to the target when complete.
final class JSONRecordReader {
    /// Its framing is resolved (`resolveFraming`) once the response's type is known.
    private(set) var options: JSONRecordOptions
    private let target: JSONRecordTarget
    private let onSkip: ((HTTPContentError) throws -> Void)?
    private let parseOptions: JSONOptions
    private var parser: YajlParser?
    /// Body offset of the first byte given to `parser`.
    private var parserBase = 0
    /// Body bytes seen.
    private(set) var position = 0
    private(set) var records = 0
    private(set) var skipped = 0
    /// Bytes of the current record (line / sequence element / open value).
    private var recordBytes = 0
    private var recordStart = 0
    /// The last byte of the current record (sequences: truncation check).
    private var lastByte: UInt8 = 0x0A
    /// After a bad line: drop bytes until the next LF (or RS).
    private var skipping = false
    /// The index of the first record of the commit under way (for invalid ones).
    private var commitBase = 0

    init(options: JSONRecordOptions, target: JSONRecordTarget, onSkip: ((HTTPContentError) throws -> Void)?) {
        self.options = options
        self.target = target
        self.onSkip = onSkip
        var json = options.json
        json.allowMultipleValues = true
        json.maxSize = nil
        json.errorBodyLimit = 0
        json.allowTrailingGarbage = false
        json.allowPartialValues = false
        parseOptions = json
    }

    /// Fixes an `.auto` framing from the response's media type, before the first byte.
    func resolveFraming(_ type: MediaType?) {
        options.framing = options.framing.resolved(for: type)
    }

    private func currentParser() -> YajlParser {
        if let parser { return parser }
        let made = YajlParser(options: parseOptions, sink: target.makeSink())
        parser = made
        parserBase = position
        return made
    }

    // MARK: - Feeding

    func feed(_ chunk: UnsafeRawBufferPointer) throws {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        do {
            switch options.framing {
            case .lines, .auto: try feedDelimited(base, chunk.count, delimiter: 0x0A)
            case .sequence: try feedDelimited(base, chunk.count, delimiter: 0x1E)
            case .concatenated: try feedConcatenated(chunk)
            }
        } catch {
            // The records completed before the failure are handed over first.
            target.drop()
            try? target.flush()
            throw error
        }
        try target.chunkEnded()
    }

    private func feedDelimited(_ base: UnsafeRawPointer, _ n: Int, delimiter: UInt8) throws {
        let lines = delimiter == 0x0A
        var p = 0
        while p < n {
            let at = memchr(base + p, Int32(delimiter), n - p).map { base.distance(to: UnsafeRawPointer($0)) }
            if skipping {
                // The rest of a bad record, up to and with its delimiter, is dropped.
                let next = at.map { $0 + 1 } ?? n
                position += next - p
                p = next
                if at != nil {
                    skipping = false
                    startRecord()
                }
                continue
            }
            // A whole line at a record's start: the target's fast path first, if it has one
            // (yajl then has not seen the line: the next line yajl reads gets a new parser, so
            // that its offsets count from there).
            if lines, recordBytes == 0, let at, options.maxRecordSize.map({ at - p <= $0 }) ?? true,
               target.scanLine(UnsafeRawBufferPointer(start: base + p, count: at - p), options: parseOptions) {
                parser = nil
                position += at + 1 - p
                p = at + 1
                try endLine()
                startRecord()
                continue
            }
            // Lines give their LF to yajl (it ends a number); sequences stop before the RS.
            let end = at.map { lines ? $0 + 1 : $0 } ?? n
            var count = end - p
            var failed = false
            // Over the size limit: the bytes up to the limit are parsed first, so a decode error
            // in them wins however the record was cut into chunks; then the record is too large.
            var overLimit = false
            if let max = options.maxRecordSize.map({ $0 + (lines ? 2 : 0) }), recordBytes + count > max {
                count = Swift.max(0, max - recordBytes)
                overLimit = true
            }
            if count > 0 {
                recordBytes += count
                lastByte = (base + p + count - 1).load(as: UInt8.self)
                do {
                    try currentParser().feed(UnsafeRawBufferPointer(start: base + p, count: count))
                } catch {
                    failed = true
                    position += count
                    p += count
                    try bad(error, fromParser: true)
                    if overLimit {
                        // The rest of the bad record goes with it.
                        skipping = true
                        continue
                    }
                    p = end
                }
                if !failed {
                    position += count
                    p += count
                }
            }
            if overLimit && !failed {
                throw located(HTTPContentError(.tooLarge, "a JSON record exceeds the limit of \(options.maxRecordSize ?? 0) bytes"),
                              offset: recordStart, fromParser: false)
            }
            if failed {
                if at != nil {
                    if !lines {
                        position += 1
                        p += 1
                    }
                    startRecord()
                } else {
                    skipping = true
                }
                continue
            }
            if at != nil {
                if lines {
                    try endLine()
                } else {
                    position += 1
                    p += 1
                    try endElement()
                }
                startRecord()
            }
        }
    }

    private func startRecord() {
        recordBytes = 0
        recordStart = position
        lastByte = 0x0A
    }

    /// A line ended (its LF fed): exactly one value, or none on a blank line.
    private func endLine() throws {
        let n = target.pending
        let depth = parser?.depth ?? 0
        if n == 1 && depth == 0 {
            try commitRecords(1)
        } else if n == 0 && depth == 0 {
            return  // blank
        } else {
            try bad(HTTPContentError(.decode, n > 1 ? "a line holds \(n) JSON values"
                                                    : "the JSON value does not end at the end of its line"),
                    fromParser: false)
        }
    }

    /// A sequence element ended (at an RS or the end of the stream).
    private func endElement() throws {
        guard recordBytes > 0 else { return }
        let n = target.pending
        let depth = parser?.depth ?? 0
        let ws = lastByte == 0x20 || lastByte == 0x0A || lastByte == 0x0D || lastByte == 0x09
        let closed = ws || lastByte == UInt8(ascii: "}") || lastByte == UInt8(ascii: "]") || lastByte == UInt8(ascii: "\"")
        if n == 1 && depth == 0 && closed {
            try commitRecords(1)
        } else if n == 0 && depth == 0 && ws {
            return  // an empty element
        } else if n <= 1 && depth == 0 && !closed {
            try bad(HTTPContentError(.decode, "the JSON text was truncated (a top-level value not followed by whitespace)"),
                    fromParser: false)
        } else {
            try bad(HTTPContentError(.decode, n > 1 ? "a sequence element holds \(n) JSON values"
                                                    : "the JSON text was truncated"), fromParser: false)
        }
        // A value left in yajl's lexer (a number waiting for more digits) must not leak on.
        if !(n == 1 && depth == 0 && closed) { parser = nil }
    }

    private func feedConcatenated(_ chunk: UnsafeRawBufferPointer) throws {
        let parser = currentParser()
        do {
            try parser.feed(chunk)
        } catch {
            position += chunk.count
            // Values completed in this chunk before the bad byte are records all the same.
            let n = target.pending
            if n > 0 { try commitRecords(n) }
            throw located(HTTPContentError.wrapping(error), offset: position, fromParser: true)
        }
        position += chunk.count
        let n = target.pending
        if n > 0 { try commitRecords(n) }
    }

    /// Ends the stream: a last line without LF is a record too.
    func finish() throws {
        switch options.framing {
        case .lines, .auto:
            guard !skipping, recordBytes > 0, let parser else { return }
            do {
                try parser.finish()
            } catch {
                try bad(error, fromParser: true)
                return
            }
            try endLine()
        case .sequence:
            if !skipping { try endElement() }
        case .concatenated:
            guard let parser else { return }
            do {
                try parser.finish()
            } catch {
                throw located(HTTPContentError.wrapping(error), offset: position, fromParser: true)
            }
            let n = target.pending
            if n > 0 { try commitRecords(n) }
        }
        try target.flush()
    }

    // MARK: - Bad records

    /// Hands the `n` completed records to the target (which may find some invalid: `invalid`).
    private func commitRecords(_ n: Int) throws {
        commitBase = records + skipped
        records += n
        try target.commit()
    }

    /// The record `i` of the commit under way is invalid (no value at the path, or a schema
    /// violation): the stream fails with `error` located, or skips it with `skipInvalidRecords`.
    func invalid(_ error: HTTPContentError, at i: Int) throws {
        var e = error
        let index = commitBase + i
        let at = options.framing == .concatenated ? position : recordStart
        e.message = "invalid JSON record \(index) at byte \(at): \(error.message)"
        e.offset = at
        e.recordIndex = index
        e.body = []
        records -= 1
        guard options.skipInvalidRecords else { throw e }
        skipped += 1
        try onSkip?(e)
    }

    /// The error of the record being read, with its index and body offset.
    private func located(_ error: HTTPContentError, offset: Int, fromParser: Bool) -> HTTPContentError {
        var e = error
        let at = fromParser ? parserBase + (error.offset ?? max(0, position - parserBase)) : offset
        var reason = e.message
        if reason.hasPrefix("invalid JSON at byte "), let colon = reason.firstIndex(of: ":") {
            reason = String(reason[reason.index(after: colon)...].drop { $0 == " " })
        }
        let index = records + skipped
        e.message = "invalid JSON record \(index) at byte \(at): \(reason)"
        e.offset = at
        e.recordIndex = index
        e.body = []
        return e
    }

    private func bad(_ error: any Error, fromParser: Bool) throws {
        guard let own = error as? HTTPContentError, own.code == .decode else { throw error }
        let e = located(own, offset: recordStart, fromParser: fromParser && own.offset != nil)
        guard options.skipBadRecords, options.framing != .concatenated else { throw e }
        skipped += 1
        target.drop()
        parser = nil
        try target.flush()
        try onSkip?(e)
    }
}
