import HTTPContent

/// The body parsed as a property list (XML or binary) and printed as an indented XML plist;
/// --path picks a value (dates print in whole seconds, as XML plists carry them).
enum PlistMode: BodyMode {
    static let name = "plist"
    static func run(_ exchange: Exchange) throws(HTTPContentError) {
        let o = exchange.options
        var acceptance = exchange.acceptance
        if o.acceptType.isEmpty { acceptance.contentTypes = Plist.defaultAcceptance().contentTypes }
        var options = PlistOptions()
        if let maxSize = o.maxSize { options.maxSize = min(maxSize, Int(UInt32.max)) }
        let handler = try Plist(options: options, acceptance: acceptance)
        let r = try exchange.send { handler }
        guard var value = r.content else {
            Output.write("(empty response)\n")
            return
        }
        if let keyPath = o.keyPath {
            guard let found = value[keyPath: keyPath] else {
                throw HTTPContentError(.invalidArgument, "no value at \(keyPath)")
            }
            value = found
        }
        let text = try value.serialized(format: .xml)
        text.withUnsafeBytes { Output.write($0) }
    }
}
