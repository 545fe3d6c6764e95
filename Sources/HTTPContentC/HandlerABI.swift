import HTTPContent

/// An `hc_handler`: how to handle a body, not the handling itself. Every send asks it for a
/// fresh Swift handler, so one hc_handler can serve many requests, in sequence or at once.
final class HandlerSpec {
    /// Makes the Swift handler for one transfer, given the acceptance configured here.
    let factory: (Acceptance) -> any ContentHandler
    var acceptance: Acceptance

    init(acceptance: Acceptance = Acceptance(), factory: @escaping (Acceptance) -> any ContentHandler) {
        self.acceptance = acceptance
        self.factory = factory
    }

    func make() -> any ContentHandler { factory(acceptance) }
}

@_cdecl("hc_handler_discard_new")
public func hc_handler_discard_new() -> OpaquePointer? {
    retainHandle(HandlerSpec { Discard(acceptance: $0) })
}

@_cdecl("hc_handler_bytes_new")
public func hc_handler_bytes_new(_ maxSize: Int) -> OpaquePointer? {
    let limit = maxSize > 0 ? maxSize : nil
    return retainHandle(HandlerSpec { Bytes(maxSize: limit, acceptance: $0) })
}

@_cdecl("hc_handler_free")
public func hc_handler_free(_ handler: OpaquePointer?) {
    releaseHandle(handler, as: HandlerSpec.self)
}

@_cdecl("hc_handler_accept_any_status")
public func hc_handler_accept_any_status(_ handler: OpaquePointer?) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    spec.acceptance.statusCodes = []
    return HC_OK
}

@_cdecl("hc_handler_accept_status")
public func hc_handler_accept_status(_ handler: OpaquePointer?, _ low: Int32, _ high: Int32) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard low <= high, low >= 100, high <= 999 else {
        return fail(.invalidArgument, "hc_handler_accept_status: \(low)-\(high) is not a range of status codes")
    }
    spec.acceptance.statusCodes.append(Int(low)...Int(high))
    return HC_OK
}

@_cdecl("hc_handler_accept_type")
public func hc_handler_accept_type(_ handler: OpaquePointer?, _ range: UnsafePointer<CChar>?) -> Int32 {
    guard let spec = borrowHandle(handler, as: HandlerSpec.self) else { return nullArgument("handler") }
    guard let text = string(range) else { return nullArgument("media_range") }
    guard let parsed = MediaRange(parsing: text) else {
        return fail(.invalidArgument, "hc_handler_accept_type: \"\(text)\" is not a media range")
    }
    spec.acceptance.contentTypes.append(parsed)
    return HC_OK
}
