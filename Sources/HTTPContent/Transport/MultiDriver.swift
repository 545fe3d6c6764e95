import CCurl

/// Drives many transfers at once on one libcurl multi handle, on whichever thread calls it
/// (the C batch API's caller, or the `Executor`'s thread). Transfers beyond the concurrency
/// limit wait in a queue and start as others finish.
final class MultiDriver {
    struct Entry {
        let transfer: Transfer
        /// Called once, on the driving thread, with libcurl's result for the transfer.
        let done: (CURLcode) -> Void
    }

    let multi: UnsafeMutableRawPointer
    /// Most transfers in flight at once (0: no limit).
    @exclusivity(unchecked) var maxConcurrent: Int
    /// Transfers in flight, in no order: each transfer knows its slot (`driverSlot`), and
    /// libcurl's handle points to its `EasyHandle` (CURLOPT_PRIVATE), which knows the transfer,
    /// so finding one costs no hashing.
    /// (A driver is used by one thread at a time: no exclusivity checks on its state.)
    @exclusivity(unchecked) private var active: [Entry] = []
    /// Entries not started yet; a started one leaves a nil behind, so nothing finished is kept
    /// alive by the queue while its head advances.
    @exclusivity(unchecked) private var waiting: [Entry?] = []
    @exclusivity(unchecked) private var waitingHead = 0
    /// How many transfers in `active` are watched (`Transfer.isWatched`: a cancellation token
    /// that must be polled, or a read timeout): with none, `perform`, `wait` and `timeoutMs`
    /// look at no token or clock (the usual batch pays nothing for them). Unpolled tokens
    /// (`CancelToken.isPolled`) are not counted: `cancelled()` says when to look at them.
    /// A polled token wakes the driver's `wait` when set (`Transfer.startWatch`).
    @exclusivity(unchecked) private var cancellable = 0
    /// Set by `cancelled()`: the next completion pass looks at every token once.
    @exclusivity(unchecked) private var cancelNoted = false
    /// Transfers the last `perform` completed: when some did, their completions may have added
    /// more, which the next `perform` starts at once, without a poll in between.
    @exclusivity(unchecked) private(set) var completedByLastPerform = 0

    /// Work to do later on the driving thread (a retry after its backoff), with what to do
    /// instead if the batch is cancelled first or the request's token is set meanwhile.
    struct Delayed {
        let deadline: ContinuousClock.Instant
        let token: CancelToken?
        let fire: () -> Void
        let cancel: () -> Void
    }
    @exclusivity(unchecked) private var delayed: [Delayed] = []
    /// When libcurl's own timer expires, in socket-action mode (nil: none set), so that the
    /// caller's single timer can serve both it and `delayed`.
    @exclusivity(unchecked) var curlDeadline: ContinuousClock.Instant?
    /// Set by `pollOwnSockets`: the driver's own epoll set of its sockets.
    @exclusivity(unchecked) var poller: SocketPoller?

    init(maxConcurrent: Int = 0, maxPerHost: Int = 0) {
        _ = curlGlobalInit
        guard let multi = curl_multi_init() else { fatalError("httpcontent: curl_multi_init failed (out of memory)") }
        self.multi = multi
        self.maxConcurrent = maxConcurrent
        _ = hc_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        if maxPerHost > 0 { setMaxPerHost(maxPerHost) }
    }

    deinit {
        cancelAll()
        curl_multi_cleanup(multi)
    }

