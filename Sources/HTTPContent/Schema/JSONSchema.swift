/// A compiled JSON Schema (draft 2020-12): validates `JSONValue`s and reports where and why they
/// fail.
///
///     let schema = try JSONSchema(["type": "object", "required": ["id"]])
///     try schema.validate(value)            // throws .decode, sub-kind "schema"
///     let problems = schema.violations(of: value, allErrors: true)
///
/// Every keyword of the core, applicator, unevaluated and validation vocabularies is
/// implemented; `format` is an annotation unless `assertFormat` (or a meta-schema with the
/// format-assertion vocabulary) makes it an assertion. The 2020-12 meta-schemas are built in;
/// other documents that `$ref` names come from `remotes`: nothing is ever fetched. `pattern`
/// uses PCRE2 configured close to ECMA-262 (see `SchemaRegex`).
///
/// A schema is immutable once made and may validate from several threads at once.
public final class JSONSchema: @unchecked Sendable {
    private let compiler: SchemaCompiler
    private let root: SchemaNode
    /// The schema as a program that checks a parsed document on its tape (nil when a keyword
    /// needs the full validator): the fast path for valid documents, see `SchemaTapeProgram`.
    let tapeProgram: SchemaTapeProgram?
    /// The schema document as given.
    public let document: JSONValue
    /// Whether `format` is asserted.
    public let assertFormat: Bool
    /// The value transformers by format name (built-in date-time, date, uri, uuid, plus the
    /// caller's), applied by `transform` and `untransform` after validation.
    public let transformers: [String: SchemaTransformer]

    /// - Parameters:
    ///   - schema: the schema (an object or a boolean).
    ///   - remotes: other schema documents by URI, for `$ref`s that leave this document.
    ///   - assertFormat: check `format` values (default false: formats are annotations, as the
    ///     2020-12 specification says).
    ///   - formats: extra or replacement format checkers by name.
    ///   - transformers: extra or replacement value transformers by format name.
    ///   - baseURI: the base URI of a schema without `$id` (default none).
    /// - Throws: `.invalidArgument` for an invalid schema or a reference that cannot be resolved.
    public init(_ schema: JSONValue, remotes: [String: JSONValue] = [:], assertFormat: Bool = false,
                formats: [SchemaFormat] = [], transformers: [SchemaTransformer] = [],
                baseURI: String = "") throws(HTTPContentError) {
        var formatTable = SchemaFormat.builtin
        for f in formats { formatTable[f.name] = f }
        compiler = SchemaCompiler(remotes: remotes, assertFormat: assertFormat, formats: formatTable)
        do {
            root = try compiler.compileRoot(schema, baseURI: baseURI)
        } catch {
            compiler.tearDown()
            throw error
        }
        tapeProgram = SchemaTapeProgram.compile(root)
        document = schema
        self.assertFormat = assertFormat
        var table = SchemaTransformer.builtin
        for t in transformers { table[t.format] = t }
        self.transformers = table
    }

