import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// The sockets of a batch watched by the batch itself, in an epoll set: an event loop then
/// watches one descriptor (readable when any socket is ready) and calls `step` — one call per
/// wake-up however many sockets are ready, rather than one watcher and one call per socket, and
/// nothing per socket to re-arm in the loop as transfers come and go.
final class SocketPoller {
    /// The epoll set's descriptor, closed with the poller.
    let fd: Int32

    init?() {
        #if os(Linux)
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { return nil }
        self.fd = fd
        #else
        return nil
        #endif
    }

    deinit { close(fd) }

    /// Watches `socket` for libcurl's CURL_POLL_* `what` (4: stop watching).
    func watch(_ socket: Int32, what: Int32) {
        #if os(Linux)
        _ = hc_epoll_watch(fd, socket, what)
        #endif
    }
}

extension MultiDriver {
    /// Makes the driver poll its own sockets (see `SocketPoller`); returns the descriptor an
    /// event loop watches for reading, or nil where there is no epoll. Before any transfer is
    /// added; from then on, drive it with `step` only.
    func pollOwnSockets() -> Int32? {
        if let poller { return poller.fd }
        guard let made = SocketPoller() else { return nil }
        poller = made
        watch(Watchers(socket: { [unowned made] fd, what in made.watch(fd, what: what) },
                       timer: { _ in }))   // kept as `curlDeadline`, read by `timerMs`
        return made.fd
    }

    /// Tells libcurl about every socket that is ready and, when due, its timer; completes what
    /// finished (completions run here) and starts what waits. Transfers that completions add
    /// or that the queue starts make libcurl's timer due at once: they are started here too,
    /// a few rounds at most. Returns how many remain pending; `timerMs` then says when to call
    /// again if the descriptor stays quiet. Without a poller, `perform`.
    @discardableResult
    func step() -> Int {
        #if os(Linux)
        guard let poller else { return perform() }
        var running: Int32 = 0
        _ = hc_epoll_act(multi, poller.fd, &running)
        var left = 0
        for _ in 0..<4 {
            if curlTimerDue {
                curlDeadline = nil
                curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running)
            }
            left = completeFinished()
            guard curlTimerDue else { break }
        }
        return left
        #else
        return perform()
        #endif
    }
}
