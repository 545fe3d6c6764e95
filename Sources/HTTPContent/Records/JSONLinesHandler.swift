/// JSON records as Swift values: the reader's tree target (`JSONValue` records, selected by
/// path and checked by a validator), the `JSONLines` handler over HTTP, and the parser for
/// bodies from elsewhere. The reader itself: `JSONRecords.swift`.

extension JSONRecordReader {
    /// A reader handing `JSONValue`s to `onRecord`, selected and checked as the options say.
    static func tree(options: JSONRecordOptions, validator: (any JSONValueValidator)?,
                     onSkip: ((HTTPContentError) throws -> Void)?,
                     onRecord: @escaping (JSONValue) throws -> Void) -> JSONRecordReader {
        let target = JSONRecordTreeTarget(options: options.json,
                                          selection: JSONRecordSelection(path: options.path, validator: validator),
                                          onRecord: onRecord)
        let reader = JSONRecordReader(options: options, target: target, onSkip: onSkip)
        target.invalid = { [unowned reader] error, i in try reader.invalid(error, at: i) }
        return reader
    }
}

/// What is handed over of each record: the value at a key path, checked by a validator.
struct JSONRecordSelection {
    let path: String?
    let components: [String]?
    let validator: (any JSONValueValidator)?

    /// nil when the records are handed over whole and unchecked.
    init?(path: String?, validator: (any JSONValueValidator)?) {
        guard path != nil || validator != nil else { return nil }
        self.path = path
        components = path.map(JSONValue.keyPathComponents)
        self.validator = validator
    }

    /// - Throws: `.decode` (sub-kind "schema" from a schema's validator) for an invalid record.
    func apply(_ record: JSONValue) throws(HTTPContentError) -> JSONValue {
        var value = record
        if let components {
            guard let found = record[path: components] else {
                throw HTTPContentError(.decode, "the record has no value at \"\(path ?? "")\"")
            }
            value = found
        }
        try validator?.check(value)
        return value
    }
}

/// Records as `JSONValue`s, one callback each.
final class JSONRecordTreeTarget: JSONRecordTarget {
    private var builder: JSONTreeBuilder?
    private let options: JSONOptions
    private let onRecord: (JSONValue) throws -> Void
    private let selection: JSONRecordSelection?
    /// Told of each invalid record (set by the reader: it knows the index and what to do).
    var invalid: ((HTTPContentError, Int) throws -> Void)?

    init(options: JSONOptions, selection: JSONRecordSelection? = nil, onRecord: @escaping (JSONValue) throws -> Void) {
        var o = options
        o.allowMultipleValues = true
        self.options = o
        self.selection = selection
        self.onRecord = onRecord
    }

    func makeSink() -> any JSONEventSink {
        let made = JSONTreeBuilder(options: options)
        builder = made
        return made
    }

    var pending: Int { builder?.documents.count ?? 0 }

    func commit() throws {
        guard let builder, !builder.documents.isEmpty else { return }
        let done = builder.documents
        builder.documents.removeAll(keepingCapacity: true)
        guard let selection else {
            for value in done { try onRecord(value) }
            return
        }
        for (i, record) in done.enumerated() {
            let value: JSONValue
            do {
                value = try selection.apply(record)
            } catch {
                try invalid?(error, i)
                continue
            }
            try onRecord(value)
        }
    }

    func drop() { builder?.documents.removeAll() }
    func flush() throws {}
}

