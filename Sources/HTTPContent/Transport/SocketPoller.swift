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
    /// One byte per socket descriptor (indexed by it): what the set holds for it (see
    /// hc_epoll_watch in the shim), so a socket libcurl removes at the end of a transfer and
    /// watches again at the next costs one system call, not three.
    private var states: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// What hc_epoll_ready fills.
    private let readyFds = UnsafeMutablePointer<Int32>.allocate(capacity: 64)
    private let readyMasks = UnsafeMutablePointer<Int32>.allocate(capacity: 64)
    /// An eventfd in the set (`wake`): a token set from another thread wakes the caller's loop
    /// through the batch's descriptor, as curl_multi_wakeup wakes `MultiDriver.wait`.
    let wakeFd: Int32

    init?() {
        #if os(Linux)
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { return nil }
        let waker = hc_epoll_add_waker(fd)
        guard waker >= 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        wakeFd = waker
        capacity = 1024
        states = .allocate(capacity: capacity)
        states.initialize(repeating: 0, count: capacity)
        #else
        return nil
        #endif
    }

    deinit {
        close(wakeFd)
        close(fd)
        states.deallocate()
        readyFds.deallocate()
        readyMasks.deallocate()
    }

    /// Watches `socket` for libcurl's CURL_POLL_* `what` (4: stop watching).
    func watch(_ socket: Int32, what: Int32) {
        #if os(Linux)
        guard socket >= 0 else { return }
        let i = Int(socket)
        if i >= capacity {
            let grown = max(capacity * 2, i + 1)
            let more = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            more.initialize(from: states, count: capacity)
            (more + capacity).initialize(repeating: 0, count: grown - capacity)
            states.deallocate()
            states = more
            capacity = grown
        }
        _ = hc_epoll_watch(fd, socket, what, states + i)
        #endif
    }

    /// Tells libcurl about every socket that is ready now (no waiting), one
    /// curl_multi_socket_action each; a parked socket (one libcurl stopped watching) that is
    /// ready leaves the set instead. Returns how many were ready.
    @discardableResult
    func act(_ multi: UnsafeMutableRawPointer, running: inout Int32) -> Int {
        #if os(Linux)
        let n = Int(hc_epoll_ready(fd, readyFds, readyMasks, 64))
        guard n > 0 else { return 0 }
        for k in 0..<n {
            let socket = readyFds[k]
            if socket == wakeFd {   // woken: the step that follows looks at the tokens
                hc_waker_drain(wakeFd)
                continue
            }
            let i = Int(socket)
            // Read afresh each time: a socket_action may grow `states`.
            if i >= capacity || states[i] & UInt8(HC_EPOLL_WANTED) == 0 {
                hc_epoll_forget(fd, socket)
                if i < capacity { states[i] = 0 }
                continue
            }
            curl_multi_socket_action(multi, socket, readyMasks[k], &running)
        }
        return n
        #else
        return 0
        #endif
    }
}

extension MultiDriver {
    /// What a watched transfer's token calls when set (from any thread): the poller's eventfd
    /// when the driver polls its own sockets (the caller's loop watches that set, not
    /// curl_multi_poll), else curl_multi_wakeup. Valid while the transfer is watched
    /// (`endWatch` comes before the driver, and its poller, go).
    func waker() -> @Sendable () -> Void {
        #if os(Linux)
        if let poller {
            let fd = poller.wakeFd
            return { hc_waker_signal(fd) }
        }
        #endif
        return wakeUp(multi)
    }

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
        poller.act(multi, running: &running)
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
