import CCurl
#if canImport(Glibc)
import Glibc
#endif

// What a transfer is watched for while it waits: a cancellation token set from another thread
// (it wakes the wait at once, through `CancelToken.onCancel`) and a read timeout (the
// longest silence allowed between bytes). A transfer with neither runs as before, in
// `curl_easy_perform`, which no one can wake.

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

extension Transfer {
    /// Whether a driver must look at this transfer while it waits.
    var isWatched: Bool { readTimeoutNs != 0 || cancel?.isPolled == true }

    /// Runs the transfer on the calling thread: `curl_easy_perform`, or, when it is watched,
    /// the same loop on a multi handle of the easy handle's own, so that a token set from
    /// another thread wakes the wait at once and the read timeout is checked between waits.
    func perform() -> CURLcode {
        isWatched ? performWatched() : curl_easy_perform(easy.raw)
    }

    private func performWatched() -> CURLcode {
        let multi = easy.watchMulti()
        guard curl_multi_add_handle(multi, easy.raw) == CURLM_OK else { return CURLE_FAILED_INIT }
        startWatch(wake: wakeUp(multi))
        defer {
            endWatch()
            curl_multi_remove_handle(multi, easy.raw)
        }
        while true {
            var running: Int32 = 0
            guard curl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_OUT_OF_MEMORY }
            if running == 0 {
                var left: Int32 = 0
                while let msg = curl_multi_info_read(multi, &left) {
                    if msg.pointee.msg == CURLMSG_DONE { return msg.pointee.data.result }
                }
                return CURLE_OK
            }
            var waitMs: Int32 = 1000
            switch watchVerdict(now: monotonicNanoseconds()) {
            case .stopped(let code): return code
            case .waitAtMost(let ns): waitMs = Int32(min(1000, (ns + 999_999) / 1_000_000))
            case .fine: break
            }
            var fds: Int32 = 0
            curl_multi_poll(multi, nil, 0, waitMs, &fds)
        }
    }

    /// Starts the watch: the read timeout counts from now, and `wake` is called when the token
    /// is set from another thread (until `endWatch`).
    func startWatch(wake: @escaping @Sendable () -> Void) {
        lastActivityNs = monotonicNanoseconds()
        if let cancel, cancel.isPolled { cancelRegistration = cancel.onCancel(wake) }
    }

    func endWatch() {
        cancelRegistration?.remove()
        cancelRegistration = nil
    }

    enum WatchVerdict {
        /// Stop now: the transfer's error is set, libcurl's code to report is this.
        case stopped(CURLcode)
        /// Look again within this many nanoseconds (the read timeout's deadline).
        case waitAtMost(UInt64)
        case fine
    }

    /// Whether the token was set or the read timeout passed (then the transfer's error is set);
    /// else how long the next wait may be at most.
    func watchVerdict(now: UInt64) -> WatchVerdict {
        if let cancel, cancel.isCancelled {
            stop(with: cancelledError())
            return .stopped(CURLE_ABORTED_BY_CALLBACK)
        }
        guard readTimeoutNs != 0 else { return .fine }
        if receivePaused {
            // Not reading on purpose (the consumer is behind): no silence of the server's.
            lastActivityNs = now
            return .waitAtMost(readTimeoutNs)
        }
        if request.body != nil {
            // Bytes still going out count as activity (a large upload before any answer).
            let sent = easy.info(offset: CURLINFO_SIZE_UPLOAD_T)
            if sent != lastUploaded {
                lastUploaded = sent
                lastActivityNs = now
            }
        }
        let deadline = lastActivityNs &+ readTimeoutNs
        if deadline > now { return .waitAtMost(deadline - now) }
        let ms = readTimeoutNs / 1_000_000
        stop(with: HTTPContentError(.timeout, "read timeout: nothing received for \(ms) ms",
                                    curlCode: Int32(CURLE_OPERATION_TIMEDOUT.rawValue)))
        return .stopped(CURLE_OPERATION_TIMEDOUT)
    }
}

/// A waker that interrupts `curl_multi_poll` on `multi` (from any thread: curl_multi_wakeup is
/// the one multi call that may be made so).
func wakeUp(_ multi: UnsafeMutableRawPointer) -> @Sendable () -> Void {
    let address = UInt(bitPattern: multi)
    return { _ = curl_multi_wakeup(UnsafeMutableRawPointer(bitPattern: address)) }
}

extension EasyHandle {
    /// The handle's own multi handle for watched transfers, made on first use (freed with the
    /// handle). A multi handle is what `curl_easy_perform` runs on inside; this one can be
    /// woken (`curl_multi_wakeup`).
    func watchMulti() -> UnsafeMutableRawPointer {
        if let multi = ownMulti { return multi }
        guard let multi = curl_multi_init() else { fatalError("httpcontent: curl_multi_init failed (out of memory)") }
        ownMulti = multi
        return multi
    }
}
