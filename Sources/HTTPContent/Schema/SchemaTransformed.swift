/// One value a transformer made from a string of a validated document: where it was, under which
/// format, its text and the typed value (what the C and Swift fronts hand out).
public struct SchemaTransformedValue: Sendable {
    /// RFC 6901 JSON Pointer of the string in the document ("" for the root).
    public let path: String
    /// The `format` value whose transformer made `value` ("date-time", a registered name...).
    public let format: String
    /// The string as the document holds it.
    public let text: String
    /// What the format's transformer made of it.
    public let value: any Sendable
}

extension JSONSchema {
    /// Validates `value`, then runs the transformer of every format annotation (a `format`
    /// keyword of a passing subschema on a string), in document evaluation order.
    /// - Throws: `.decode` (sub-kind "schema") when `value` is not valid; `.callback` when a
    ///   transformer refuses its text.
    public func transformed(_ value: JSONValue) throws(HTTPContentError) -> [SchemaTransformedValue] {
        try validate(value)
        var out: [SchemaTransformedValue] = []
        for hit in formatAnnotations(of: value) {
            guard let transformer = transformers[hit.format], case .string(let text)? = value[path: hit.path] else { continue }
            do {
                out.append(SchemaTransformedValue(path: SchemaPointer.join(hit.path), format: hit.format, text: text,
                                                  value: try transformer.decode(text)))
            } catch {
                throw HTTPContentError(.callback, "the \(hit.format) transformer failed on \"\(text)\": \(error)", underlying: error)
            }
        }
        return out
    }

    /// The text `format`'s transformer writes for `value` (the request direction: a typed value
    /// back into the string a body carries).
    /// - Throws: `.invalidArgument` when the schema has no transformer for `format`, or it
    ///   refuses `value`.
    public func encode(_ value: any Sendable, format: String) throws(HTTPContentError) -> String {
        guard let transformer = transformers[format] else {
            throw HTTPContentError(.invalidArgument, "the schema has no transformer for the format \"\(format)\"")
        }
        guard let text = transformer.encode(value) else {
            throw HTTPContentError(.invalidArgument, "the \(format) transformer cannot write \(type(of: value)) as text")
        }
        return text
    }
}
