/// One way a value failed a JSON Schema: where in the value, which keyword of which schema, and
/// why. Carried by `HTTPContentError.violations` (sub-kind "schema") on every front.
public struct SchemaViolation: Sendable, Equatable, CustomStringConvertible {
    /// RFC 6901 JSON Pointer to the failing value ("" for the root).
    public var instancePath: String
    /// JSON Pointer along the evaluation path through the schema to the failing keyword, `$ref`
    /// and `$dynamicRef` steps included ("/properties/id/type").
    public var schemaPath: String
    /// The keyword that failed ("type", "required", ... ; "false" for a `false` schema).
    public var keyword: String
    /// What is wrong, in words.
    public var message: String

    public init(instancePath: String, schemaPath: String, keyword: String, message: String) {
        self.instancePath = instancePath
        self.schemaPath = schemaPath
        self.keyword = keyword
        self.message = message
    }

    public var description: String {
        "at \"\(instancePath)\" (schema \"\(schemaPath)\"): \(message)"
    }
}
