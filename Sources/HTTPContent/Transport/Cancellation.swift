import Synchronization

/// The old name of ``CancelToken`` (one name per concept on every front: Python's `CancelToken`,
/// C's `hc_cancel`).
@available(*, deprecated, renamed: "CancelToken")
public typealias CancellationToken = CancelToken

/// A flag another thread (or a progress callback) sets to stop a transfer. The transfer checks it
/// as data arrives and at libcurl's progress ticks, and fails with `.cancelled`.
public final class CancelToken: Sendable {
    private let flag = Atomic<Bool>(false)
    private let parent: CancelToken?
    /// Whether a transfer must poll this token to notice it (libcurl's progress callback, a
    /// driver's scan at each step). False for a batch's own token (`Batch.cancelToken`), set
    /// only through `Batch.cancel(_:)` on the batch's thread, which then looks at once: a
    /// transfer that has one pays nothing for it until it is set.
    package let isPolled: Bool

    /// - Parameter parent: a token whose cancellation cancels this one too.
    public init(linkedTo parent: CancelToken? = nil) {
        self.parent = parent
        isPolled = true
    }

    private init(polled: Bool) {
        parent = nil
        isPolled = polled
    }

    /// A token set only through `Batch.cancel(_:)` (see `isPolled`).
    package static func unpolled() -> CancelToken { CancelToken(polled: false) }

    /// Set once a waker was registered: `cancel` then looks them up.
    private let hasWakers = Atomic<Bool>(false)

    /// Stops every transfer watching this token (and its children), from any thread. A
    /// transfer waiting on an idle connection is woken at once (`onCancel`), not at its next
    /// byte or libcurl's next progress tick.
    public func cancel() {
        flag.store(true, ordering: .releasing)
        if hasWakers.load(ordering: .acquiring) { CancelWakers.fire(ObjectIdentifier(self)) }
    }

    /// Calls `wake` (from the cancelling thread) when this token or one it is linked to is
    /// cancelled, until the registration is removed; also at once if it already is. `wake`
    /// runs under a lock that `remove` takes too, so once `remove` returns it runs no more:
    /// it must be quick and must not block (`curl_multi_wakeup`).
    package func onCancel(_ wake: @escaping @Sendable () -> Void) -> CancelRegistration {
        var keys: [(ObjectIdentifier, Int)] = []
        var token: CancelToken? = self
        while let t = token {
            t.hasWakers.store(true, ordering: .releasing)
            keys.append((ObjectIdentifier(t), CancelWakers.add(ObjectIdentifier(t), wake)))
            token = t.parent
        }
        if isCancelled { wake() }
        return CancelRegistration(keys: keys)
    }
    /// Whether this token, or the one it is linked to, was cancelled.
    public var isCancelled: Bool {
        flag.load(ordering: .acquiring) || (parent?.isCancelled ?? false)
    }
}

/// A waker registered with `CancelToken.onCancel`.
package struct CancelRegistration {
    fileprivate let keys: [(ObjectIdentifier, Int)]

    /// Stops the waker; once this returns it is not running and will not run.
    package func remove() {
        for (token, id) in keys { CancelWakers.remove(token, id) }
    }
}

/// The wakers of every token, by token: one process-wide table, touched only by transfers that
/// wait on a token someone may set from another thread (most tokens never have one).
private enum CancelWakers {
    private struct Table {
        var next = 0
        var wakers: [ObjectIdentifier: [(Int, @Sendable () -> Void)]] = [:]
    }
    private static let table = Locked(Table())

    static func add(_ token: ObjectIdentifier, _ wake: @escaping @Sendable () -> Void) -> Int {
        table.withLock { t in
            t.next += 1
            t.wakers[token, default: []].append((t.next, wake))
            return t.next
        }
    }

    static func remove(_ token: ObjectIdentifier, _ id: Int) {
        table.withLock { t in
            t.wakers[token]?.removeAll { $0.0 == id }
            if t.wakers[token]?.isEmpty == true { t.wakers[token] = nil }
        }
    }

    /// Runs the token's wakers, under the lock (see `onCancel`).
    static func fire(_ token: ObjectIdentifier) {
        table.withLock { t in
            for (_, wake) in t.wakers[token] ?? [] { wake() }
        }
    }
}
