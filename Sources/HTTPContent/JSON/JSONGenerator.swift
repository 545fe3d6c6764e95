import CYajl

/// Writes JSON text with yajl_gen: from a `JSONValue` (iteratively, no recursion), or event by
/// event (the path-streaming batches).
///
/// Numbers are written from their text (`.int` in decimal, `.double` as the shortest text that
/// reads back exactly, `.number` as kept), so nothing is rounded. NaN and infinities are refused.
/// yajl_gen cannot nest deeper than 127 levels (it refuses the container that would reach
/// `YAJL_MAX_DEPTH`, 128): deeper values are refused with `.invalidArgument`.
public final class JSONGenerator {
    /// The deepest nesting yajl_gen writes: one less than its fixed `YAJL_MAX_DEPTH` (128), as
    /// yajl_gen fails the open that brings its depth to YAJL_MAX_DEPTH.
    public static let maxDepth = Int(YAJL_MAX_DEPTH) - 1

    private let gen: yajl_gen?
    @exclusivity(unchecked) private var depth = 0

    /// - Parameter pretty: indent with two spaces and put each member on its own line.
    public init(pretty: Bool = false) {
        gen = yajl_gen_alloc(nil)
        if let gen, pretty {
            _ = hc_yajl_gen_config_int(gen, yajl_gen_beautify, 1)
            // yajl keeps the indent pointer (no copy): static storage.
            let indent: StaticString = "  "
            _ = UnsafeRawPointer(indent.utf8Start).withMemoryRebound(to: CChar.self, capacity: 3) {
                hc_yajl_gen_config_str(gen, yajl_gen_indent_string, $0)
            }
        }
    }

    deinit { if let gen { yajl_gen_free(gen) } }

    /// The JSON text of `value`.
    /// - Throws: `.invalidArgument` for NaN, infinities, a `.number` whose text is not a JSON
    ///   number, or nesting deeper than `maxDepth`.
    public static func serialize(_ value: JSONValue, pretty: Bool = false) throws(HTTPContentError) -> [UInt8] {
        let g = JSONGenerator(pretty: pretty)
        try g.write(value)
        return g.withOutput { Array($0) }
    }

    // MARK: - Output

