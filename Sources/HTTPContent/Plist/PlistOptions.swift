/// How property lists are parsed, shared by `PlistParser` and the `Plist` handlers. Every
/// default is stated in the initializer (and pinned by a test).
public struct PlistOptions: Sendable, Equatable {
    /// The largest nesting of arrays and dictionaries accepted, 1 to `PlistOptions.depthCeiling`;
    /// deeper input is a decode error, found before libplist sees the document. Default: 512.
    public var maxDepth: Int
    /// The largest document in bytes; larger fails with `.tooLarge` (at header time when the
    /// length is declared). A plist is parsed whole (the binary format's index is at its end),
    /// so the body is held in memory up to this size. Default: 64 MiB.
    public var maxSize: Int
    /// The most values the document may expand to (every dictionary key, value and array
    /// element counts; a binary plist's shared objects count once per reference), checked
    /// before libplist builds anything; more fails with `.tooLarge`. Default: 10,000,000.
    public var maxObjects: Int
    /// At most this many leading bytes of the body are kept in a decode error. Default: 64 KiB.
    public var errorBodyLimit: Int

    /// The deepest nesting `maxDepth` may allow (libplist frees and writes trees recursively).
    public static let depthCeiling = 2048

    public init(maxDepth: Int = 512, maxSize: Int = 64 << 20, maxObjects: Int = 10_000_000,
                errorBodyLimit: Int = 64 * 1024) {
        self.maxDepth = maxDepth
        self.maxSize = maxSize
        self.maxObjects = maxObjects
        self.errorBodyLimit = errorBodyLimit
    }

    /// The media ranges plist handlers accept by default.
    public static let defaultContentTypes: [MediaRange] =
        ["application/x-plist", "application/x-bplist", "application/plist", "text/xml", "application/xml"]

    /// What the handlers send as Accept unless the request sets one.
    public static let acceptHeader =
        "application/x-plist, application/x-bplist, application/plist, application/xml;q=0.9, text/xml;q=0.9"

    func validate() throws(HTTPContentError) {
        guard maxDepth >= 1, maxDepth <= PlistOptions.depthCeiling else {
            throw HTTPContentError(.invalidArgument, "plist max depth must be 1 to \(PlistOptions.depthCeiling), not \(maxDepth)")
        }
        guard maxSize >= 1, maxSize <= Int(UInt32.max) else {
            throw HTTPContentError(.invalidArgument, "plist max size must be 1 to \(UInt32.max) bytes (libplist's limit), not \(maxSize)")
        }
        guard maxObjects >= 1 else {
            throw HTTPContentError(.invalidArgument, "plist max objects must be at least 1, not \(maxObjects)")
        }
        guard errorBodyLimit >= 0 else {
            throw HTTPContentError(.invalidArgument, "plist error body limit must not be negative")
        }
    }
}

/// The two encodings of a property list.
public enum PlistFormat: Sendable, Equatable {
    /// Apple's XML form (`<?xml ...><plist version="1.0">`), UTF-8.
    case xml
    /// The binary form (`bplist00`).
    case binary

    /// The Content-Type a request body in this format is sent with.
    public var contentType: String {
        switch self {
        case .xml: return "application/x-plist"
        case .binary: return "application/x-bplist"
        }
    }

    /// The format of a document, from its first bytes: `bplist00` is binary, anything else XML.
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> PlistFormat {
        let magic: [UInt8] = Array("bplist00".utf8)
        guard bytes.count >= magic.count else { return .xml }
        for i in 0..<magic.count where bytes[i] != magic[i] { return .xml }
        return .binary
    }
}