/// JSON Lines, NDJSON, JSON text sequences (RFC 7464) or concatenated JSON, parsed as the body
/// arrives: each record goes to `onRecord` as soon as it is complete, and only the record being
/// parsed is in memory, so an endless stream takes flat memory. A bad record fails the transfer
/// with `.decode` carrying its `recordIndex` and body `offset`, or, with `skipBadRecords`, goes
/// to `onSkip` and the stream goes on.
///
///     try client.get(url, handler: JSONLines { record in print(record) })
///
/// Content: a summary (records delivered, records skipped). Throwing `StopTransfer` from
/// `onRecord` ends the transfer early with success. Default acceptance: status 200–299 and
/// `JSONRecordOptions.defaultContentTypes`. Sends `Accept` for the framing unless set.
public final class JSONLines: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: JSONRecordOptions
    private let reader: JSONRecordReader
    private var stopped = false
    private var head: ResponseHead?

    public static func defaultAcceptance() -> Acceptance {
        Acceptance(statusCodes: [200...299], contentTypes: JSONRecordOptions.defaultContentTypes)
    }

    /// - Parameters:
    ///   - options: framing, limits, the path of the value kept, and whether bad records are skipped.
    ///   - acceptance: the statuses and media types taken (default: the JSON Lines types).
    ///   - onSkip: told of each bad record skipped (with `options.skipInvalidRecords`).
    ///   - onRecord: called with each record as it completes; throw `StopTransfer` to stop.
    ///   - validator: checks each record (or its value at `options.path`), say a
    ///     `JSONSchemaCheck`: an invalid one fails the stream with its `.decode` error located
    ///     (`recordIndex`, `offset`), or is skipped with `options.skipInvalidRecords`.
    public init(options: JSONRecordOptions = JSONRecordOptions(), acceptance: Acceptance = JSONLines.defaultAcceptance(),
                validator: (any JSONValueValidator)? = nil, onSkip: ((HTTPContentError) throws -> Void)? = nil,
                onRecord: @escaping (JSONValue) throws -> Void) {
        self.options = options
        self.acceptance = acceptance
        reader = JSONRecordReader.tree(options: options, validator: validator, onSkip: onSkip, onRecord: onRecord)
    }

    /// Records go to `target` (a binding's own writer) instead of `JSONValue` callbacks.
    package init(options: JSONRecordOptions, acceptance: Acceptance, target: JSONRecordTarget,
                 onSkip: ((HTTPContentError) throws -> Void)?) {
        self.options = options
        self.acceptance = acceptance
        reader = JSONRecordReader(options: options, target: target, onSkip: onSkip)
    }

    public func prepare(_ request: inout Request) throws {
        guard !request.headers.contains("Accept") else { return }
        switch options.framing {
        case .lines: request.headers.add("Accept", "application/x-ndjson, application/jsonl")
        case .auto: request.headers.add("Accept", "application/x-ndjson, application/jsonl, application/json-seq")
        case .sequence: request.headers.add("Accept", "application/json-seq")
        case .concatenated: request.headers.add("Accept", "application/json")
        }
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        reader.resolveFraming(head.contentType)
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        try RecordStep.run(head, onStop: { stopped = true }) { try reader.feed(chunk) }
    }

    public func finish() throws -> JSONRecordsSummary {
        if !stopped {
            try RecordStep.run(head, rethrowStop: false, onStop: { stopped = true }) { try reader.finish() }
        }
        return JSONRecordsSummary(records: reader.records, skipped: reader.skipped, stoppedEarly: stopped)
    }
}

/// What a JSON record stream did.
public struct JSONRecordsSummary: Sendable, Equatable {
    /// Records delivered.
    public var records: Int
    /// Bad records skipped (`skipBadRecords`).
    public var skipped: Int
    /// A callback stopped the stream.
    public var stoppedEarly: Bool
}

/// A JSON record stream without a transfer (tests, fuzzing, bodies from elsewhere).
public final class JSONRecordParser {
    private let reader: JSONRecordReader

    public init(options: JSONRecordOptions = JSONRecordOptions(), validator: (any JSONValueValidator)? = nil,
                onSkip: ((HTTPContentError) throws -> Void)? = nil, onRecord: @escaping (JSONValue) throws -> Void) {
        reader = JSONRecordReader.tree(options: options, validator: validator, onSkip: onSkip, onRecord: onRecord)
    }

    public func feed(_ chunk: UnsafeRawBufferPointer) throws { try reader.feed(chunk) }
    public func feed(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try reader.feed($0) } }
    public func finish() throws -> JSONRecordsSummary {
        try reader.finish()
        return JSONRecordsSummary(records: reader.records, skipped: reader.skipped, stoppedEarly: false)
    }
}
