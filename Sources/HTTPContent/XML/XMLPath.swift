/// One step of an element path: a local name in any namespace (`entry`), a name in one namespace
/// (`{http://www.w3.org/2005/Atom}entry`), in none (`{}entry`), or any element (`*`).
public struct XMLPathStep: Sendable, Equatable, CustomStringConvertible {
    public let name: String
    /// nil: any namespace; "": no namespace.
    public let namespace: String?

    public init(_ text: String) {
        if text.hasPrefix("{"), let close = text.firstIndex(of: "}") {
            namespace = String(text[text.index(after: text.startIndex)..<close])
            name = String(text[text.index(after: close)...])
        } else {
            namespace = nil
            name = text
        }
    }

    public func matches(_ local: String, _ ns: String?) -> Bool {
        if name != "*" && name != local { return false }
        guard let namespace else { return true }
        return namespace == (ns ?? "")
    }

    /// The same test on libxml2's NUL-terminated names, without making Strings.
    func matches(_ local: UnsafePointer<UInt8>, _ ns: UnsafePointer<UInt8>?) -> Bool {
        if name != "*" && !equal(name, local) { return false }
        guard let namespace else { return true }
        guard let ns else { return namespace.isEmpty }
        return equal(namespace, ns)
    }

    private func equal(_ s: String, _ p: UnsafePointer<UInt8>) -> Bool {
        var s = s
        return s.withUTF8 { u in
            for i in 0..<u.count where p[i] != u[i] { return false }
            return p[u.count] == 0
        }
    }

    public var description: String {
        guard let namespace else { return name }
        return "{\(namespace)}\(name)"
    }
}

/// An element path from the root element: steps separated by `/` (`feed/entry`,
/// `{http://www.sitemaps.org/schemas/sitemap/0.9}urlset/url`, `rss/channel/item`). A leading `/`
/// is allowed. Slashes inside `{...}` belong to the namespace.
public struct XMLPath: Sendable, Equatable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let steps: [XMLPathStep]

    public init(_ text: String) {
        var steps: [XMLPathStep] = []
        var current = ""
        var inBraces = false
        for c in text {
            if c == "{" { inBraces = true }
            if c == "}" { inBraces = false }
            if c == "/" && !inBraces {
                if !current.isEmpty { steps.append(XMLPathStep(current)) }
                current = ""
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { steps.append(XMLPathStep(current)) }
        self.steps = steps
    }

    public init(stringLiteral value: String) { self.init(value) }

    public var description: String { steps.map(\.description).joined(separator: "/") }
}

/// Follows the element stack against several paths and hands every event inside a matching
/// element to `capture`; everything else is dropped as it is read (no text is copied).
package final class XMLPathMatcher: XMLEventSink {
    /// Receives the events of one matching element at a time; `done(path:)` when it has ended.
    package typealias Capture = XMLEventSink & XMLCaptureEnd

    let paths: [XMLPath]
    private let capture: any Capture
    private let limit: Int?
    // Unchecked exclusivity: touched at every start and end tag, never reentrantly (the dynamic
    // checks were a tenth of the matcher's and writer's instructions by callgrind).
    /// For each path: how many of its leading steps the open elements match.
    @exclusivity(unchecked) private var matched: [Int]
    /// The path being captured and the depth of its element, while inside one.
    @exclusivity(unchecked) private var active: (path: Int, depth: Int)?
    @exclusivity(unchecked) private(set) var delivered = 0

    package init(paths: [XMLPath], limit: Int?, capture: any Capture) throws(HTTPContentError) {
        guard !paths.isEmpty, paths.count <= 64 else {
            throw HTTPContentError(.invalidArgument, "give 1 to 64 element paths (got \(paths.count))")
        }
        for path in paths where path.steps.isEmpty {
            throw HTTPContentError(.invalidArgument, "an element path needs at least one step")
        }
        if let limit, limit < 1 { throw HTTPContentError(.invalidArgument, "limit must be at least 1") }
        self.paths = paths
        self.limit = limit
        self.capture = capture
        matched = Array(repeating: 0, count: paths.count)
    }

    package func start(_ tag: XMLStartTag, depth: Int) throws {
        if active != nil {
            try capture.start(tag, depth: depth)
            return
        }
        for i in paths.indices where matched[i] == depth - 1 && depth <= paths[i].steps.count {
            guard paths[i].steps[depth - 1].matches(tag.localname, tag.uri) else { continue }
            matched[i] = depth
            if depth == paths[i].steps.count && active == nil {
                active = (i, depth)
                try capture.start(tag, depth: depth)
            }
        }
    }

    package func text(_ bytes: UnsafeBufferPointer<UInt8>, cdata: Bool) throws {
        if active != nil { try capture.text(bytes, cdata: cdata) }
    }

    package func comment(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        if active != nil { try capture.comment(bytes) }
    }

    package func end(depth: Int) throws {
        for i in matched.indices where matched[i] == depth { matched[i] = depth - 1 }
        guard let (path, at) = active else { return }
        try capture.end(depth: depth)
        if depth == at {
            active = nil
            delivered += 1
            try capture.done(path: path)
            if let limit, delivered >= limit { throw StopTransfer() }
        }
    }
}

/// Told when a captured element is complete.
package protocol XMLCaptureEnd: AnyObject {
    func done(path: Int) throws
}

/// What `XMLElements` streams into: a path matcher's capture, told when each received chunk has
/// been parsed (after a parse failure too, and at the end), where a capture that hands elements
/// over in batches does so. Throwing `StopTransfer` there stops the transfer with success.
package protocol XMLStreamCapture: XMLEventSink, XMLCaptureEnd {
    func chunkParsed() throws
}
