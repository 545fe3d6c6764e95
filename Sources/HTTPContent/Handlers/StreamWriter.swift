#if canImport(Glibc)
import Glibc
#endif

/// Passes each chunk on as it arrives — to a file descriptor, a `FILE *` or a closure — and
/// keeps nothing. Content: the number of bytes passed on. Default acceptance: 200–299, any type.
public final class StreamWriter: SelectiveHandler {
    /// Where the bytes go.
    public enum Target {
        /// Written with write(2); the descriptor is neither closed nor owned.
        case fileDescriptor(Int32)
        /// Written with fwrite and flushed at the end; the stream is not closed.
        case file(UnsafeMutablePointer<FILE>)
        /// Called with each chunk; the buffer is valid only during the call. Throwing aborts.
        case callback((UnsafeRawBufferPointer) throws -> Void)
    }

    public var acceptance: Acceptance
    /// Where the bytes go.
    public let target: Target
    /// Bytes passed on so far (the content, once finished).
    public private(set) var written: Int64 = 0
    private var head: ResponseHead?

    /// Passes each chunk to `target` as it arrives, keeping nothing.
    public init(to target: Target, acceptance: Acceptance = Acceptance()) {
        self.target = target
        self.acceptance = acceptance
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        switch target {
        case .fileDescriptor(let fd):
            if let failure = writeAll(fd, chunk) {
                throw HTTPContentError(.localIO, "writing to descriptor \(fd) failed: \(errnoText(failure))", response: head)
            }
        case .file(let file):
            if chunk.count > 0, fwrite(chunk.baseAddress, 1, chunk.count, file) != chunk.count {
                throw HTTPContentError(.localIO, "writing to the stream failed: \(errnoText())", response: head)
            }
        case .callback(let call):
            try call(chunk)
        }
        written += Int64(chunk.count)
    }

    public func finish() throws -> Int64 {
        if case .file(let file) = target, fflush(file) != 0 {
            throw HTTPContentError(.localIO, "flushing the stream failed: \(errnoText())", response: head)
        }
        return written
    }

}

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR; returns errno on failure.
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    guard var p = bytes.baseAddress else { return nil }
    var left = bytes.count
    while left > 0 {
        let n = write(fd, p, left)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        p += n
        left -= n
    }
    return nil
}

func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}
