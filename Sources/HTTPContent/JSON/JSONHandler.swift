/// Parses the body as JSON while it arrives (each chunk goes to yajl at once, so a malformed or
/// oversized document fails at the chunk holding the bad byte) and produces a `JSONValue`.
///
/// Content: the value; nil for an empty body on the acceptance's empty-body statuses and methods
/// (default 204, 205 and HEAD), a 304 response, or (with `allowEmpty`) any empty body. An empty 200 body is a decode error by default. With
/// `options.allowMultipleValues`, the value is an array of every top-level document.
/// Default acceptance: status 200–299; types `application/json`, `text/json`,
/// `text/javascript`, `*/*+json`. Sends `Accept: application/json` unless the request sets one.
///
/// With a `validator` (a `JSONSchema`), the value is validated as the tree is built where the
/// schema allows it: when the document is an array and the schema's root has `items` or
/// `prefixItems` (and compiles to a tape program: no `unevaluated*` or `$dynamicRef`), each
/// element is checked as soon as it is complete, and the first invalid one fails the transfer
/// at once (the rest of the body is not read), with that element's violations (instance path
/// "/i/...", schema path "/items/..."; all of that element's with all errors). The finished
/// document is then validated against the rest of the schema. Otherwise (objects, other
/// schemas) the whole value is validated right after the tree completes. With first-error
/// reporting, an early failure names the first invalid element even where whole-document
/// validation would have named a top-level keyword first. Either way a failure is a `.decode`
/// error with sub-kind "schema" (`violations`), carrying the response head and the body's first
/// `errorBodyLimit` bytes like any decode error.
public final class JSON: SelectiveHandler {
    public var acceptance: Acceptance
    /// Parser limits and leniencies (depth, sizes, comments, duplicate keys...).
    public let options: JSONOptions
    /// An empty body on any status gives nil instead of a decode error. Default: false.
    public let allowEmpty: Bool
    /// Checks the finished value (a `JSONSchema`). Default: none.
    public let validator: (any JSONValueValidator)?
    private var head: ResponseHead?
    private var parser: JSONStreamParser?
    /// The body's first bytes, kept for a validation error when there is a validator.
    private var bodyHead: [UInt8] = []
    /// The validator's check while the tree is built, when it has one.
    private var streaming: (any JSONStreamingCheck)?
    /// What the last `finish` returned, until `cleanup`: its tape is the cache's product.
    var lastValue: JSONValue?

    /// A JSON tree parsed while the body arrives; `validator` checks the finished value.
    public init(options: JSONOptions = JSONOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = JSON.defaultAcceptance(), validator: (any JSONValueValidator)? = nil) {
        self.options = options
        self.allowEmpty = allowEmpty
        self.acceptance = acceptance
        self.validator = validator
    }

    /// The process-wide default status codes with the JSON media types.
    public static func defaultAcceptance() -> Acceptance {
        Acceptance(statusCodes: Acceptance().statusCodes, contentTypes: JSONOptions.defaultContentTypes)
    }

    public func prepare(_ request: inout Request) throws {
        JSONAcceptance.prepare(&request)
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try JSONAcceptance.check(head, acceptance, options)
        self.head = head
        lastValue = nil
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        let parser: JSONStreamParser
        if let p = self.parser {
            parser = p
        } else {
            parser = JSONStreamParser(options: options)
            self.parser = parser
            if !options.allowMultipleValues, let check = (validator as? any JSONStreamingValidator)?.streamingCheck() {
                streaming = check
                parser.watch(check)  // not retained there: `streaming` keeps it
            }
        }
        if validator != nil {
            let room = options.errorBodyLimit - bodyHead.count
            if room > 0 { bodyHead.append(contentsOf: chunk.prefix(room)) }
        }
        do {
            try parser.feed(chunk)
        } catch {
            throw decorated(error)
        }
    }

    public func finish() throws -> JSONValue? {
        guard let parser, parser.bytesReceived > 0 else {
            try JSONAcceptance.acceptEmptyBody(allowEmpty: allowEmpty, acceptance, head)
            return nil
        }
        let value = try parser.finish()
        if let validator {
            do {
                if let streaming { try streaming.finish(value) } else { try validator.check(value) }
            } catch {
                var e = error
                e.response = head
                e.body = bodyHead
                throw e
            }
        }
        bodyHead = []
        lastValue = value
        return value
    }

    /// A schema error with the response head and the body's first bytes, as decode errors have.
    private func decorated(_ error: HTTPContentError) -> HTTPContentError {
        guard !error.violations.isEmpty else { return error }
        var e = error
        e.response = head
        e.body = bodyHead
        return e
    }

    public func cleanup(failed: Bool) { parser = nil; bodyHead = []; streaming = nil; lastValue = nil }
}

/// Parses the body as JSON while it arrives, then decodes `T` from it with `JSONValueDecoder`.
/// Empty bodies, options and acceptance: as `JSON` (an empty body decodes as nil only when `T`
/// is an `Optional`; otherwise it is a decode error).
public final class DecodedJSON<T: Decodable>: SelectiveHandler {
    let json: JSON
    public var acceptance: Acceptance {
        get { json.acceptance }
        set { json.acceptance = newValue }
    }