    /// Parses the schema from JSON text first.
    public convenience init(parsing text: some Collection<UInt8>, remotes: [String: JSONValue] = [:],
                            assertFormat: Bool = false, formats: [SchemaFormat] = [],
                            transformers: [SchemaTransformer] = []) throws(HTTPContentError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: text)
        } catch {
            throw HTTPContentError(.invalidArgument, "the schema is not valid JSON: \(error.message)")
        }
        try self.init(value, remotes: remotes, assertFormat: assertFormat, formats: formats, transformers: transformers)
    }

    deinit { compiler.tearDown() }

    /// The ways `value` fails the schema: none when it is valid; the first only, unless
    /// `allErrors`.
    public func violations(of value: JSONValue, allErrors: Bool = false) -> [SchemaViolation] {
        violations(of: value, allErrors: allErrors, plistDataPaths: nil)
    }

    /// `violations(of:)`, for a property list's view when `plistDataPaths` is given.
    func violations(of value: JSONValue, allErrors: Bool, plistDataPaths: Set<[String]>?) -> [SchemaViolation] {
        // A valid parsed document is proven so on its tape; anything else is evaluated in full,
        // which alone makes the errors.
        if plistDataPaths == nil, tapeVerdict(value) == .valid { return [] }
        return fullViolations(of: value, allErrors: allErrors, plistDataPaths: plistDataPaths)
    }

    /// The root subschema (where a streaming check starts).
    var rootNode: SchemaNode { root }

    /// The violations of `value` against the subschema `node` alone, with paths relative to
    /// both (a streaming check prefixes them with the value's place).
    func violations(of value: JSONValue, at node: SchemaNode, allErrors: Bool) -> [SchemaViolation] {
        let run = SchemaEvaluation(allErrors: allErrors)
        if run.evaluate(node, value) { return [] }
        let found = run.violations.map(\.violation)
        return allErrors ? found : Array(found.prefix(1))
    }

    /// `validate`, trusting the containers a streaming check proved on the document's tape.
    func validate(_ value: JSONValue, allErrors: Bool, proven: SchemaTapeProven) throws(HTTPContentError) {
        if !proven.isEmpty, let tapeProgram, tapeProgram.verdict(value, tapeProgram.makeScratch(), proven: proven) == .valid {
            return
        }
        try validate(value, allErrors: allErrors)
    }

    /// The tape program's verdict on a parsed document's container; nil without a program or
    /// for values not on a tape.
    func tapeVerdict(_ value: JSONValue) -> SchemaTapeVerdict? {
        guard let tapeProgram else { return nil }
        return tapeProgram.verdict(value, tapeProgram.makeScratch())
    }

    /// `violations(of:)` by the full validator alone.
    func fullViolations(of value: JSONValue, allErrors: Bool, plistDataPaths: Set<[String]>? = nil) -> [SchemaViolation] {
        let run = SchemaEvaluation(allErrors: allErrors)
        if let plistDataPaths {
            run.plistDataPaths = plistDataPaths
            run.trackPath = true
        }
        if run.evaluate(root, value) { return [] }
        let found = run.violations.map(\.violation)
        if found.isEmpty {
            return [SchemaViolation(instancePath: "", schemaPath: "", keyword: "", message: "the value is not valid under the schema")]
        }
        return allErrors ? found : [found[0]]
    }

    /// Where `value` holds scalars whose `format` has a transformer for them (strings for the
    /// built-in ones, any scalar for those made so): (instance path tokens,
    /// format name) for every `format` keyword of a passing subschema (failed `anyOf` branches
    /// and the like contribute nothing). Empty when `value` is not valid.
    public func formatAnnotations(of value: JSONValue) -> [(path: [String], format: String)] {
        formatAnnotations(of: value, plistDataPaths: nil)
    }

    func formatAnnotations(of value: JSONValue, plistDataPaths: Set<[String]>?) -> [(path: [String], format: String)] {
        guard hasTransformableFormats else { return [] }
        let run = SchemaEvaluation(allErrors: false)
        run.recording = false
        run.collectingFormats = true
        run.trackPath = true
        run.plistDataPaths = plistDataPaths
        run.formatScalars = transformers.mapValues(\.scalars)
        var ann = SchemaAnnotations()
        guard run.eval(root, value, &ann, true) else { return [] }
        return run.formatHits
    }

    /// Whether the schema names any format with a transformer (else annotations are skipped).
    private var hasTransformableFormats: Bool { compiler.formatNamesUsed.contains { transformers[$0] != nil } }

    /// `value` with the scalars at its format annotations decoded by their transformers: the
    /// typed values by instance path ("/when" → `SchemaDateTime`, ...).
    /// - Throws: `.decode` (sub-kind "schema") when `value` is not valid; `.callback` when a
    ///   transformer fails.
    public func transformedValues(of value: JSONValue) throws(HTTPContentError) -> [(path: String, value: any Sendable)] {
        try transformed(value).map { ($0.path, $0.value) }
    }

    /// Whether `value` is valid.
    public func isValid(_ value: JSONValue) -> Bool {
        if let verdict = tapeVerdict(value), verdict != .undecided { return verdict == .valid }
        let run = SchemaEvaluation(allErrors: false)
        run.recording = false
        return run.evaluate(root, value)
    }

    /// - Throws: `code` (`.decode` by default) with sub-kind "schema": `violations` lists the
    ///   failures, the message names the first.
    public func validate(_ value: JSONValue, allErrors: Bool = false,
                         code: HTTPContentError.Code = .decode) throws(HTTPContentError) {
        let found = violations(of: value, allErrors: allErrors)
        if found.isEmpty { return }
        throw JSONSchema.error(found, code: code)
    }

    /// The error for a list of violations.
    public static func error(_ found: [SchemaViolation], code: HTTPContentError.Code = .decode,
                             response: ResponseHead? = nil) -> HTTPContentError {
        var message = "schema validation failed: \(found[0])"
        if found.count > 1 { message += " (and \(found.count - 1) more)" }
        var error = HTTPContentError(code, message, response: response)
        error.violations = found
        return error
    }
}

extension JSONSchema: JSONValueValidator {
    /// Validates with the first error only (the `JSON` handler's check).
    public func check(_ value: JSONValue) throws(HTTPContentError) { try validate(value) }
}

/// A schema with its options, for handlers: which errors to report.
public struct JSONSchemaCheck: JSONValueValidator {
    public let schema: JSONSchema
    /// Report every violation (default: the first).
    public let allErrors: Bool
    public init(_ schema: JSONSchema, allErrors: Bool = false) {
        self.schema = schema
        self.allErrors = allErrors
    }
    public func check(_ value: JSONValue) throws(HTTPContentError) { try schema.validate(value, allErrors: allErrors) }
}

extension RequestBody {
    /// A JSON body validated against `schema` before anything is sent.
    /// - Throws: `.invalidArgument` with sub-kind "schema" (`violations`) when `value` is not
    ///   valid; nothing is sent then.
    public static func json(_ value: JSONValue, schema: JSONSchema, allErrors: Bool = false) throws(HTTPContentError) -> RequestBody {
        try schema.validate(value, allErrors: allErrors, code: .invalidArgument)
        return try .json(value)
    }
}
