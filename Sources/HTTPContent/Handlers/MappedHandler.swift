/// Runs a handler and converts its content when it finishes: the fronts (the C ABI, a binding)
/// keep the core's handlers and hand out their own view of the result. Every event goes to the
/// inner handler unchanged, so its acceptance, limits and errors are the inner handler's.
package final class MappedHandler<Inner: ContentHandler, Content>: ContentHandler {
    package let inner: Inner
    package let transform: (Inner.Content) -> Content

    package init(_ inner: Inner, _ transform: @escaping (Inner.Content) -> Content) {
        self.inner = inner
        self.transform = transform
    }

    package func prepare(_ request: inout Request) throws { try inner.prepare(&request) }
    package func accept(_ head: ResponseHead) throws -> Bool { try inner.accept(head) }
    package func consume(_ chunk: UnsafeRawBufferPointer) throws { try inner.consume(chunk) }
    package func finish() throws -> Content { transform(try inner.finish()) }
    package func cleanup(failed: Bool) { inner.cleanup(failed: failed) }
}

/// A held batch is handed over by the inner handler, as if there were no mapping.
extension MappedHandler: ReceivePauseHandler where Inner: ReceivePauseHandler {
    package func receivePaused() throws { try inner.receivePaused() }
}
