import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One request bound to one easy handle and its handler: it configures the handle, receives
/// libcurl's callbacks and turns the outcome into a response head or an error. What drives it
/// (`curl_easy_perform` today, a multi handle later) is kept outside, in the driver; how the
/// handle is configured is in TransferConfiguration.swift.
///
/// A transfer is driven by one thread at a time (its callbacks run inside `curl_easy_perform` or
/// `curl_multi_perform`): its state skips Swift's dynamic exclusivity checks, which cost more
/// than the work they guard on every header line and chunk.
final class Transfer {
    let easy: EasyHandle
    let request: Request
    let handler: any ContentHandler
    /// The handler, when it holds output until libcurl has read all there is for now: told at
    /// acceptance, then from the progress callback after each round of reads.
    let pauseAware: (any ReceivePauseHandler)?
    /// The handler, when its consumer may fall behind (`ReceiveThrottled`), and what runs a job
    /// on the driving thread (set by the `async` send): with both, reading pauses while the
    /// consumer is behind.
    let throttled: (any ReceiveThrottled)?
    @exclusivity(unchecked) var onDrivingThread: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    /// Reading is paused for the handler's consumer (`ReceiveThrottled`).
    @exclusivity(unchecked) var receivePaused = false
    /// The handler, when it continues a body it holds part of: progress counts that part.
    let resuming: (any ResumingHandler)?
    let cancel: CancelToken?
    let progress: ((TransferProgress) -> Void)?
    /// How much of a rejected response's body is kept in the error.
    let rejectedBodyCap: Int

    /// The body being sent and libcurl's read callbacks' state (Bodies/BodyUpload.swift).
    @exclusivity(unchecked) var upload: BodyUpload?

    // The response being received: reset at every status line, so only the final one remains.
    @exclusivity(unchecked) private var status = 0
    @exclusivity(unchecked) private var reason = ""
    @exclusivity(unchecked) private var httpVersion = ""
    /// The fields received so far; `fieldsShared` once a response head holds them, so that more
    /// (trailers) go to a copy.
    @exclusivity(unchecked) private(set) var fields: ReceivedHeaders
    @exclusivity(unchecked) private var fieldsShared = false

    @exclusivity(unchecked) private var head: ResponseHead?
    @exclusivity(unchecked) private var accepted: Bool?
    @exclusivity(unchecked) private var rejection: HTTPContentError?
    @exclusivity(unchecked) private var rejectedBody: [UInt8] = []
    @exclusivity(unchecked) private var failure: HTTPContentError?
    /// The handler threw `StopTransfer`: the write error libcurl reports is our own doing.
    @exclusivity(unchecked) private var stoppedByHandler = false
    @exclusivity(unchecked) private(set) var decodedBytes: Int64 = 0
    /// The redirect responses followed so far, oldest first, and the URL of the response being
    /// received when it is not the request's (known once a redirect was followed).
    @exclusivity(unchecked) private var history: [ResponseHead] = []
    @exclusivity(unchecked) private var hopURL: String?
    /// Redirects followed, once asked of libcurl.
    @exclusivity(unchecked) private var redirects: Int?
    /// libcurl follows redirects for this request (a 3xx it does not follow is then the answer).
    @exclusivity(unchecked) var followsRedirects = true
    /// The accepted response is a redirect not followed: its body is not the content.
    @exclusivity(unchecked) private var skipsBody = false
    /// Where a multi driver keeps this transfer while it runs (-1: not in one).
    @exclusivity(unchecked) var driverSlot = -1
    /// The longest silence allowed between bytes received (or sent), in nanoseconds (0: none),
    /// and when bytes last moved (`monotonicNanoseconds`): see TransferWatch.swift.
    @exclusivity(unchecked) var readTimeoutNs: UInt64 = 0
    @exclusivity(unchecked) var lastActivityNs: UInt64 = 0
    @exclusivity(unchecked) var lastUploaded: Int64 = 0
    /// The waker a driver registered on `cancel` while it runs this transfer.
    @exclusivity(unchecked) var cancelRegistration: CancelRegistration?

    init(easy: EasyHandle, request: Request, handler: any ContentHandler,
         cancel: CancelToken?, progress: ((TransferProgress) -> Void)?,
         rejectedBodyCap: Int = 64 * 1024) {
        self.easy = easy
        self.request = request
        self.handler = handler
        // The commonest handler is known not to be pause-aware: no conformance lookup for it.
        pauseAware = handler is Bytes ? nil : handler as? any ReceivePauseHandler
        throttled = handler is Bytes ? nil : handler as? any ReceiveThrottled
        resuming = handler is Bytes ? nil : handler as? any ResumingHandler
        self.cancel = cancel
        self.progress = progress
        self.rejectedBodyCap = rejectedBodyCap
        fields = easy.takeHeaderStore()
    }

