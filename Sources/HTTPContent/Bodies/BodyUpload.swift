import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// A request's method and body as libcurl sends them: sets the options on the easy handle and
/// serves libcurl's read and seek callbacks while the transfer runs.
///
/// Bodies are read through `CURLOPT_READFUNCTION`, straight from where they live (the
/// request's bytes, a file, the caller's function) into libcurl's upload buffer: nothing is
/// copied on the way, and a 1 GiB file needs no more memory than a small one. The size, when
/// known, goes to `CURLOPT_POSTFIELDSIZE_LARGE` (Content-Length); otherwise -1 makes libcurl send
/// the body chunked. Multipart bodies go through `curl_mime`, which reads file parts itself.
///
/// Small in-memory bodies (under 64 KiB, libcurl's MAX_INITIAL_POST_SIZE) are the exception:
/// they go through `CURLOPT_COPYPOSTFIELDS`, which libcurl sends in the same write as the
/// headers. Copying at most 64 KiB costs less than the extra system call and TCP segment per
/// request that reading them through the callback would take.
///
/// Files are opened here, before connecting, so a missing file fails with `.localIO` and sends
/// nothing. The transfer keeps this object alive until libcurl is done with it.
final class BodyUpload {
    /// In-memory bodies shorter than this are handed over with COPYPOSTFIELDS.
    static let inlineLimit = 64 * 1024

    private enum Source {
        case memory([UInt8])
        /// `start` is the offset of the body in a seekable file (read with pread), nil for a
        /// pipe or socket (read with read). `owned`: opened here, closed on deinit.
        case descriptor(Int32, owned: Bool, start: Int64?, label: String)
        case callback(@Sendable (UnsafeMutableRawBufferPointer) throws -> Int)
        case mime(OpaquePointer)
    }

    private let source: Source
    /// The body's size, or nil when it is sent chunked.
    private(set) var length: Int64?
    let contentType: String?
    /// How many bytes libcurl has read so far (back to 0 when it rewinds for a redirect).
    private var position: Int64 = 0
    /// Why reading the body failed; the transfer reports it instead of libcurl's abort code.
    private(set) var failure: HTTPContentError?

    /// libcurl labels a POST without a Content-Type as a form; a body whose type is unknown
    /// must not claim that, so the transfer removes the header unless the caller sets one.
    var removesDefaultContentType: Bool {
        if case .mime = source { return false }
        return contentType == nil
    }

    // MARK: - Configuration

    /// Sets the method and body options on `easy`.
    /// - Returns: the state the read callbacks use (nil when there is no body); keep it alive
    ///   until the transfer is over.
    /// - Throws: `.localIO` when a file cannot be opened (nothing is sent); `.invalidArgument` when the
    ///   caller's Content-Length header contradicts the body's size.
    static func configure(_ request: Request, on easy: EasyHandle) throws(HTTPContentError) -> BodyUpload? {
        let method = request.method
        guard let body = request.body else {
            switch method {
            case "GET": try easy.set(CURLOPT_HTTPGET, true)
            case "HEAD": try easy.set(CURLOPT_NOBODY, true)
            default: try easy.set(CURLOPT_CUSTOMREQUEST, method)
            }
            return nil
        }
        let upload = try BodyUpload(body, easy: easy)
        try upload.apply(to: easy, declaredLength: request.headers["Content-Length"])
        if method != "POST" { try easy.set(CURLOPT_CUSTOMREQUEST, method) }
        return upload
    }

    private init(_ body: RequestBody, easy: EasyHandle) throws(HTTPContentError) {
        switch body {
        case .bytes(let bytes, let type):
            source = .memory(bytes)
            length = Int64(bytes.count)
            contentType = type
        case .stream(.file(let path), let type):
            let (fd, size) = try BodyUpload.open(path)
            source = .descriptor(fd, owned: true, start: size == nil ? nil : 0, label: path)
            length = size
            contentType = type
        case .stream(.fileDescriptor(let fd, let given), let type):
            let (start, rest) = try BodyUpload.inspect(fd)
            source = .descriptor(fd, owned: false, start: start, label: "descriptor \(fd)")
            length = given ?? rest
            contentType = type
        case .stream(.callback(let given, let read), let type):
            source = .callback(read)
            length = given
            contentType = type
        case .multipart(let multipart):
            source = .mime(try BodyUpload.mime(multipart, easy: easy))
            length = nil
            contentType = nil
        }
        if let length, length < 0 {
            throw HTTPContentError(.invalidArgument, "negative body length \(length)")
        }
    }

