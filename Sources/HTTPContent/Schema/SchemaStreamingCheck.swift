/// A schema's check while the `JSON` handler builds the tree: each element of a top-level array
/// is checked on the tape as soon as it is complete, against the root's `items` and
/// `prefixItems`, so an invalid document fails at its first invalid element instead of after
/// the whole body. Its error lists that element's violations, as the whole document's
/// validation would report them (instance path "/i/...", schema path "/items/..." or
/// "/prefixItems/i/..."); with all errors, those of that element only, since the rest has not
/// arrived. The finished document is then validated as usual, less the elements already proven
/// valid. Schemas without a tape program (or without items / prefixItems at the root) and
/// documents that are not arrays are validated once complete.
final class SchemaStreamingCheck: JSONStreamingCheck {
    private let schema: JSONSchema
    private let program: SchemaTapeProgram
    private let allErrors: Bool
    private let scratch: SchemaRegexScratch?
    /// The root's items / prefixItems subschemas (nil: every element undecided).
    private let elementSchemas: SchemaTapeProgram.ElementSchemas?
    /// The tape run the elements are checked with, made at the first element, in memory of its
    /// own so it is only ever used in place (an optional run was copied, with its references
    /// retained, at each element).
    @exclusivity(unchecked) private var run: UnsafeMutablePointer<SchemaTapeRun>?
    /// Every element seen so far was proven valid on the tape.
    private var allProven = true
    private var elements = 0

    init?(_ schema: JSONSchema, allErrors: Bool) {
        guard let program = schema.tapeProgram, schema.rootHasElementSchemas else { return nil }
        self.schema = schema
        self.program = program
        self.allErrors = allErrors
        scratch = program.makeScratch()
        elementSchemas = program.elementSchemas()
    }

    func element(_ storage: JSONTapeStorage, _ node: UInt32, _ index: Int) throws(HTTPContentError) {
        elements += 1
        guard let elementSchemas else {
            allProven = false
            return
        }
        let run: UnsafeMutablePointer<SchemaTapeRun>
        if let r = self.run {
            run = r
            run.pointee.tape = storage
        } else {
            run = .allocate(capacity: 1)
            run.initialize(to: SchemaTapeRun(t: elementSchemas.tables, program: program, tape: storage, scratch: scratch))
            self.run = run
        }
        switch program.elementVerdict(&run.pointee, node, index, elementSchemas) {
        case .valid: return
        case .undecided: allProven = false
        case .invalid:
            let found = schema.elementViolations(JSONTape.valueOf(storage, node), index: index, allErrors: allErrors)
            throw JSONSchema.error(found)
        }
    }

    private func dropRun() {
        guard let run else { return }
        run.deinitialize(count: 1)
        run.deallocate()
        self.run = nil
    }

    deinit { dropRun() }

    func finish(_ value: JSONValue) throws(HTTPContentError) {
        let proven = allProven && elements > 0
        allProven = true
        elements = 0
        dropRun()
        try schema.validate(value, allErrors: allErrors, skippingProvenElements: proven)
    }
}

extension JSONSchema: JSONStreamingValidator {
    func streamingCheck() -> (any JSONStreamingCheck)? { SchemaStreamingCheck(self, allErrors: false) }
}

extension JSONSchemaCheck: JSONStreamingValidator {
    func streamingCheck() -> (any JSONStreamingCheck)? { SchemaStreamingCheck(schema, allErrors: allErrors) }
}
