#if canImport(Glibc)
import Glibc
#endif
import HTTPContent

/// The bytes of a whole JSON document in Python's marshal format (`JSONPythonMarshalHandler`):
/// owns a malloc'd buffer.
public final class JSONPythonMarshalBytes: @unchecked Sendable {
    public let pointer: UnsafeMutablePointer<UInt8>
    public let count: Int
    init(_ pointer: UnsafeMutablePointer<UInt8>, _ count: Int) {
        self.pointer = pointer
        self.count = count
    }
    /// `value` written in marshal's format (`JSONPythonMarshal.encode`).
    public convenience init(encoding value: JSONValue) throws(HTTPContentError) {
        let (p, n) = try JSONPythonMarshal.encode(value)
        self.init(p, n)
    }
    deinit { free(pointer) }
}

/// The `JSON` handler for Python: the same parse, options (except `keepNumberText`, refused),
/// errors, empty-body rules and acceptance, but the content is the document written in Python's
/// marshal format while it is parsed, with no tree in between (nil for an empty body where
/// `JSON` gives nil).
public final class JSONPythonMarshalHandler: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: JSONOptions
    public let allowEmpty: Bool
    private var head: ResponseHead?
    private var parser: YajlParser?
    private var writer: JSONPythonMarshalWriter?
    /// What the last `finish` returned: the product the cache keeps (JSONPythonMarshalProduct).
    var lastProduct: JSONPythonMarshalBytes?

    public init(options: JSONOptions = JSONOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = JSON.defaultAcceptance()) throws(HTTPContentError) {
        if options.keepNumberText {
            throw HTTPContentError(.invalidArgument, "Python marshal output cannot keep number texts (keepNumberText)")
        }
        self.options = options
        self.allowEmpty = allowEmpty
        self.acceptance = acceptance
    }

    public func prepare(_ request: inout Request) throws {
        JSONAcceptance.prepare(&request)
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try JSONAcceptance.check(head, acceptance, options)
        self.head = head
        lastProduct = nil
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        let parser: YajlParser
        if let p = self.parser {
            parser = p
        } else {
            // Numbers as json.loads reads them: integers exact at any size (the tree would
            // make a double of one beyond 64 bits), others float(text).
            let writer = JSONPythonMarshalWriter(options: options, pythonNumbers: true)
            self.writer = writer
            parser = YajlParser(options: options, sink: writer)
            self.parser = parser
        }
        do { try parser.feed(chunk) } catch { throw HTTPContentError.wrapping(error) }
    }

    public func finish() throws -> JSONPythonMarshalBytes? {
        guard let parser, let writer, parser.bytesReceived > 0 else {
            try JSONAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, acceptance, head)
            return nil
        }
        do { try parser.finish() } catch { throw HTTPContentError.wrapping(error) }
        guard let (p, n) = writer.take() else {
            throw HTTPContentError(.decode, "invalid JSON at byte \(parser.bytesFed): no value", offset: parser.bytesFed)
        }
        let bytes = JSONPythonMarshalBytes(p, n)
        lastProduct = bytes
        return bytes
    }

    public func cleanup(failed: Bool) {
        parser = nil
        writer = nil
    }
}

/// Path streaming batches in Python's marshal format (the writer given to `JSONItemBatches`
/// by hc_handler_json_batches_pymarshal_new): each batch is one marshal list of the values, for one
/// `marshal.loads` in Python, giving what `json.loads` gives for the JSON text batch (numbers
/// read from their text as Python's json module does); handed over under the same rules as
/// `BatchCapture`'s JSON texts: at `batchBytes`, when the prefix changes, and at the end of
/// every received chunk, when the values completed so far go at once even if another one is
/// still open (it is carried into the next list: `JSONPythonMarshalWriter.carry`).
final class PythonMarshalBatchCapture: JSONBatchWriter {
    typealias Deliver = JSONBatchDeliver

    private let writer: JSONPythonMarshalWriter
    private let batchBytes: Int
    private let deliver: Deliver
    @exclusivity(unchecked) private var batchPrefix = -1
    @exclusivity(unchecked) private var inItem = false
    /// Bytes, list entries and name references at the end of the last complete item.
    @exclusivity(unchecked) private var completedBytes = 0
    @exclusivity(unchecked) private var completedCount: Int32 = 0
    @exclusivity(unchecked) private var completedRefs: Int32 = 0

    init(options: JSONOptions, batchBytes: Int, deliver: @escaping Deliver) throws(HTTPContentError) {
        writer = JSONPythonMarshalWriter(options: options, list: true, pythonNumbers: true)
        self.batchBytes = max(batchBytes, 1)
        self.deliver = deliver
        completedBytes = writer.byteCount
    }

    /// Items in the list (not the carried names' tuple).
    private var items: Int32 { writer.listCount - writer.carriedNames }

    func begin(prefix: Int) throws {
        if items > 0, prefix != batchPrefix { try flush() }
        batchPrefix = prefix
        inItem = true
    }

    func end() throws {
        inItem = false
        completedBytes = writer.byteCount
        completedCount = writer.listCount
        completedRefs = writer.refCount
        if completedBytes >= batchBytes { try flush() }
    }

    /// Hands over the items completed so far; one still open is carried into the next list.
    func flush() throws {
        if inItem {
            let n = completedCount - writer.carriedNames
            guard n > 0 else { return }
            let bytes = writer.listBytes(count: completedCount, bytes: completedBytes)
            // Carried over even when the callback stops or fails: nothing is delivered twice.
            defer {
                completedBytes = writer.carry(from: completedBytes, refs: completedRefs,
                                              open: writer.listCount - completedCount)
                completedCount = writer.carriedNames   // references keep their numbers
            }
            return try deliver(batchPrefix, bytes, Int(n))
        }
        let n = items
        guard n > 0 else { return }
        let bytes = writer.listBytes(count: writer.listCount, bytes: writer.byteCount)
        defer {
            writer.resetList()
            completedBytes = writer.byteCount
            completedCount = 0
            completedRefs = 0
        }
        try deliver(batchPrefix, bytes, Int(n))
    }

    func flushCompleted() throws {
        guard inItem else { return try flush() }
        inItem = false
        let n = completedCount - writer.carriedNames
        let all = completedCount
        defer {
            writer.resetList()
            completedBytes = writer.byteCount
            completedCount = 0
            completedRefs = 0
        }
        guard n > 0 else { return }
        try deliver(batchPrefix, writer.listBytes(count: all, bytes: completedBytes), Int(n))
    }

    func null() throws { writer.null() }
    func bool(_ value: Bool) throws { writer.bool(value) }
    func number(_ token: UnsafeRawBufferPointer) throws { try writer.number(token) }
    func string(_ bytes: UnsafeRawBufferPointer) throws { try writer.string(bytes) }
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws { try writer.mapKey(bytes) }
    func startMap() throws { try writer.startMap() }
    func endMap() throws { writer.endMap() }
    func startArray() throws { try writer.startArray() }
    func endArray() throws { writer.endArray() }
}