    deinit {
        switch source {
        case .descriptor(let fd, owned: true, _, _): close(fd)
        case .mime(let mime): curl_mime_free(mime)
        default: break
        }
    }

    private func apply(to easy: EasyHandle, declaredLength: String?) throws(HTTPContentError) {
        if case .mime(let mime) = source {
            try easy.set(CURLOPT_MIMEPOST, pointer: UnsafeRawPointer(mime))
            return
        }
        // The caller's Content-Length wins: it sizes a body of unknown length, and must agree
        // with a known one (a mismatch would desynchronise the connection).
        if let declaredLength {
            guard let declared = Int64(declaredLength.trimmingSpaces()), declared >= 0 else {
                throw HTTPContentError(.invalidArgument, "invalid Content-Length header \(quoted(declaredLength))")
            }
            if let length, length != declared {
                throw HTTPContentError(.invalidArgument,
                    "the Content-Length header says \(declared) bytes but the body has \(length)")
            }
            length = declared
        }
        try easy.set(CURLOPT_POST, true)
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: length ?? -1)
        if case .memory(let bytes) = source, bytes.count < BodyUpload.inlineLimit {
            // COPYPOSTFIELDS (after the size): libcurl keeps its own copy and sends it in the
            // same write as the headers, one system call and one segment instead of two.
            let code = bytes.withUnsafeBytes { raw in
                let empty = UnsafeRawPointer(("" as StaticString).utf8Start)
                return hc_curl_setopt_ptr(easy.raw, CURLOPT_COPYPOSTFIELDS, raw.baseAddress ?? empty)
            }
            guard code == CURLE_OK else {
                throw HTTPContentError(.invalidArgument, "request body refused: \(curlMessage(code))")
            }
            return
        }
        let me = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        try easy.set(CURLOPT_READDATA, pointer: me)
        try easy.set(CURLOPT_SEEKDATA, pointer: me)
        _ = hc_curl_setopt_data_cb(easy.raw, CURLOPT_READFUNCTION, bodyReadCallback)
        _ = hc_curl_setopt_seek_cb(easy.raw, bodySeekCallback)
    }

    // MARK: - Files

    /// Opens `path` for reading: its descriptor, and its size when it is a regular file.
    private static func open(_ path: String) throws(HTTPContentError) -> (Int32, Int64?) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("cannot open \(path)") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = ioError("cannot stat \(path)")
            close(fd)
            throw error
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            close(fd)
            throw HTTPContentError(.localIO, "cannot upload \(path): it is a directory")
        case S_IFREG:
            return (fd, Int64(st.st_size))
        default:
            return (fd, nil)
        }
    }

    /// A borrowed descriptor's current offset (nil when it cannot seek) and, for a regular file,
    /// how many bytes follow it.
    private static func inspect(_ fd: Int32) throws(HTTPContentError) -> (Int64?, Int64?) {
        guard fd >= 0 else { throw HTTPContentError(.invalidArgument, "invalid file descriptor \(fd)") }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ioError("cannot use descriptor \(fd)") }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw HTTPContentError(.localIO, "cannot upload descriptor \(fd): it is a directory")
        }
        let offset = lseek(fd, 0, SEEK_CUR)
        guard offset >= 0 else { return (nil, nil) }
        let rest = (st.st_mode & S_IFMT) == S_IFREG ? max(Int64(st.st_size) - Int64(offset), 0) : nil
        return (Int64(offset), rest)
    }

    private static func ioError(_ what: String) -> HTTPContentError {
        HTTPContentError(.localIO, "\(what): \(String(cString: strerror(errno)))")
    }

    // MARK: - Multipart

    private static func mime(_ multipart: Multipart, easy: EasyHandle) throws(HTTPContentError) -> OpaquePointer {
        guard let mime = curl_mime_init(easy.raw) else {
            throw HTTPContentError(.invalidArgument, "curl_mime_init failed")
        }
        do throws(HTTPContentError) {
            for part in multipart.parts {
                guard let handle = curl_mime_addpart(mime) else {
                    throw HTTPContentError(.invalidArgument, "curl_mime_addpart failed")
                }
                try add(part, to: handle)
            }
        } catch {
            curl_mime_free(mime)
            throw error
        }
        return mime
    }

    private static func add(_ part: Multipart.Part, to handle: OpaquePointer) throws(HTTPContentError) {
        func check(_ code: CURLcode, _ what: String) throws(HTTPContentError) {
            guard code == CURLE_OK else {
                throw HTTPContentError(.invalidArgument, "multipart \(what): \(curlMessage(code))",
                                       curlCode: Int32(code.rawValue))
            }
        }
        func data(_ bytes: [UInt8]) throws(HTTPContentError) {
            // curl_mime_data copies; an empty part still needs a non-NULL pointer.
            let code = bytes.isEmpty ? curl_mime_data(handle, "", 0) : bytes.withUnsafeBytes {
                curl_mime_data(handle, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count)
            }
            try check(code, "data")
        }
        switch part {
        case .field(let name, let value):
            try check(curl_mime_name(handle, name), "name")
            try data(Array(value.utf8))
        case .bytes(let name, let bytes, let filename, let type):
            try check(curl_mime_name(handle, name), "name")
            try data(bytes)
            if let filename { try check(curl_mime_filename(handle, filename), "filename") }
            if let type { try check(curl_mime_type(handle, type), "type") }
        case .file(let name, let path, let filename, let type):
            try check(curl_mime_name(handle, name), "name")
            // The file was there when the part was added; it must still be, or nothing is sent.
            try Multipart.checkReadableFile(path)
            guard curl_mime_filedata(handle, path) == CURLE_OK else {
                throw HTTPContentError(.localIO, "cannot read \(path) for a multipart part")
            }
            if let filename { try check(curl_mime_filename(handle, filename), "filename") }
            if let type { try check(curl_mime_type(handle, type), "type") }
        }
    }

    // MARK: - Reading (libcurl's callbacks)

    /// Fills libcurl's buffer; returns the count, 0 at the end, or CURL_READFUNC_ABORT after
    /// recording `failure`.
    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var room = buffer.count
        if let length { room = Int(min(Int64(room), length - position)) }
        guard room > 0 else { return 0 }
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<room])
        do throws(HTTPContentError) {
            let n = try fill(target)
            if n == 0, let length, position < length {
                throw HTTPContentError(sourceIsCallback ? .callback : .localIO,
                    "the body ended after \(position) of the \(length) bytes announced")
            }
            position += Int64(n)
            return n
        } catch {
            failure = error
            return Int(CURL_READFUNC_ABORT)
        }
    }

    private var sourceIsCallback: Bool {
        if case .callback = source { return true }
        return false
    }

    private func fill(_ target: UnsafeMutableRawBufferPointer) throws(HTTPContentError) -> Int {
        switch source {
        case .memory(let bytes):
            let start = Int(position)
            let n = min(target.count, bytes.count - start)
            bytes.withUnsafeBytes { all in
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[start..<start + n]))
            }
            return n
        case .descriptor(let fd, _, let start, let label):
            while true {
                let n = start.map { pread(fd, target.baseAddress, target.count, off_t($0 + position)) }
                    ?? Glibc.read(fd, target.baseAddress, target.count)
                if n >= 0 { return n }
                if errno != EINTR { throw BodyUpload.ioError("reading \(label) failed") }
            }
        case .callback(let read):
            let n: Int
            do {
                n = try read(target)
            } catch {
                throw HTTPContentError.wrapping(error)
            }
            guard n >= 0, n <= target.count else {
                throw HTTPContentError(.callback, "the upload callback returned \(n) for a buffer of \(target.count) bytes")
            }
            return n
        case .mime:
            return 0
        }
    }

    /// Rewinds for libcurl (a redirect that re-sends the body, an auth retry).
    fileprivate func seek(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0 else { return CURL_SEEKFUNC_CANTSEEK }
        switch source {
        case .memory(let bytes) where offset <= Int64(bytes.count):
            position = offset
        case .descriptor(_, _, _?, _):
            position = offset
        default:
            guard offset == position else { return CURL_SEEKFUNC_CANTSEEK }
        }
        return CURL_SEEKFUNC_OK
    }
}

// MARK: - C callbacks (non-capturing; the upload travels as userdata, as in Transfer)

private let bodyReadCallback: hc_curl_data_cb = { ptr, size, count, userdata in
    guard let userdata, let ptr else { return Int(CURL_READFUNC_ABORT) }
    let upload = Unmanaged<BodyUpload>.fromOpaque(userdata).takeUnretainedValue()
    return upload.read(into: UnsafeMutableRawBufferPointer(start: ptr, count: size * count))
}

private let bodySeekCallback: hc_curl_seek_cb = { userdata, offset, origin in
    guard let userdata else { return CURL_SEEKFUNC_FAIL }
    let upload = Unmanaged<BodyUpload>.fromOpaque(userdata).takeUnretainedValue()
    return upload.seek(to: Int64(offset), origin: origin)
}
