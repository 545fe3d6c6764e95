import Foundation
import HTTPContent

// Response bodies as `AsyncSequence`s: chunks (`Data`), bytes, lines, and JSON values found
// under a prefix while the document arrives. The transfer runs on a thread of its own and hands
// each piece over through a small bounded buffer: when the consumer is slower than the network,
// the transfer waits (libcurl stops reading the socket), so memory stays flat however long the
// body. Ending the iteration early, or cancelling the task, stops the transfer.

/// A response body read as it arrives: an `AsyncSequence` of `Data` chunks, with `bytes` and
/// `lines` views. Made by `Client.body(for:)`, which returns once the response head is in.
///
///     let (head, body) = try await client.body(for: Request(url: url))
///     for try await line in body.lines { print(line) }
///
/// One body is read once: a second iteration finds it ended.
public struct HTTPBody: AsyncSequence, Sendable {
    public typealias Element = Data
    let channel: BodyChannel<Data>

    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: BodyChannel<Data>
        let lease: ReaderLease<Data>
        /// The next chunk, nil at the end of the body; throws the transfer's error.
        public mutating func next() async throws -> Data? { try await channel.next() }
    }

    /// An iterator; when its last copy goes (a loop left early), the transfer stops.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(channel: channel, lease: ReaderLease(channel)) }

    /// The body byte by byte.
    public var bytes: HTTPBodyBytes { HTTPBodyBytes(body: self) }

    /// The body as lines of UTF-8 text (invalid bytes replaced), without their `\n` or `\r\n`.
    /// A last line without a newline is delivered too. Lines longer than `maxLineLength` bytes
    /// fail with `.tooLarge` (a body without newlines would otherwise be held whole).
    public func lines(maxLineLength: Int = 1 << 20) -> HTTPBodyLines {
        HTTPBodyLines(body: self, maxLineLength: maxLineLength)
    }

    /// `lines(maxLineLength:)` with the default limit (1 MiB).
    public var lines: HTTPBodyLines { lines() }

    /// Stops the transfer now (also done when an iteration ends early or its task is cancelled).
    public func cancel() { channel.cancel() }
}

/// `HTTPBody.bytes`: each byte of the body.
public struct HTTPBodyBytes: AsyncSequence, Sendable {
    public typealias Element = UInt8
    let body: HTTPBody

    public struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: HTTPBody.AsyncIterator
        var chunk = Data()
        var index = 0

        public mutating func next() async throws -> UInt8? {
            while index >= chunk.count {
                guard let next = try await chunks.next() else { return nil }
                chunk = next
                index = 0
            }
            defer { index += 1 }
            return chunk[chunk.startIndex + index]
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: body.makeAsyncIterator()) }
}

/// `HTTPBody.lines`: the body's lines.
public struct HTTPBodyLines: AsyncSequence, Sendable {
    public typealias Element = String
    let body: HTTPBody
    let maxLineLength: Int

    public struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: HTTPBody.AsyncIterator
        let maxLineLength: Int
        var pending: [UInt8] = []
        var chunk = Data()
        var index = 0
        var ended = false

        public mutating func next() async throws -> String? {
            while true {
                // Take bytes from the current chunk up to a newline.
                while index < chunk.count {
                    let b = chunk[chunk.startIndex + index]
                    index += 1
                    if b == 0x0A {
                        if pending.last == 0x0D { pending.removeLast() }
                        defer { pending.removeAll(keepingCapacity: true) }
                        return String(decoding: pending, as: UTF8.self)
                    }
                    pending.append(b)
                    if pending.count > maxLineLength {
                        chunks.channel.cancel()
                        throw HTTPContentError(.tooLarge, "a line is longer than \(maxLineLength) bytes")
                    }
                }
                if ended { return nil }
                guard let next = try await chunks.next() else {
                    ended = true
                    if pending.isEmpty { return nil }
                    defer { pending.removeAll() }
                    return String(decoding: pending, as: UTF8.self)
                }
                chunk = next
                index = 0
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(chunks: body.makeAsyncIterator(), maxLineLength: maxLineLength)
    }
}

/// JSON values found under a prefix while the document arrives (`Client.jsonItems(for:prefix:)`).
public struct JSONItemSequence: AsyncSequence, Sendable {
    public typealias Element = JSONValue
    let channel: BodyChannel<JSONValue>

    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: BodyChannel<JSONValue>
        let lease: ReaderLease<JSONValue>
        public mutating func next() async throws -> JSONValue? { try await channel.next() }
    }

    /// An iterator; when its last copy goes (a loop left early), the transfer stops.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(channel: channel, lease: ReaderLease(channel))
    }

    /// Each value decoded as `T` (with the core's Foundation-free `JSONValueDecoder`).
    public func decoded<T: Decodable & Sendable>(as type: T.Type) -> AsyncThrowingMapSequence<JSONItemSequence, T> {
        map { value in try JSONValueDecoder().decode(T.self, from: value) }
    }

    /// Stops the transfer now.
    public func cancel() { channel.cancel() }
}

