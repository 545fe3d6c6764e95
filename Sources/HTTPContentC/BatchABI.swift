import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

public typealias DoneCallback = @convention(c) (UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void

/// An `hc_batch`: a Batch on the client it was made from, and the core's keyed completions for
/// the queued requests (hc_batch_add_queued ... hc_batch_step).
final class BatchBox {
    let client: ClientBox
    let batch: Batch
    let completions: BatchCompletions<ResponseBox>

    init(_ client: ClientBox) {
        self.client = client
        batch = Batch(client: client.client, maxConcurrent: ClientConfiguration.defaultMaxConcurrentTransfers)
        completions = BatchCompletions(batch: batch)
    }
}

@_cdecl("hc_batch_default_concurrency")
public func hc_batch_default_concurrency() -> Int {
    ClientConfiguration.defaultMaxConcurrentTransfers
}

@_cdecl("hc_batch_new")
public func hc_batch_new(_ client: OpaquePointer?) -> OpaquePointer? {
    guard let box = borrowHandle(client, as: ClientBox.self) else {
        nullArgument("client")
        return nil
    }
    return retainHandle(BatchBox(box))
}

@_cdecl("hc_batch_free")
public func hc_batch_free(_ batch: OpaquePointer?) {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return }
    box.batch.cancelAll()
    releaseHandle(batch, as: BatchBox.self)
}

@_cdecl("hc_batch_set_concurrency")
public func hc_batch_set_concurrency(_ batch: OpaquePointer?, _ max: Int) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    box.batch.maxConcurrent = max
    return HC_OK
}

@_cdecl("hc_batch_set_host_limit")
public func hc_batch_set_host_limit(_ batch: OpaquePointer?, _ max: Int) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    box.batch.setMaxPerHost(max)
    return HC_OK
}

@_cdecl("hc_batch_add")
public func hc_batch_add(_ batch: OpaquePointer?, _ request: OpaquePointer?, _ done: DoneCallback?,
                         _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let req = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    guard let done else { return nullArgument("done") }
    let (cancel, progress) = req.sendOptions()
    add(req, to: box.batch, cancel: cancel, progress: progress) { outcome in
        switch outcome {
        case .success(let boxed): done(userdata, HC_OK, retainHandle(boxed))
        case .failure(let error): done(userdata, fail(error), nil)
        }
    }
    return HC_OK
}

/// Adds `req` to `batch`; `finished` gets its response, boxed, or its error, once.
private func add(_ req: RequestBox, to batch: Batch, cancel: CancelToken?,
                 progress: ((TransferProgress) -> Void)?,
                 finished: @escaping (Result<ResponseBox, HTTPContentError>) -> Void) {
    // A handler per attempt (a retry policy or an auth hook may send the request again): the
    // last one made is the response's.
    var handler: any ContentHandler = Bytes()
    batch.add(req.request, makeHandler: {
        handler = req.handler?.make() ?? Bytes()
        return handler
    }, cancel: cancel, progress: progress) { deliver in
        // The response moves straight into its box (see Batch.add(_:anyHandler:finished:)).
        let boxed: ResponseBox
        do throws(HTTPContentError) {
            boxed = ResponseBox(try deliver(), body: (handler as? Bytes)?.body)
        } catch {
            finished(.failure(error))
            return
        }
        finished(.success(boxed))
    }
}

// MARK: - Polled by the batch itself, completions taken in batches

@_cdecl("hc_batch_poll_fd")
public func hc_batch_poll_fd(_ batch: OpaquePointer?, _ fd: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let fd else { return nullArgument("fd") }
    guard box.batch.pending == 0 || box.batch.pollsOwnSockets else {
        return fail(.invalidArgument, "hc_batch_poll_fd: call it before adding requests")
    }
    guard !box.batch.handsSocketsToCaller else {
        return fail(.invalidArgument, "hc_batch_poll_fd: the caller's loop watches the sockets (hc_batch_watch)")
    }
    guard let descriptor = box.batch.pollDescriptor() else {
        return fail(.localIO, "hc_batch_poll_fd: no epoll set (not Linux, or out of descriptors)")
    }
    fd.pointee = descriptor
    return HC_OK
}

