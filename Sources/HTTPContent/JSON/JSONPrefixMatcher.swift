/// Matches parse events against prefixes and hands each matching value's events to a capture
/// sink, so only the value being captured is ever held. Up to 64 prefixes, none inside another.
///
/// A prefix *closes* when the container that could still hold its values ends: the array at its
/// first `item`, or the object holding its last member (the top-level value for `""`).
/// Receives the events of one value a prefix matched, then `end` (see `JSONPrefixMatcher`).
package protocol JSONItemCapture: JSONEventSink {
    func begin(prefix: Int) throws
    func end() throws
}

final class JSONPrefixMatcher: JSONEventSink {
    typealias Capture = JSONItemCapture

    private struct Frame {
        /// Prefixes whose first `depth` components match this container's path.
        var candidates: UInt64
        /// Prefixes that may match the next child (refined at each key).
        var childCandidates: UInt64
    }

    let prefixes: [JSONPrefix]
    private let keyBytes: [[[UInt8]?]]
    private let all: UInt64
    private let lengthAt: [UInt64]
    private let itemAt: [UInt64]
    private let keyAt: [UInt64]
    private let closeAt: [UInt64]
    private let rootCloses: UInt64

    private let capture: any Capture
    /// The capture's tree builder when it is a `TreeCapture`: the events of a captured value go
    /// to it directly, without the protocol's dynamic dispatch (path streaming's hot path).
    /// Unretained (the capture keeps it): binding a strong reference would retain it per event.
    let tree: Unmanaged<JSONTreeBuilder>?
    /// The capture itself when it is a `TreeCapture` (unretained, as `tree`): its `begin` and
    /// `end`, once per value, are called without the protocol's dynamic dispatch.
    private let treeCapture: Unmanaged<TreeCapture>?
    private let multipleValues: Bool
    private let limit: Int?
    private let stopWhenClosed: Bool
    private let requirePrefixes: Bool

    @exclusivity(unchecked) private var frames: [Frame] = []
    @exclusivity(unchecked) private var capturing = false
    @exclusivity(unchecked) private var captureNesting = 0
    @exclusivity(unchecked) private(set) var seen: UInt64 = 0
    @exclusivity(unchecked) private(set) var closed: UInt64 = 0
    /// Values delivered so far.
    @exclusivity(unchecked) private(set) var delivered = 0
    /// Set when the matcher asked to stop (limit reached, or every prefix closed).
    private(set) var stopped = false

    init(prefixes: [JSONPrefix], capture: any Capture, multipleValues: Bool, limit: Int?,
         stopWhenClosed: Bool, requirePrefixes: Bool) throws(HTTPContentError) {
        guard !prefixes.isEmpty, prefixes.count <= 64 else {
            throw HTTPContentError(.invalidArgument, "path streaming needs 1 to 64 prefixes (got \(prefixes.count))")
        }
        for (i, p) in prefixes.enumerated() {
            for (j, q) in prefixes.enumerated() where i != j && p.contains(q) {
                throw HTTPContentError(.invalidArgument,
                    "prefix \"\(q)\" lies inside prefix \"\(p)\": prefixes must not overlap")
            }
        }
        if let limit, limit < 1 { throw HTTPContentError(.invalidArgument, "the item limit must be at least 1") }
        self.prefixes = prefixes
        self.capture = capture
        treeCapture = (capture as? TreeCapture).map { Unmanaged.passUnretained($0) }
        tree = treeCapture.map { Unmanaged.passUnretained($0._withUnsafeGuaranteedRef { $0.builder }) }
        self.multipleValues = multipleValues
        self.limit = limit
        self.stopWhenClosed = stopWhenClosed
        self.requirePrefixes = requirePrefixes
        all = prefixes.count == 64 ? ~0 : (1 << UInt64(prefixes.count)) - 1
        keyBytes = prefixes.map { $0.components.map { if case .key(let k) = $0 { return Array(k.utf8) } else { return nil } } }
        let longest = prefixes.map(\.components.count).max() ?? 0
        var lengthAt = [UInt64](repeating: 0, count: longest + 2)
        var itemAt = lengthAt, keyAt = lengthAt, closeAt = lengthAt
        var rootCloses: UInt64 = 0
        for (i, p) in prefixes.enumerated() {
            let bit: UInt64 = 1 << UInt64(i)
            let n = p.components.count
            lengthAt[n] |= bit
            for (d, c) in p.components.enumerated() {
                if c == .item { itemAt[d] |= bit } else { keyAt[d] |= bit }
            }
            if n == 0 {
                rootCloses |= bit
            } else {
                let firstItem = p.components.firstIndex(of: .item) ?? (n - 1)
                closeAt[min(firstItem, n - 1)] |= bit
            }
        }
        self.lengthAt = lengthAt
        self.itemAt = itemAt
        self.keyAt = keyAt
        self.closeAt = closeAt
        self.rootCloses = rootCloses
    }

    /// The tree builder while a value is being captured into it: its scalars and member names
    /// go there directly (see `YajlParser`'s matcher table).
    @inline(__always)
    var capturingTree: Unmanaged<JSONTreeBuilder>? { capturing ? tree : nil }

    @inline(__always)
    private func mask(_ table: [UInt64], _ d: Int) -> UInt64 { d < table.count ? table[d] : 0 }

    /// Candidates for a value starting now.
    @inline(__always)
    private var valueCandidates: UInt64 { frames.last?.childCandidates ?? all }

    // MARK: - Events

