/// One parse event, as ijson names them.
public enum JSONEvent: Sendable, Equatable {
    case startMap
    /// A member name; the path is the object's.
    case mapKey(String)
    case endMap
    case startArray
    case endArray
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    /// A number kept as text (`keepNumberText`).
    case number(String)
    case string(String)
}

/// Where an event happened: the path from the top-level value to the value concerned.
public struct JSONPath: Sendable, Equatable, CustomStringConvertible {
    public enum Component: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    public let components: ArraySlice<Component>

    public init(_ components: [Component]) { self.components = components[...] }
    init(slice: ArraySlice<Component>) { components = slice }

    /// The ijson prefix of this path: keys joined with dots, `item` for array indices.
    public var prefix: String {
        components.map { if case .key(let k) = $0 { return k } else { return "item" } }.joined(separator: ".")
    }

    /// Keys and indices joined with dots (`results.3.name`), as `JSONValue[_:]` reads them.
    public var description: String {
        components.map { switch $0 { case .key(let k): return k; case .index(let i): return String(i) } }
            .joined(separator: ".")
    }
}
