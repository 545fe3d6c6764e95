/// The session layers (auth hook refresh on 401, retry policy) for requests sent in a `Batch`:
/// a failed attempt that the layers send again is re-added to the batch after its backoff,
/// while the other transfers go on (the batch's driver holds the wait as delayed work).
extension Batch {
    /// Sends `request` through the layers; `complete` gets the last attempt's outcome.
    /// `makeHandler` is called per attempt; `restartable`: an attempt whose handler saw body
    /// bytes may be sent again (true when each attempt has a new handler).
    func addLayered(_ request: consuming Request, restartable: Bool,
                    makeHandler: @escaping () -> any ContentHandler, cancel: CancelToken?,
                    progress: ((TransferProgress) -> Void)?,
                    complete: @escaping (Result<Response<Any>, HTTPContentError>) -> Void) {
        LayeredSend(batch: self, attempts: SessionAttempts(request, client: client, restartable: restartable),
                    makeHandler: makeHandler, cancel: cancel, progress: progress, complete: complete).launch()
    }
}

/// One request going through the layers in a batch: launches each attempt and decides, when it
/// completes, whether to complete the request or launch again (now, or after a delay).
private final class LayeredSend {
    /// Weak: the batch's driver holds this object (in its completions) until it completes, and
    /// a batch dropped with requests pending cancels them as it goes.
    weak var batch: Batch?
    var attempts: SessionAttempts
    let makeHandler: () -> any ContentHandler
    let cancel: CancelToken?
    let progress: ((TransferProgress) -> Void)?
    let complete: (Result<Response<Any>, HTTPContentError>) -> Void

    init(batch: Batch, attempts: SessionAttempts, makeHandler: @escaping () -> any ContentHandler,
         cancel: CancelToken?, progress: ((TransferProgress) -> Void)?,
         complete: @escaping (Result<Response<Any>, HTTPContentError>) -> Void) {
        self.batch = batch
        self.attempts = attempts
        self.makeHandler = makeHandler
        self.cancel = cancel
        self.progress = progress
        self.complete = complete
    }

    func launch() {
        guard let batch else {
            return complete(.failure(HTTPContentError(.cancelled, "the batch was freed").about(attempts.original)))
        }
        let client = batch.client
        let transfer: Transfer
        do {
            let request = try attempts.next()
            transfer = try client.start(request, handler: makeHandler(), cancel: cancel, progress: progress)
        } catch {
            failed(error, bodyStarted: false)
            return
        }
        let handles = client.handles
        batch.driver.add(transfer) { code in
            let outcome = Result { () throws(HTTPContentError) in try Client.deliverAny(transfer, code: code) }
            let bodyStarted = transfer.decodedBytes > 0
            handles.put(transfer)
            switch outcome {
            case .success: self.complete(outcome)
            case .failure(let error): self.failed(error, bodyStarted: bodyStarted)
            }
        }
    }

    private func failed(_ error: HTTPContentError, bodyStarted: Bool) {
        switch attempts.after(error, bodyStarted: bodyStarted) {
        case .fail(let final):
            complete(.failure(final))
        case .again(let wait) where wait <= .zero:
            launch()
        case .again(let wait):
            guard let batch else { return launch() }  // completes as cancelled
            batch.driver.after(wait, token: cancel, fire: { self.launch() }, cancel: {
                var stopped = HTTPContentError(.cancelled, "cancelled while waiting to retry", response: error.response)
                stopped.attempts = self.attempts.attempt
                self.complete(.failure(stopped.about(self.attempts.original)))
            })
        }
    }
}
