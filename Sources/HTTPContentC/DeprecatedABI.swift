/// The C names replaced when the fronts took one vocabulary (docs/concepts.md), still exported
/// because callers (the Python binding's modules) use them; each calls its new name, and the
/// headers mark each deprecated. Delete a pair here and in the header once nothing calls it.

@_cdecl("hc_client_set_verify_tls")
public func hc_client_set_verify_tls(_ client: OpaquePointer?, _ verify: Int32) -> Int32 {
    hc_client_set_verify(client, verify)
}

@_cdecl("hc_handler_plist_pickle_new")
public func hc_handler_plist_pickle_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    hc_handler_plist_pypickle_new(opts)
}

@_cdecl("hc_response_plist_pickle")
public func hc_response_plist_pickle(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                     _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    hc_response_plist_pypickle(response, data, len)
}

@_cdecl("hc_handler_xml_pickle_new")
public func hc_handler_xml_pickle_new(_ opts: OpaquePointer?) -> OpaquePointer? {
    hc_handler_xml_pypickle_new(opts)
}

@_cdecl("hc_handler_xml_batches_pickle_new")
public func hc_handler_xml_batches_pickle_new(_ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
                                              _ opts: OpaquePointer?, _ cb: XMLBatchCallback?,
                                              _ userdata: UnsafeMutableRawPointer?) -> OpaquePointer? {
    hc_handler_xml_batches_pypickle_new(paths, count, opts, cb, userdata)
}

@_cdecl("hc_response_xml_pickle")
public func hc_response_xml_pickle(_ response: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                   _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    hc_response_xml_pypickle(response, data, len)
}