extension Client {
    /// Sends `request` and returns once the response head has arrived, with the body as an
    /// `AsyncSequence` of chunks that arrive while you read them.
    ///
    /// - Parameters:
    ///   - acceptance: the statuses and types accepted (default 200–299, any type); another
    ///     status throws `.unacceptableStatus` here, before any body is read.
    ///   - buffered: how many chunks may wait between the transfer and the reader.
    /// - Throws: `HTTPContentError` if the request fails before the body starts; errors during
    ///   the body are thrown by the iteration.
    public func body(for request: Request, acceptance: Acceptance = Acceptance(),
                     buffered: Int = 8) async throws -> (ResponseHead, HTTPBody) {
        let channel = BodyChannel<Data>(capacity: buffered)
        let handler = ChannelHandler(channel: channel, acceptance: acceptance)
        startTransfer(request, handler: handler, channel: channel)
        let head = try await channel.head()
        return (head, HTTPBody(channel: channel))
    }

    /// `body(for:)` for a GET of `url`.
    public func body(from url: URL, headers: Headers = Headers(),
                     acceptance: Acceptance = Acceptance()) async throws -> (ResponseHead, HTTPBody) {
        try await body(for: Request("GET", url: url, headers: headers), acceptance: acceptance)
    }

    /// The JSON values under `prefix` (ijson's syntax: `item` for each element of a top-level
    /// array, `results.item` for those of the array at member `results`, `""` for each document
    /// of an NDJSON stream with `options.multipleValues`), each as soon as it is complete.
    ///
    ///     for try await user in try await client.jsonItems(for: Request(url: url), prefix: "users.item") {
    ///         print(user["name"] ?? .null)
    ///     }
    public func jsonItems(for request: Request, prefix: String = "item", options: JSONOptions = JSONOptions(),
                          buffered: Int = 64) async throws -> JSONItemSequence {
        let channel = BodyChannel<JSONValue>(capacity: buffered)
        let handler = try JSONItems(prefixes: [JSONPrefix(prefix)], options: options) { item in
            try channel.push(item.value)
        }
        let observed = HeadObserver(handler, channel: channel)
        startTransfer(request, handler: observed, channel: channel)
        _ = try await channel.head()
        return JSONItemSequence(channel: channel)
    }

    /// Runs the transfer on a thread of its own (the handler blocks there while the reader is
    /// behind), ending the channel with the outcome.
    private func startTransfer<H: ContentHandler, T: Sendable>(_ request: Request, handler: H,
                                                               channel: BodyChannel<T>) {
        let box = UncheckedBox(value: (self, request, handler))
        TransferThreads.shared.run {
            let (client, request, handler) = box.value
            do {
                _ = try client.send(request, handler: handler, cancel: channel.token)
                channel.finish(nil)
            } catch {
                channel.finish(error)
            }
        }
    }
}

/// The threads body transfers run on, kept a while for the next ones: a thread per transfer
/// cost as much as the exchange itself for small responses (bench/openapi.sh, 16 in flight).
/// A transfer never waits for a busy thread: with none idle, a new one starts. Up to
/// `keptIdle` idle threads stay, each for `idleSeconds`.
final class TransferThreads: @unchecked Sendable {
    static let shared = TransferThreads()
    private let lock = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var start = 0
    /// Threads waiting for a job, counted until they wake (a signalled one takes a job).
    private var idle = 0
    private let keptIdle = 16
    private let idleSeconds = 10.0

    func run(_ job: @escaping @Sendable () -> Void) {
        lock.lock()
        jobs.append(job)
        if idle >= jobs.count - start {
            lock.signal()
            lock.unlock()
            return
        }
        lock.unlock()
        let thread = Thread { self.work() }
        thread.name = "httpcontent body"
        thread.start()
    }

    private func work() {
        lock.lock()
        while true {
            if start < jobs.count {
                let job = jobs[start]
                start += 1
                if start == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    start = 0
                }
                lock.unlock()
                job()
                lock.lock()
                continue
            }
            if idle >= keptIdle { break }
            idle += 1
            let signalled = lock.wait(until: Date(timeIntervalSinceNow: idleSeconds))
            idle -= 1
            if !signalled && start == jobs.count { break }
        }
        lock.unlock()
    }
}

struct UncheckedBox<Value>: @unchecked Sendable { var value: Value }

/// The bounded hand-over between the transfer's thread (push, blocking while full) and the
/// async reader (next). The head is handed over first.
final class BodyChannel<Element: Sendable>: @unchecked Sendable {
    private let lock = NSCondition()
    private var items: [Element] = []
    private var start = 0
    private let capacity: Int
    private var ended = false
    private var failure: (any Error)?
    private var receivedHead: ResponseHead?
    private var headWaiter: CheckedContinuation<ResponseHead, any Error>?
    private var itemWaiter: CheckedContinuation<Element?, any Error>?
    let token = CancelToken()

