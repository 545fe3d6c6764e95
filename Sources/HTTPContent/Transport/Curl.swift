import CCurl

/// libcurl's process-wide initialisation, run once, lazily and thread-safely (a global `let`).
let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

/// A libcurl easy handle, with what the last transfer on it configured. Sendable only as a token
/// moved between the pool and one transfer at a time.
///
/// Handles are reused without `curl_easy_reset` when the last transfer was a plain one (see
/// `Transfer.configure`): the options it set are recorded in `applied`, and the next transfer
/// sets only what differs. Re-setting every option and resetting the handle cost more per
/// request than libcurl's own work for a small response.
final class EasyHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
    /// libcurl's error message for the current transfer (CURLOPT_ERRORBUFFER), set once.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The request header list libcurl is given (CURLOPT_HTTPHEADER); owned by the handle so
    /// that an unchanged list stays set from one transfer to the next.
    @exclusivity(unchecked) var headerList: UnsafeMutablePointer<curl_slist>?
    /// What is set on the handle beyond libcurl's defaults; nil when nothing is known (a new or
    /// reset handle), so that the next transfer sets everything.
    @exclusivity(unchecked) var applied: AppliedOptions?
    /// False while a transfer that must not leave its options behind (a body, a custom method,
    /// a failed configuration) holds the handle: the pool then resets it.
    @exclusivity(unchecked) var reusable = false
    /// libcurl's cookie engine was turned on for the handle (`CookieJar.attach`). It stays on
    /// through curl_easy_reset: done once per handle.
    @exclusivity(unchecked) var cookieEngineOn = false
    /// The transfer using the handle. libcurl's callbacks get the handle as their userdata, set
    /// once per handle, and find the transfer here (the transfer outlives its callbacks).
    @exclusivity(unchecked) var transfer: Unmanaged<Transfer>?
    /// The last transfer's header store, reused by the next one once no response holds it.
    @exclusivity(unchecked) var spareHeaders: ReceivedHeaders?
    /// The cookie jar whose share handle this handle is attached to: kept alive as long as the
    /// handle, so that the share is cleaned up after every handle using it.
    @exclusivity(unchecked) var jar: CookieJar?
    /// The share handle this handle is attached to (`ConnectionShare`), kept alive likewise.
    @exclusivity(unchecked) var share: ConnectionShare?
    /// The client's transport options whose resolve list libcurl points at, kept alive likewise.
    @exclusivity(unchecked) var transportOptions: PreparedTransport?
    /// The multi handle watched transfers run on (`watchMulti`), once one has.
    @exclusivity(unchecked) var ownMulti: UnsafeMutableRawPointer?
    /// The last URL given to the handle, parsed once (`setURL`), and its text.
    @exclusivity(unchecked) private var parsedURL: OpaquePointer?
    @exclusivity(unchecked) private var parsedURLText = ""

    init(raw: UnsafeMutableRawPointer) {
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(to: 0)
        setFixedPointers()
    }

    /// What libcurl keeps pointers to for the handle's life: the error buffer, and the handle
    /// itself as CURLOPT_PRIVATE (a multi driver finds the transfer of a finished handle there).
    private func setFixedPointers() {
        _ = hc_curl_setopt_ptr(raw, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = hc_curl_setopt_ptr(raw, CURLOPT_PRIVATE, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let ownMulti { curl_multi_cleanup(ownMulti) }
        curl_easy_cleanup(raw)
        curl_url_cleanup(parsedURL)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// An empty header store: the last one, when nothing else refers to it any more (the
    /// common case of a caller done with the previous response), else a new one.
    func takeHeaderStore() -> ReceivedHeaders {
        if var spare = spareHeaders {
            spareHeaders = nil
            if isKnownUniquelyReferenced(&spare) {
                spare.removeAll()
                return spare
            }
        }
        return ReceivedHeaders()
    }

    /// Back to libcurl's defaults (the connection cache is kept), forgetting what was applied.
    func reset() {
        curl_easy_reset(raw)
        curl_slist_free_all(headerList)
        headerList = nil
        applied = nil
        errorBuffer[0] = 0
        setFixedPointers()
    }

    /// Gives libcurl the URL already parsed (CURLOPT_CURLU), kept per handle: with CURLOPT_URL
    /// libcurl parses the text again at every transfer; with a CURLU it copies the parts
    /// (a redirect's target is still parsed from text, on libcurl's copy). Parsed with the flags
    /// libcurl itself uses on CURLOPT_URL's text, so the parts and the effective URL are the
    /// same. A URL that does not parse goes as text, for libcurl to refuse with its own error.
    func setURL(_ url: String) throws(HTTPContentError) {
        if parsedURL == nil || parsedURLText != url {
            guard let parsed = curl_url() else { return try setURLText(url) }
            let flags = UInt32(CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME)
            guard curl_url_set(parsed, CURLUPART_URL, url, flags) == CURLUE_OK else {
                curl_url_cleanup(parsed)
                return try setURLText(url)
            }
            // The old one is no longer set once the new one is (libcurl reads it at a
            // transfer's start only, and copies it).
            try set(CURLOPT_CURLU, pointer: UnsafeRawPointer(parsed))
            curl_url_cleanup(parsedURL)
            parsedURL = parsed
            parsedURLText = url
        } else {
            try set(CURLOPT_CURLU, pointer: UnsafeRawPointer(parsedURL))
        }
        // No text: libcurl then takes the effective URL's text from the CURLU at the next
        // transfer's start (a text left from an earlier URL would be taken instead).
        try set(CURLOPT_URL, pointer: nil)
    }

    private func setURLText(_ url: String) throws(HTTPContentError) {
        try set(CURLOPT_CURLU, pointer: nil)
        try set(CURLOPT_URL, url)
    }

    /// Replaces the header list; the old one is freed once libcurl no longer points to it.
    func setHeaderList(_ list: UnsafeMutablePointer<curl_slist>?) throws(HTTPContentError) {
        let old = headerList
        headerList = list
        try set(CURLOPT_HTTPHEADER, pointer: list)
        curl_slist_free_all(old)
    }
}

/// The options a reusable handle carries from its last transfer. The client's configuration
/// is fixed for the life of its handle pool, so only what a request can change is recorded.
/// libcurl's receive and upload buffer sizes for a transfer; 0 leaves libcurl's default.
struct TransferBuffers: Equatable, Sendable {
    var receive: Int
    var upload: Int
    /// For a request sent alone: measured (BENCHMARKS.md, "Speed to the physical limit") as where
    /// CPU per byte stops falling on a large download.
    static let aloneDefault = 256 * 1024
    /// The upload buffer for a request sent alone: measured (bench/bodies.sh's sweep of raw
    /// libcurl, a 64 MiB streamed upload) as the least CPU per byte among 64 KiB, 256 KiB,
    /// 1 MiB and 2 MiB. Allocated by libcurl only for transfers that upload.
    static let aloneUploadDefault = 1024 * 1024
    /// For the transfers of a batch (and `async` requests among others): libcurl 7.88's HTTP/2
    /// code copies a stream's DATA into that stream's receive buffer while another transfer
    /// reads the shared connection, and pauses the whole connection once the buffer is full;
    /// every later readiness of the socket then runs every transfer on it (one poll(2) each).
    /// With 64 x 64 KiB in flight on one connection, 16 KiB took 24 ms of CPU per pass and
    /// 2,200 poll calls, 128 KiB 15 ms and 190 (BENCHMARKS.md, "HTTP/2 multiplexing"); past
    /// 128 KiB nothing more was saved. libcurl allocates the buffer per handle and only the
    /// pages a body reaches are touched, so thousands of small transfers stay small. Only for
    /// handlers that keep the whole body (`KeepsWholeBody`): a streaming handler keeps
    /// libcurl's 16 KiB (`streamingBuffers`), since what one round of reads or one pause lets
    /// through is counted in buffers, and its memory is meant to stay flat.
    static let multiDefault = 128 * 1024
}

struct AppliedOptions {
    var url: String
    /// The receive/upload buffer sizes set on the handle.
    var buffers: TransferBuffers
    var followRedirects: Bool
    var maxRedirects: Int
    /// CURLOPT_TIMEOUT_MS / CURLOPT_CONNECTTIMEOUT_MS as set (0: libcurl's default).
    var timeoutMs: Int
    var connectTimeoutMs: Int
    /// HEAD (CURLOPT_NOBODY) rather than GET.
    var head: Bool
    /// The progress callback is on (CURLOPT_NOPROGRESS 0).
    var progress: Bool
    /// The lines of `headerList`.
    var headerLines: [String]
}

/// Setting libcurl options with typed calls; a failure here is a programming error on our side
/// or a feature missing from this libcurl, reported as `.invalidArgument` with libcurl's words.
extension EasyHandle {
    func set(_ option: CURLoption, _ value: Int) throws(HTTPContentError) {
        try check(hc_curl_setopt_long(raw, option, value), option)
    }
    func set(_ option: CURLoption, _ value: Bool) throws(HTTPContentError) {
        try check(hc_curl_setopt_long(raw, option, value ? 1 : 0), option)
    }
    func set(_ option: CURLoption, offset value: Int64) throws(HTTPContentError) {
        try check(hc_curl_setopt_off(raw, option, curl_off_t(value)), option)
    }
    func set(_ option: CURLoption, _ value: String) throws(HTTPContentError) {
        try check(value.withCString { hc_curl_setopt_str(raw, option, $0) }, option)
    }
    func set(_ option: CURLoption, pointer value: UnsafeRawPointer?) throws(HTTPContentError) {
        try check(hc_curl_setopt_ptr(raw, option, value), option)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPContentError) {
        guard code == CURLE_OK else {
            throw HTTPContentError(.invalidArgument,
                "libcurl refused option \(option.rawValue): \(curlMessage(code))",
                curlCode: Int32(code.rawValue))
        }
    }

    func info(_ key: CURLINFO) -> Int {
        var v = 0
        _ = hc_curl_getinfo_long(raw, key, &v)
        return v
    }
    func info(offset key: CURLINFO) -> Int64 {
        var v: curl_off_t = 0
        _ = hc_curl_getinfo_off(raw, key, &v)
        return Int64(v)
    }
    func info(string key: CURLINFO) -> String? {
        var p: UnsafeMutablePointer<CChar>? = nil
        _ = hc_curl_getinfo_str(raw, key, &p)
        return p.map { String(cString: $0) }
    }
}

func curlMessage(_ code: CURLcode) -> String {
    String(cString: curl_easy_strerror(code))
}

/// Milliseconds for libcurl's `_MS` options, at least 1 for any positive duration.
func milliseconds(_ d: Duration) -> Int {
    let (s, atto) = d.components
    let ms = s * 1000 + atto / 1_000_000_000_000_000
    return ms == 0 && (s > 0 || atto > 0) ? 1 : Int(ms)
}
