#if canImport(Glibc)
import Glibc
#endif
import CFileIO

/// What a finished download produced.
public struct FileDownload: Sendable, Equatable {
    /// The file written: exactly the path the caller gave.
    public let path: String
    /// Bytes written by this transfer.
    public let bytesWritten: Int64
    /// The file's size at the end (larger than bytesWritten after a resume).
    public let size: Int64
    /// Whether this transfer continued a previous partial download.
    public let resumed: Bool
    /// The digest computed while the bytes streamed, "sha256:<hex>" (the expected digest's
    /// algorithm, else the server's); nil when nothing was checked.
    public var digest: String? = nil
}

/// The old name of ``File`` (one name per concept: Python's `File`, C's `hc_handler_file_*`).
@available(*, deprecated, renamed: "File")
public typealias FileWriter = File

/// Downloads the body to a file, atomically: bytes go to a temporary file in the target's
/// directory, which is fsync'd and renamed over the target only when the whole body arrived.
/// The file is written back to disk while it streams, window by window (WriteBehind), and,
/// fsync'd, the disk's cache is flushed behind it, so the final fsync only waits for the tail.
/// A large file it replaces is freed after the rename, in the background (FileBackground.swift).
/// A response with no body by definition (HEAD, 204, 205) leaves the target as it was.
/// On any failure the temporary file is removed and an existing target is left untouched —
/// except with `resume`, where the partial file `<path>.part` is kept on purpose so the next
/// attempt can continue it with a Range request. Default acceptance: 200–299, any type.
public final class File: SelectiveHandler {
    /// How the file is written: directories, overwrite, resume, fsync, expected digest.
    public struct Options: Sendable {
        /// Create missing parent directories. Default: false.
        public var makeDirectories = false
        /// Replace an existing file. Default: true; false fails with `.localIO` before sending.
        public var overwrite = true
        /// Continue a previous partial download (`<path>.part`) with a Range request; a server
        /// that ignores Range sends the whole body, which then replaces the part. Default: false.
        public var resume = false
        /// fsync the file before the rename and its directory after, so a finished download
        /// survives a power cut. Default: true. Off, those fsyncs are skipped (a crash soon
        /// after may leave the renamed file short or empty). Either way the file is written
        /// back while it streams, 16 MiB at a time, and the written windows leave the page
        /// cache (WriteBehind.swift).
        public var fsync = true
        /// Largest body written, in bytes; more fails with `.tooLarge`. Default: no limit.
        public var maxSize: Int64? = nil
        /// The digest the file must have, computed while the bytes stream; a mismatch fails with
        /// `.checksumMismatch` and leaves no file and no part. Digests the server sends (Repr-Digest,
        /// Content-Digest, Digest) are checked whether or not this is set. Default: nil.
        public var digest: ExpectedDigest? = nil
        public init() {}
    }

    public var acceptance: Acceptance
    /// The file to write: exactly the path given (its temporary sibling is renamed over it).
    public let path: String
    /// How it is written.
    public let options: Options

    /// The temporary file (or the part, with `resume`) while a download is under way.
    private(set) var tempPath: String?
    private var fd: Int32 = -1
    private var resumeFrom: Int64 = 0
    private var resumed = false
    private var written: Int64 = 0
    private var head: ResponseHead?
    private var keepPart = false
    /// A 416 to a resume whose part already holds the whole file: the part is renamed into
    /// place and the 416's own body is ignored.
    private var partIsComplete = false
    /// Chunks gathered into one write(2): libcurl hands over at most 16 KiB at a time, and a
    /// system call per 16 KiB cost a third of a download's CPU (BENCHMARKS.md, issue 15).
    private var pending: UnsafeMutableRawBufferPointer?
    private var pendingCount = 0
    static let writeSize = 1 << 20
    /// Bytes reserved with fallocate for the announced body (0: none).
    private var reserved: Int64 = 0
    /// Where the next write lands in the file (a resume's part starts after its bytes).
    private var fileEnd: Int64 = 0
    /// The file this download replaces, held open from accept to the rename when it is large,
    /// so that the rename does not wait for its blocks to be freed (FileBackground.swift).
    private var replaced: Int32 = -1
    /// The file written back window by window while it streams (WriteBehind.swift).
    private var writeBehind = WriteBehind(from: 0, enabled: false)
    /// The digests checked while the bytes stream (Session/Checksum.swift).
    private var verifier = DownloadVerifier(expected: nil)
    /// `PATH.part.meta`: the part's ETag and Last-Modified, for If-Range on the next resume.
    private var metaPath: String { path + ".part.meta" }

