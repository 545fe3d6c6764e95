/// How XML is parsed, shared by `XMLPushParser` and every XML handler. Every default is stated in
/// the initializer (and pinned by a test).
///
/// Security is not optional: the parser never loads a DTD or an external entity and never opens a
/// network connection (libxml2's `XML_PARSE_NONET`, and no `XML_PARSE_DTDLOAD`); a document that
/// references an external entity fails with `.decode`. Internal entities are expanded, bounded by
/// `maxEntityExpansion` (billion laughs, quadratic blowup), and `XML_PARSE_HUGE` is never set, so
/// libxml2's own limits (10 MB per text node, its entity-loop detection) stay on.
public struct XMLOptions: Sendable, Equatable {
    /// Keep comments as `.comment` nodes (in Python, `ET.Comment` elements). Default: false
    /// (dropped, as `ET.fromstring` does).
    public var keepComments: Bool
    /// Keep CDATA sections as `.cdata` nodes. Default: false (their text joins the surrounding
    /// text, as `ET.fromstring` gives it).
    public var keepCDATA: Bool
    /// Deepest element nesting accepted, 1...256; deeper input is a decode error. Default: 256
    /// (libxml2's own bound without `XML_PARSE_HUGE`).
    public var maxDepth: Int
    /// Maximum input size in bytes; larger input fails with `.tooLarge`. Default: nil (none).
    public var maxSize: Int?
    /// Bytes of entity replacement text a document may expand to in total, beyond its own size:
    /// each reference to an internal entity counts its replacement's length, so a billion laughs
    /// or a quadratic blowup fails with `.decode` long before memory grows. Default: 1 MiB.
    public var maxEntityExpansion: Int
    /// The character encoding to read the body in, overriding the XML declaration (a response's
    /// Content-Type charset sets it). Default: nil (the byte order mark or declaration decides,
    /// UTF-8 without either).
    public var encoding: String?
    /// At most this many leading bytes of the input are kept to attach to a decode error as its
    /// `body`. Default: 64 KiB.
    public var errorBodyLimit: Int

    public init(keepComments: Bool = false, keepCDATA: Bool = false, maxDepth: Int = 256, maxSize: Int? = nil,
                maxEntityExpansion: Int = 1 << 20, encoding: String? = nil, errorBodyLimit: Int = 64 * 1024) {
        self.keepComments = keepComments
        self.keepCDATA = keepCDATA
        self.maxDepth = maxDepth
        self.maxSize = maxSize
        self.maxEntityExpansion = maxEntityExpansion
        self.encoding = encoding
        self.errorBodyLimit = errorBodyLimit
    }

    /// The media ranges XML handlers accept by default.
    public static let defaultContentTypes: [MediaRange] = ["application/xml", "text/xml", "*/*+xml"]
}