@_cdecl("hc_batch_add_queued")
public func hc_batch_add_queued(_ batch: OpaquePointer?, _ request: OpaquePointer?, _ key: UInt64) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let req = borrowHandle(request, as: RequestBox.self) else { return nullArgument("request") }
    let (cancel, progress) = req.sendOptions()
    let token = box.completions.token(for: key, linkedTo: cancel)
    add(req, to: box.batch, cancel: token, progress: progress) { [unowned box] outcome in
        box.completions.complete(key, outcome)
    }
    return HC_OK
}

@_cdecl("hc_batch_fetch_queued")
public func hc_batch_fetch_queued(_ batch: OpaquePointer?, _ method: UnsafePointer<CChar>?,
                                  _ url: UnsafePointer<CChar>?, _ handler: OpaquePointer?, _ key: UInt64) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let method = string(method), let url = string(url) else { return nullArgument("method or url") }
    fetchQueued(box, method, url, borrowHandle(handler, as: HandlerSpec.self), key)
    return HC_OK
}

@_cdecl("hc_batch_fetch_queued_many")
public func hc_batch_fetch_queued_many(_ batch: OpaquePointer?, _ count: Int,
                                       _ methods: UnsafePointer<UnsafePointer<CChar>?>?,
                                       _ urls: UnsafePointer<UnsafePointer<CChar>?>?,
                                       _ handlers: UnsafePointer<OpaquePointer?>?,
                                       _ keys: UnsafePointer<UInt64>?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard count > 0 else { return HC_OK }
    guard let methods, let urls, let keys else { return nullArgument("methods, urls or keys") }
    for i in 0..<count {
        guard let method = string(methods[i]), let url = string(urls[i]) else {
            box.completions.complete(keys[i], .failure(HTTPContentError(.invalidArgument,
                                                                        "hc_batch_fetch_queued_many: NULL method or url")))
            continue
        }
        fetchQueued(box, method, url, borrowHandle(handlers?[i], as: HandlerSpec.self), keys[i])
    }
    return HC_OK
}

/// Queues a request with no body and no header of its own under `key` (hc_batch_fetch_queued).
private func fetchQueued(_ box: BatchBox, _ method: String, _ url: String, _ spec: HandlerSpec?, _ key: UInt64) {
    let token = box.completions.token(for: key)
    // A handler per attempt, as in hc_client_fetch: the last one made is the response's
    // (none before the first: no handler made only to be replaced).
    var made: (any ContentHandler)?
    box.batch.add(Request(method, url), makeHandler: {
        let handler = spec?.make() ?? Bytes()
        made = handler
        return handler
    }, cancel: token, progress: nil) { [unowned box] deliver in
        do throws(HTTPContentError) {
            box.completions.complete(key, .success(ResponseBox(try deliver(), body: (made as? Bytes)?.body)))
        } catch {
            box.completions.complete(key, .failure(error))
        }
    }
}

@_cdecl("hc_batch_cancel_queued")
public func hc_batch_cancel_queued(_ batch: OpaquePointer?, _ key: UInt64) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    box.completions.cancel(key)
    return HC_OK
}

