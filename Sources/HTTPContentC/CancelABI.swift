import HTTPContent

@_cdecl("hc_cancel_new")
public func hc_cancel_new() -> OpaquePointer? {
    retainHandle(CancelToken())
}

@_cdecl("hc_cancel_cancel")
public func hc_cancel_cancel(_ token: OpaquePointer?) -> Int32 {
    guard let token = borrowHandle(token, as: CancelToken.self) else { return nullArgument("token") }
    token.cancel()
    return HC_OK
}

@_cdecl("hc_cancel_is_cancelled")
public func hc_cancel_is_cancelled(_ token: OpaquePointer?) -> Int32 {
    (borrowHandle(token, as: CancelToken.self)?.isCancelled ?? false) ? 1 : 0
}

@_cdecl("hc_cancel_free")
public func hc_cancel_free(_ token: OpaquePointer?) {
    releaseHandle(token, as: CancelToken.self)
}
