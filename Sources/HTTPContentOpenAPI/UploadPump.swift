import Foundation
import HTTPContent
import OpenAPIRuntime

/// Feeds a request body that is an async sequence (OpenAPIRuntime's `HTTPBody`) to libcurl,
/// which pulls it through a read callback on the transfer's thread.
///
/// A task iterates the body and hands its chunks over through a small bounded queue; the read
/// callback takes bytes from the queue, blocking its thread while the queue is empty. That
/// blocking is safe because the transfer runs on a thread of its own (`Client.body(for:)` starts
/// one per transfer), never on a thread of Swift's cooperative pool, and the task that fills the
/// queue only ever suspends (it never blocks a thread): the two cannot wait on each other's
/// thread. `cancel()` wakes a blocked read, which then aborts the transfer.
final class UploadPump: @unchecked Sendable {
    private let lock = NSCondition()
    private var chunks: [ArraySlice<UInt8>] = []
    private var queuedBytes = 0
    private var ended = false
    private var failure: (any Error)?
    private var cancelled = false
    /// The filling task, suspended while the queue holds `capacity` bytes or more.
    private var roomWaiter: CheckedContinuation<Void, Never>?
    private var task: Task<Void, Never>?
    private let capacity: Int

    /// - Parameter capacity: bytes the queue may hold before the filling task waits.
    init(_ body: HTTPBody, capacity: Int = 256 * 1024) {
        self.capacity = capacity
        task = Task { [weak self] in
            do {
                for try await chunk in body {
                    guard let self else { return }
                    if !(await self.put(chunk)) { return }
                }
                self?.end(nil)
            } catch {
                self?.end(error)
            }
        }
    }

    deinit { task?.cancel() }

    // MARK: The filling task

    /// Queues `chunk`, first waiting while the queue is full; false once the pump is cancelled.
    private func put(_ chunk: ArraySlice<UInt8>) async -> Bool {
        if chunk.isEmpty { return true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if queuedBytes >= capacity && !cancelled {
                roomWaiter = continuation
                lock.unlock()
            } else {
                lock.unlock()
                continuation.resume()
            }
        }
        return append(chunk)
    }

    private func append(_ chunk: ArraySlice<UInt8>) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if cancelled { return false }
        chunks.append(chunk)
        queuedBytes += chunk.count
        lock.broadcast()
        return true
    }

    private func end(_ error: (any Error)?) {
        lock.lock()
        ended = true
        failure = error
        lock.broadcast()
        lock.unlock()
    }

    // MARK: The transfer's thread

    /// libcurl's read: copies queued bytes into `buffer`, waiting for some; 0 at the end.
    /// - Throws: the body's own error, or `.cancelled` once `cancel()` was called.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        lock.lock()
        while chunks.isEmpty && !ended && !cancelled { lock.wait() }
        if cancelled {
            lock.unlock()
            throw HTTPContentError(.cancelled, "the request was cancelled while its body was being sent")
        }
        if chunks.isEmpty {
            let error = failure
            lock.unlock()
            if let error { throw error }
            return 0
        }
        var written = 0
        while written < buffer.count, let first = chunks.first {
            let n = min(first.count, buffer.count - written)
            first.prefix(n).withUnsafeBytes { bytes in
                (buffer.baseAddress! + written).copyMemory(from: bytes.baseAddress!, byteCount: n)
            }
            written += n
            if n == first.count { chunks.removeFirst() } else { chunks[0] = first.dropFirst(n) }
        }
        queuedBytes -= written
        let waiter = queuedBytes < capacity ? roomWaiter : nil
        if waiter != nil { roomWaiter = nil }
        lock.unlock()
        waiter?.resume()
        return written
    }

    /// Stops the pump: a blocked or later read throws `.cancelled`, the filling task ends.
    /// Called when the caller's task is cancelled and when the exchange is over.
    func cancel() {
        lock.lock()
        cancelled = true
        chunks.removeAll()
        let waiter = roomWaiter
        roomWaiter = nil
        lock.broadcast()
        lock.unlock()
        waiter?.resume()
        task?.cancel()
    }
}