@_cdecl("hc_batch_step")
public func hc_batch_step(_ batch: OpaquePointer?, _ capacity: Int, _ keys: UnsafeMutablePointer<UInt64>?,
                          _ results: UnsafeMutableRawPointer?, _ errors: UnsafeMutablePointer<OpaquePointer?>?,
                          _ count: UnsafeMutablePointer<Int>?, _ timeoutMs: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let count else { return nullArgument("count") }
    count.pointee = 0
    guard capacity == 0 || (keys != nil && results != nil && errors != nil) else {
        return nullArgument("keys, results or errors")
    }
    box.batch.step()
    var taken = 0
    if let keys, let results, let errors {
        let out = results.bindMemory(to: FetchResult.self, capacity: capacity)
        box.completions.take(upTo: capacity) { key, outcome in
            keys[taken] = key
            switch outcome {
            case .success(let boxed):
                out[taken] = FetchResult(boxed)
                errors[taken] = nil
            case .failure(let error):
                out[taken] = FetchResult(response: nil, status: 0, bytes: nil, bytesLen: 0)
                errors[taken] = retainHandle(ErrorBox(error, isCopy: true))
            }
            taken += 1
        }
    }
    count.pointee = taken
    timeoutMs?.pointee = box.completions.hasWaiting ? 0 : box.batch.stepTimeoutMs
    return HC_OK
}

@_cdecl("hc_batch_run")
public func hc_batch_run(_ batch: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    box.batch.run()
    return HC_OK
}

@_cdecl("hc_batch_perform")
public func hc_batch_perform(_ batch: OpaquePointer?, _ pending: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    let left = box.batch.perform()
    pending?.pointee = left
    return HC_OK
}

@_cdecl("hc_batch_wait")
public func hc_batch_wait(_ batch: OpaquePointer?, _ timeoutMs: Int32) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    box.batch.wait(timeoutMs: max(0, timeoutMs))
    return HC_OK
}

@_cdecl("hc_batch_timeout_ms")
public func hc_batch_timeout_ms(_ batch: OpaquePointer?, _ ms: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let ms else { return nullArgument("ms") }
    ms.pointee = box.batch.timeoutMs
    return HC_OK
}

@_cdecl("hc_batch_fdset")
public func hc_batch_fdset(_ batch: OpaquePointer?, _ read: UnsafeMutablePointer<fd_set>?,
                           _ write: UnsafeMutablePointer<fd_set>?, _ except: UnsafeMutablePointer<fd_set>?,
                           _ maxFd: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let maxFd else { return nullArgument("max_fd") }
    maxFd.pointee = box.batch.fdset(read: read, write: write, except: except)
    return HC_OK
}

public typealias SocketWatchCallback = @convention(c) (UnsafeMutableRawPointer?, Int32, Int32) -> Void
public typealias TimerWatchCallback = @convention(c) (UnsafeMutableRawPointer?, Int) -> Void

@_cdecl("hc_batch_watch")
public func hc_batch_watch(_ batch: OpaquePointer?, _ socket: SocketWatchCallback?, _ timer: TimerWatchCallback?,
                           _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    guard let socket, let timer else { return nullArgument("socket or timer") }
    guard box.batch.pending == 0 else {
        return fail(.invalidArgument, "hc_batch_watch: call it before adding requests")
    }
    guard !box.batch.pollsOwnSockets else {
        return fail(.invalidArgument, "hc_batch_watch: the batch polls its own sockets (hc_batch_poll_fd)")
    }
    box.batch.watch(socket: { fd, what in socket(userdata, fd, what.rawValue) },
                    timer: { ms in timer(userdata, ms) })
    return HC_OK
}

@_cdecl("hc_batch_socket_action")
public func hc_batch_socket_action(_ batch: OpaquePointer?, _ fd: Int32, _ events: Int32,
                                   _ pending: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(batch, as: BatchBox.self) else { return nullArgument("batch") }
    let left = box.batch.socketAction(fd: fd < 0 ? nil : fd, readable: events & 1 != 0,
                                      writable: events & 2 != 0, error: events & 4 != 0)
    pending?.pointee = left
    return HC_OK
}

@_cdecl("hc_batch_pending")
public func hc_batch_pending(_ batch: OpaquePointer?) -> Int {
    borrowHandle(batch, as: BatchBox.self)?.batch.pending ?? 0
}

@_cdecl("hc_live_handles")
public func hc_live_handles() -> Int64 {
    Int64(liveHandles.load(ordering: .relaxed))
}
