/// Where path streaming looks for values, in ijson's prefix syntax: dot-joined member names,
/// `item` for any element of an array, `""` for the top-level value. `"results.item"` is each
/// element of the array under the `results` member.
///
/// A member literally named `item`, or a name with a dot, is written with `init(components:)`.
public struct JSONPrefix: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public enum Component: Sendable, Hashable {
        /// A member of an object, by name.
        case key(String)
        /// Any element of an array.
        case item
    }

    public let components: [Component]

    public init(components: [Component]) { self.components = components }

    /// Parses ijson syntax.
    public init(_ text: String) {
        components = text.isEmpty ? [] : text.split(separator: ".", omittingEmptySubsequences: false)
            .map { $0 == "item" ? .item : .key(String($0)) }
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// The ijson text.
    public var description: String {
        components.map { if case .key(let k) = $0 { return k } else { return "item" } }.joined(separator: ".")
    }

    /// True when `other` lies inside (or is) this prefix's values.
    func contains(_ other: JSONPrefix) -> Bool {
        other.components.count >= components.count && Array(other.components.prefix(components.count)) == components
    }
}
