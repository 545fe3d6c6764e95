/// What becomes of a response body: the pluggable object at the centre of the library.
///
/// A transfer drives a handler through four steps, always in this order and on one thread:
/// 1. `accept(_:)` once the final response's headers are complete, before the first body byte.
///    Return false or throw to reject: the body then never reaches `consume` (no error page is
///    saved as a download); it is kept, capped, inside the error instead.
/// 2. `consume(_:)` for each chunk as libcurl delivers it. Throwing aborts the transfer at once;
///    throwing `StopTransfer` ends it early with success (the handler has what it needs).
/// 3. `finish()` once the body is complete, to produce the content (or throw a decode error).
/// 4. `cleanup(failed:)` last, always, whether the transfer succeeded or not.
/// `prepare(_:)` runs before anything is sent, so a handler can refuse early (an unwritable
/// download directory) or add headers (a Range for a resumed download).
///
/// A handler instance serves one transfer; make a new one for each request.
/// The steps may run on another thread than the caller's (an `async` send drives the handler on
/// the client's executor thread), so a conformance may not be isolated to an actor: the type
/// itself crosses threads (`SendableMetatype`).
public protocol ContentHandler: AnyObject, SendableMetatype {
    associatedtype Content

    func prepare(_ request: inout Request) throws
    func accept(_ head: ResponseHead) throws -> Bool
    func consume(_ chunk: UnsafeRawBufferPointer) throws
    func finish() throws -> Content
    func cleanup(failed: Bool)
}

/// Thrown by a handler's `consume` to end the transfer early with success: the transfer stops
/// receiving (the connection is closed, not reused), reports no error, and `finish` produces
/// the content from what was received.
public struct StopTransfer: Error, Sendable {
    public init() {}
}

extension ContentHandler {
    public func prepare(_ request: inout Request) throws {}
    public func cleanup(failed: Bool) {}
}

/// A handler whose acceptance is decided by status codes and content types (hotpotato's
/// "selective" handlers). Conformers get `accept` for free.
public protocol SelectiveHandler: ContentHandler {
    var acceptance: Acceptance { get }
}

extension SelectiveHandler {
    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        return true
    }
}
