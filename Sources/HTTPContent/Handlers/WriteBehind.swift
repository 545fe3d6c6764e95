#if canImport(Glibc)
import Glibc
#endif
import CFileIO

/// Writes a download back to disk while it streams, a window at a time, and lets each window's
/// pages go once they are on disk.
///
/// Why (measured, bench/README.md "Downloads to a file"): left to the end, an fsync waits for
/// the whole body to reach the disk after the last byte arrived, so the network and the disk take
/// turns; and a body kept whole in the page cache needs as many fresh pages as it has bytes,
/// which on a VM that hands free memory back to its host (free page reporting) costs a host
/// fault per page: the copy into the page cache then dominated a download's CPU. Here each full
/// window is submitted (`SYNC_FILE_RANGE_WRITE`) as soon as it is written; when the next one is
/// full, the one before is waited on and dropped from the cache (`POSIX_FADV_DONTNEED`), so at
/// most two windows are dirty or in flight, the final fsync only has the tail, and the download
/// reuses the same few pages. It changes nothing in what the final fsync guarantees.
///
/// With `flush` (a fsync'd download), each window waited on also starts a device flush behind
/// (FlushBehind), so the final fsync's flush has only the tail left.
///
/// A writeback error met while waiting is returned: sync_file_range consumes it (the file's
/// error sequence advances), so the final fsync would not see it again. A file system that does
/// not support the call (EINVAL, ENOSYS, ESPIPE) just turns the windows off.
struct WriteBehind {
    /// The window: 16 MiB, measured against 8 and 32 MiB (bench/README.md).
    static let window: Int64 = 16 << 20

    /// Where the window being filled starts (bytes before it were submitted).
    private(set) var submittedTo: Int64
    /// The window submitted last, not yet waited on.
    private var inFlight: Range<Int64>?
    private var enabled: Bool
    private let window: Int64
    private let flush: Bool
    private var flushBehind = FlushBehind()

    /// Windows over the bytes written from `offset` on (a resume's part keeps what it has);
    /// `flush`: flush the device behind them too.
    init(from offset: Int64, enabled: Bool, flush: Bool = false, window: Int64 = WriteBehind.window) {
        submittedTo = offset
        self.enabled = enabled
        self.flush = flush
        self.window = window
    }

    /// Waits for the flush behind in flight: before the final fsync, and before the file is
    /// closed on any path. Returns the errno of a failed flush, else nil.
    mutating func finish() -> Int32? {
        flushBehind.wait()
    }

    /// Called after each write, with the file's end: submits the window if it is full, after
    /// waiting for the one before and releasing its pages. Returns the errno of a failed wait
    /// (a writeback error: the download must fail), else nil.
    mutating func wrote(fd: Int32, upTo end: Int64) -> Int32? {
        guard enabled, end - submittedTo >= window else { return nil }
        if let done = inFlight {
            let flags = HC_SYNC_FILE_RANGE_WAIT_BEFORE | HC_SYNC_FILE_RANGE_WRITE | HC_SYNC_FILE_RANGE_WAIT_AFTER
            if sync_file_range(fd, off_t(done.lowerBound), off_t(done.count), flags) != 0 {
                return unsupported(errno)
            }
            _ = posix_fadvise(fd, off_t(done.lowerBound), off_t(done.count), Int32(POSIX_FADV_DONTNEED))
            if flush, let failure = flushBehind.start(fd: fd) { return failure }
        }
        if sync_file_range(fd, off_t(submittedTo), off_t(end - submittedTo), HC_SYNC_FILE_RANGE_WRITE) != 0 {
            return unsupported(errno)
        }
        inFlight = submittedTo..<end
        submittedTo = end
        return nil
    }

    /// nil (and windows off) for an error that only says the call does not apply here.
    private mutating func unsupported(_ code: Int32) -> Int32? {
        if code == EINVAL || code == ENOSYS || code == ESPIPE {
            enabled = false
            return nil
        }
        return code
    }
}
