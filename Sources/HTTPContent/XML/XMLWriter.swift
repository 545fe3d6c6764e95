extension XMLElement {
    /// The element as XML text (UTF-8, no declaration), with the prefixes and namespace
    /// declarations it was parsed with, plus those it inherits from its ancestors (see
    /// `declaringInheritedNamespaces`): a child of a tree or a streamed element is well-formed and
    /// namespace-correct on its own. `pretty` indents child elements by two spaces per level
    /// where the element holds no text of its own (mixed content is written as it is).
    public func xmlString(pretty: Bool = false) -> String {
        var out = ""
        declaringInheritedNamespaces().write(to: &out, pretty: pretty, level: 0)
        return out
    }

    private func write(to out: inout String, pretty: Bool, level: Int) {
        out += "<" + qualifiedName
        for d in namespaceDeclarations {
            out += d.prefix.map { " xmlns:\($0)=\"" } ?? " xmlns=\""
            XMLElement.escape(d.uri, into: &out, attribute: true)
            out += "\""
        }
        for a in attributes {
            out += " " + (a.prefix.map { "\($0):\(a.name)" } ?? a.name) + "=\""
            XMLElement.escape(a.value, into: &out, attribute: true)
            out += "\""
        }
        if children.isEmpty {
            out += "/>"
            return
        }
        out += ">"
        // Indenting would change text: only element-only content (whitespace aside) is indented.
        let indent = pretty && children.allSatisfy {
            if case .text(let s) = $0 { return s.allSatisfy { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" } }
            return true
        }
        for child in children {
            switch child {
            case .element(let e):
                if indent { out += "\n" + String(repeating: "  ", count: level + 1) }
                e.write(to: &out, pretty: pretty, level: level + 1)
            case .text(let s):
                if !indent { XMLElement.escape(s, into: &out, attribute: false) }
            case .cdata(let s):
                out += "<![CDATA[" + s.replacingAll("]]>", with: "]]]]><![CDATA[>") + "]]>"
            case .comment(let s):
                if indent { out += "\n" + String(repeating: "  ", count: level + 1) }
                out += "<!--" + s + "-->"
            }
        }
        if indent { out += "\n" + String(repeating: "  ", count: level) }
        out += "</" + qualifiedName + ">"
    }

    /// A copy that also declares, on itself, every prefix (and the default namespace) that it
    /// and its descendants use without declaring (`xmlString()` writes these declarations). An element taken out of its document (streamed by path, or a child of a tree)
    /// carries only the declarations written on it; the ones of its ancestors are restored from
    /// the namespace URIs its names resolved to. The `xml` prefix is never declared.
    public func declaringInheritedNamespaces() -> XMLElement {
        var added: [XMLNamespaceDeclaration] = []
        // A binding missing from the subtree's own scope is inherited: add it once, at the top.
        func require(_ prefix: String?, _ uri: String, _ scope: [String?: String]) {
            if prefix == "xml" { return }
            if scope[prefix] != nil || added.contains(where: { $0.prefix == prefix }) { return }
            if prefix == nil && uri.isEmpty { return }  // no default namespace: nothing to declare
            added.append(XMLNamespaceDeclaration(prefix: prefix, uri: uri))
        }
        func walk(_ e: XMLElement, _ outer: [String?: String]) {
            var scope = outer
            for d in e.namespaceDeclarations { scope[d.prefix] = d.uri }
            require(e.prefix, e.namespace ?? "", scope)
            for a in e.attributes where a.prefix != nil { require(a.prefix, a.namespace ?? "", scope) }
            for case .element(let child) in e.children { walk(child, scope) }
        }
        walk(self, [:])
        guard !added.isEmpty else { return self }
        var copy = self
        copy.namespaceDeclarations += added
        return copy
    }

    static func escape(_ s: String, into out: inout String, attribute: Bool) {
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where attribute: out += "&quot;"
            case "\n" where attribute: out += "&#10;"
            case "\r": out += "&#13;"
            case "\t" where attribute: out += "&#9;"
            default: out.unicodeScalars.append(c)
            }
        }
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        out += rest
        return out
    }
}
