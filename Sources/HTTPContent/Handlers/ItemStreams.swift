/// Items of a body (records, lines, XML elements) as an `AsyncSequence`, over the client's
/// executor (no thread blocked): the handler hands each item over as soon as it is complete, and
/// the sequence yields it. At most `ItemQueue.capacity` items wait for the reader: past that, the
/// transfer stops reading the socket (TCP holds the server back) until the reader catches up, so
/// memory stays flat however slow the reader. Ending the iteration (a `break`, or dropping the
/// iterator) or cancelling its task cancels the transfer; a failure ends the sequence with the
/// error.
extension Client {
    /// The sequence of what the handler `makeHandler(yield)` passes to `yield` while the
    /// response to `request` arrives. `yield` returns false once the reader has gone: the
    /// handler then throws `StopTransfer`. An error thrown by `makeHandler` ends the sequence.
    func itemStream<Element: Sendable, H: ContentHandler>(
        _ request: Request, _ makeHandler: @escaping @Sendable (@escaping (Element) -> Bool) throws -> H
    ) -> AsyncThrowingStream<Element, any Error> {
        let queue = ItemQueue<Element>()
        let task = Task {
            do {
                let handler = Throttled(try makeHandler { queue.push($0) }, queue)
                _ = try await self.send(request, handler: handler)
                queue.finish(nil)
            } catch {
                queue.finish(error)
            }
        }
        // Held by the sequence alone: once the reader drops it, the transfer stops.
        let lease = Lease { task.cancel(); queue.abandon() }
        return AsyncThrowingStream {
            try await withTaskCancellationHandler {
                let item = try await queue.next()
                withExtendedLifetime(lease) {}   // the sequence holds the lease
                return item
            } onCancel: {
                lease.end()
            }
        }
    }
}

/// Runs its ending once, when ended or when the last reference goes.
final class Lease: Sendable {
    private let ending: Locked<(@Sendable () -> Void)?>

    init(_ ending: @escaping @Sendable () -> Void) { self.ending = Locked(ending) }

    func end() {
        let run = ending.withLock { e -> (@Sendable () -> Void)? in
            defer { e = nil }
            return e
        }
        run?()
    }

    deinit { end() }
}

/// The items waiting for the reader of an item sequence: the handler pushes (on the executor's
/// thread), the reader takes; past `capacity` the handler asks its transfer to pause
/// (`ReceiveThrottled`), resumed once half have been taken.
final class ItemQueue<Element: Sendable>: Sendable {
    static var capacity: Int { 64 }

    private struct State {
        var items: [Element] = []
        var head = 0
        var reader: CheckedContinuation<Element?, any Error>?
        var ended: Result<Void, any Error>?
        var abandoned = false
        var resume: (@Sendable () -> Void)?
        var count: Int { items.count - head }
    }
    private let state = Locked(State())

    /// Adds an item; false once the reader has gone.
    func push(_ item: Element) -> Bool {
        let (reader, open) = state.withLock { s -> (CheckedContinuation<Element?, any Error>?, Bool) in
            guard !s.abandoned else { return (nil, false) }
            if let reader = s.reader {
                s.reader = nil
                return (reader, true)
            }
            s.items.append(item)
            return (nil, true)
        }
        reader?.resume(returning: item)
        return open
    }

    var isFull: Bool { state.withLock { $0.count >= Self.capacity } }

    /// Calls `resume` once the reader has taken half of what waits (at once if it has).
    func whenRoom(_ resume: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.count <= Self.capacity / 2 || s.abandoned { return true }
            s.resume = resume
            return false
        }
        if now { resume() }
    }

    /// The transfer ended (`error` nil: the body is complete).
    func finish(_ error: (any Error)?) {
        let reader = state.withLock { s -> CheckedContinuation<Element?, any Error>? in
            s.ended = error.map { .failure($0) } ?? .success(())
            defer { s.reader = nil }
            return s.count == 0 ? s.reader : nil
        }
        if let error { reader?.resume(throwing: error) } else { reader?.resume(returning: nil) }
    }

    /// The reader has gone: nothing more is kept, and a paused transfer is let go on (to stop).
    func abandon() {
        let resume = state.withLock { s -> (@Sendable () -> Void)? in
            s.abandoned = true
            s.items.removeAll()
            s.head = 0
            defer { s.resume = nil }
            return s.resume
        }
        resume?()
    }

    /// What `next` finds: an item (and a paused transfer's resume, when the queue is half empty
    /// now), the end, or nothing yet (the reader waits).
    private enum Next {
        case item(Element, (@Sendable () -> Void)?)
        case end(Result<Void, any Error>)
        case wait
    }

    /// Takes an item, or registers `reader` to be given the next one.
    private func take(_ reader: CheckedContinuation<Element?, any Error>) -> Next {
        state.withLock { s -> Next in
            if s.count > 0 {
                let item = s.items[s.head]
                s.head += 1
                if s.head == s.items.count || s.head > 1024 {
                    s.items.removeFirst(s.head)
                    s.head = 0
                }
                var resume: (@Sendable () -> Void)?
                if s.count <= Self.capacity / 2 {
                    resume = s.resume
                    s.resume = nil
                }
                return .item(item, resume)
            }
            if let ended = s.ended { return .end(ended) }
            s.reader = reader
            return .wait
        }
    }

    /// The next item, nil at the end; throws the transfer's error.
    func next() async throws -> Element? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
            switch take(continuation) {
            case .item(let item, let resume):
                resume?()
                continuation.resume(returning: item)
            case .end(.success): continuation.resume(returning: nil)
            case .end(.failure(let error)): continuation.resume(throwing: error)
            case .wait: break
            }
        }
    }
}

/// `handler`, with its reader's queue asking the transfer to pause when full.
final class Throttled<H: ContentHandler, Element: Sendable>: ContentHandler, ReceiveThrottled {
    typealias Content = H.Content
    let handler: H
    let queue: ItemQueue<Element>

    init(_ handler: H, _ queue: ItemQueue<Element>) {
        self.handler = handler
        self.queue = queue
    }

    func prepare(_ request: inout Request) throws { try handler.prepare(&request) }
    func accept(_ head: ResponseHead) throws -> Bool { try handler.accept(head) }
    func consume(_ chunk: UnsafeRawBufferPointer) throws { try handler.consume(chunk) }
    func finish() throws -> H.Content { try handler.finish() }
    func cleanup(failed: Bool) { handler.cleanup(failed: failed) }
    var wantsPause: Bool { queue.isFull }
    func paused(resume: @escaping @Sendable () -> Void) { queue.whenRoom(resume) }
}

extension Throttled: SelectiveHandler where H: SelectiveHandler {
    var acceptance: Acceptance { handler.acceptance }
}
