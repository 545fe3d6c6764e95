/// Lends a matched value for the duration of a call: the callee may swap it out (and must swap
/// it back), so handing it over costs no copy (see `JSONItems.init(…lendingItems:)`).
package typealias JSONItemLender = (_ prefixIndex: Int, _ value: inout JSONValue) throws -> Void

/// Builds each matched value as a tree and hands it over.
final class TreeCapture: JSONPrefixMatcher.Capture {
    let builder: JSONTreeBuilder
    private let prefixes: [JSONPrefix]
    private let onItem: ((JSONItem) throws -> Void)?
    /// The lender in lending mode (`lends`), a no-op otherwise: not optional, so it is called
    /// straight from this constant (an optional's binding costs a retain and a release per item).
    private let lend: JSONItemLender
    private let lends: Bool
    @exclusivity(unchecked) private var prefixIndex = 0

    init(options: JSONOptions, prefixes: [JSONPrefix], onItem: @escaping (JSONItem) throws -> Void) {
        builder = JSONTreeBuilder(options: options, shareShortKeys: false)
        self.prefixes = prefixes
        self.onItem = onItem
        lend = { _, _ in }
        lends = false
    }

    init(options: JSONOptions, prefixes: [JSONPrefix], lend: @escaping JSONItemLender) {
        builder = JSONTreeBuilder(options: options, shareShortKeys: false)
        builder.holdsClosedContainer = true
        self.prefixes = prefixes
        onItem = nil
        self.lend = lend
        lends = true
    }

    func begin(prefix: Int) { prefixIndex = prefix }
    func end() throws {
        if lends, builder.hasClosedContainer {
            var value = builder.takeClosedContainer()
            return try lend(prefixIndex, &value)
        }
        // Taken out with removeLast (not popLast's optional, which costs a copy of the value).
        guard !builder.documents.isEmpty else { return }
        if lends {
            var value = builder.documents.removeLast()
            return try lend(prefixIndex, &value)
        }
        try onItem.unsafelyUnwrapped(JSONItem(prefixIndex: prefixIndex, prefix: prefixes[prefixIndex],
                                               value: builder.documents.removeLast()))
    }

    func null() throws { try builder.null() }
    func bool(_ value: Bool) throws { try builder.bool(value) }
    func number(_ token: UnsafeRawBufferPointer) throws { try builder.number(token) }
    func string(_ bytes: UnsafeRawBufferPointer) throws { try builder.string(bytes) }
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws { try builder.mapKey(bytes) }
    func startMap() throws { try builder.startMap() }
    func endMap() throws { try builder.endMap() }
    func startArray() throws { try builder.startArray() }
    func endArray() throws { try builder.endArray() }
}

/// Receives a finished batch: the prefix index, the batch (valid during the call), its value count.
package typealias JSONBatchDeliver = (_ prefixIndex: Int, _ json: UnsafeRawBufferPointer, _ count: Int) throws -> Void

/// Writes matched values straight into a JSON array text (`[v1,v2,...]`) with yajl_gen, with no
/// tree in between, and hands over the batch when it reaches `batchBytes`, when the prefix
/// changes, or when `flush` is called (the handler flushes after every chunk: the values
/// completed so far go at once, and one still open is carried into the next batch). Numbers
/// keep their text. Values nested deeper than 127 levels cannot be batched (yajl_gen's limit).
final class BatchCapture: JSONBatchWriter {
    typealias Deliver = JSONBatchDeliver

    private let gen = JSONGenerator()
    private let batchBytes: Int
    private let removeNulls: Bool
    private let strictUTF8: Bool
    private let deliver: Deliver
    @exclusivity(unchecked) private var batchPrefix = -1
    @exclusivity(unchecked) private var count = 0
    /// With removeNulls, a member's key waits for its value (a null drops both).
    @exclusivity(unchecked) private var pendingKey: [UInt8]? = nil
    /// Between `begin` and `end`: the batch cannot be cut now.
    @exclusivity(unchecked) private var inItem = false
    /// Output size at the end of the last complete item (to cut off a broken one).
    @exclusivity(unchecked) private var completedBytes = 0
    /// The start of an item still open when the batch before went (`[` and its text so far):
    /// the generator's output since then continues it.
    @exclusivity(unchecked) private var carried: [UInt8] = []

