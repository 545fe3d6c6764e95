/// Query strings merged into a URL.
public enum QueryString {
    /// `url` with `query` (already encoded, without `?`) appended to its query.
    ///
    /// A fragment (`#...`) is dropped: it is never sent, and a query appended after it would not
    /// be a query. An existing query is kept as it is, and the new pairs follow it after `&`.
    /// An empty `query` leaves the URL as it is, apart from the fragment.
    public static func merge(_ url: String, query: String) -> String {
        var base = Substring(url)
        if let hash = base.firstIndex(of: "#") { base = base[..<hash] }
        guard !query.isEmpty else { return String(base) }
        guard let mark = base.firstIndex(of: "?") else { return base + "?" + query }
        let existing = base[base.index(after: mark)...]
        if existing.isEmpty || existing.hasSuffix("&") { return base + query }
        return base + "&" + query
    }
}

extension Request {
    /// Appends `pairs`, encoded by `encoder`, to the URL's query (see `QueryString.merge`).
    public mutating func addQuery(_ pairs: [FormPair], encoder: FormEncoder = FormEncoder()) {
        url = QueryString.merge(url, query: encoder.encodeString(pairs))
    }

    /// Appends `pairs`, encoded by `encoder`, to the URL's query.
    public mutating func addQuery(_ pairs: KeyValuePairs<String, FormValue>, encoder: FormEncoder = FormEncoder()) {
        addQuery([FormPair](pairs), encoder: encoder)
    }
}
