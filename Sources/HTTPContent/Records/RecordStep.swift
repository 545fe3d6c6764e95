/// How the record handlers (`JSONLines`, `SSE`) run their parser on the body: a callback's
/// `StopTransfer` is remembered (their summary reports the stop), and the library's own
/// errors name the response (a parser knows nothing of it).
enum RecordStep {
    /// Runs `step`.
    /// - Parameters:
    ///   - head: the response, given to an `HTTPContentError` that names none.
    ///   - rethrowStop: throw the `StopTransfer` on (to stop the transfer; not once the body ended).
    ///   - onStop: called when `step` throws `StopTransfer` (after it returned: a callback of
    ///     the step may read the handler's state meanwhile).
    /// - Throws: what `step` throws, as said above.
    @inline(__always)
    static func run(_ head: ResponseHead?, rethrowStop: Bool = true, onStop: () -> Void,
                    _ step: () throws -> Void) throws {
        do {
            try step()
        } catch is StopTransfer {
            onStop()
            if rethrowStop { throw StopTransfer() }
        } catch let error as HTTPContentError {
            throw error.attaching(head)
        }
    }
}
