import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// Writes elements as Python pickle bytes (protocol 4) that `pickle.loads` turns straight into
/// `xml.etree.ElementTree.Element`s, as `ET.fromstring` would make them (tag `{ns}name`, attrib,
/// text, tail, children; CDATA joined to the text; comments, when kept, as `ET.Comment`
/// elements). The Python binding reads a document or a batch of streamed elements with one
/// `pickle.loads` call, in C, instead of building each element from Python.
///
/// The pickle drives an `ET.TreeBuilder` (the C accelerator's): its bound `start`, `data` and
/// `end` are memoized once per pickle and called with a small tuple per event, which sets text
/// and tail where the parser found them. (Rebuilding each Element from a state dict, through
/// `__setstate__`, parses that dict as keyword arguments: twice the instructions by callgrind.)
/// Elements with no attribute share one empty dict, which the builder does not keep.
///
/// Only these opcodes are written, strings always length-prefixed: the bytes come from this
/// writer, never from the document, so nothing in a document can become an opcode.
final class XMLPickleWriter: XMLStreamCapture {
    /// An interned name (libxml2 interns names, so their addresses identify them while the parser
    /// lives), its memo slot, and those of the argument tuples of an element by that name:
    /// `(tag, {})` for `start` with no attribute and `(tag,)` for `end`, made once per pickle and
    /// reused (-1: not made yet), so most calls build no tuple.
    private struct NameSlot {
        var local: UnsafePointer<UInt8>?
        var uri: UnsafePointer<UInt8>?
        var slot = 0
        var startArgs = -1
        var endArgs = -1
    }

    // Unchecked exclusivity: written on every event, never reentrantly (dynamic checks cost
    // about a fifth of the writer's instructions by callgrind).
    @exclusivity(unchecked) private(set) var out = PickleBuffer()
    /// The name of each open element.
    @exclusivity(unchecked) private var stack: [(local: UnsafePointer<UInt8>, uri: UnsafePointer<UInt8>?)] = []
    @exclusivity(unchecked) private var text: [UInt8] = []
    @exclusivity(unchecked) private var memo = 0
    /// Names already written in this pickle: a direct-mapped cache on the name's addresses
    /// (cheaper than a Dictionary's hashing; a collision only writes a name again).
    @exclusivity(unchecked) private var names: [NameSlot]
    @exclusivity(unchecked) private var namesMemoized = 0
    /// Elements completed in the current batch, and the path they matched.
    private(set) var count = 0
    private(set) var path = 0
    private let batched: Bool
    private let keepComments: Bool
    /// Batches: called with (path index, pickle bytes of a list, element count) at `batchBytes`,
    /// when the path changes, and when `flush` is called.
    var deliver: ((Int, UnsafeRawBufferPointer, Int) throws -> Void)?
    private let batchBytes: Int

    /// The memo slots written by `begin`.
    private enum Slot { static let start = 2, data = 3, end = 4, emptyDict = 5, comment = 6, first = 7 }
    /// How to make again what a memo slot past the header's holds: a name (its string opcode's
    /// bytes), or the argument tuple of `start` or `end` for the name in a slot.
    private enum Recipe {
        case name([UInt8])
        case startArgs(Int)
        case endArgs(Int)
    }
    /// One for each memo slot from `Slot.first` on, in order (an element still open when the
    /// batch goes is carried into the next pickle, which makes them again first).
    @exclusivity(unchecked) private var recipes: [Recipe] = []
    /// Where the last complete element of the batch ended, and the memo slots made by then.
    @exclusivity(unchecked) private var completedBytes = 0
    @exclusivity(unchecked) private var completedMemo = 0
    private static let nameCache = 1024
    private static let maxMemoizedNames = 4096

    init(batched: Bool, keepComments: Bool, batchBytes: Int = 64 * 1024) {
        self.batched = batched
        self.keepComments = keepComments
        self.batchBytes = batchBytes
        names = Array(repeating: NameSlot(), count: XMLPickleWriter.nameCache)
        begin()
    }

    deinit { out.release() }

    // MARK: - Pickle framing

    private func begin() {
        out.removeAll()
        for i in names.indices { names[i].local = nil }
        namesMemoized = 0
        recipes.removeAll(keepingCapacity: true)
        memo = 0
        count = 0
        header()
        completedBytes = out.count
        completedMemo = memo
    }

