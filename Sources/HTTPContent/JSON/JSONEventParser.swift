/// The lower-level event stream: every parse event with its path, for callers who build their
/// own structures. Feed chunks; `onEvent` runs for each event as it is parsed (throw
/// `StopTransfer` to stop, anything else to fail).
public final class JSONEventParser {
    private let sink: EventSink
    private let parser: YajlParser

    public init(options: JSONOptions = JSONOptions(), onEvent: @escaping (JSONEvent, JSONPath) throws -> Void) {
        sink = EventSink(keepNumberText: options.keepNumberText, strictUTF8: options.strictUTF8, onEvent: onEvent)
        parser = YajlParser(options: options, sink: sink)
    }

    public var bytesFed: Int { parser.bytesFed }
    /// Every byte received, including a chunk whose parse stopped early or failed.
    public var bytesReceived: Int { parser.bytesReceived }
    /// True once `onEvent` threw `StopTransfer`.
    public var isStopped: Bool { parser.stopped }

    /// Parses a chunk. - Returns: false once stopped. - Throws: `.decode`, `.tooLarge`, or
    /// what `onEvent` threw (as `.callback` unless an `HTTPContentError`).
    @discardableResult
    public func feed(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) -> Bool {
        try parser.feedUntilStopped(chunk)
    }

    @discardableResult
    public func feed(_ chunk: [UInt8]) throws(HTTPContentError) -> Bool {
        try parser.feedUntilStopped(chunk)
    }

    /// Ends the input. - Throws: `.decode` when it ends inside a value (or is empty).
    public func finish() throws(HTTPContentError) {
        try parser.finishUntilStopped()
    }
}

/// Tracks the path and turns yajl's callbacks into `JSONEvent`s.
final class EventSink: JSONEventSink {
    private let keepNumberText: Bool
    private let strictUTF8: Bool
    private let onEvent: (JSONEvent, JSONPath) throws -> Void
    /// The path of the value being parsed; inside a container, its last component is the
    /// current key or index (`.index(-1)` before the first element).
    @exclusivity(unchecked) private var path: [JSONPath.Component] = []
    @exclusivity(unchecked) private var inArray: [Bool] = []

    init(keepNumberText: Bool, strictUTF8: Bool, onEvent: @escaping (JSONEvent, JSONPath) throws -> Void) {
        self.keepNumberText = keepNumberText
        self.strictUTF8 = strictUTF8
        self.onEvent = onEvent
    }

    /// Steps to the next element when a value starts inside an array.
    @inline(__always)
    private func valueStarts() {
        if inArray.last == true, case .index(let i)? = path.last {
            path[path.count - 1] = .index(i + 1)
        }
    }

    @inline(__always)
    private func emit(_ event: JSONEvent, depth: Int) throws {
        try onEvent(event, JSONPath(slice: path[..<depth]))
    }

    private func scalar(_ event: JSONEvent) throws {
        valueStarts()
        try emit(event, depth: path.count)
    }

    func null() throws { try scalar(.null) }
    func bool(_ value: Bool) throws { try scalar(.bool(value)) }
    func number(_ token: UnsafeRawBufferPointer) throws {
        switch try JSONNumberText.value(token, keep: keepNumberText) {
        case .int(let i): try scalar(.int(i))
        case .double(let d): try scalar(.double(d))
        case .number(let t): try scalar(.number(t))
        default: break
        }
    }
    func string(_ bytes: UnsafeRawBufferPointer) throws { try scalar(.string(JSONStrings.make(bytes, strict: strictUTF8))) }

    func mapKey(_ bytes: UnsafeRawBufferPointer) throws {
        let key = try JSONStrings.make(bytes, strict: strictUTF8)
        try emit(.mapKey(key), depth: path.count - 1)
        path[path.count - 1] = .key(key)
    }

    func startMap() throws {
        valueStarts()
        try emit(.startMap, depth: path.count)
        path.append(.key(""))
        inArray.append(false)
    }

    func startArray() throws {
        valueStarts()
        try emit(.startArray, depth: path.count)
        path.append(.index(-1))
        inArray.append(true)
    }

    func endMap() throws { try end(.endMap) }
    func endArray() throws { try end(.endArray) }

    private func end(_ event: JSONEvent) throws {
        path.removeLast()
        inArray.removeLast()
        try emit(event, depth: path.count)
    }
}
