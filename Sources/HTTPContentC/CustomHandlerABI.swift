import HTTPContent

/// `hc_handler_vtable`: a version, then four nullable function pointers, read from C memory
/// field by field at C's offsets (an unsigned int padded to pointer alignment, then pointers).
struct HandlerVTable {
    var version: UInt32
    var accept: (@convention(c) (UnsafeMutableRawPointer?, OpaquePointer?) -> Int32)?
    var consume: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int) -> Int32)?
    var finish: (@convention(c) (UnsafeMutableRawPointer?) -> Int32)?
    var cleanup: (@convention(c) (UnsafeMutableRawPointer?, Int32) -> Void)?

    init(from raw: UnsafeRawPointer) {
        let p = MemoryLayout<UnsafeRawPointer>.stride
        version = raw.load(as: UInt32.self)
        accept = raw.load(fromByteOffset: p, as: type(of: accept))
        consume = raw.load(fromByteOffset: 2 * p, as: type(of: consume))
        finish = raw.load(fromByteOffset: 3 * p, as: type(of: finish))
        cleanup = raw.load(fromByteOffset: 4 * p, as: type(of: cleanup))
    }
}

/// A handler written in C (or Python through ctypes): the library's acceptance settings apply
/// first, then the caller's callbacks. Its content is nothing: the caller's state is its own.
final class CustomHandler: ContentHandler {
    let vtable: HandlerVTable
    let userdata: UnsafeMutableRawPointer?
    let acceptance: Acceptance

    init(vtable: HandlerVTable, userdata: UnsafeMutableRawPointer?, acceptance: Acceptance) {
        self.vtable = vtable
        self.userdata = userdata
        self.acceptance = acceptance
    }

    func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        guard let accept = vtable.accept else { return true }
        // The head is lent as a response (status, headers, URL) for the duration of the call.
        let box = ResponseBox(Response<Any>(head: head, content: (), metrics: TransferMetrics()))
        let rc = withExtendedLifetime(box) {
            accept(userdata, OpaquePointer(Unmanaged.passUnretained(box).toOpaque()))
        }
        if rc == 0 { return true }
        var error = callbackError("handler's accept callback", rc)
        if error.code == .unacceptableStatus { error.message = "\(head.statusLine) (rejected by the handler)" }
        error.response = head
        throw error
    }

    func consume(_ chunk: UnsafeRawBufferPointer) throws {
        guard let consume = vtable.consume else { return }
        let rc = consume(userdata, chunk.baseAddress?.assumingMemoryBound(to: UInt8.self), chunk.count)
        if rc != 0 { throw callbackError("handler's consume callback", rc) }
    }

    func finish() throws {
        guard let finish = vtable.finish else { return }
        let rc = finish(userdata)
        if rc != 0 { throw callbackError("handler's finish callback", rc) }
    }

    func cleanup(failed: Bool) {
        vtable.cleanup?(userdata, failed ? 1 : 0)
    }
}

@_cdecl("hc_handler_custom_new")
public func hc_handler_custom_new(_ vtable: UnsafeRawPointer?, _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    guard let vtable else {
        nullArgument("vtable")
        return nil
    }
    guard vtable.load(as: UInt32.self) == 1 else {
        fail(.invalidArgument, "hc_handler_custom_new: vtable version \(vtable.load(as: UInt32.self)) is not HC_HANDLER_VTABLE_VERSION (1)")
        return nil
    }
    let copy = HandlerVTable(from: vtable)
    return retainHandle(HandlerSpec { CustomHandler(vtable: copy, userdata: userdata, acceptance: $0.acceptance) })
}
