#if canImport(Glibc)
import Glibc
#endif
import CFileIO

// MARK: - Waits a download need not take in turn with its bytes

/// A device flush (`fdatasync`) on a thread of its own while the download goes on.
///
/// Why (measured, bench/README.md "Downloads to a file"): the final fsync of a fsync'd
/// download spent 0.3–0.55 s per 512 MiB in the device's cache flush (`blkdev_issue_flush`)
/// although WriteBehind had already written all but the tail: the flush's cost grows with what
/// the device holds unflushed. Flushing behind, each time a window has reached the device,
/// leaves the final fsync only the tail's share. One flush at most is in flight; none is
/// started while one runs.
///
/// The flush's error is the download's: `fdatasync` consumes a writeback error (the file's
/// error sequence advances), so the final fsync would not report it again.
struct FlushBehind {
    private var thread: pthread_t?

    /// Starts a flush of `fd` unless one is still running. Returns the errno of a flush that
    /// failed since the last call, else nil; a thread that cannot be started is no error (the
    /// final fsync flushes everything anyway).
    mutating func start(fd: Int32) -> Int32? {
        if let running = thread {
            var result: UnsafeMutableRawPointer?
            guard pthread_tryjoin_np(running, &result) == 0 else { return nil }
            thread = nil
            if let result { return Int32(Int(bitPattern: result)) }
        }
        var started = pthread_t()
        let argument = UnsafeMutableRawPointer(bitPattern: Int(fd) + 1)  // never nil: fd >= 0
        if spawn(&started, detached: false, argument, { argument in
            let fd = Int32(Int(bitPattern: argument) - 1)
            return fdatasync(fd) == 0 ? nil : UnsafeMutableRawPointer(bitPattern: Int(errno))
        }) { thread = started }
        return nil
    }

    /// Waits for the flush in flight, if any. Returns its errno if it failed, else nil. Must be
    /// called before the file is closed (the thread uses its descriptor).
    mutating func wait() -> Int32? {
        guard let running = thread else { return nil }
        thread = nil
        var result: UnsafeMutableRawPointer?
        pthread_join(running, &result)
        return result.map { Int32(Int(bitPattern: $0)) }
    }
}

/// Closes the last descriptor of the file a download replaced, on a short-lived thread.
///
/// Why (measured): the rename that replaces a large file frees its blocks, and on a file system
/// mounted with `discard` (ext4 here) `ext4_free_blocks` waits for the device to discard them:
/// 0.3–0.4 s per 512 MiB, all of it waiting, none of it CPU. A download that holds the old file
/// open across the rename makes the rename only unlink the name; closing that descriptor
/// afterwards frees the blocks, off the caller's path. The new file is in place (and durable,
/// when fsync'd) before; a crash before the close leaves an orphan inode that the file system
/// frees at mount. A thread that cannot be started closes it here, as before.
func closeInBackground(_ fd: Int32) {
    var thread = pthread_t()
    let argument = UnsafeMutableRawPointer(bitPattern: Int(fd) + 1)
    if !spawn(&thread, detached: true, argument, { argument in
        close(Int32(Int(bitPattern: argument) - 1))
        return nil
    }) {
        close(fd)
    }
}

/// Starts `body(argument)` on a new thread with a small stack (these threads only make one
/// system call). Returns whether it started.
private func spawn(_ thread: inout pthread_t, detached: Bool, _ argument: UnsafeMutableRawPointer?,
                   _ body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?) -> Bool {
    var attributes = pthread_attr_t()
    guard pthread_attr_init(&attributes) == 0 else { return false }
    defer { pthread_attr_destroy(&attributes) }
    _ = pthread_attr_setstacksize(&attributes, 64 << 10)
    if detached { _ = pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
    return pthread_create(&thread, &attributes, body, argument) == 0
}