    // MARK: - Callbacks

    /// One header line from libcurl (status line, field, or the blank end). Parsed on bytes:
    /// this runs for every header of every response, so it avoids Character-level String work.
    fileprivate func receiveHeader(_ buffer: UnsafeBufferPointer<UInt8>) {
        if readTimeoutNs != 0 { lastActivityNs = monotonicNanoseconds() }
        guard let line = buffer.baseAddress else { return }
        var end = buffer.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return }
        func text(_ from: Int, _ to: Int) -> String {
            String(decoding: UnsafeBufferPointer(start: line + from, count: to - from), as: UTF8.self)
        }
        func bytes(_ from: Int, _ to: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: line + from, count: to - from)
        }
        @inline(__always) func trimmed(_ from: Int, _ to: Int) -> (Int, Int) {
            var a = from, b = to
            while a < b, line[a] == 0x20 || line[a] == 0x09 { a += 1 }
            while b > a, line[b - 1] == 0x20 || line[b - 1] == 0x09 { b -= 1 }
            return (a, b)
        }
        if end >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {
            // "HTTP/1.1 200 OK": version, status, reason.
            var i = 0
            while i < end, line[i] != 0x20 { i += 1 }
            // The usual version and reason are literals: no String decoded per response.
            httpVersion = i == 8 && memcmp(line, "HTTP/1.1", 8) == 0 ? "HTTP/1.1" : text(0, i)
            while i < end, line[i] == 0x20 { i += 1 }
            var code = 0
            while i < end, line[i] >= 0x30, line[i] <= 0x39, code < 1000 {
                code = code * 10 + Int(line[i] - 0x30)
                i += 1
            }
            // A redirect's status line is followed by the next response's: keep the redirect.
            if (300..<400).contains(status) { recordRedirect() }
            status = code
            while i < end, line[i] == 0x20 { i += 1 }
            reason = end - i == 2 && line[i] == 0x4F && line[i + 1] == 0x4B ? "OK" : text(i, end)
            if fieldsShared || fields.count > 0 { fields = ReceivedHeaders() }
            fieldsShared = false
        } else if line[0] == 0x20 || line[0] == 0x09 {
            // Obsolete line folding: a continuation of the previous field's value.
            guard fields.count > 0 else { return }
            let (a, b) = trimmed(0, end)
            writableFields().appendToLastValue(bytes(a, b))
        } else if let found = memchr(line, 0x3A, end) {
            let colon = UnsafeRawPointer(found) - UnsafeRawPointer(line)
            let (a, b) = trimmed(colon + 1, end)
            if fieldsShared { unshareFields() }
            // No retain/release pair per header line: the transfer keeps `fields` alive.
            Unmanaged.passUnretained(fields)._withUnsafeGuaranteedRef {
                $0.add(line: line, nameEnd: colon, valueStart: a, valueEnd: b)
            }
        }
    }

    /// Keeps the response just ended (a redirect libcurl follows) in the history. The URL of
    /// the next one is libcurl's effective URL, already moved to the redirect's target.
    private func recordRedirect() {
        fieldsShared = true  // the entry holds them: the next response's go to a new store
        var hop = ResponseHead(status: status, reason: reason, httpVersion: httpVersion,
                               headers: Headers(received: fields), url: hopURL ?? request.url,
                               method: request.method)
        hop.bodyEnded = true
        history.append(hop)
        hopURL = easy.info(string: CURLINFO_EFFECTIVE_URL)
    }

    private func writableFields() -> ReceivedHeaders {
        if fieldsShared { unshareFields() }
        return fields
    }

    /// A response head holds the fields: more (trailers) go to a copy.
    private func unshareFields() {
        fields = fields.copy()
        fieldsShared = false
    }

    /// Returns how many bytes were taken; anything else makes libcurl abort the transfer.
    fileprivate func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        if readTimeoutNs != 0 { lastActivityNs = monotonicNanoseconds() }
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
        if skipsBody { return chunk.count }
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
        if let throttled, let onDrivingThread, throttled.wantsPause { pauseReceiving(throttled, onDrivingThread) }
        return chunk.count
    }

    /// Stops reading until the handler's consumer catches up (`ReceiveThrottled`): libcurl is
    /// told from inside its write callback, and told to go on from the driving thread, if the
    /// transfer still runs then.
    private func pauseReceiving(_ throttled: any ReceiveThrottled,
                                _ onDrivingThread: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        receivePaused = true
        _ = curl_easy_pause(easy.raw, Int32(CURLPAUSE_RECV))
        let me = Handover(value: self)
        throttled.paused {
            onDrivingThread {
                let transfer = me.value
                guard transfer.receivePaused, transfer.driverSlot >= 0 else { return }
                transfer.receivePaused = false
                transfer.lastActivityNs = monotonicNanoseconds()
                _ = curl_easy_pause(transfer.easy.raw, Int32(CURLPAUSE_CONT))
            }
        }
    }

    fileprivate func reportProgress(received: Int64, expected: Int64, sent: Int64, toSend: Int64) -> Int32 {
        if let cancel, cancel.isCancelled { return 1 }
        if let pauseAware, accepted == true, failure == nil, !stoppedByHandler {
            do {
                try pauseAware.receivePaused()
            } catch is StopTransfer {
                stoppedByHandler = true
                return 1
            } catch {
                failure = attach(HTTPContentError.wrapping(error))
                return 1
            }
        }
        if let progress {
            // A resumed download: libcurl counts this transfer's bytes, the caller the file's.
            let held = resuming?.heldBytes ?? 0
            progress(TransferProgress(received: received + held, expected: expected > 0 ? expected + held : 0,
                                      decoded: decodedBytes + held, sent: sent, toSend: toSend))
        }
        if let cancel, cancel.isCancelled { return 1 }
        return 0
    }

    // MARK: - Decision and outcome

    private func makeHead(bodyEnded: Bool) -> ResponseHead {
        fieldsShared = true
        var head = ResponseHead(status: status != 0 ? status : easy.info(CURLINFO_RESPONSE_CODE),
                                reason: reason, httpVersion: httpVersion,
                                headers: Headers(received: fields),
                                url: finalURL(),
                                method: request.method)
        head.bodyEnded = bodyEnded
        if !followsRedirects, (300...399).contains(head.status), head.status != 304,
           head.headers["location"] != nil {
            head.isUnfollowedRedirect = true
        }
        if !history.isEmpty { head.history = history }
        return head
    }

    /// The URL of the final response: libcurl's effective URL after a redirect, else the
    /// request's own (asking libcurl costs a string copy per response).
    private func finalURL() -> String {
        guard redirectCount() > 0 else { return request.url }
        return easy.info(string: CURLINFO_EFFECTIVE_URL) ?? request.url
    }

    /// Asks the handler, once, whether it takes this response's body.
    private func decide(bodyEnded: Bool) {
        let made = makeHead(bodyEnded: bodyEnded)
        let verdict: Result<Bool, any Error>
        do {
            verdict = .success(try handler.accept(made))
        } catch {
            verdict = .failure(error)
        }
        head = consume made  // kept without a copy: errors below refer to it
        switch verdict {
        case .success(true):
            accepted = true
            // A redirect taken only because it is the answer asked for has no content; a handler
            // that takes 3xx statuses of its own (a raw stream, requests' adapter) gets its body.
            skipsBody = head!.isUnfollowedRedirect
                && (handler as? any SelectiveHandler)?.acceptance.acceptsStatus(head!.status) != true
            // Tells a pause-aware handler that pauses will be reported from now on (it holds
            // nothing yet, so it has nothing to hand over or fail on).
            if let pauseAware { try? pauseAware.receivePaused() }
        case .success(false):
            accepted = false
            rejection = .unacceptableStatus(head!, detail: "(rejected by the handler)")
        case .failure(let error):
            accepted = false
            rejection = attach(HTTPContentError.wrapping(error))
        }
    }

    private func attach(_ error: HTTPContentError) -> HTTPContentError {
        var error = error
        if error.response == nil { error.response = head }
        return error
    }

    /// The transfer was stopped from outside libcurl's callbacks (a driver saw its token set,
    /// or its read timeout pass): `complete` reports `error` unless something failed first.
    func stop(with error: HTTPContentError) {
        if failure == nil { failure = attach(error) }
    }

    func cancelledError() -> HTTPContentError {
        HTTPContentError(.cancelled, "the transfer was cancelled", response: head)
    }

    /// The outcome once libcurl is done with the transfer: the accepted response's head, or the
    /// error that explains why there is no content.
    func complete(_ code: CURLcode) throws(HTTPContentError) -> ResponseHead {
        if let failure = failure ?? upload?.failure { throw failure }
        if var rejection {
            rejection.addBody(rejectedBody)
            throw rejection
        }
        if code != CURLE_OK, !(stoppedByHandler && (code == CURLE_WRITE_ERROR || code == CURLE_ABORTED_BY_CALLBACK)) {
            throw transportError(code)
        }
        if accepted == nil {
            decide(bodyEnded: true)
            if let rejection { throw rejection }
        }
        // Handed over, not copied: the transfer is done with it.
        if let head = head.take() { return head }
        return makeHead(bodyEnded: true)
    }

    private func transportError(_ code: CURLcode) -> HTTPContentError {
        var detail = String(cString: easy.errorBuffer)
        if detail.isEmpty, code == CURLE_OUT_OF_MEMORY, self.head == nil {
            // What libcurl (7.x) says, without a word more, when one header line passes its
            // 100 KiB limit: the usual cause while the headers arrive, not the machine's memory.
            detail = "a response header line is longer than libcurl accepts (100 KiB), or memory ran out"
        }
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
        case CURLE_URL_MALFORMAT where head == nil:
            // The caller's URL. Once a response has arrived, a malformed URL is the server's
            // redirect target (its Location header): that is the server failing, not the caller.
            return HTTPContentError(.invalidArgument, text, curlCode: curl)
        case CURLE_READ_ERROR:
            // Our own read callbacks report their errors through `upload.failure`: this is
            // libcurl failing to read a multipart file part.
            return HTTPContentError(.localIO, text, curlCode: curl, response: head)
        case CURLE_FILESIZE_EXCEEDED:
            return HTTPContentError(.tooLarge, text, curlCode: curl, response: head)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            // The same codes say "reset by peer" and "malformed chunked encoding": the socket's
            // errno tells a broken connection (`isConnectionFailure`) from a bad body. (libcurl
            // 7.88 never clears it: a bad body on a handle whose earlier connection was reset
            // reads as a connection failure too, which is still a `.transport` error.)
            let errno = Int32(truncatingIfNeeded: easy.info(CURLINFO_OS_ERRNO))
            return HTTPContentError(.transport, text, curlCode: curl, response: head,
                                    underlying: SocketError.brokenConnection.contains(errno) ? SocketError(errno: errno) : nil)
        default:
            return HTTPContentError(.transport, text, curlCode: curl, response: head)
        }
    }

    private func redirectCount() -> Int {
        if let redirects { return redirects }
        let count = easy.info(CURLINFO_REDIRECT_COUNT)
        redirects = count
        return count
    }

    /// Asked once the transfer is over. Only what is not known already is asked of libcurl
    /// (each `curl_easy_getinfo` counts for a small response).
    func metrics() -> TransferMetrics {
        var m = TransferMetrics()
        m.wireBytes = easy.info(offset: CURLINFO_SIZE_DOWNLOAD_T)
        m.decodedBytes = decodedBytes
        m.uploadedBytes = request.body == nil ? 0 : easy.info(offset: CURLINFO_SIZE_UPLOAD_T)
        m.timings = TransferTimings(easy)
        m.totalTime = m.timings.total
        m.connectTime = m.timings.connect
        m.redirectCount = redirectCount()
        m.newConnections = easy.info(CURLINFO_NUM_CONNECTS)
        return m
    }
}

