extension Client {
    /// The elements matching `path` (`feed/entry`: steps from the root element; see `XMLPath`)
    /// in the response to `request`, as an `AsyncSequence`: each element, complete, as soon as
    /// its end tag arrives, over the client's executor (no thread blocked; see `itemStream`).
    /// Parsing, limits, encoding and acceptance as `XMLElements`; `limit` ends the sequence
    /// after that many. Ending the iteration, or cancelling its task, stops the transfer.
    ///
    ///     for try await entry in client.xmlElements(.get(url), path: "feed/entry") {
    ///         print(entry.first("title")?.text ?? "")
    ///     }
    public func xmlElements(_ request: Request, path: XMLPath, options: XMLOptions = XMLOptions(),
                            limit: Int? = nil, acceptance: Acceptance = XML.defaultAcceptance())
        -> AsyncThrowingStream<XMLElement, any Error>
    {
        itemStream(request) { yield in
            try XMLElements(paths: [path], options: options, limit: limit, acceptance: acceptance) { _, element in
                if !yield(element) { throw StopTransfer() }
            }
        }
    }
}
