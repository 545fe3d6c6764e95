import CCurl

/// libcurl's process-wide initialisation, run once, lazily and thread-safely (a global `let`).
let curlGlobalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

/// A libcurl easy handle. Sendable only as a token moved between the pool and one transfer.
struct EasyHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
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