    /// The builder, its methods and the shared objects in memo slots 0 to 6 (and, batched, the
    /// nameless root and the list's mark).
    private func header() {
        out.put(0x80, 4)  // PROTO 4
        global("xml.etree.ElementTree", "TreeBuilder")
        out.put(0x29, 0x52)  // EMPTY_TUPLE, REDUCE: TreeBuilder()
        memoize()  // 0: the builder
        out.append(0x30)  // POP
        global("builtins", "getattr")
        memoize()  // 1
        out.append(0x30)
        for method in ["start", "data", "end"] {  // 2, 3, 4: its bound methods
            get(1)
            get(0)
            string(Array(method.utf8))
            out.put(0x86, 0x52)  // TUPLE2, REDUCE
            memoize()
            out.append(0x30)
        }
        out.append(0x7D)  // EMPTY_DICT
        memoize()  // 5
        out.append(0x30)
        global("xml.etree.ElementTree", "Comment")
        memoize()  // 6
        out.append(0x30)
        if batched {
            // The builder takes one root: batches hang under a nameless one, never returned.
            get(Slot.start)
            string([])
            get(Slot.emptyDict)
            out.put(0x86, 0x52)
            out.append(0x30)
            out.put(0x5D, 0x28)  // EMPTY_LIST, MARK
        }
    }

    private func global(_ module: String, _ name: String) {
        string(Array(module.utf8))
        string(Array(name.utf8))
        out.append(0x93)  // STACK_GLOBAL
    }

    /// The finished pickle of the whole document (tree mode): the root's `end` left it on the stack.
    func finishDocument() -> [UInt8] {
        out.append(0x2E)  // STOP
        return out.bytes
    }


    /// Hands over the current batch, if it holds any element, and starts the next. An element
    /// still open (its bytes follow the complete ones) is carried into the next batch.
    func flush() throws {
        guard batched, count > 0 else { return }
        guard stack.isEmpty else {
            let partial = out.slice(from: completedBytes)
            out.truncate(to: completedBytes)
            out.put(0x65, 0x2E)  // APPENDS, STOP
            let n = count
            // Carried on even when the callback stops or fails: a batch is never delivered twice.
            defer { carry(partial) }
            return try out.withUnsafeBytes { try deliver?(path, $0, n) }
        }
        out.put(0x65, 0x2E)  // APPENDS, STOP
        let n = count
        // Started over even when the callback stops or fails: a batch is never delivered twice.
        defer { begin() }
        try out.withUnsafeBytes { try deliver?(path, $0, n) }
    }

    /// Starts the next pickle with `partial`, the events of the element still open: after the
    /// header, the memo slots made before it are made again, in order, so that what it refers
    /// to keeps its slot (the names cache stays valid).
    private func carry(_ partial: [UInt8]) {
        let open = memo
        out.removeAll()
        count = 0
        memo = 0
        header()
        for r in recipes[..<(completedMemo - Slot.first)] {
            switch r {
            case .name(let bytes): out += bytes
            case .startArgs(let slot):
                get(slot)
                get(Slot.emptyDict)
                out.append(0x86)  // TUPLE2
            case .endArgs(let slot):
                get(slot)
                out.append(0x85)  // TUPLE1
            }
            out.put(0x94, 0x30)  // MEMOIZE, POP
        }
        completedBytes = out.count
        out += partial
        memo = open
    }

    @inline(__always) private func memoize() {
        out.append(0x94)
        memo += 1
    }

    @inline(__always) private func get(_ slot: Int) {
        if slot < 256 {
            out.put(0x68, UInt8(slot))  // BINGET
        } else {
            out.append(0x6A)  // LONG_BINGET
            le32(slot)
        }
    }

