/// A compiled subschema: a boolean schema, or the keywords of an object schema in evaluation
/// order (the `unevaluated*` keywords last, since they read what the others evaluated).
final class SchemaNode: @unchecked Sendable {
    /// true / false for a boolean schema; nil for an object schema.
    var always: Bool?
    var keywords: [SchemaKeyword] = []
    /// The schema resource this node belongs to: entering a node of another resource than the
    /// current one adds it to the dynamic scope (for `$dynamicRef`).
    var owner: SchemaResource?
    /// The node has `unevaluatedItems` / `unevaluatedProperties`: it collects annotations.
    var hasUnevaluated = false

    init(always: Bool? = nil) { self.always = always }
}

/// A schema resource: a document's root or a subschema with `$id`.
final class SchemaResource: @unchecked Sendable {
    let uri: String
    let raw: JSONValue
    var root: SchemaNode!
    var anchors: [String: SchemaNode] = [:]
    var dynamicAnchors: [String: SchemaNode] = [:]
    let vocabularies: SchemaVocabularies
    init(uri: String, raw: JSONValue, vocabularies: SchemaVocabularies) {
        self.uri = uri
        self.raw = raw
        self.vocabularies = vocabularies
    }
}

/// A `$ref` or `$dynamicRef`, resolved once every document is compiled.
final class SchemaReference: @unchecked Sendable {
    /// The absolute reference (base resolved), fragment included.
    let uri: String
    var target: SchemaNode?
    /// For `$dynamicRef` to a plain-name fragment whose static target has the matching
    /// `$dynamicAnchor`: the anchor name to look up in the dynamic scope.
    var dynamicName: String?
    let isDynamic: Bool
    init(uri: String, isDynamic: Bool) {
        self.uri = uri
        self.isDynamic = isDynamic
    }
}

/// The JSON types of the `type` keyword, as bits.
struct SchemaTypes: OptionSet, Sendable {
    let rawValue: UInt8
    static let null = SchemaTypes(rawValue: 1)
    static let boolean = SchemaTypes(rawValue: 2)
    static let integer = SchemaTypes(rawValue: 4)
    static let number = SchemaTypes(rawValue: 8)
    static let string = SchemaTypes(rawValue: 16)
    static let array = SchemaTypes(rawValue: 32)
    static let object = SchemaTypes(rawValue: 64)

    static func named(_ name: String) -> SchemaTypes? {
        switch name {
        case "null": return .null
        case "boolean": return .boolean
        case "integer": return .integer
        case "number": return .number
        case "string": return .string
        case "array": return .array
        case "object": return .object
        default: return nil
        }
    }
}

/// The vocabularies in effect for a resource (a custom meta-schema's `$vocabulary` may leave
/// some out: their keywords are then ignored).
struct SchemaVocabularies: OptionSet, Sendable {
    let rawValue: UInt8
    static let applicator = SchemaVocabularies(rawValue: 1)
    static let unevaluated = SchemaVocabularies(rawValue: 2)
    static let validation = SchemaVocabularies(rawValue: 4)
    static let format = SchemaVocabularies(rawValue: 8)
    static let formatAssertion = SchemaVocabularies(rawValue: 16)
    static let all: SchemaVocabularies = [.applicator, .unevaluated, .validation, .format]

    static let prefix = "https://json-schema.org/draft/2020-12/vocab/"
}

/// A property name with its UTF-8 bytes made once, compared in place with a document's keys.
struct SchemaKey {
    let name: String
    let utf8: [UInt8]
    init(_ name: String) {
        self.name = name
        utf8 = Array(name.utf8)
    }
}

/// One compiled keyword. Indirect: a copy (one per keyword evaluated) is one retain of its box,
/// not a copy of each payload through the enum's value witnesses.
indirect enum SchemaKeyword {
    case type(SchemaTypes, [String])
    case enumeration([JSONValue])
    case constant(JSONValue)
    case multipleOf(JSONValue)
    case maximum(JSONValue), exclusiveMaximum(JSONValue), minimum(JSONValue), exclusiveMinimum(JSONValue)
    case maxLength(Int), minLength(Int)
    case pattern(SchemaRegex)
    case maxItems(Int), minItems(Int)
    case uniqueItems
    case maxProperties(Int), minProperties(Int)
    case required([SchemaKey])
    case dependentRequired([(String, [String])])
    case prefixItems([SchemaNode])
    case items(SchemaNode, prefix: Int)
    case contains(SchemaNode, min: Int, max: Int?)
    case properties([(String, SchemaNode)], [String: SchemaNode], [SchemaKey])
    case patternProperties([(SchemaRegex, SchemaNode)])
    case additionalProperties(SchemaNode, names: Set<String>, keys: [SchemaKey], patterns: [SchemaRegex])
    case propertyNames(SchemaNode)
    case dependentSchemas([(String, SchemaNode)])
    case allOf([SchemaNode]), anyOf([SchemaNode]), oneOf([SchemaNode])
    case not(SchemaNode)
    case conditional(SchemaNode, then: SchemaNode?, else: SchemaNode?)
    case ref(SchemaReference)
    case dynamicRef(SchemaReference)
    case format(String, SchemaFormat?)
    /// Only asserted on property lists: "base64" then matches data values (see `SchemaPlistView`).
    case contentEncoding(String)
    case unevaluatedItems(SchemaNode)
    case unevaluatedProperties(SchemaNode)
}
