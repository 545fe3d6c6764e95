/// Takes nothing from the body: the response's status and headers are the result.
/// Default acceptance: status 200–299, any type.
public final class Discard: SelectiveHandler {
    public var acceptance: Acceptance

    /// Keeps nothing; the status and headers are all the response carries.
    public init(acceptance: Acceptance = Acceptance()) {
        self.acceptance = acceptance
    }

    public func consume(_ chunk: UnsafeRawBufferPointer) {}
    public func finish() -> Void {}
}