// MARK: - C callbacks (non-capturing; the easy handle travels as userdata)

/// The transfer using the handle `userdata`. The handle and the transfer outlive every callback
/// (the driver holds the transfer while libcurl runs): no retain/release pair per call.
@inline(__always)
private func withTransfer<R>(_ userdata: UnsafeMutableRawPointer?, _ body: (Transfer) -> R) -> R? {
    guard let userdata else { return nil }
    let transfer = Unmanaged<EasyHandle>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.transfer }
    return transfer?._withUnsafeGuaranteedRef(body)
}

let transferWriteCallback: hc_curl_data_cb = { ptr, size, count, userdata in
    withTransfer(userdata) { $0.receiveBody(UnsafeRawBufferPointer(start: ptr, count: size * count)) } ?? 0
}

let transferHeaderCallback: hc_curl_data_cb = { ptr, size, count, userdata in
    guard let ptr else { return 0 }
    let n = size * count
    return withTransfer(userdata) { transfer in
        ptr.withMemoryRebound(to: UInt8.self, capacity: n) {
            transfer.receiveHeader(UnsafeBufferPointer(start: $0, count: n))
        }
        return n
    } ?? 0
}

let transferProgressCallback: hc_curl_xferinfo_cb = { userdata, dlTotal, dlNow, ulTotal, ulNow in
    withTransfer(userdata) {
        $0.reportProgress(received: Int64(dlNow), expected: Int64(dlTotal), sent: Int64(ulNow), toSend: Int64(ulTotal))
    } ?? 0
}