    func setMaxPerHost(_ n: Int) {
        _ = hc_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, n)
    }

    /// Transfers added and not yet completed.
    var pending: Int { active.count + waiting.count - waitingHead + delayed.count }

    /// Runs `fire` on the driving thread once `wait` has passed, counted as pending meanwhile
    /// (`run` goes on until it has run); `cancel` runs instead when the batch is cancelled or
    /// `token` is set first. Nothing blocks while it waits.
    func after(_ wait: Duration, token: CancelToken?, fire: @escaping () -> Void,
               cancel: @escaping () -> Void) {
        delayed.append(Delayed(deadline: ContinuousClock.now.advanced(by: wait), token: token,
                               fire: fire, cancel: cancel))
        if watchers != nil { armTimer() }
    }

    /// Runs the delayed work that is due (or cancelled). Returns how many ran.
    private func fireDue() -> Int {
        guard !delayed.isEmpty else { return 0 }
        let now = ContinuousClock.now
        var due: [Delayed] = []
        delayed.removeAll { entry in
            let ready = entry.deadline <= now || entry.token?.isCancelled == true
            if ready { due.append(entry) }
            return ready
        }
        // Run after the list is settled: what they do may add transfers or more delayed work.
        for entry in due {
            if entry.token?.isCancelled == true { entry.cancel() } else { entry.fire() }
        }
        return due.count
    }

    /// Milliseconds until the earliest delayed work is due (nil: none), rounded up.
    private var delayedMs: Int? {
        guard let first = delayed.map(\.deadline).min() else { return nil }
        let left = ContinuousClock.now.duration(to: first)
        if left <= .zero { return 0 }
        return max(1, milliseconds(left + .microseconds(999)))
    }

    func add(_ transfer: Transfer, done: @escaping (CURLcode) -> Void) {
        let entry = Entry(transfer: transfer, done: done)
        // Nothing queued and room to run: started at once, the queue untouched.
        if waitingHead == waiting.count, hasRoom {
            start(entry)
        } else {
            waiting.append(entry)
            startWaiting()
        }
    }

    private var hasRoom: Bool { maxConcurrent == 0 || active.count < maxConcurrent }

    private func start(_ entry: Entry) {
        if let cancel = entry.transfer.cancel, !cancel.isPolled, cancel.isCancelled {
            entry.done(CURLE_ABORTED_BY_CALLBACK)   // cancelled while it waited its turn
            return
        }
        let code = curl_multi_add_handle(multi, entry.transfer.easy.raw)
        if code == CURLM_OK {
            entry.transfer.driverSlot = active.count
            if entry.transfer.isWatched {
                cancellable += 1
                entry.transfer.startWatch(wake: waker())
            }
            active.append(entry)
        } else {
            entry.done(CURLE_FAILED_INIT)
        }
    }

    private func startWaiting() {
        guard !waiting.isEmpty else { return }
        while waitingHead < waiting.count, hasRoom {
            // Moved out (`take`), not copied: the queue keeps nothing of a started transfer.
            guard let entry = waiting[waitingHead].take() else { waitingHead += 1; continue }
            waitingHead += 1
            start(entry)
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        } else if waitingHead > 1024, waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }

    /// Lets libcurl make progress without blocking, completes what finished, starts what waits.
    /// Returns the number of transfers still pending.
    @discardableResult
    func perform() -> Int {
        var running: Int32 = 0
        curl_multi_perform(multi, &running)
        return completeFinished()
    }

    /// Completes the transfers libcurl finished and those whose token is set, then starts
    /// those waiting. Returns how many remain pending.
    func completeFinished() -> Int {
        var left: Int32 = 0
        var completed = 0
        while let msg = curl_multi_info_read(multi, &left) {
            guard msg.pointee.msg == CURLMSG_DONE, let easy = msg.pointee.easy_handle else { continue }
            let code = msg.pointee.data.result
            curl_multi_remove_handle(multi, easy)
            if let entry = removeActive(easy) {
                entry.done(code)
                completed += 1
            }
        }
        completed += completeCancelled()
        completed += fireDue()
        completedByLastPerform = completed
        startWaiting()
        return pending
    }

    /// Completes, as aborted, the transfers whose token is set that libcurl did not run (and
    /// so never asked about) in this `perform`: `timeoutMs` says 0 for them, so they must not
    /// stay pending. Returns how many.
    private func completeCancelled() -> Int {
        guard cancellable > 0 || cancelNoted else { return 0 }
        cancelNoted = false
        var completed = 0
        var i = 0
        let now = monotonicNanoseconds()
        while i < active.count {
            let transfer = active[i].transfer
            let code: CURLcode
            if let cancel = transfer.cancel, cancel.isCancelled {
                code = CURLE_ABORTED_BY_CALLBACK
            } else if transfer.isWatched, case .stopped(let stopped) = transfer.watchVerdict(now: now) {
                code = stopped
            } else {
                i += 1
                continue
            }
            let easy = transfer.easy.raw
            curl_multi_remove_handle(multi, easy)
            if let entry = removeActive(easy) {
                entry.done(code)
                completed += 1
            } else {
                i += 1
            }
        }
        return completed
    }

    /// Takes the entry of `easy` out of `active` (the last entry moves into its slot).
    private func removeActive(_ easy: UnsafeMutableRawPointer) -> Entry? {
        var raw: UnsafeMutablePointer<CChar>?
        guard hc_curl_getinfo_str(easy, CURLINFO_PRIVATE, &raw) == CURLE_OK, let raw,
              let running = Unmanaged<EasyHandle>.fromOpaque(UnsafeRawPointer(raw)).takeUnretainedValue().transfer
        else { return nil }
        let transfer = running.takeUnretainedValue()
        let slot = transfer.driverSlot
        guard slot >= 0, slot < active.count, active[slot].transfer === transfer else { return nil }
        if transfer.isWatched {
            cancellable -= 1
            transfer.endWatch()
        }
        // The last entry moves into the slot; entries are moved, never copied.
        let last = active.removeLast()
        transfer.driverSlot = -1
        guard slot < active.count else { return last }
        last.transfer.driverSlot = slot
        return exchange(&active[slot], with: last)
    }

    /// Blocks until there is socket activity, libcurl's timeout expires, `wake()` is called, or
    /// `timeoutMs` passes (at most `cancelCheckMs` while a transfer has a cancellation token).
    func wait(timeoutMs: Int32) {
        var numfds: Int32 = 0
        var wait = hasCancellable ? min(timeoutMs, Int32(Self.cancelCheckMs)) : timeoutMs
        if let due = delayedMs { wait = min(wait, Int32(clamping: due)) }
        if let due = readDueMs { wait = min(wait, Int32(clamping: due)) }
        curl_multi_poll(multi, nil, 0, wait, &numfds)
    }

    /// How often a token set from another thread is looked at while nothing else happens: a
    /// token wakes no one, and libcurl only asks about it (the progress callback) when it runs
    /// the transfer, which a silent server may not make it do for as long as its timer says
    /// (the connect timeout's 30 s, or more).
    static let cancelCheckMs = 1000

    private var hasCancellable: Bool { cancellable > 0 }

    /// Milliseconds until the first read timeout of a watched transfer may pass (nil: none),
    /// rounded up: the wait ends then, and the next pass fails it if nothing came meanwhile.
    private var readDueMs: Int? {
        guard cancellable > 0 else { return nil }
        let now = monotonicNanoseconds()
        var first: UInt64?
        for entry in active where entry.transfer.readTimeoutNs != 0 {
            let deadline = entry.transfer.lastActivityNs &+ entry.transfer.readTimeoutNs
            let left = deadline > now ? deadline - now : 0
            if first.map({ left < $0 }) ?? true { first = left }
        }
        return first.map { Int(($0 + 999_999) / 1_000_000) }
    }

    /// How long an event loop may wait before `perform` (-1: no timer): libcurl's timer, but
    /// 0 once a transfer's token is set and at most `cancelCheckMs` while any has one.
    var timeoutMs: Int {
        if cancelNoted { return 0 }
        var ms = -1
        curl_multi_timeout(multi, &ms)
        if let due = delayedMs, ms < 0 || due < ms { ms = due }
        guard cancellable > 0 else { return ms }
        if let due = readDueMs, ms < 0 || due < ms { ms = due }
        for entry in active where entry.transfer.cancel?.isCancelled == true { return 0 }
        if ms < 0 || ms > Self.cancelCheckMs { ms = Self.cancelCheckMs }
        return ms
    }

    /// Interrupts a `wait` from another thread.
    func wake() {
        curl_multi_wakeup(multi)
    }

    /// Runs until every transfer added (including ones added by completions) has completed.
    /// Waits (polls) only when a `perform` completed nothing: a poll right after completions
    /// would cost a system call per request at low concurrency.
    func run() {
        while perform() > 0 {
            if completedByLastPerform == 0 { wait(timeoutMs: 1000) }
        }
    }

    // MARK: - Socket-action mode: the caller's event loop watches the sockets

    /// Receives what libcurl wants watched: a socket and `SocketEvents.what` (1 in, 2 out,
    /// 3 both, 4 stop watching), or a timer in milliseconds (-1: none) after which
    /// `socketAction(fd: nil)` must be called. Set with `watch`.
    struct Watchers {
        let socket: (_ fd: Int32, _ what: Int32) -> Void
        let timer: (_ ms: Int) -> Void
    }

    /// Set by `watch`: from then on the caller's loop drives the transfers with `socketAction`
    /// (never `perform`, `wait` or `run`).
    @exclusivity(unchecked) private(set) var watchers: Watchers?

    /// Hands socket and timer watching to the caller (libcurl's CURLMOPT_SOCKETFUNCTION and
    /// CURLMOPT_TIMERFUNCTION), as an asyncio or libuv loop needs: each transfer then costs
    /// nothing until its socket is ready, however many are in flight.
    func watch(_ watchers: Watchers) {
        self.watchers = watchers
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = hc_curl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = hc_curl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
        _ = hc_curl_multi_setopt_socket_fn(multi) { _, fd, what, userp, _ in
            guard let userp else { return 0 }
            Unmanaged<MultiDriver>.fromOpaque(userp).takeUnretainedValue().watchers?.socket(fd, what)
            return 0
        }
        _ = hc_curl_multi_setopt_timer_fn(multi) { _, ms, userp in
            guard let userp else { return 0 }
            let driver = Unmanaged<MultiDriver>.fromOpaque(userp).takeUnretainedValue()
            driver.curlDeadline = ms < 0 ? nil : ContinuousClock.now.advanced(by: .milliseconds(ms))
            driver.armTimer()
            return 0
        }
    }

    /// Asks the caller's loop for one timer serving both libcurl's and the delayed work's.
    private func armTimer() {
        watchers?.timer(timerMs)
    }

    /// Milliseconds until libcurl's timer or the delayed work is due, whichever is first
    /// (-1: neither is set), in socket-action mode.
    var timerMs: Int {
        if cancelNoted { return 0 }
        var ms = -1
        if let curlDeadline {
            let left = ContinuousClock.now.duration(to: curlDeadline)
            ms = left <= .zero ? 0 : max(1, milliseconds(left + .microseconds(999)))
        }
        if let due = delayedMs, ms < 0 || due < ms { ms = due }
        if let due = readDueMs, ms < 0 || due < ms { ms = due }
        return ms
    }

    /// Whether libcurl's timer is due now (socket-action mode).
    var curlTimerDue: Bool {
        guard let curlDeadline else { return false }
        return curlDeadline <= ContinuousClock.now
    }

    /// Tells libcurl that `fd` is ready (`events`: 1 readable, 2 writable, 4 error), or, with
    /// `fd` nil, that its timer expired; completes what finished (their completions run here)
    /// and starts what waits. Returns how many remain pending. Call it after setting a
    /// transfer's token too: a token wakes no one, so the caller says when to look.
    @discardableResult
    func socketAction(fd: Int32?, events: Int32) -> Int {
        var running: Int32 = 0
        // The timer expired: libcurl's, if it was due (libcurl sets a new one during the call
        // if it needs one), or the delayed work's.
        if fd == nil, let due = curlDeadline, due <= ContinuousClock.now { curlDeadline = nil }
        let hadDelayed = !delayed.isEmpty
        curl_multi_socket_action(multi, fd ?? CURL_SOCKET_TIMEOUT, fd == nil ? 0 : events, &running)
        let left = completeFinished()
        if hadDelayed || !delayed.isEmpty || cancellable > 0 { armTimer() }
        return left
    }

    /// Says that an unpolled token (`CancelToken.isPolled`) of a transfer was set: the
    /// next completion pass (`perform`, `step`, `socketAction`) completes it as cancelled.
    func cancelled() { cancelNoted = true }

    /// Completes every pending transfer with "aborted".
    func cancelAll() {
        let stopping = active
        active.removeAll()
        cancellable = 0
        for entry in stopping {
            entry.transfer.endWatch()
            curl_multi_remove_handle(multi, entry.transfer.easy.raw)
            entry.transfer.driverSlot = -1
            entry.done(CURLE_ABORTED_BY_CALLBACK)
        }
        while waitingHead < waiting.count {
            waiting[waitingHead]?.done(CURLE_ABORTED_BY_CALLBACK)
            waiting[waitingHead] = nil
            waitingHead += 1
        }
        waiting.removeAll()
        waitingHead = 0
        let later = delayed
        delayed.removeAll()
        for entry in later { entry.cancel() }
    }
}
