import Synchronization

/// A flag another thread (or a progress callback) sets to stop a transfer. The transfer checks it
/// as data arrives and at libcurl's progress ticks, and fails with `.cancelled`.
public final class CancellationToken: Sendable {
    private let flag = Atomic<Bool>(false)
    private let parent: CancellationToken?

    /// - Parameter parent: a token whose cancellation cancels this one too.
    public init(linkedTo parent: CancellationToken? = nil) {
        self.parent = parent
    }

    /// Stops every transfer watching this token (and its children), from any thread.
    public func cancel() { flag.store(true, ordering: .releasing) }
    /// Whether this token, or the one it is linked to, was cancelled.
    public var isCancelled: Bool {
        flag.load(ordering: .acquiring) || (parent?.isCancelled ?? false)
    }
}
