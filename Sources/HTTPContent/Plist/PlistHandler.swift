/// Keeps the body as it arrives (up to `options.maxSize`, refused at header time when the
/// declared length is larger), then parses it as a property list, XML or binary, sniffed from
/// its first bytes. A plist cannot be parsed chunk by chunk: the binary format's object index
/// is at its end, and libplist reads whole documents.
///
/// Content: the value; nil for an empty body on the acceptance's empty-body statuses and methods
/// (default 204, 205 and HEAD), a 304, or (with `allowEmpty`) any empty body.
/// Default acceptance: status 200–299; types `application/x-plist`, `application/x-bplist`,
/// `application/plist`, `text/xml`, `application/xml`. Sends an Accept header naming them
/// unless the request sets one.
///
/// With a `validator` (a `JSONSchema`: see `SchemaPlistView` for how dates and data match),
/// the parsed value is validated before it is returned; a failure is a `.decode` error with
/// sub-kind "schema" (`violations`), carrying the response head and the body's first bytes.
public final class Plist: SelectiveHandler {
    public var acceptance: Acceptance
    public let options: PlistOptions
    /// An empty body on any status gives nil instead of a decode error. Default: false.
    public let allowEmpty: Bool
    /// Checks the parsed value (a `JSONSchema`). Default: none.
    public let validator: (any PlistValueValidator)?
    private var head: ResponseHead?
    private var buffer = ByteBuffer()

    /// - Throws: `.invalidArgument` for options out of range.
    public init(options: PlistOptions = PlistOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = Plist.defaultAcceptance(),
                validator: (any PlistValueValidator)? = nil) throws(HTTPContentError) {
        try options.validate()
        self.options = options
        self.allowEmpty = allowEmpty
        self.acceptance = acceptance
        self.validator = validator
    }

    /// The process-wide default status codes with the plist media types.
    public static func defaultAcceptance() -> Acceptance {
        Acceptance(statusCodes: Acceptance().statusCodes, contentTypes: PlistOptions.defaultContentTypes)
    }

    public func prepare(_ request: inout Request) throws {
        if !request.headers.contains("Accept") { request.headers.add("Accept", PlistOptions.acceptHeader) }
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        if let length = head.contentLength, !head.hasNoBodyByDefinition {
            if length > Int64(options.maxSize) {
                throw HTTPContentError(.tooLarge, "plist body of \(length) bytes exceeds the limit of \(options.maxSize) bytes",
                                       response: head)
            }
            if head.headers["content-encoding"] == nil { buffer.reserve(Int(length)) }
        }
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        if buffer.count + chunk.count > options.maxSize {
            throw HTTPContentError(.tooLarge, "plist body exceeds the limit of \(options.maxSize) bytes", response: head)
        }
        buffer.append(chunk)
    }

    public func finish() throws -> PlistValue? {
        try finish { (raw, options) throws(HTTPContentError) -> PlistValue in
            let value = try PlistParser.parse(raw, options: options)
            try validator?.check(value)
            return value
        }
    }

    /// As `finish()`, but the whole body is made into `T` by `decode` (given the body and the
    /// options; it is expected to check them as `PlistParser` does): for a binding that writes
    /// the document in its own form without a `PlistValue`. The empty-body rules and the error
    /// details (response head, first bytes of the body) are `finish()`'s. The validator is not
    /// run.
    public func finish<T>(decoding decode: (UnsafeRawBufferPointer, PlistOptions) throws(HTTPContentError) -> T) throws -> T? {
        guard buffer.count > 0 else {
            if allowEmpty { return nil }
            if let head, acceptance.allowsEmptyBody(head) || head.status == 304 || (100..<200).contains(head.status) {
                return nil
            }
            throw HTTPContentError(.decode, "the body is empty, which is not a property list (allowEmpty accepts it)",
                                   response: head, offset: 0)
        }
        do {
            let options = options
            return try buffer.withUnsafeBytes { (raw) throws(HTTPContentError) -> T in try decode(raw, options) }
        } catch let error as HTTPContentError {
            var e = error
            e.response = head
            if e.code == .decode {
                e.body = buffer.withUnsafeBytes { Array($0.prefix(options.errorBodyLimit)) }
            }
            throw e
        }
    }

    public func cleanup(failed: Bool) { buffer = ByteBuffer() }
}

/// Parses the body as a property list, then decodes `T` from it with `PlistValueDecoder`.
/// Empty bodies, options and acceptance: as `Plist` (an empty body decodes as nil only when
/// `T` is an `Optional`; otherwise it is a decode error).
public final class DecodedPlist<T: Decodable>: SelectiveHandler {
    private let plist: Plist
    public var acceptance: Acceptance {
        get { plist.acceptance }
        set { plist.acceptance = newValue }
    }

    public init(_ type: T.Type = T.self, options: PlistOptions = PlistOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = Plist.defaultAcceptance()) throws(HTTPContentError) {
        plist = try Plist(options: options, allowEmpty: allowEmpty, acceptance: acceptance)
    }

    public func prepare(_ request: inout Request) throws { try plist.prepare(&request) }
    public func accept(_ head: ResponseHead) throws -> Bool { try plist.accept(head) }
    public func consume(_ chunk: UnsafeRawBufferPointer) throws { try plist.consume(chunk) }
    public func finish() throws -> T {
        guard let value = try plist.finish() else { return try PlistValueDecoder().decodeEmpty(T.self) }
        return try value.decode(T.self)
    }
    public func cleanup(failed: Bool) { plist.cleanup(failed: failed) }
}

extension Plist {
    /// A handler that decodes `type` from the plist body: `client.get(url, handler: Plist.decoding(User.self))`.
    public static func decoding<T: Decodable>(_ type: T.Type, options: PlistOptions = PlistOptions()) throws(HTTPContentError) -> DecodedPlist<T> {
        try DecodedPlist(type, options: options)
    }
}

/// Something that checks a parsed property list (`JSONSchema` is one): throws `.decode` with
/// the reasons.
public protocol PlistValueValidator: Sendable {
    /// - Throws: `.decode` (sub-kind "schema" for a `JSONSchema`) when `value` is not valid.
    func check(_ value: PlistValue) throws(HTTPContentError)
}

extension RequestBody {
    /// A property-list body in `format`, with its Content-Type (`application/x-plist` for XML,
    /// `application/x-bplist` for binary; a Content-Type header set by the caller wins).
    /// - Throws: `.invalidArgument` for what the format cannot carry (see `PlistValue.serialized`).
    public static func plist(_ value: PlistValue, format: PlistFormat = .xml) throws(HTTPContentError) -> RequestBody {
        .bytes(try value.serialized(format: format), contentType: format.contentType)
    }
}
