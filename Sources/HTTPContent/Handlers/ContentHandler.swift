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
    /// What the handler makes of the body: the type of ``Response/content``.
    associatedtype Content

    /// Runs before anything is sent: refuse early (throw), or adjust the request (add a header).
    /// Default: does nothing.
    func prepare(_ request: inout Request) throws
    /// Sees the final response's head before any body byte.
    /// - Returns: true to take the body; false to reject the response (an unacceptable status).
    /// - Throws: to reject it with a reason of your own (`.unacceptableContentType`...).
    func accept(_ head: ResponseHead) throws -> Bool
    /// Receives each chunk of the body as it arrives.
    /// - Parameter chunk: valid only during the call: copy what you keep.
    /// - Throws: any error aborts the transfer; ``StopTransfer`` ends it early with success.
    func consume(_ chunk: UnsafeRawBufferPointer) throws
    /// Called once the whole body arrived: makes the content the response carries, or throws
    /// a decode error when the body is not what the handler expects.
    func finish() throws -> Content
    /// Called last, always: release what the transfer held, remove a partial file when `failed`.
    /// Default: does nothing.
    func cleanup(failed: Bool)
}

/// A handler that may hold what it made of the chunks so far (a batch for a slow boundary) and
/// hands it over when libcurl has read all the data there is for now: libcurl passes one read
/// in pieces of at most 16 KiB (CURL_MAX_WRITE_SIZE), so "the end of a chunk" is not "no more
/// data yet". The transfer calls `receivePaused` once when it accepts the body, then from
/// libcurl's progress callback, which runs after each round of reads (libcurl reads while the
/// socket has data) before it waits; so nothing held waits for more data.
public protocol ReceivePauseHandler: AnyObject {
    /// Hands over what is held. Throws as `consume` does (``StopTransfer`` ends early).
    func receivePaused() throws
}

/// A handler whose consumer may fall behind (an `AsyncSequence` of items read at the caller's
/// pace): after each chunk it consumes, the transfer asks `wantsPause`, and when it is true stops
/// reading the socket (TCP then holds the server back) and calls `paused(resume:)`; the handler
/// calls `resume`, from any thread, once there is room again. Only transfers that can be resumed
/// from another thread honour it (the client's `async` sends); elsewhere it is never asked.
package protocol ReceiveThrottled: AnyObject {
    /// Whether the transfer should stop reading after the chunk just consumed.
    var wantsPause: Bool { get }
    /// The transfer stopped reading: call `resume` when ready for more (at once if already).
    func paused(resume: @escaping @Sendable () -> Void)
}

/// A handler that continues a body it already holds part of (a resumed download): progress
/// then counts those bytes too, so `received` starts at the part's size and `expected` is the
/// whole size, on every front.
public protocol ResumingHandler: AnyObject {
    /// Bytes of the body held before this transfer began (0: none, or a server that sent the
    /// whole body again).
    var heldBytes: Int64 { get }
}

/// Thrown by a handler's `consume` to end the transfer early with success: the transfer stops
/// receiving (the connection is closed, not reused), reports no error, and `finish` produces
/// the content from what was received.
public struct StopTransfer: Error, Sendable {
    public init() {}
}

extension ContentHandler {
    /// Leaves the request as it is.
    public func prepare(_ request: inout Request) throws {}
    /// Holds nothing to release.
    public func cleanup(failed: Bool) {}
}

/// A handler whose acceptance is decided by status codes and content types (hotpotato's
/// "selective" handlers). Conformers get `accept` for free.
public protocol SelectiveHandler: ContentHandler {
    /// The status codes and media types the handler takes.
    var acceptance: Acceptance { get }
}

extension SelectiveHandler {
    /// Takes the response when ``acceptance`` accepts its status and type, else throws
    /// `.unacceptableStatus` or `.unacceptableContentType`.
    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        return true
    }
}
