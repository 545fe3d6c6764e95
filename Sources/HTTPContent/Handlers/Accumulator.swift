/// Accumulates the body in memory, then converts it. Subclass it (override `convert`) for a
/// handler that only wants the whole body, as hotpotato's BBHTTPAccumulator subclasses do.
/// Default acceptance: status 200–299, any type.
open class Accumulator<Content>: SelectiveHandler {
    // Read once per response on the transfer's thread: no dynamic exclusivity check.
    @exclusivity(unchecked) public var acceptance: Acceptance
    /// Maximum decoded body size in bytes; a larger body fails with `.tooLarge` as soon as it
    /// passes the limit (libcurl's own limit counts wire bytes, which a gzip bomb evades).
    public let maxSize: Int?
    /// The response head, once accepted.
    @exclusivity(unchecked) public private(set) var head: ResponseHead?
    /// Provides the memory for a body whose length the server declared, so it can be filled
    /// in place (the Python binding fills a `bytes` object this way); nil to use the library's
    /// own. Returns the memory and what to call once it is no longer used, or nil to decline.
    @exclusivity(unchecked) public var storage: ((Int) -> (UnsafeMutableRawPointer, () -> Void)?)?
    /// Bodies shorter than this stay in the library's own memory without asking `storage` (a
    /// caller whose storage declines small bodies says so here: no header lookup for them).
    @exclusivity(unchecked) package var storageMinimumSize = 0
    @exclusivity(unchecked) private var buffer = ByteBuffer()

    public init(maxSize: Int? = nil, acceptance: Acceptance = Acceptance()) {
        self.maxSize = maxSize
        self.acceptance = acceptance
    }

    open func accept(_ head: ResponseHead) throws -> Bool {
        try acceptance.check(head)
        self.head = head
        // A response that carries no body (HEAD, 204, 304...) may still declare the length a
        // GET would get: nothing to refuse or to make room for.
        if let length = head.contentLength, length > 0, !head.hasNoBodyByDefinition {
            if let maxSize, length > Int64(maxSize) {
                throw HTTPContentError(.tooLarge,
                    "body of \(length) bytes exceeds the limit of \(maxSize) bytes", response: head)
            }
            // A compressed body's length is its wire size, not what the handler receives.
            if length >= storageMinimumSize, let storage, head.headers["content-encoding"] == nil,
               let (memory, release) = storage(Int(length)) {
                buffer = ByteBuffer(lending: memory, capacity: Int(length), release: release)
            } else {
                // Capped so a lying Content-Length cannot make us reserve gigabytes up front.
                buffer.reserve(Int(min(length, 64 << 20)))
            }
        }
        return true
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) throws {
        if let maxSize, buffer.count + chunk.count > maxSize {
            throw HTTPContentError(.tooLarge, "body exceeds the limit of \(maxSize) bytes",
                                   response: head)
        }
        buffer.append(chunk)
    }

    /// The body received so far (all of it once the transfer is over).
    public var body: ByteBuffer { buffer }

    public func finish() throws -> Content {
        try convert(buffer)
    }

    /// Turns the accumulated body into the content. Subclasses override it.
    open func convert(_ body: ByteBuffer) throws -> Content {
        throw HTTPContentError(.callback, "\(type(of: self)) does not override convert(_:)")
    }
}

/// Keeps the whole body as bytes. Default acceptance: status 200–299, any type.
public final class Bytes: Accumulator<ByteBuffer> {
    public override func convert(_ body: ByteBuffer) -> ByteBuffer { body }
}

/// A handler that keeps the whole body in memory (every `Accumulator`): a larger receive
/// buffer among many transfers costs it nothing it does not hold anyway
/// (`TransferBuffers.multiDefault`).
package protocol KeepsWholeBody: AnyObject {}

extension Accumulator: KeepsWholeBody {}