    public init(_ type: T.Type = T.self, options: JSONOptions = JSONOptions(), allowEmpty: Bool = false,
                acceptance: Acceptance = JSON.defaultAcceptance()) {
        json = JSON(options: options, allowEmpty: allowEmpty, acceptance: acceptance)
    }

    public func prepare(_ request: inout Request) throws { try json.prepare(&request) }
    public func accept(_ head: ResponseHead) throws -> Bool { try json.accept(head) }
    public func consume(_ chunk: UnsafeRawBufferPointer) throws { try json.consume(chunk) }
    public func finish() throws -> T { try (json.finish() ?? .null).decode(T.self) }
    public func cleanup(failed: Bool) { json.cleanup(failed: failed) }
}

extension JSON {
    /// A handler that decodes `type` from the JSON body: `client.get(url, handler: JSON.decoding(User.self))`.
    public static func decoding<T: Decodable>(_ type: T.Type, options: JSONOptions = JSONOptions()) -> DecodedJSON<T> {
        DecodedJSON(type, options: options)
    }
}

/// A validator that can also check a document while its tree is built (`JSONSchema`).
protocol JSONStreamingValidator: JSONValueValidator {
    /// A fresh check for one document, or nil when this validator only checks finished values.
    func streamingCheck() -> (any JSONStreamingCheck)?
}

/// One document's check while its tree is built (see `JSON`), told of the containers it
/// follows as they open and close and of the elements of those that are arrays as they
/// complete. Storage and nodes are valid only during a call; throwing fails the parse at once.
protocol JSONStreamingCheck: AnyObject {
    /// A container opens: the top-level one, or a child of a container this check follows
    /// (`key`: its member name's node when `parentIsObject`, else `index` in the parent array;
    /// -1 for the top-level container).
    /// Returns whether to follow it (then `leave` is called when it closes).
    func enter(_ storage: JSONTapeStorage, isObject: Bool, key: UInt32, index: Int, parentIsObject: Bool) -> Bool
    /// From this tape node count on (`Int.max`: never), a container opening inside one this
    /// check declined makes the builder offer the declined ones again, outermost first, through
    /// `enter` (they were declined while small and have grown since).
    var reofferAt: Int { get }
    /// A followed container closed at `node`, complete.
    func leave(_ storage: JSONTapeStorage, _ node: UInt32) throws(HTTPContentError)
    /// A scalar element `index` of a followed array is complete at `node`.
    func element(_ storage: JSONTapeStorage, _ node: UInt32, _ index: Int) throws(HTTPContentError)
    /// Validates the finished document (what the checks while streaming left to do).
    func finish(_ value: JSONValue) throws(HTTPContentError)
}

/// Something that checks a finished JSON value (`JSONSchema` is one): throws `.decode` with
/// the reasons when the value is not acceptable.
public protocol JSONValueValidator: Sendable {
    func check(_ value: JSONValue) throws(HTTPContentError)
}

/// What every whole-document JSON handler does at header time: ask for JSON, refuse an
/// unacceptable response, and refuse a declared length beyond `maxSize` before any byte arrives.
package enum JSONAcceptance {
    /// `acceptance`, with the NDJSON types beside the default JSON ones when `options` allow
    /// several values one after another (which is what an NDJSON stream is).
    package static func adjusted(_ acceptance: Acceptance, _ options: JSONOptions) -> Acceptance {
        guard options.allowMultipleValues, acceptance.contentTypes == JSONOptions.defaultContentTypes else {
            return acceptance
        }
        var wider = acceptance
        wider.contentTypes = JSONOptions.multipleValuesContentTypes
        return wider
    }

    package static func prepare(_ request: inout Request) {
        if !request.headers.contains("Accept") { request.headers.add("Accept", "application/json") }
    }

    /// The rule every JSON handler applies to an empty body: fine with `allowEmpty`, for the
    /// handler's empty-body statuses and methods (`Acceptance.emptyStatusCodes`/`emptyMethods`,
    /// default 204, 205 and HEAD, as every handler), and for 304 and 1xx, which never carry one;
    /// else a decode error.
    package static func acceptEmptyBody(allowEmpty: Bool, _ acceptance: Acceptance, _ head: ResponseHead?) throws(HTTPContentError) {
        if allowEmpty { return }
        if let head, acceptance.allowsEmptyBody(head) || head.status == 304 || (100..<200).contains(head.status) {
            return
        }
        throw HTTPContentError(.decode, "the body is empty, which is not JSON (allowEmpty accepts it)",
                               response: head, offset: 0)
    }

    package static func check(_ head: ResponseHead, _ acceptance: Acceptance, _ options: JSONOptions) throws {
        try adjusted(acceptance, options).check(head)
        // A response with no body (HEAD, 204, 304...) may declare a length it does not send.
        if let maxSize = options.maxSize, let length = head.contentLength, length > Int64(maxSize),
           !head.hasNoBodyByDefinition {
            throw HTTPContentError(.tooLarge, "JSON body of \(length) bytes exceeds the limit of \(maxSize) bytes",
                                   response: head)
        }
    }
}