    /// Lends the text generated so far (valid only inside `body`).
    public func withOutput<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        var p: UnsafePointer<UInt8>? = nil
        var n = 0
        if let gen { _ = yajl_gen_get_buf(gen, &p, &n) }
        return try body(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// Forgets the output and the state, ready for a new document.
    public func reset() {
        guard let gen else { return }
        yajl_gen_clear(gen)
        yajl_gen_reset(gen, nil)
        depth = 0
    }

    /// Forgets the output but keeps the state: what is written next continues the text.
    public func clearOutput() {
        guard let gen else { return }
        yajl_gen_clear(gen)
    }

    /// Bytes generated so far.
    public var outputSize: Int { withOutput { $0.count } }

    // MARK: - Values

    /// Appends `value` (a whole value, or an element/member value inside an open container).
    public func write(_ value: JSONValue) throws(HTTPContentError) {
        // A work list of pending steps instead of recursion.
        enum Step {
            case value(JSONValue)
            case key(String)
            case endArray
            case endMap
        }
        var work: [Step] = [.value(value)]
        while let step = work.popLast() {
            switch step {
            case .key(let k): try key(k)
            case .endArray: try endArray()
            case .endMap: try endMap()
            case .value(let v):
                switch v {
                case .array(let a):
                    try startArray()
                    work.append(.endArray)
                    for element in a.reversed() { work.append(.value(element)) }
                case .object(let o):
                    try startMap()
                    work.append(.endMap)
                    for member in o.reversed() {
                        work.append(.value(member.value))
                        work.append(.key(member.key))
                    }
                default:
                    try scalar(v)
                }
            }
        }
    }

    /// Appends a scalar (not an array or object).
    public func scalar(_ value: JSONValue) throws(HTTPContentError) {
        switch value {
        case .null: try check(yajl_gen_null(gen))
        case .bool(let b): try check(yajl_gen_bool(gen, b ? 1 : 0))
        case .int(let i): try number(String(i))
        case .double(let d):
            guard d.isFinite else {
                throw HTTPContentError(.invalidArgument, "\(d) cannot be written as JSON (NaN and infinities are not JSON numbers)")
            }
            try number(JSONNumberText.format(d))
        case .number(let text):
            guard JSONNumberText.isValid(text) else {
                throw HTTPContentError(.invalidArgument, "\"\(text)\" is not a JSON number")
            }
            try number(text)
        case .string(let s): try string(s)
        case .array, .object:
            throw HTTPContentError(.invalidArgument, "scalar(_:) given a container")
        }
    }

    // MARK: - Events

    public func startArray() throws(HTTPContentError) {
        try check(yajl_gen_array_open(gen))
        depth += 1
    }

    public func endArray() throws(HTTPContentError) {
        try check(yajl_gen_array_close(gen))
        depth -= 1
    }

    public func startMap() throws(HTTPContentError) {
        try check(yajl_gen_map_open(gen))
        depth += 1
    }

    public func endMap() throws(HTTPContentError) {
        try check(yajl_gen_map_close(gen))
        depth -= 1
    }

    public func key(_ key: String) throws(HTTPContentError) { try string(key) }

    public func string(_ s: String) throws(HTTPContentError) {
        var s = s
        let status = s.withUTF8 { yajl_gen_string(gen, $0.baseAddress, $0.count) }
        try check(status)
    }

    /// Appends raw UTF-8 string bytes (escaped as needed).
    func string(bytes: UnsafeRawBufferPointer) throws(HTTPContentError) {
        try check(yajl_gen_string(gen, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count))
    }

    /// Appends a number token as it is: the caller guarantees it is valid JSON.
    func number(token: UnsafeRawBufferPointer) throws(HTTPContentError) {
        try check(yajl_gen_number(gen, token.baseAddress?.assumingMemoryBound(to: CChar.self), token.count))
    }

    private func number(_ text: String) throws(HTTPContentError) {
        var t = text
        let status = t.withUTF8 { buf in
            buf.withMemoryRebound(to: CChar.self) { yajl_gen_number(gen, $0.baseAddress, $0.count) }
        }
        try check(status)
    }

    public func null() throws(HTTPContentError) { try check(yajl_gen_null(gen)) }
    public func bool(_ b: Bool) throws(HTTPContentError) { try check(yajl_gen_bool(gen, b ? 1 : 0)) }

    private func check(_ status: yajl_gen_status) throws(HTTPContentError) {
        guard gen != nil else { throw HTTPContentError(.invalidArgument, "yajl could not allocate a generator") }
        switch status {
        case yajl_gen_status_ok:
            return
        case yajl_max_depth_exceeded:
            throw HTTPContentError(.invalidArgument,
                "JSON nested deeper than \(JSONGenerator.maxDepth) levels cannot be generated (yajl_gen's YAJL_MAX_DEPTH)")
        case yajl_gen_keys_must_be_strings:
            throw HTTPContentError(.invalidArgument, "JSON object keys must be strings")
        case yajl_gen_generation_complete:
            throw HTTPContentError(.invalidArgument, "a complete JSON value was already generated")
        case yajl_gen_invalid_number:
            throw HTTPContentError(.invalidArgument, "NaN and infinities are not JSON numbers")
        case yajl_gen_invalid_string:
            throw HTTPContentError(.invalidArgument, "a string is not valid UTF-8")
        default:
            throw HTTPContentError(.invalidArgument, "yajl_gen failed (status \(status.rawValue))")
        }
    }
}

extension JSONValue {
    /// The JSON text of this value.
    /// - Throws: `.invalidArgument` for NaN/infinities or nesting beyond `JSONGenerator.maxDepth`.
    public func serialized(pretty: Bool = false) throws(HTTPContentError) -> [UInt8] {
        try JSONGenerator.serialize(self, pretty: pretty)
    }
}

extension RequestBody {
    /// A JSON request body (`Content-Type: application/json`).
    /// - Throws: `.invalidArgument` when the value cannot be written (NaN, too deep).
    public static func json(_ value: JSONValue) throws(HTTPContentError) -> RequestBody {
        .bytes(try value.serialized(), contentType: "application/json")
    }
}