    @inline(__always) private func le32(_ v: Int) {
        out.put(UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 24) & 0xFF))
    }

    private func stringHeader(_ n: Int) {
        if n < 256 {
            out.put(0x8C, UInt8(n))  // SHORT_BINUNICODE
        } else {
            out.append(0x58)  // BINUNICODE
            le32(n)
        }
    }

    private func string(_ bytes: [UInt8]) {
        stringHeader(bytes.count)
        out += bytes
    }

    private func string(_ bytes: UnsafeBufferPointer<UInt8>) {
        stringHeader(bytes.count)
        out.append(contentsOf: bytes)
    }

    private func cString(_ p: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: p, count: strlen(UnsafeRawPointer(p).assumingMemoryBound(to: CChar.self)))
    }

    @inline(__always) private func cacheIndex(_ local: UnsafePointer<UInt8>, _ uri: UnsafePointer<UInt8>?) -> Int {
        let a = UInt(bitPattern: local), b = UInt(bitPattern: uri)
        return Int(truncatingIfNeeded: ((a ^ (b &<< 7)) &* 0x9E37_79B9_7F4A_7C15) >> 54) & (XMLPickleWriter.nameCache - 1)
    }

    @inline(__always) private func cached(_ h: Int, _ local: UnsafePointer<UInt8>, _ uri: UnsafePointer<UInt8>?) -> Bool {
        names[h].local == local && names[h].uri == uri
    }

    /// `{uri}local` or `local`, memoized; returns its memo slot (-1: written, not memoized).
    @discardableResult
    private func name(_ local: UnsafePointer<UInt8>, _ uri: UnsafePointer<UInt8>?) -> Int {
        let h = cacheIndex(local, uri)
        if cached(h, local, uri) {
            get(names[h].slot)
            return names[h].slot
        }
        let l = cString(local)
        let at = out.count
        if let uri {
            let u = cString(uri)
            stringHeader(u.count + l.count + 2)
            out.append(UInt8(ascii: "{"))
            out.append(contentsOf: u)
            out.append(UInt8(ascii: "}"))
            out.append(contentsOf: l)
        } else {
            string(l)
        }
        guard namesMemoized < XMLPickleWriter.maxMemoizedNames else { return -1 }
        namesMemoized += 1
        names[h] = NameSlot(local: local, uri: uri, slot: memo)
        recipes.append(.name(out.slice(from: at)))
        memoize()
        return memo - 1
    }

    // MARK: - Events

    /// Hands pending character data to the builder, which makes it the text of the open element
    /// or the tail of the one that just ended.
    private func settle() {
        guard !text.isEmpty else { return }
        get(Slot.data)
        string(text)
        out.put(0x85, 0x52)  // TUPLE1, REDUCE
        out.append(0x30)
        text.removeAll(keepingCapacity: true)
    }

    func start(_ tag: XMLStartTag, depth: Int) throws {
        settle()
        get(Slot.start)
        let h = cacheIndex(tag.localname, tag.uri)
        if tag.nbAttributes == 0 && cached(h, tag.localname, tag.uri) && names[h].startArgs >= 0 {
            get(names[h].startArgs)
        } else {
            name(tag.localname, tag.uri)
            if tag.nbAttributes > 0 {
                out.put(0x7D, 0x28)  // EMPTY_DICT, MARK
                for i in 0..<tag.nbAttributes {
                    guard let local = tag.attributeName(i) else { continue }
                    name(local, tag.attributeURI(i))
                    string(tag.attributeValue(i))
                }
                out.put(0x75, 0x86)  // SETITEMS, TUPLE2
            } else {
                get(Slot.emptyDict)
                out.append(0x86)  // TUPLE2
                if cached(h, tag.localname, tag.uri) {
                    names[h].startArgs = memo
                    recipes.append(.startArgs(names[h].slot))
                    memoize()
                }
            }
        }
        out.put(0x52, 0x30)  // REDUCE, POP
        stack.append((tag.localname, tag.uri))
    }

    func text(_ bytes: UnsafeBufferPointer<UInt8>, cdata: Bool) throws {
        if !stack.isEmpty { text.append(contentsOf: bytes) }
    }

    func comment(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        guard keepComments, !stack.isEmpty else { return }
        settle()
        // As ET.Comment makes it: an element whose tag is the Comment function.
        get(Slot.start)
        get(Slot.comment)
        get(Slot.emptyDict)
        out.put(0x86, 0x52)
        out.append(0x30)
        get(Slot.data)
        string(bytes)  // even empty, as ET.Comment("") has text ""
        out.put(0x85, 0x52)
        out.append(0x30)
        get(Slot.end)
        get(Slot.comment)
        out.put(0x85, 0x52)
        out.append(0x30)
    }

    func end(depth: Int) throws {
        settle()
        guard let top = stack.popLast() else { return }
        get(Slot.end)
        let h = cacheIndex(top.local, top.uri)
        if cached(h, top.local, top.uri) && names[h].endArgs >= 0 {
            get(names[h].endArgs)
        } else {
            name(top.local, top.uri)
            out.append(0x85)  // TUPLE1
            if cached(h, top.local, top.uri) {
                names[h].endArgs = memo
                recipes.append(.endArgs(names[h].slot))
                memoize()
            }
        }
        out.append(0x52)  // REDUCE: the element, left on the stack when outermost
        if !stack.isEmpty { out.append(0x30) }
    }

    /// A captured element is complete. With several paths the batch size is 1 (set by the
    /// handler), so a batch never mixes paths.
    func done(path index: Int) throws {
        path = index
        count += 1
        completedBytes = out.count
        completedMemo = memo
        if out.count >= batchBytes { try flush() }
    }

    /// Streaming (`XMLElements`): the batch goes at the end of every received chunk.
    func chunkParsed() throws { try flush() }
}

/// For the Python binding: `XML`'s parse, options, errors and acceptance, but the document is
/// written as a pickle of `xml.etree.ElementTree.Element`s while it is parsed, with no tree.
/// Content: the pickle bytes (nil for an empty body, where `XML` gives nil).
final class XMLPythonPickleHandler: SelectiveHandler {
    private let xml: XML
    public var acceptance: Acceptance {
        get { xml.acceptance }
        set { xml.acceptance = newValue }
    }
    private var writer: XMLPickleWriter?
    private var parser: XMLPushParser?
    private var head: ResponseHead?

