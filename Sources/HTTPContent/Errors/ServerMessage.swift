/// Finds the server's own explanation in a rejected response's body (seed 004's custom error
/// serializer, built in). Filled in by the JSON layer; until then there is none.
enum ServerMessage {
    static func extract(from body: [UInt8], head: ResponseHead?) -> String? {
        nil
    }
}
