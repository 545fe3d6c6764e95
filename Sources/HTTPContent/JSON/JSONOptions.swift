/// How JSON text is parsed, shared by `JSONStreamParser`, `JSONEventParser` and every JSON
/// handler. Every default is stated in the initializer (and pinned by a test).
public struct JSONOptions: Sendable, Equatable {
    /// Drop object members whose value is `null`, at every depth, objects inside arrays included
    /// (array elements that are `null` stay: removing them would shift indices). Default: false.
    public var removeNulls: Bool
    /// Accept `/* */` and `//` comments. Default: false.
    public var allowComments: Bool
    /// Accept several top-level values separated by whitespace (NDJSON, concatenated JSON).
    /// The tree handler then produces an array of the documents. Default: false.
    public var allowMultipleValues: Bool
    /// Maximum nesting of arrays and objects; deeper input is a decode error. Default: 512.
    public var maxDepth: Int
    /// Maximum input size in bytes; larger input fails with `.tooLarge`. Default: nil (none).
    public var maxSize: Int?
    /// Reject strings that are not valid UTF-8. With false, invalid bytes become U+FFFD in
    /// Swift strings. Default: true.
    public var strictUTF8: Bool
    /// Keep every number as its original text (`JSONValue.number`), so nothing is rounded and
    /// numbers beyond `Double`'s range are kept. Default: false.
    public var keepNumberText: Bool
    /// Keep integers too large for `Int64` as their text (`JSONValue.number`) instead of
    /// rounding them to a double, as Python's `json.loads` keeps them exact; other numbers stay
    /// `.int`/`.double`. Default: false.
    public var exactIntegers: Bool
    /// Ignore anything after the first complete value (yajl's `allow_trailing_garbage`).
    /// Default: false.
    public var allowTrailingGarbage: Bool
    /// Accept input that ends inside a value; the tree handler closes what was left open
    /// (yajl's `allow_partial_values`). Default: false.
    public var allowPartialValues: Bool
    /// At most this many leading bytes of the input are kept to attach to a decode error as its
    /// `body`; the copy is dropped once parsing succeeds. Default: 64 KiB.
    public var errorBodyLimit: Int

    public init(removeNulls: Bool = false, allowComments: Bool = false, allowMultipleValues: Bool = false,
                maxDepth: Int = 512, maxSize: Int? = nil, strictUTF8: Bool = true,
                keepNumberText: Bool = false, allowTrailingGarbage: Bool = false,
                allowPartialValues: Bool = false, errorBodyLimit: Int = 64 * 1024, exactIntegers: Bool = false) {
        self.removeNulls = removeNulls
        self.allowComments = allowComments
        self.allowMultipleValues = allowMultipleValues
        self.maxDepth = maxDepth
        self.maxSize = maxSize
        self.strictUTF8 = strictUTF8
        self.keepNumberText = keepNumberText
        self.allowTrailingGarbage = allowTrailingGarbage
        self.allowPartialValues = allowPartialValues
        self.errorBodyLimit = errorBodyLimit
        self.exactIntegers = exactIntegers
    }

    /// The media ranges JSON handlers accept by default.
    public static let defaultContentTypes: [MediaRange] =
        ["application/json", "text/json", "text/javascript", "*/*+json"]

    /// The media ranges a handler with the default ones accepts with `allowMultipleValues`: the
    /// JSON types and those of newline-delimited JSON, which is several values one after another.
    public static let multipleValuesContentTypes: [MediaRange] = defaultContentTypes
        + ["application/x-ndjson", "application/jsonl", "application/x-jsonlines", "application/jsonlines"]
}