    init(options: JSONOptions, batchBytes: Int, deliver: @escaping Deliver) {
        self.batchBytes = max(batchBytes, 1)
        removeNulls = options.removeNulls
        strictUTF8 = options.strictUTF8
        self.deliver = deliver
    }

    func begin(prefix: Int) throws {
        if count > 0, prefix != batchPrefix { try flush() }
        if count == 0 { try gen.startArray() }
        batchPrefix = prefix
        inItem = true
    }

    func end() throws {
        count += 1
        inItem = false
        completedBytes = gen.outputSize
        if gen.outputSize >= batchBytes { try flush() }
    }

    /// Hands over the items completed so far; one still open is carried into the next batch.
    func flush() throws {
        if inItem {
            guard count > 0 else { return }
            // The items completed so far go; the open one (it started after them, in the
            // generator's output) starts the next batch, without the comma before it.
            var text = batchText(upTo: completedBytes)
            text.append(UInt8(ascii: "]"))
            var rest = gen.withOutput { Array($0[completedBytes...]) }
            if rest.first == UInt8(ascii: ",") { rest.removeFirst() }
            carried = [UInt8(ascii: "[")] + rest
            gen.clearOutput()   // the generator's state stays: the item goes on
            let n = count
            count = 0
            completedBytes = 0
            return try text.withUnsafeBytes { try deliver(batchPrefix, $0, n) }
        }
        guard count > 0 else { return }
        try gen.endArray()
        let n = count
        count = 0
        defer {
            gen.reset()
            carried = []
        }
        if carried.isEmpty {
            try gen.withOutput { try deliver(batchPrefix, $0, n) }
        } else {
            let text = carried + gen.withOutput { Array($0) }
            try text.withUnsafeBytes { try deliver(batchPrefix, $0, n) }
        }
    }

    /// The batch's text: the carried start, if any, then the generator's output up to `end`
    /// (an offset in that output).
    private func batchText(upTo end: Int) -> [UInt8] {
        carried + gen.withOutput { Array($0.prefix(end)) }
    }

    /// After a parse error: hands over the items completed before it, dropping the broken one.
    func flushCompleted() throws {
        guard inItem else { return try flush() }
        inItem = false
        defer {
            gen.reset()
            carried = []
        }
        guard count > 0 else { return }
        var text = batchText(upTo: completedBytes)
        text.append(UInt8(ascii: "]"))
        let n = count
        count = 0
        try text.withUnsafeBytes { try deliver(batchPrefix, $0, n) }
    }

    @inline(__always)
    private func beforeValue() throws {
        if let key = pendingKey {
            pendingKey = nil
            try key.withUnsafeBytes { raw in try gen.string(bytes: raw) }
        }
    }

    func null() throws {
        if pendingKey != nil {
            pendingKey = nil
            return
        }
        try gen.null()
    }
    func bool(_ value: Bool) throws { try beforeValue(); try gen.bool(value) }
    func number(_ token: UnsafeRawBufferPointer) throws { try beforeValue(); try gen.number(token: token) }
    func string(_ bytes: UnsafeRawBufferPointer) throws {
        if strictUTF8 { try JSONStrings.validate(bytes) }
        try beforeValue()
        try gen.string(bytes: bytes)
    }
    func mapKey(_ bytes: UnsafeRawBufferPointer) throws {
        if strictUTF8 { try JSONStrings.validate(bytes) }
        if removeNulls { pendingKey = Array(bytes) } else { try gen.string(bytes: bytes) }
    }
    func startMap() throws { try beforeValue(); try gen.startMap() }
    func endMap() throws { try gen.endMap() }
    func startArray() throws { try beforeValue(); try gen.startArray() }
    func endArray() throws { try gen.endArray() }
}

/// What `JSONItemBatches` writes its batches with.
package protocol JSONBatchWriter: JSONItemCapture {
    /// Hands over the pending batch, if any (mid-item: once the item ends).
    func flush() throws
    /// After a parse error: hands over the items completed before it, dropping the broken one.
    func flushCompleted() throws
}
