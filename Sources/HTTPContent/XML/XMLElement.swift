/// An XML element as a value: our own type (no Foundation), built by the XML handlers.
///
/// Names are kept as the document wrote them (`prefix`, `name`) with the namespace URI they
/// resolve to, so `{namespace}name` (ElementTree's form) and the original text can both be had.
public struct XMLElement: Sendable, Equatable, Hashable {
    /// The local name (`entry` for `<atom:entry>`).
    public var name: String
    /// The namespace URI the name is in, or nil for none.
    public var namespace: String?
    /// The prefix the document used, or nil for the default namespace or none.
    public var prefix: String?
    /// Attributes in document order (namespace declarations are not attributes: see
    /// `namespaceDeclarations`).
    public var attributes: [XMLAttribute]
    /// The `xmlns` and `xmlns:p` declarations made on this element, in order (prefix nil for the
    /// default namespace).
    public var namespaceDeclarations: [XMLNamespaceDeclaration]
    /// Child nodes in document order: elements, text, and CDATA and comments when kept.
    public var children: [XMLNode]

    public init(name: String, namespace: String? = nil, prefix: String? = nil, attributes: [XMLAttribute] = [],
                namespaceDeclarations: [XMLNamespaceDeclaration] = [], children: [XMLNode] = []) {
        self.name = name
        self.namespace = namespace
        self.prefix = prefix
        self.attributes = attributes
        self.namespaceDeclarations = namespaceDeclarations
        self.children = children
    }

    /// ElementTree's form of the name: `{namespace}name`, or `name` with no namespace.
    public var tag: String { XMLElement.clark(name, namespace) }

    /// The name as written: `prefix:name` or `name`.
    public var qualifiedName: String { prefix.map { "\($0):\(name)" } ?? name }

    /// The child elements, in order.
    public var elements: [XMLElement] {
        children.compactMap { if case .element(let e) = $0 { return e } else { return nil } }
    }

    /// The first child element with this name (`{ns}name` matches the namespace too; a bare name
    /// matches any namespace).
    public func first(_ step: String) -> XMLElement? {
        let match = XMLPathStep(step)
        for case .element(let e) in children where match.matches(e.name, e.namespace) { return e }
        return nil
    }

    /// All child elements with this name (as `first`).
    public func all(_ step: String) -> [XMLElement] {
        let match = XMLPathStep(step)
        return elements.filter { match.matches($0.name, $0.namespace) }
    }

    /// The value of the attribute with this local name and namespace (nil: no namespace).
    public func attribute(_ name: String, namespace: String? = nil) -> String? {
        attributes.first { $0.name == name && $0.namespace == namespace }?.value
    }

    /// ElementTree's `text`: the character data before the first child element (nil when none).
    public var text: String? {
        var out: String?
        for child in children {
            switch child {
            case .element: return out
            case .text(let s), .cdata(let s): out = (out ?? "") + s
            case .comment: return out
            }
        }
        return out
    }

    /// All character data inside, at every depth, in document order (comments excluded).
    public var textContent: String {
        var out = ""
        func walk(_ e: XMLElement) {
            for child in e.children {
                switch child {
                case .element(let c): walk(c)
                case .text(let s), .cdata(let s): out += s
                case .comment: break
                }
            }
        }
        walk(self)
        return out
    }

    static func clark(_ name: String, _ namespace: String?) -> String {
        guard let namespace else { return name }
        return "{\(namespace)}\(name)"
    }
}

/// One node of an element's content.
public enum XMLNode: Sendable, Equatable, Hashable {
    case element(XMLElement)
    /// Character data (entities and character references already replaced).
    case text(String)
    /// A CDATA section, when `XMLOptions.keepCDATA` is set.
    case cdata(String)
    /// A comment, when `XMLOptions.keepComments` is set.
    case comment(String)
}

public struct XMLAttribute: Sendable, Equatable, Hashable {
    public var name: String
    /// The namespace URI of a prefixed attribute; nil for an unprefixed one (they are in no namespace).
    public var namespace: String?
    public var prefix: String?
    public var value: String

    public init(name: String, namespace: String? = nil, prefix: String? = nil, value: String) {
        self.name = name
        self.namespace = namespace
        self.prefix = prefix
        self.value = value
    }

    /// ElementTree's form: `{namespace}name` or `name`.
    public var tag: String { XMLElement.clark(name, namespace) }
}

public struct XMLNamespaceDeclaration: Sendable, Equatable, Hashable {
    /// nil for the default namespace (`xmlns="..."`).
    public var prefix: String?
    public var uri: String

    public init(prefix: String?, uri: String) {
        self.prefix = prefix
        self.uri = uri
    }
}
