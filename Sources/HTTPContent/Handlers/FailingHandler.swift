/// A handler that could not be made (its options were refused when a transfer asked for it):
/// every transfer fails with the reason, before a byte of the body is read. Handler factories
/// return it instead of trapping, so a bad setting is an error code on every front.
package final class FailingHandler: ContentHandler {
    package let error: HTTPContentError

    package init(_ error: HTTPContentError) { self.error = error }

    /// Any error as the reason: ours as it is, others as an invalid argument (what a factory
    /// throws is a setting it refused).
    package convenience init(reason error: any Error) {
        self.init(error as? HTTPContentError ?? HTTPContentError(.invalidArgument, "\(error)"))
    }

    package func accept(_ head: ResponseHead) throws -> Bool { throw error }
    package func consume(_ chunk: UnsafeRawBufferPointer) throws { throw error }
    package func finish() throws { throw error }
}
