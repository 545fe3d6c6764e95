import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One request bound to one easy handle and its handler: it configures the handle, receives
/// libcurl's callbacks and turns the outcome into a response head or an error. What drives it
/// (`curl_easy_perform` today, a multi handle later) is kept outside, in the driver.
final class Transfer {
    let easy: EasyHandle
    let request: Request
    let handler: any ContentHandler
    let cancel: CancellationToken?
    let progress: ((TransferProgress) -> Void)?
    /// How much of a rejected response's body is kept in the error.
    let rejectedBodyCap: Int

    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    // The response being received: reset at every status line, so only the final one remains.
    private var status = 0
    private var reason = ""
    private var httpVersion = ""
    private var fields = Headers()

    private var head: ResponseHead?
    private var accepted: Bool?
    private var rejection: HTTPContentError?
    private var rejectedBody: [UInt8] = []
    private var failure: HTTPContentError?
    /// The handler threw `StopTransfer`: the write error libcurl reports is our own doing.
    private var stoppedByHandler = false
    private(set) var decodedBytes: Int64 = 0

    init(easy: EasyHandle, request: Request, handler: any ContentHandler,
         cancel: CancellationToken?, progress: ((TransferProgress) -> Void)?,
         rejectedBodyCap: Int = 64 * 1024) {
        self.easy = easy
        self.request = request
        self.handler = handler
        self.cancel = cancel
        self.progress = progress
        self.rejectedBodyCap = rejectedBodyCap
        errorBuffer.initialize(to: 0)
    }