    public init(options: XMLOptions = XMLOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = XML.defaultAcceptance()) {
        xml = XML(options: options, allowEmpty: allowEmpty, acceptance: acceptance)
    }

    public func prepare(_ request: inout Request) throws { try xml.prepare(&request) }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try XMLAcceptance.check(head, xml.acceptance, xml.options)
        self.head = head
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        if parser == nil {
            let options = XMLAcceptance.options(xml.options, head)
            let w = XMLPickleWriter(batched: false, keepComments: options.keepComments)
            writer = w
            parser = XMLPushParser(options: options, sink: w)
        }
        try parser!.feed(chunk)
    }

    public func finish() throws -> [UInt8]? {
        guard let parser, let writer, parser.bytesReceived > 0 else {
            try XMLAcceptance.acceptEmptyBody(allowEmpty: xml.allowEmpty, head)
            return nil
        }
        try parser.finish()
        return writer.finishDocument()
    }

    public func cleanup(failed: Bool) {
        parser = nil
        writer = nil
    }
}

/// The writer's output: bytes in memory of its own, appended without an Array's uniqueness and
/// capacity checks on every byte (about a sixth of the writer's instructions by callgrind).
struct PickleBuffer {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init() {
        capacity = 1 << 16
        base = malloc(capacity)!.assumingMemoryBound(to: UInt8.self)
    }

    func release() { free(base) }

    @inline(__always) private mutating func reserve(_ n: Int) {
        if count + n <= capacity { return }
        var c = capacity * 2
        while c < count + n { c *= 2 }
        base = realloc(base, c)!.assumingMemoryBound(to: UInt8.self)
        capacity = c
    }

    @inline(__always) mutating func append(_ a: UInt8) {
        reserve(1)
        base[count] = a
        count += 1
    }

    @inline(__always) mutating func put(_ a: UInt8, _ b: UInt8) {
        reserve(2)
        base[count] = a
        base[count + 1] = b
        count += 2
    }

    @inline(__always) mutating func put(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        reserve(4)
        base[count] = a
        base[count + 1] = b
        base[count + 2] = c
        base[count + 3] = d
        count += 4
    }

    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let from = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: from, count: bytes.count)
        count += bytes.count
    }

    static func += (buffer: inout PickleBuffer, bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
    }

    mutating func removeAll() { count = 0 }

    /// Keeps the first `n` bytes.
    mutating func truncate(to n: Int) { count = min(count, n) }

    /// A copy of the bytes from `start` on.
    func slice(from start: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: base + start, count: count - start))
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }
}

// MARK: - Entry points (include/httpcontent_binding.h)

/// The content of hc_handler_xml_pypickle_new: nil for an empty body.
/// The bytes are copied to memory of their own, lent to C until the response is freed.
final class XMLPickleContent: PickleBytes {
    init(_ bytes: [UInt8]?) {
        let copy = bytes.flatMap(mallocCopy)
        super.init(copy.map { ($0, bytes?.count ?? 0) })
    }
}

public typealias XMLBatchCallback = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafePointer<UInt8>?, Int, Int) -> Int32

@_cdecl("hc_handler_xml_pypickle_new")
public func hc_handler_xml_pypickle_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    let o = xmlSnapshot(opts)
    return retainHandle(HandlerSpec(acceptance: XML.defaultAcceptance()) { spec in
        MappedHandler(XMLPythonPickleHandler(options: xmlLimited(o.options, spec), allowEmpty: o.allowEmpty, acceptance: spec.acceptance)) {
            XMLPickleContent($0)
        }
    })
}

/// Path streaming in batches (`XMLElements` streaming into an `XMLPickleWriter`): each batch a
/// pickle of a list of Elements, handed over at HC_XML_BATCH_BYTES and at the end of every
/// received chunk; with several paths, every batch holds elements of one path.
@_cdecl("hc_handler_xml_batches_pypickle_new")
public func hc_handler_xml_batches_pypickle_new(_ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                              _ opts: OpaquePointer?, _ cb: XMLBatchCallback?,
                                              _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    xmlElementsHandle(paths, count, opts, cb) { cb, o, options in
        // Several paths: one element per batch keeps each batch to one path.
        let writer = XMLPickleWriter(batched: true, keepComments: options.keepComments,
                                     batchBytes: count > 1 ? 1 : o.batchBytes)
        writer.deliver = { index, bytes, n in
            let rc = cb(userdata, index, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, n)
            try xmlVerdict(rc, "batch")
        }
        return writer
    }
}

@_cdecl("hc_response_xml_pypickle")
public func hc_response_xml_pypickle(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                   _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    lendPickle(response, data, len, as: XMLPickleContent.self, "hc_response_xml_pypickle: the response's handler is not a pickle XML handler")
}

