/// One value a transformer made from a scalar of a validated document: where it was, under which
/// format, its text and the typed value (what the C and Swift fronts hand out).
public struct SchemaTransformedValue: Sendable {
    /// RFC 6901 JSON Pointer of the scalar in the document ("" for the root).
    public let path: String
    /// The `format` value whose transformer made `value` ("date-time", a registered name...).
    public let format: String
    /// A string as the document holds it; a number, boolean or null as its JSON text.
    public let text: String
    /// The scalar as the document holds it.
    public let source: JSONValue
    /// What the format's transformer made of it.
    public let value: any Sendable
}

extension JSONSchema {
    /// Validates `value`, then runs the transformer of every format annotation (a `format`
    /// keyword of a passing subschema on a scalar its transformer takes), in document
    /// evaluation order.
    /// - Throws: `.decode` (sub-kind "schema") when `value` is not valid; `.callback` when a
    ///   transformer refuses its text.
    public func transformed(_ value: JSONValue) throws(HTTPContentError) -> [SchemaTransformedValue] {
        try validate(value)
        var out: [SchemaTransformedValue] = []
        for hit in formatAnnotations(of: value) {
            guard let transformer = transformers[hit.format], let scalar = value[path: hit.path] else { continue }
            let text = SchemaTransformer.text(of: scalar)
            do {
                out.append(SchemaTransformedValue(path: SchemaPointer.join(hit.path), format: hit.format, text: text,
                                                  source: scalar, value: try transformer.decodeValue(scalar)))
            } catch {
                throw HTTPContentError(.callback, "the \(hit.format) transformer failed on \(text): \(error)", underlying: error)
            }
        }
        return out
    }

    /// The text `format`'s transformer writes for `value` (the request direction: a typed value
    /// back into what a body carries): a string's text, or the JSON text of any other value.
    /// - Throws: `.invalidArgument` when the schema has no transformer for `format`, or it
    ///   refuses `value`.
    public func encode(_ value: any Sendable, format: String) throws(HTTPContentError) -> String {
        SchemaTransformer.text(of: try encodeValue(value, format: format))
    }

    /// The JSON value `format`'s transformer writes for `value` (any JSON value: a body built
    /// with it is validated against the schema like any other).
    /// - Throws: `.invalidArgument` when the schema has no transformer for `format`, or it
    ///   refuses `value`.
    public func encodeValue(_ value: any Sendable, format: String) throws(HTTPContentError) -> JSONValue {
        guard let transformer = transformers[format] else {
            throw HTTPContentError(.invalidArgument, "the schema has no transformer for the format \"\(format)\"")
        }
        guard let encoded = transformer.encodeValue(value) else {
            throw HTTPContentError(.invalidArgument, "the \(format) transformer cannot write \(type(of: value))")
        }
        return encoded
    }
}