    deinit {
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    // MARK: - Configuration

    func configure(_ config: ClientConfiguration) throws(HTTPContentError) {
        let opts = request.options
        try easy.set(CURLOPT_URL, request.url)
        try easy.set(CURLOPT_NOSIGNAL, true)
        try easy.set(CURLOPT_ERRORBUFFER, pointer: errorBuffer)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_FOLLOWLOCATION, opts.followRedirects ?? config.followRedirects)
        try easy.set(CURLOPT_MAXREDIRS, opts.maxRedirects ?? config.maxRedirects)
        if let t = opts.timeout ?? config.timeout { try easy.set(CURLOPT_TIMEOUT_MS, milliseconds(t)) }
        if let t = opts.connectTimeout ?? config.connectTimeout {
            try easy.set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds(t))
        }
        if let low = config.lowSpeedLimit {
            try easy.set(CURLOPT_LOW_SPEED_LIMIT, low.bytesPerSecond)
            try easy.set(CURLOPT_LOW_SPEED_TIME, low.seconds)
        }
        try easy.set(CURLOPT_SSL_VERIFYPEER, config.verifyTLS)
        try easy.set(CURLOPT_SSL_VERIFYHOST, config.verifyTLS ? 2 : 0)
        if let ca = config.caFile { try easy.set(CURLOPT_CAINFO, ca) }
        if config.acceptCompressed { try easy.set(CURLOPT_ACCEPT_ENCODING, "") }
        try easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, true)
        try configureMethodAndBody()
        try configureHeaders(config)

        let me = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        try easy.set(CURLOPT_WRITEDATA, pointer: me)
        try easy.set(CURLOPT_HEADERDATA, pointer: me)
        _ = hc_curl_setopt_data_cb(easy.raw, CURLOPT_WRITEFUNCTION, transferWriteCallback)
        _ = hc_curl_setopt_data_cb(easy.raw, CURLOPT_HEADERFUNCTION, transferHeaderCallback)
        if progress != nil || cancel != nil {
            try easy.set(CURLOPT_XFERINFODATA, pointer: me)
            _ = hc_curl_setopt_xferinfo_cb(easy.raw, transferProgressCallback)
            try easy.set(CURLOPT_NOPROGRESS, false)
        }
    }

    private func configureMethodAndBody() throws(HTTPContentError) {
        let method = request.method
        switch (method, request.body) {
        case ("GET", nil):
            try easy.set(CURLOPT_HTTPGET, true)
        case ("HEAD", nil):
            try easy.set(CURLOPT_NOBODY, true)
        case (_, .bytes(let bytes, _)?):
            try easy.set(CURLOPT_POST, true)
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(bytes.count))
            // COPYPOSTFIELDS: libcurl keeps its own copy, so nothing here must outlive the call.
            let code = bytes.withUnsafeBytes { raw in
                hc_curl_setopt_ptr(easy.raw, CURLOPT_COPYPOSTFIELDS, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1))
            }
            guard code == CURLE_OK else {
                throw HTTPContentError(.invalidArgument, "request body refused: \(curlMessage(code))")
            }
            if method != "POST" { try easy.set(CURLOPT_CUSTOMREQUEST, method) }
        default:
            try easy.set(CURLOPT_CUSTOMREQUEST, method)
        }
    }

    private func configureHeaders(_ config: ClientConfiguration) throws(HTTPContentError) {
        var headers = request.headers
        for field in config.headers where !headers.contains(field.name) {
            headers.add(field.name, field.value)
        }
        if !headers.contains("User-Agent") { headers.add("User-Agent", config.userAgent) }
        if let type = request.body?.contentType, !headers.contains("Content-Type") {
            headers.add("Content-Type", type)
        }
        // A POST body of more than 1 MiB makes libcurl wait for 100-continue; we send at once.
        if request.body != nil, !headers.contains("Expect") { headers.add("Expect", "") }
        try headers.validate()
        for field in headers {
            // "Name:" alone removes a header libcurl would add; "Name;" sends it empty.
            let line = field.value.isEmpty && field.name.lowercased() != "expect"
                ? "\(field.name);" : "\(field.name): \(field.value)"
            guard let appended = curl_slist_append(headerList, line) else {
                throw HTTPContentError(.invalidArgument, "could not add header \(field.name)")
            }
            headerList = appended
        }
        try easy.set(CURLOPT_HTTPHEADER, pointer: headerList)
    }

    // MARK: - Callbacks

    fileprivate func receiveHeader(_ line: UnsafeBufferPointer<UInt8>) {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let text = String(decoding: UnsafeBufferPointer(rebasing: line[0..<end]), as: UTF8.self)
        if text.hasPrefix("HTTP/") {
            let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            httpVersion = parts.first.map(String.init) ?? ""
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            reason = parts.count > 2 ? String(parts[2]) : ""
            fields = Headers()
        } else if let first = text.utf8.first, first == 0x20 || first == 0x09, fields.count > 0 {
            // Obsolete line folding: a continuation of the previous field's value.
            var last = fields.fields[fields.count - 1]
            last.value += " " + text.trimmingSpaces()
            fields.remove(last.name)
            fields.add(last.name, last.value)
        } else if let colon = text.firstIndex(of: ":") {
            let name = String(text[..<colon])
            let value = String(text[text.index(after: colon)...]).trimmingSpaces()
            fields.add(name, value)
        }
    }

    /// Returns how many bytes were taken; anything else makes libcurl abort the transfer.
    fileprivate func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        if let cancel, cancel.isCancelled {
            failure = cancelledError()
            return 0
        }
        if accepted == nil { decide(bodyEnded: false) }
        if accepted == false {
            let room = rejectedBodyCap - rejectedBody.count
            rejectedBody.append(contentsOf: chunk.prefix(max(room, 0)))
            // Enough of an unwanted body: stop receiving it.
            return chunk.count <= room ? chunk.count : 0
        }
        do {
            try handler.consume(chunk)
        } catch is StopTransfer {
            stoppedByHandler = true
            decodedBytes += Int64(chunk.count)
            return 0
        } catch {
            failure = attach(HTTPContentError.wrapping(error))
            return 0
        }
        decodedBytes += Int64(chunk.count)
        return chunk.count
    }

    fileprivate func reportProgress(received: Int64, expected: Int64, sent: Int64, toSend: Int64) -> Int32 {
        if let cancel, cancel.isCancelled { return 1 }
        progress?(TransferProgress(received: received, expected: expected, decoded: decodedBytes,
                                   sent: sent, toSend: toSend))
        if let cancel, cancel.isCancelled { return 1 }
        return 0
    }

    // MARK: - Decision and outcome

    private func makeHead(bodyEnded: Bool) -> ResponseHead {
        var head = ResponseHead(status: status != 0 ? status : easy.info(CURLINFO_RESPONSE_CODE),
                                reason: reason, httpVersion: httpVersion, headers: fields,
                                url: easy.info(string: CURLINFO_EFFECTIVE_URL) ?? request.url,
                                method: request.method)
        head.bodyEnded = bodyEnded
        return head
    }

    /// Asks the handler, once, whether it takes this response's body.
    private func decide(bodyEnded: Bool) {
        let head = makeHead(bodyEnded: bodyEnded)
        self.head = head
        do {
            if try handler.accept(head) {
                accepted = true
            } else {
                accepted = false
                rejection = HTTPContentError(.unacceptableStatus,
                    "\(head.statusLine) (rejected by the handler)", response: head)
            }
        } catch {
            accepted = false
            rejection = attach(HTTPContentError.wrapping(error))
        }
    }

    private func attach(_ error: HTTPContentError) -> HTTPContentError {
        var error = error
        if error.response == nil { error.response = head }
        return error
    }

    private func cancelledError() -> HTTPContentError {
        HTTPContentError(.cancelled, "the transfer was cancelled", response: head)
    }

    /// The outcome once libcurl is done with the transfer: the accepted response's head, or the
    /// error that explains why there is no content.
    func complete(_ code: CURLcode) -> Result<ResponseHead, HTTPContentError> {
        if let failure { return .failure(failure) }
        if var rejection {
            rejection.body = rejectedBody
            if rejection.serverMessage == nil {
                rejection.serverMessage = ServerMessage.extract(from: rejectedBody, head: rejection.response)
                if let said = rejection.serverMessage, rejection.code == .unacceptableStatus {
                    rejection.message += ": " + said
                }
            }
            return .failure(rejection)
        }
        if code != CURLE_OK, !(stoppedByHandler && code == CURLE_WRITE_ERROR) {
            return .failure(transportError(code))
        }
        if accepted == nil {
            decide(bodyEnded: true)
            if let rejection { return .failure(rejection) }
        }
        return .success(head ?? makeHead(bodyEnded: true))
    }

    private func transportError(_ code: CURLcode) -> HTTPContentError {
        let detail = String(cString: errorBuffer)
        let text = detail.isEmpty ? curlMessage(code) : "\(curlMessage(code)): \(detail)"
        let curl = Int32(code.rawValue)
        let head = self.head ?? (status != 0 ? makeHead(bodyEnded: false) : nil)
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPContentError(.timeout, text, curlCode: curl, response: head)
        case CURLE_TOO_MANY_REDIRECTS:
            return HTTPContentError(.tooManyRedirects, text, curlCode: curl, response: head)
        case CURLE_ABORTED_BY_CALLBACK:
            var e = cancelledError()
            e.curlCode = curl
            return e
        case CURLE_URL_MALFORMAT:
            return HTTPContentError(.invalidArgument, text, curlCode: curl)
        case CURLE_FILESIZE_EXCEEDED:
            return HTTPContentError(.tooLarge, text, curlCode: curl, response: head)
        default:
            return HTTPContentError(.transport, text, curlCode: curl, response: head)
        }
    }

    func metrics() -> TransferMetrics {
        var m = TransferMetrics()
        m.wireBytes = easy.info(offset: CURLINFO_SIZE_DOWNLOAD_T)
        m.decodedBytes = decodedBytes
        m.uploadedBytes = easy.info(offset: CURLINFO_SIZE_UPLOAD_T)
        m.totalTime = Double(easy.info(offset: CURLINFO_TOTAL_TIME_T)) / 1e6
        m.connectTime = Double(easy.info(offset: CURLINFO_CONNECT_TIME_T)) / 1e6
        m.redirectCount = easy.info(CURLINFO_REDIRECT_COUNT)
        m.newConnections = easy.info(CURLINFO_NUM_CONNECTS)
        return m
    }
}

// MARK: - C callbacks (non-capturing; the transfer travels as userdata)

private let transferWriteCallback: hc_curl_data_cb = { ptr, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: ptr, count: size * count))
}

private let transferHeaderCallback: hc_curl_data_cb = { ptr, size, count, userdata in
    guard let userdata, let ptr else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    let n = size * count
    ptr.withMemoryRebound(to: UInt8.self, capacity: n) {
        transfer.receiveHeader(UnsafeBufferPointer(start: $0, count: n))
    }
    return n
}

private let transferProgressCallback: hc_curl_xferinfo_cb = { userdata, dlTotal, dlNow, ulTotal, ulNow in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.reportProgress(received: Int64(dlNow), expected: Int64(dlTotal),
                                   sent: Int64(ulNow), toSend: Int64(ulTotal))
}
