/// Where a streamed body's bytes come from. The bytes are read as libcurl sends them, straight
/// into its upload buffer, so memory stays flat whatever the size. With a known length the
/// request carries Content-Length; otherwise it is sent chunked.
public enum UploadSource: Sendable {
    /// A file, opened at each send before connecting (missing or unreadable: `.localIO`). A regular
    /// file's size is its Content-Length; a FIFO or device is sent chunked.
    case file(path: String)
    /// An open descriptor, borrowed (never closed). `length` nil: the rest of a regular file, or
    /// chunked for a pipe or socket. A seekable descriptor is read from the offset it has when
    /// the send starts, with `pread`, and its offset is left as it was.
    case fileDescriptor(Int32, length: Int64?)
    /// A function that fills the buffer it is given and returns how many bytes it wrote, 0 at the
    /// end. Throwing aborts the transfer; the send fails with `.callback` and the error as
    /// `underlying`. With `length` set, exactly that many bytes must come.
    case callback(length: Int64?, read: @Sendable (UnsafeMutableRawBufferPointer) throws -> Int)
}
