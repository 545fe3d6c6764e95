import HTTPContent

/// The redirect history of a response or an error (hc_response_history_*, hc_error_history_*):
/// one entry's status, URL and header block, lent from the owner's string cache.
func historyEntry(_ history: [ResponseHead], _ index: Int, strings: CStringCache, function: String,
                  _ status: UnsafeMutablePointer<Int32>?, _ url: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                  _ headers: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard index >= 0, index < history.count else {
        return fail(.invalidArgument, "\(function): index \(index) out of range (\(history.count) redirects)")
    }
    let hop = history[index]
    status?.pointee = Int32(truncatingIfNeeded: hop.status)
    url?.pointee = strings.get("history-url#\(index)") { hop.url }
    headers?.pointee = strings.get("history-headers#\(index)") {
        var block = ""
        for field in hop.headers { block += "\(field.name): \(field.value)\r\n" }
        return block
    }
    return HC_OK
}

@_cdecl("hc_response_history_count")
public func hc_response_history_count(_ response: OpaquePointer?) -> Int {
    borrowHandle(response, as: ResponseBox.self)?.response.head.history.count ?? 0
}

@_cdecl("hc_response_history_at")
public func hc_response_history_at(_ response: OpaquePointer?, _ index: Int, _ status: UnsafeMutablePointer<Int32>?,
                                   _ url: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                   _ headers: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let box = borrowHandle(response, as: ResponseBox.self) else { return nullArgument("response") }
    return historyEntry(box.response.head.history, index, strings: box.strings,
                        function: "hc_response_history_at", status, url, headers)
}

@_cdecl("hc_error_history_count")
public func hc_error_history_count(_ err: OpaquePointer?) -> Int {
    guard let box = borrowHandle(err, as: ErrorBox.self), !box.isNone else { return 0 }
    return box.error.response?.history.count ?? 0
}

@_cdecl("hc_error_history_at")
public func hc_error_history_at(_ err: OpaquePointer?, _ index: Int, _ status: UnsafeMutablePointer<Int32>?,
                                _ url: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                _ headers: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { return nullArgument("err") }
    let history = box.isNone ? [] : box.error.response?.history ?? []
    return historyEntry(history, index, strings: box.strings, function: "hc_error_history_at",
                        status, url, headers)
}
