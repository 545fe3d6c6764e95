import Synchronization

/// A flag another thread (or a progress callback) sets to stop a transfer. The transfer checks it
/// as data arrives and at libcurl's progress ticks, and fails with `.cancelled`.
public final class CancellationToken: Sendable {
    private let flag = Atomic<Bool>(false)
    private let parent: CancellationToken?
    /// Whether a transfer must poll this token to notice it (libcurl's progress callback, a
    /// driver's scan at each step). False for a batch's own token (`Batch.cancelToken`), set
    /// only through `Batch.cancel(_:)` on the batch's thread, which then looks at once: a
    /// transfer that has one pays nothing for it until it is set.
    package let isPolled: Bool

    /// - Parameter parent: a token whose cancellation cancels this one too.
    public init(linkedTo parent: CancellationToken? = nil) {
        self.parent = parent
        isPolled = true
    }

    private init(polled: Bool) {
        parent = nil
        isPolled = polled
    }

    /// A token set only through `Batch.cancel(_:)` (see `isPolled`).
    package static func unpolled() -> CancellationToken { CancellationToken(polled: false) }

    /// Stops every transfer watching this token (and its children), from any thread.
    public func cancel() { flag.store(true, ordering: .releasing) }
    /// Whether this token, or the one it is linked to, was cancelled.
    public var isCancelled: Bool {
        flag.load(ordering: .acquiring) || (parent?.isCancelled ?? false)
    }
}
