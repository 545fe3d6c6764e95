import Synchronization

/// Finds the server's own explanation in a rejected response's body (seed 004's custom error
/// serializer, built in): when the body is JSON (a JSON media type, or it parses as JSON), the
/// first of `keyPaths` that holds a non-empty string.
public enum ServerMessage {
    /// The key paths tried, in order, by default: `error.message`, `error` (when a string),
    /// `message`, `error_description`, `detail`, `title`.
    public static let defaultKeyPaths = ["error.message", "error", "message", "error_description", "detail", "title"]

    private static let paths = Mutex(defaultKeyPaths)

    /// The key paths tried, in order (process-wide; dot-separated, as `JSONValue[_:]`).
    public static var keyPaths: [String] {
        get { paths.withLock { $0 } }
        set { paths.withLock { $0 = newValue } }
    }

    static func extract(from body: [UInt8], head: ResponseHead?) -> String? {
        guard !body.isEmpty, looksLikeJSON(body, head: head) else { return nil }
        // The body is capped by the transfer; a truncated document is not worth guessing at.
        guard let value = try? JSONValue(parsing: body, options: JSONOptions(maxDepth: 64)) else { return nil }
        for path in keyPaths {
            if case .string(let text)? = value[path], !text.isEmpty { return text }
        }
        return nil
    }

    private static func looksLikeJSON(_ body: [UInt8], head: ResponseHead?) -> Bool {
        if let type = head?.contentType,
           JSONOptions.defaultContentTypes.contains(where: { $0.matches(type) }) { return true }
        // Otherwise only bodies that start like an object are tried.
        let first = body.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        return first == UInt8(ascii: "{")
    }
}
