/// Which responses a handler takes the body of: acceptable status codes and content types,
/// decided at header time.
public struct Acceptance: Sendable, Equatable {
    /// The rules live in one shared, copy-on-write box: every handler made for a request copies
    /// its acceptance, and each copy is one reference, not four.
    private final class Storage: CopyOnWriteStorage, @unchecked Sendable {
        var statusCodes: [ClosedRange<Int>]
        var contentTypes: [MediaRange]
        var emptyStatusCodes: Set<Int> = [204, 205]
        var emptyMethods: Set<String> = ["HEAD"]

        init(statusCodes: [ClosedRange<Int>], contentTypes: [MediaRange]) {
            self.statusCodes = statusCodes
            self.contentTypes = contentTypes
        }

        func copy() -> Storage {
            let other = Storage(statusCodes: statusCodes, contentTypes: contentTypes)
            other.emptyStatusCodes = emptyStatusCodes
            other.emptyMethods = emptyMethods
            return other
        }
    }

    private var box: CopyOnWrite<Storage>

    /// Acceptable status codes as ranges; empty accepts any code.
    public var statusCodes: [ClosedRange<Int>] {
        get { box.value.statusCodes }
        set { box.unique.statusCodes = newValue }
    }
    /// Acceptable media ranges; empty accepts any type (and a missing Content-Type).
    public var contentTypes: [MediaRange] {
        get { box.value.contentTypes }
        set { box.unique.contentTypes = newValue }
    }
    /// Status codes whose empty body is empty content, not an error, for every handler
    /// (Alamofire's emptyResponseCodes). Default: 204, 205.
    public var emptyStatusCodes: Set<Int> {
        get { box.value.emptyStatusCodes }
        set { box.unique.emptyStatusCodes = newValue }
    }
    /// Request methods whose empty body is empty content (emptyRequestMethods). Default: HEAD.
    public var emptyMethods: Set<String> {
        get { box.value.emptyMethods }
        set { box.unique.emptyMethods = newValue }
    }

    public static func == (a: Acceptance, b: Acceptance) -> Bool {
        a.box.isSame(as: b.box)
            || (a.statusCodes == b.statusCodes && a.contentTypes == b.contentTypes
                && a.emptyStatusCodes == b.emptyStatusCodes && a.emptyMethods == b.emptyMethods)
    }

    /// The process-wide defaults (status 200–299, any type), read when a handler is created.
    public init() {
        self = Acceptance.defaults.withLock { $0 }
    }

    /// Exactly these statuses (none: any) and media ranges (none: any type).
    public init(statusCodes: [ClosedRange<Int>], contentTypes: [MediaRange] = []) {
        box = CopyOnWrite(Storage(statusCodes: statusCodes, contentTypes: contentTypes))
    }

    /// Any status, any type.
    public static let anything = Acceptance(statusCodes: [], contentTypes: [])

    /// 200–299, any type: the library's built-in default.
    public static let builtInDefault = Acceptance(statusCodes: [200...299], contentTypes: [])

    private static let defaults = Locked(Acceptance.builtInDefault)

    /// Changes the default status codes for handlers created from now on (hotpotato's
    /// `setDefaultAcceptableResponses:`).
    public static func setDefaultStatusCodes(_ codes: [ClosedRange<Int>]) {
        defaults.withLock { $0.statusCodes = codes }
    }

    /// Changes the default content types for handlers created from now on, for handlers whose
    /// own default is "any type".
    public static func setDefaultContentTypes(_ types: [MediaRange]) {
        defaults.withLock { $0.contentTypes = types }
    }

    /// Back to the built-in defaults (200–299, any type).
    public static func resetDefaults() {
        defaults.withLock { $0 = builtInDefault }
    }

    /// Whether an empty body is a legitimate empty result for this response, rather than a
    /// missing body (a JSON or image handler then returns empty content instead of failing).
    public func allowsEmptyBody(_ head: ResponseHead) -> Bool {
        emptyStatusCodes.contains(head.status) || emptyMethods.contains(head.method) || head.isUnfollowedRedirect
    }

    /// Whether `status` is among the accepted codes.
    public func acceptsStatus(_ status: Int) -> Bool {
        if statusCodes.isEmpty { return true }
        for range in statusCodes where range.lowerBound <= status && status <= range.upperBound {
            return true
        }
        return false
    }

    /// Whether a body of media type `type` (nil: no Content-Type) is accepted; an empty body
    /// needs no type.
    public func acceptsType(_ type: MediaType?, bodyIsEmpty: Bool) -> Bool {
        if contentTypes.isEmpty { return true }
        guard let type else { return bodyIsEmpty }
        return contentTypes.contains { $0.matches(type) }
    }

    /// Throws `.unacceptableStatus` or `.unacceptableContentType` for a response this acceptance
    /// refuses. A redirect the request said not to follow (`ResponseHead.isUnfollowedRedirect`)
    /// is the answer asked for: the built-in status codes (200–299) take it, whatever its type.
    public func check(_ head: ResponseHead) throws(HTTPContentError) {
        if head.isUnfollowedRedirect, statusCodes == Acceptance.builtInDefault.statusCodes { return }
        if !acceptsStatus(head.status) {
            throw HTTPContentError.unacceptableStatus(head)
        }
        if !contentTypes.isEmpty, !acceptsType(head.contentType, bodyIsEmpty: head.bodyIsEmpty) {
            let got = head.headers["content-type"].map { "\"\($0)\"" } ?? "no Content-Type"
            let wanted = contentTypes.map(\.description).joined(separator: ", ")
            throw HTTPContentError(.unacceptableContentType,
                                   "\(got) is not acceptable (wanted \(wanted))", response: head)
        }
    }
}