    /// A download to `path`; nothing is touched until the response is accepted.
    public init(path: String, options: Options = Options(), acceptance: Acceptance = Acceptance()) {
        self.path = path
        self.options = options
        self.acceptance = acceptance
    }

    // MARK: - The four steps

    /// Everything that can be known to fail locally fails here, before anything is sent.
    public func prepare(_ request: inout Request) throws {
        guard !path.isEmpty, !path.hasSuffix("/") else {
            throw HTTPContentError(.invalidArgument, "download path \"\(path)\" is not a file path")
        }
        // The C calls below would see the path cut short at a NUL: another file than the one given.
        guard !path.utf8.contains(0) else {
            throw HTTPContentError(.invalidArgument, "download path contains a NUL byte")
        }
        let dir = directory(of: path)
        if options.makeDirectories { try makeDirectories(dir) }
        var info = stat()
        guard stat(dir, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw HTTPContentError(.localIO, "download directory \"\(dir)\" does not exist")
        }
        guard access(dir, W_OK) == 0 else {
            throw HTTPContentError(.localIO, "download directory \"\(dir)\" is not writable: \(errnoText())")
        }
        if !options.overwrite, access(path, F_OK) == 0 {
            throw HTTPContentError(.localIO, "\"\(path)\" exists and overwriting is off")
        }
        // A retry policy may send the request again with this handler: start from nothing.
        resumeFrom = 0
        resumed = false
        written = 0
        head = nil
        partIsComplete = false
        verifier = DownloadVerifier(expected: options.digest)
        fileEnd = 0
        writeBehind = WriteBehind(from: 0, enabled: false)
        closeReplaced()
        if options.resume {
            let part = path + ".part"
            // Read and write: a resumed part is read back once for its digest.
            fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw HTTPContentError(.localIO, "cannot open \"\(part)\": \(errnoText())") }
            tempPath = part
            keepPart = true
            resumeFrom = Int64(lseek(fd, 0, SEEK_END))
            if resumeFrom > 0 {
                request.headers.set("Range", "bytes=\(resumeFrom)-")
                // The rest of the same version only: a changed file comes whole (200).
                if let validator = PartValidators.read(metaPath)?.ifRange {
                    request.headers.set("If-Range", validator)
                }
            }
        } else {
            var template = Array("\(dir)/.\(baseName(of: path)).hc-XXXXXX".utf8CString)
            fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw HTTPContentError(.localIO, "cannot create a file in \"\(dir)\": \(errnoText())") }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            tempPath = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            fchmod(fd, 0o644)
        }
    }

    public func accept(_ head: ResponseHead) throws -> Bool {
        self.head = head
        // RFC 9110 §15.5.17: a 416 names the representation's length in "bytes */N". A part
        // of exactly N bytes is the finished download (a crash after the last byte, before the
        // rename): it is complete, not refused.
        if head.status == 416, resumeFrom > 0, completeLength(head) == resumeFrom {
            partIsComplete = true
            resumed = true
            if let expected = options.digest {
                verifier = DownloadVerifier(expected: expected)
                verifier.start(ResponseHead(status: 200, headers: Headers()), existing: readPart)
            }
            return true
        }
        do {
            try acceptance.check(head)
        } catch {
            // An error page is never saved; a part the server refuses to continue is dropped.
            if head.status == 416 { keepPart = false }
            throw error
        }
        if resumeFrom > 0, !head.hasNoBodyByDefinition {
            if head.status == 206, contentRangeStart(head) == resumeFrom {
                resumed = true
            } else {
                // The server sent the whole body (or another range): start the part over.
                guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
                    throw HTTPContentError(.localIO, "cannot restart \"\(tempPath ?? "")\": \(errnoText())", response: head)
                }
                resumeFrom = 0
            }
        }
        if !head.hasNoBodyByDefinition { reserve(head) }
        fileEnd = resumeFrom
        writeBehind = WriteBehind(from: fileEnd, enabled: !head.hasNoBodyByDefinition, flush: options.fsync)
        if !head.hasNoBodyByDefinition, !options.resume { releaseReplacedCache() }
        if !head.hasNoBodyByDefinition {
            if options.resume { PartValidators(head).write(metaPath) }
            verifier.start(head, existing: resumeFrom > 0 ? readPart : { _ in })
        }
        return true
    }

    /// Reserves the file's blocks for a body of known length (Content-Length, not encoded), so
    /// the file system allocates it in one extent up front instead of page by page as the
    /// writes arrive (delayed allocation's per-page reservations; less fragmentation too).
    /// Not for a resume's part, which must never hold blocks past its bytes; any failure
    /// (a file system without fallocate, no space) leaves the writes to allocate as before.
    private func reserve(_ head: ResponseHead) {
        reserved = 0
        guard !options.resume, head.headers["content-encoding"].map({ $0.lowercased() == "identity" }) ?? true,
              let text = head.headers["content-length"], let length = Int64(text.trimmingSpaces()),
              length > 0, length <= (options.maxSize ?? .max) else { return }
        if fallocate(fd, HC_FALLOC_FL_KEEP_SIZE, 0, off_t(length)) == 0 { reserved = length }
    }

    /// Drops the cached pages of the file this download will replace, as a truncating writer
    /// frees them when it opens it: the new bytes then reuse warm pages instead of fresh ones
    /// (bench/README.md: −20 % CPU per byte measured when the old file was cached). The old
    /// file itself is untouched and stays whole until the rename; a failed download leaves it
    /// as it was, only no longer cached. Regular files only, never through a symlink (the
    /// rename replaces the link, not what it points to). A file of a window or more stays open
    /// until after the rename, whose freeing of it then happens in the background.
    private func releaseReplacedCache() {
        let old = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard old >= 0 else { return }
        var info = stat()
        guard fstat(old, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(old)
            return
        }
        _ = posix_fadvise(old, 0, 0, Int32(POSIX_FADV_DONTNEED))
        closeReplaced()
        if Int64(info.st_size) >= WriteBehind.window { replaced = old } else { close(old) }
    }

    /// Closes the replaced file's descriptor here (it was not replaced: closing frees nothing).
    private func closeReplaced() {
        if replaced >= 0 { close(replaced) }
        replaced = -1
    }

    /// Feeds the bytes already in the part (before `resumeFrom`) to `sink`.
    private func readPart(_ sink: (UnsafeRawBufferPointer) -> Void) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < resumeFrom {
            let n = pread(fd, buffer.baseAddress, min(buffer.count, Int(resumeFrom - offset)), off_t(offset))
            guard n > 0 else { break }
            sink(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            offset += Int64(n)
        }
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        if partIsComplete { return }  // the 416's page, not the file's bytes
        if let max = options.maxSize, written + Int64(chunk.count) > max {
            keepPart = false
            throw HTTPContentError(.tooLarge, "download exceeds the limit of \(max) bytes", response: head)
        }
        if verifier.active { verifier.update(chunk) }
        if pending == nil, chunk.count < File.writeSize {
            pending = .allocate(byteCount: File.writeSize, alignment: 4096)
        }
        if let buffer = pending {
            // Filled to the brim before each write, so every write(2) but the last is writeSize
            // bytes at a multiple of writeSize from where the body began (a chunk that did not
            // fit used to be written on its own, 16 KiB, leaving the later writes unaligned).
            var rest = chunk
            while !rest.isEmpty {
                let n = min(rest.count, buffer.count - pendingCount)
                UnsafeMutableRawBufferPointer(rebasing: buffer[pendingCount..<pendingCount + n])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[..<n]))
                pendingCount += n
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
                if pendingCount == buffer.count { try flushPending() }
            }
        } else {
            try write(chunk)  // a chunk of writeSize or more: written as it is, not copied
        }
        written += Int64(chunk.count)
    }

    private func flushPending() throws(HTTPContentError) {
        guard let buffer = pending, pendingCount > 0 else { return }
        let count = pendingCount
        pendingCount = 0
        try write(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws(HTTPContentError) {
        if let failure = writeAll(fd, bytes) {
            throw HTTPContentError(.localIO, "writing \"\(tempPath ?? path)\" failed: \(errnoText(failure))", response: head)
        }
        fileEnd += Int64(bytes.count)
        if let failure = writeBehind.wrote(fd: fd, upTo: fileEnd) {
            throw HTTPContentError(.localIO, "writing \"\(tempPath ?? path)\" back to disk failed: \(errnoText(failure))", response: head)
        }
    }

    public func finish() throws -> FileDownload {
        try flushPending()
        releasePending()
        // A body shorter than announced fails in libcurl first; should one finish, the blocks
        // reserved past its end go (ext4 frees them on a truncate to the same size).
        if reserved > written { _ = ftruncate(fd, off_t(written)) }
        if let failure = writeBehind.finish() {
            throw HTTPContentError(.localIO, "flushing \"\(tempPath ?? path)\" to disk failed: \(errnoText(failure))", response: head)
        }
        guard !options.fsync || Glibc.fsync(fd) == 0 else {
            throw HTTPContentError(.localIO, "fsync of \"\(tempPath ?? path)\" failed: \(errnoText())", response: head)
        }
        let closed = close(fd)
        fd = -1
        guard closed == 0, let tempPath else {
            throw HTTPContentError(.localIO, "closing \"\(path)\" failed: \(errnoText())", response: head)
        }
        if head?.hasNoBodyByDefinition == true {
            // A HEAD or a 204/205 says nothing of the file's content: it stays as it was (the
            // temporary file, empty, goes in cleanup; a resume's part is kept as it was).
            var info = stat()
            let size = stat(path, &info) == 0 ? Int64(info.st_size) : 0
            return FileDownload(path: path, bytesWritten: 0, size: size, resumed: false)
        }
        if !options.overwrite, access(path, F_OK) == 0 {
            throw HTTPContentError(.localIO, "\"\(path)\" appeared during the download and overwriting is off", response: head)
        }
        do {
            try verifier.verify(response: head)
        } catch {
            // Bytes that are not the file: neither the file nor a part to continue is left.
            keepPart = false
            throw error
        }
        guard rename(tempPath, path) == 0 else {
            throw HTTPContentError(.localIO, "renaming the download to \"\(path)\" failed: \(errnoText())", response: head)
        }
        self.tempPath = nil
        if options.resume { unlink(metaPath) }
        if options.fsync { syncDirectory(directory(of: path)) }
        if replaced >= 0 {
            // The old file, unlinked by the rename, is freed when this last descriptor closes.
            closeInBackground(replaced)
            replaced = -1
        }
        return FileDownload(path: path, bytesWritten: written, size: resumeFrom + written, resumed: resumed,
                            digest: verifier.reported)
    }

    private func releasePending() {
        pending?.deallocate()
        pending = nil
        pendingCount = 0
    }

    public func cleanup(failed: Bool) {
        if failed, !partIsComplete, pendingCount > 0, keepPart, fd >= 0 {
            // A kept part holds every byte received, so a resume continues after the last one.
            try? flushPending()
        }
        releasePending()
        _ = writeBehind.finish()
        closeReplaced()
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if let tempPath, failed || !keepPart {
            if !(failed && keepPart) {
                unlink(tempPath)
                if options.resume { unlink(metaPath) }
            }
        }
    }

    // MARK: - Helpers

    /// N of "Content-Range: bytes */N" (a 416's form), or nil.
    private func completeLength(_ head: ResponseHead) -> Int64? {
        guard let value = head.headers["content-range"], value.hasPrefix("bytes */") else { return nil }
        return Int64(String(value.dropFirst(8)).trimmingSpaces())
    }

    private func contentRangeStart(_ head: ResponseHead) -> Int64? {
        // "bytes 100-199/200"
        guard let value = head.headers["content-range"], value.hasPrefix("bytes ") else { return nil }
        return Int64(value.dropFirst(6).prefix { $0 != "-" })
    }

    private func makeDirectories(_ dir: String) throws(HTTPContentError) {
        var current = dir.hasPrefix("/") ? "" : "."
        for part in dir.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw HTTPContentError(.localIO, "cannot create directory \"\(current)\": \(errnoText())")
            }
        }
    }

    private func syncDirectory(_ dir: String) {
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }
}

func directory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

func baseName(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return path }
    return String(path[path.index(after: slash)...])
}

extension File: ResumingHandler {
    /// The part's size when a resume continues it (progress counts it as received).
    public var heldBytes: Int64 { resumeFrom }
}
