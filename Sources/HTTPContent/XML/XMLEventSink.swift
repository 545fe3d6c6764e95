import CXML2

/// A start tag as libxml2's SAX2 reports it: pointers valid only during the call.
package struct XMLStartTag {
    package let localname: UnsafePointer<UInt8>
    package let prefix: UnsafePointer<UInt8>?
    package let uri: UnsafePointer<UInt8>?
    /// `nbNamespaces` pairs (prefix or nil, URI).
    package let nbNamespaces: Int
    let namespaces: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    /// `nbAttributes` quintuples (localname, prefix, URI, value start, value end).
    package let nbAttributes: Int
    let attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?

    package func attributeValue(_ i: Int) -> UnsafeBufferPointer<UInt8> {
        guard let attributes, let start = attributes[i * 5 + 3], let end = attributes[i * 5 + 4] else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return UnsafeBufferPointer(start: start, count: end - start)
    }
    package func attributeName(_ i: Int) -> UnsafePointer<UInt8>? { attributes?[i * 5] }
    package func attributePrefix(_ i: Int) -> UnsafePointer<UInt8>? { attributes?[i * 5 + 1] }
    package func attributeURI(_ i: Int) -> UnsafePointer<UInt8>? { attributes?[i * 5 + 2] }

    /// The element with its attributes and namespace declarations, no children.
    func element() -> XMLElement {
        var attrs: [XMLAttribute] = []
        attrs.reserveCapacity(nbAttributes)
        for i in 0..<nbAttributes {
            attrs.append(XMLAttribute(name: xmlString(attributeName(i)) ?? "", namespace: xmlString(attributeURI(i)),
                                      prefix: xmlString(attributePrefix(i)), value: xmlString(attributeValue(i))))
        }
        var decls: [XMLNamespaceDeclaration] = []
        if let namespaces {
            for i in 0..<nbNamespaces {
                decls.append(XMLNamespaceDeclaration(prefix: xmlString(namespaces[2 * i]),
                                                     uri: xmlString(namespaces[2 * i + 1]) ?? ""))
            }
        }
        return XMLElement(name: xmlString(localname) ?? "", namespace: xmlString(uri), prefix: xmlString(prefix),
                          attributes: attrs, namespaceDeclarations: decls)
    }
}

@inline(__always)
func xmlString(_ p: UnsafePointer<UInt8>?) -> String? {
    guard let p else { return nil }
    return String(cString: p)
}

@inline(__always)
func xmlString(_ buffer: UnsafeBufferPointer<UInt8>) -> String {
    String(decoding: buffer, as: UTF8.self)
}

/// What the push parser tells its consumer (tree builder, path matcher, events, pickle writer).
/// Text may arrive in several pieces; CDATA pieces say so. Throwing `StopTransfer` stops the
/// parse with success; anything else fails it.
package protocol XMLEventSink: AnyObject {
    func start(_ tag: XMLStartTag, depth: Int) throws
    func text(_ bytes: UnsafeBufferPointer<UInt8>, cdata: Bool) throws
    func comment(_ bytes: UnsafeBufferPointer<UInt8>) throws
    func end(depth: Int) throws
}