    init(capacity: Int) { self.capacity = max(1, capacity) }

    // MARK: The transfer's side

    func deliverHead(_ head: ResponseHead) {
        lock.lock()
        receivedHead = head
        let waiter = headWaiter
        headWaiter = nil
        lock.unlock()
        waiter?.resume(returning: head)
    }

    /// Hands `item` over, waiting while `capacity` items are unread; throws once the reader has
    /// gone (the transfer then stops).
    func push(_ item: Element) throws {
        lock.lock()
        while items.count - start >= capacity && !token.isCancelled {
            _ = lock.wait(until: Date(timeIntervalSinceNow: 0.5))
        }
        if token.isCancelled {
            lock.unlock()
            throw HTTPContentError(.cancelled, "the body's reader stopped")
        }
        if let waiter = itemWaiter {
            itemWaiter = nil
            lock.unlock()
            waiter.resume(returning: item)
            return
        }
        items.append(item)
        lock.unlock()
    }

    func finish(_ error: (any Error)?) {
        lock.lock()
        ended = true
        failure = error
        let head = headWaiter
        headWaiter = nil
        let item = itemWaiter
        itemWaiter = nil
        lock.broadcast()
        lock.unlock()
        if let head {
            head.resume(throwing: error ?? HTTPContentError(.transport, "the transfer ended without a response"))
        }
        if let item {
            if let error { item.resume(throwing: error) } else { item.resume(returning: nil) }
        }
    }

    // MARK: The reader's side

    func head() async throws -> ResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ResponseHead, any Error>) in
                lock.lock()
                if let head = receivedHead {
                    lock.unlock()
                    continuation.resume(returning: head)
                } else if ended {
                    let error = failure ?? HTTPContentError(.transport, "the transfer ended without a response")
                    lock.unlock()
                    continuation.resume(throwing: error)
                } else {
                    headWaiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            cancel()
        }
    }

    func next() async throws -> Element? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                lock.lock()
                if start < items.count {
                    let item = items[start]
                    start += 1
                    if start == items.count {
                        items.removeAll(keepingCapacity: true)
                        start = 0
                    }
                    lock.broadcast()  // room for the transfer
                    lock.unlock()
                    continuation.resume(returning: item)
                } else if ended {
                    let error = failure
                    failure = nil  // thrown once; then the sequence is over
                    lock.unlock()
                    if let error, !(error is CancelledByReader) { continuation.resume(throwing: error) } else { continuation.resume(returning: nil) }
                } else {
                    itemWaiter = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Stops the transfer: the reader has gone.
    func cancel() {
        token.cancel()
        lock.lock()
        lock.broadcast()
        lock.unlock()
    }

    deinit { token.cancel() }
}

/// Held by an iterator (and its copies): when the last goes, the reader has gone, and the
/// transfer stops at once instead of running on, blocked on a full channel, until the body ends
/// (a `for try await` loop left with `break` drops its iterator). The transfer's thread holds
/// the channel, never a lease.
final class ReaderLease<Element: Sendable>: Sendable {
    let channel: BodyChannel<Element>
    init(_ channel: BodyChannel<Element>) { self.channel = channel }
    deinit { channel.cancel() }
}

/// Marks nothing yet: a reader that stopped gets no error for it (see `next`).
struct CancelledByReader: Error {}

/// Passes every chunk into the channel (blocking while the reader is behind).
final class ChannelHandler: SelectiveHandler {
    let acceptance: Acceptance
    let channel: BodyChannel<Data>

    init(channel: BodyChannel<Data>, acceptance: Acceptance) {
        self.channel = channel
        self.acceptance = acceptance
    }

    func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        channel.deliverHead(head)
        return true
    }

    func consume(_ chunk: UnsafeRawBufferPointer) throws {
        try channel.push(Data(chunk))
    }

    func finish() throws {}
}

/// Tells the channel the head once the inner handler accepted it.
final class HeadObserver<Inner: ContentHandler, T: Sendable>: ContentHandler {
    let inner: Inner
    let channel: BodyChannel<T>

    init(_ inner: Inner, channel: BodyChannel<T>) {
        self.inner = inner
        self.channel = channel
    }

    func prepare(_ request: inout Request) throws { try inner.prepare(&request) }
    func accept(_ head: ResponseHead) throws -> Bool {
        let accepted = try inner.accept(head)
        if accepted { channel.deliverHead(head) }
        return accepted
    }
    func consume(_ chunk: UnsafeRawBufferPointer) throws { try inner.consume(chunk) }
    func finish() throws -> Inner.Content { try inner.finish() }
    func cleanup(failed: Bool) { inner.cleanup(failed: failed) }
}