    func null() throws {
        if capturing, let tree { return try tree._withUnsafeGuaranteedRef { try $0.null() } }
        try scalar { try $0.null() }
    }
    func bool(_ value: Bool) throws {
        if capturing, let tree { return try tree._withUnsafeGuaranteedRef { try $0.bool(value) } }
        try scalar { try $0.bool(value) }
    }
    func number(_ token: UnsafeRawBufferPointer) throws {
        if capturing, let tree { return try tree._withUnsafeGuaranteedRef { try $0.number(token) } }
        try scalar { try $0.number(token) }
    }
    func string(_ bytes: UnsafeRawBufferPointer) throws {
        if capturing, let tree { return try tree._withUnsafeGuaranteedRef { try $0.string(bytes) } }
        try scalar { try $0.string(bytes) }
    }

    func mapKey(_ bytes: UnsafeRawBufferPointer) throws {
        if capturing {
            if let tree { return try tree._withUnsafeGuaranteedRef { try $0.mapKey(bytes) } }
            return try capture.mapKey(bytes)
        }
        let d = frames.count - 1
        guard d >= 0 else { return }
        let candidates = frames[d].candidates & mask(keyAt, d)
        var matched: UInt64 = 0
        if candidates != 0 {
            var bits = candidates
            while bits != 0 {
                let i = bits.trailingZeroBitCount
                bits &= bits - 1
                if let key = keyBytes[i][d], key.count == bytes.count,
                   key.withUnsafeBytes({ $0.elementsEqual(bytes) }) {
                    matched |= 1 << UInt64(i)
                }
            }
        }
        frames[d].childCandidates = matched
    }

    func startMap() throws { try open(isArray: false) }
    func startArray() throws { try open(isArray: true) }
    func endMap() throws { try close(isArray: false) }
    func endArray() throws { try close(isArray: true) }

    @inline(__always)
    private func scalar(_ forward: (any Capture) throws -> Void) throws {
        if capturing { return try forward(capture) }
        let d = frames.count
        let full = valueCandidates & mask(lengthAt, d)
        if full != 0 {
            try begin(full)
            try forward(capture)
            try endCapture()
        }
        if d == 0 { try documentEnded() }
    }

    private func open(isArray: Bool) throws {
        if capturing {
            captureNesting += 1
            if let tree { return try tree._withUnsafeGuaranteedRef { try isArray ? $0.startArray() : $0.startMap() } }
            return try isArray ? capture.startArray() : capture.startMap()
        }
        let d = frames.count
        let candidates = valueCandidates
        let full = candidates & mask(lengthAt, d)
        if full != 0 {
            try begin(full)
            captureNesting = 1
            if let tree { return try tree._withUnsafeGuaranteedRef { try isArray ? $0.startArray() : $0.startMap() } }
            return try isArray ? capture.startArray() : capture.startMap()
        }
        var child: UInt64 = 0
        if isArray {
            child = candidates & mask(itemAt, d)
            // An array where an `item` prefix ends: the prefix is present, even if empty.
            seen |= child & mask(lengthAt, d + 1)
        }
        frames.append(Frame(candidates: candidates, childCandidates: child))
    }

    private func close(isArray: Bool) throws {
        if capturing {
            if let tree {
                try tree._withUnsafeGuaranteedRef { try isArray ? $0.endArray() : $0.endMap() }
            } else {
                try isArray ? capture.endArray() : capture.endMap()
            }
            captureNesting -= 1
            if captureNesting == 0 {
                try endCapture()
                if frames.isEmpty { try documentEnded() }
            }
            return
        }
        guard let frame = frames.popLast() else { return }
        let d = frames.count
        let closing = frame.candidates & mask(closeAt, d)
        if closing != 0 { try prefixesClosed(closing) }
        if d == 0 { try documentEnded() }
    }

    /// The parser gave a captured value's events to the tree builder directly (see
    /// `YajlParser.enterCaptureIfStarted`) and its last container just closed: what `close`
    /// does when the capture's nesting ends.
    func capturedValueClosed() throws {
        try endCapture()
        if frames.isEmpty { try documentEnded() }
    }

    // MARK: - Captures and closing

    private func begin(_ full: UInt64) throws {
        let index = full.trailingZeroBitCount
        seen |= 1 << UInt64(index)
        capturing = true
        if let treeCapture { return treeCapture._withUnsafeGuaranteedRef { $0.begin(prefix: index) } }
        try capture.begin(prefix: index)
    }

    private func endCapture() throws {
        capturing = false
        captureNesting = 0
        delivered += 1
        if let treeCapture {
            try treeCapture._withUnsafeGuaranteedRef { try $0.end() }
        } else {
            try capture.end()
        }
        if let limit, delivered >= limit {
            stopped = true
            throw StopTransfer()
        }
    }

    private func documentEnded() throws {
        if !multipleValues, rootCloses != 0 { try prefixesClosed(rootCloses) }
    }

    private func prefixesClosed(_ bits: UInt64) throws {
        closed |= bits
        if requirePrefixes, case let missing = bits & ~seen, missing != 0 {
            throw missingError(missing)
        }
        if stopWhenClosed, closed == all {
            stopped = true
            throw StopTransfer()
        }
    }

    func missingError(_ missing: UInt64) -> HTTPContentError {
        let names = (0..<prefixes.count).filter { missing & (1 << UInt64($0)) != 0 }.map { "\"\(prefixes[$0])\"" }
        return HTTPContentError(.decode, "the JSON document has no value at prefix \(names.joined(separator: ", "))")
    }

    /// At the end of the input: every prefix not seen is missing (when required).
    func finish() throws(HTTPContentError) {
        if requirePrefixes, !stopped, case let missing = all & ~seen, missing != 0 {
            throw missingError(missing)
        }
    }
}
