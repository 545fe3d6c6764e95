/// One Server-Sent Event, with the field names `httpx-sse` uses.
public struct ServerSentEvent: Sendable, Equatable, CustomStringConvertible {
    /// The event type; "message" when the event set none.
    public var event: String
    /// The `data` lines joined with LF.
    public var data: String
    /// The last event ID when the event was dispatched ("" when none was ever set); it carries
    /// over from earlier events, as the standard says.
    public var id: String
    /// The `retry` field of this event (milliseconds), if it had a valid one.
    public var retry: Int?

    public init(event: String = "message", data: String = "", id: String = "", retry: Int? = nil) {
        self.event = event.isEmpty ? "message" : event
        self.data = data
        self.id = id
        self.retry = retry
    }

    public var description: String {
        "ServerSentEvent(event: \(event), data: \(data.debugDescription), id: \(id.debugDescription), retry: \(retry.map(String.init) ?? "nil"))"
    }
}

/// The WHATWG HTML "event stream interpretation", fed chunk by chunk: UTF-8 decoded (invalid
/// bytes become U+FFFD, a byte order mark is skipped once), lines ended by CRLF, LF or CR across
/// chunks, `data` lines joined with LF, `event`, `id` (ignored when it contains NUL), `retry`
/// (ASCII digits only), comment lines (`:`) handed to `onComment`, unknown fields ignored, a line
/// without a colon a field with an empty value. An event is dispatched on a blank line only, and
/// only if it has data; an event still open when the stream ends is discarded.
public final class SSEParser {
    /// The longest line accepted, in bytes (`.tooLarge` beyond). nil: no limit.
    public let maxLineSize: Int?
    /// The largest event (data plus type), in bytes (`.tooLarge` beyond). nil: no limit.
    public let maxEventSize: Int?
    /// The last event ID: persists across events and across reconnections (`Last-Event-ID`).
    public private(set) var lastEventId = ""
    /// The reconnection time the server last asked for with `retry`, in milliseconds.
    public private(set) var reconnectionTime: Int?
    /// Events dispatched so far (over every stream fed).
    public private(set) var dispatched = 0

    private let onEvent: (ServerSentEvent) throws -> Void
    private let onComment: ((String) throws -> Void)?
    private var decoder = StreamingTextDecoder(encoding: .utf8, strict: false)
    private var splitter: LineSplitter
    private var bomChecked = false
    private var eventType: [UInt8] = []
    private var data: [UInt8] = []
    private var idBuffer: [UInt8] = []
    private var retry: Int?

    public init(maxLineSize: Int? = 1 << 20, maxEventSize: Int? = 16 << 20, lastEventId: String = "",
                onComment: ((String) throws -> Void)? = nil,
                onEvent: @escaping (ServerSentEvent) throws -> Void) {
        self.maxLineSize = maxLineSize
        self.maxEventSize = maxEventSize
        self.lastEventId = lastEventId
        idBuffer = Array(lastEventId.utf8)
        self.onComment = onComment
        self.onEvent = onEvent
        splitter = LineSplitter(maxLineSize: maxLineSize)
    }

    /// Starts a new stream (a reconnection): the byte order mark may come again, a half-received
    /// line or event is dropped; the last event ID and reconnection time are kept.
    public func restart() {
        decoder = StreamingTextDecoder(encoding: .utf8, strict: false)
        splitter = LineSplitter(maxLineSize: maxLineSize)
        bomChecked = false
        eventType.removeAll()
        data.removeAll()
        retry = nil
        idBuffer = Array(lastEventId.utf8)
    }

    /// Parses a chunk, dispatching the events it completes.
    /// - Throws: `.tooLarge` for a line or event over its limit, or what a callback threw.
    public func feed(_ chunk: UnsafeRawBufferPointer) throws {
        try decoder.decode(chunk)
        try drain()
    }

    public func feed(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try feed($0) }
    }

    /// Ends the stream: an unterminated last line and an event without its blank line are
    /// discarded, as the standard says.
    public func finish() throws {
        try decoder.finish()
        try drain()
    }

    private func drain() throws {
        try decoder.drainOutput { text in
            var text = text
            if !bomChecked {
                bomChecked = true
                if text.count >= 3, text[0] == 0xEF, text[1] == 0xBB, text[2] == 0xBF {
                    text = UnsafeRawBufferPointer(rebasing: text[3...])
                }
            }
            try splitter.feed(text) { line in try self.line(line) }
        }
    }

    private func line(_ line: UnsafeRawBufferPointer) throws {
        if line.isEmpty { return try dispatch() }
        if line[0] == UInt8(ascii: ":") {
            if let onComment {
                try onComment(String(decoding: UnsafeRawBufferPointer(rebasing: line[1...]), as: UTF8.self))
            }
            return
        }
        var field = line
        var value = UnsafeRawBufferPointer(start: nil, count: 0)
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = UnsafeRawBufferPointer(rebasing: line[..<colon])
            var v = colon + 1
            if v < line.count, line[v] == UInt8(ascii: " ") { v += 1 }
            value = UnsafeRawBufferPointer(rebasing: line[v...])
        }
        switch field.count {
        case 4 where field.elementsEqual("data".utf8):
            data.append(contentsOf: value)
            data.append(0x0A)
            try checkSize()
        case 5 where field.elementsEqual("event".utf8):
            eventType = Array(value)
            try checkSize()
        case 2 where field.elementsEqual("id".utf8):
            if !value.contains(0) { idBuffer = Array(value) }
        case 5 where field.elementsEqual("retry".utf8):
            if !value.isEmpty, value.count <= 12, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                let ms = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
                retry = ms
                reconnectionTime = ms
            }
        default:
            break
        }
    }

    private func checkSize() throws {
        if let maxEventSize, data.count + eventType.count > maxEventSize {
            throw HTTPContentError(.tooLarge, "an event exceeds the limit of \(maxEventSize) bytes")
        }
    }

    private func dispatch() throws {
        lastEventId = String(decoding: idBuffer, as: UTF8.self)
        defer {
            data.removeAll(keepingCapacity: data.capacity <= 1 << 16)
            eventType.removeAll()
            retry = nil
        }
        guard !data.isEmpty else { return }
        data.removeLast()  // the LF after the last data line
        let event = ServerSentEvent(event: String(decoding: eventType, as: UTF8.self),
                                    data: String(decoding: data, as: UTF8.self), id: lastEventId, retry: retry)
        dispatched += 1
        try onEvent(event)
    }
}
