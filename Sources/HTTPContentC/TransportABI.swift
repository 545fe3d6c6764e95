import HTTPContent

// The C face of `TransportOptions` and `TransferTimings` (include/httpcontent/transport.h):
// each setter edits the client's configuration (`configure`, ClientABI.swift), which the core
// checks when it makes the client again.

/// `len` bytes at `data` as an array, or nil for NULL.
private func bytes(_ data: UnsafePointer<UInt8>?, _ len: Int) -> [UInt8]? {
    guard let data else { return nil }
    return Array(UnsafeBufferPointer(start: data, count: len))
}

private func text(_ s: UnsafePointer<CChar>?) -> String? {
    s.map { String(cString: $0) }
}

@_cdecl("hc_client_set_resolve")
public func hc_client_set_resolve(_ client: OpaquePointer?, _ entries: UnsafePointer<UnsafePointer<CChar>?>?,
                                  _ count: Int) -> Int32 {
    var list: [String] = []
    if count > 0 {
        guard let entries else { return nullArgument("entries") }
        for i in 0..<count {
            guard let entry = entries[i] else { return nullArgument("entries[\(i)]") }
            list.append(String(cString: entry))
        }
    }
    return configure(client) { $0.transport.resolve = list }
}

@_cdecl("hc_client_set_unix_socket")
public func hc_client_set_unix_socket(_ client: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> Int32 {
    configure(client) { $0.transport.unixSocket = text(path) }
}

@_cdecl("hc_client_set_ca_pem")
public func hc_client_set_ca_pem(_ client: OpaquePointer?, _ pem: UnsafePointer<UInt8>?, _ len: Int) -> Int32 {
    configure(client) { $0.transport.caPEM = bytes(pem, len) }
}

@_cdecl("hc_client_set_client_cert_pem")
public func hc_client_set_client_cert_pem(_ client: OpaquePointer?, _ cert: UnsafePointer<UInt8>?, _ certLen: Int,
                                          _ key: UnsafePointer<UInt8>?, _ keyLen: Int) -> Int32 {
    configure(client) { config in
        config.transport.clientCertificateBlob = bytes(cert, certLen).map { .pem(certificate: $0, key: bytes(key, keyLen)) }
    }
}

@_cdecl("hc_client_set_client_cert_p12")
public func hc_client_set_client_cert_p12(_ client: OpaquePointer?, _ p12: UnsafePointer<UInt8>?, _ len: Int,
                                          _ password: UnsafePointer<CChar>?) -> Int32 {
    configure(client) { config in
        config.transport.clientCertificateBlob = bytes(p12, len).map { .pkcs12($0, password: text(password)) }
    }
}

@_cdecl("hc_client_set_min_tls")
public func hc_client_set_min_tls(_ client: OpaquePointer?, _ version: Int32) -> Int32 {
    let v = TransportOptions.TLSVersion(rawValue: Int(version))
    guard version == 0 || v != nil else {
        return fail(.invalidArgument, "hc_client_set_min_tls: unknown version \(version)")
    }
    return configure(client) { $0.transport.minimumTLSVersion = v }
}

@_cdecl("hc_client_set_ciphers")
public func hc_client_set_ciphers(_ client: OpaquePointer?, _ tls12: UnsafePointer<CChar>?,
                                  _ tls13: UnsafePointer<CChar>?) -> Int32 {
    configure(client) {
        $0.transport.ciphers = text(tls12)
        $0.transport.tls13Ciphers = text(tls13)
    }
}

@_cdecl("hc_client_set_pinned_public_key")
public func hc_client_set_pinned_public_key(_ client: OpaquePointer?, _ pins: UnsafePointer<CChar>?) -> Int32 {
    configure(client) { $0.transport.pinnedPublicKey = text(pins) }
}

@_cdecl("hc_client_set_happy_eyeballs_ms")
public func hc_client_set_happy_eyeballs_ms(_ client: OpaquePointer?, _ ms: Int) -> Int32 {
    guard ms >= -1 else { return fail(.invalidArgument, "hc_client_set_happy_eyeballs_ms: \(ms) ms") }
    return configure(client) { $0.transport.happyEyeballsTimeout = ms < 0 ? nil : .milliseconds(ms) }
}

@_cdecl("hc_client_set_http_version")
public func hc_client_set_http_version(_ client: OpaquePointer?, _ version: Int32) -> Int32 {
    guard let v = TransportOptions.HTTPVersion(rawValue: Int(version)) else {
        return fail(.invalidArgument, "hc_client_set_http_version: unknown version \(version)")
    }
    return configure(client) { $0.transport.httpVersion = v }
}

@_cdecl("hc_client_set_tls_session_tickets")
public func hc_client_set_tls_session_tickets(_ client: OpaquePointer?, _ on: Int32) -> Int32 {
    configure(client) { $0.tlsSessionTickets = on != 0 }
}

// MARK: - A share between clients

@_cdecl("hc_connection_share_new")
public func hc_connection_share_new() -> OpaquePointer? {
    retainHandle(ConnectionShare())
}

@_cdecl("hc_connection_share_free")
public func hc_connection_share_free(_ share: OpaquePointer?) {
    releaseHandle(share, as: ConnectionShare.self)
}

@_cdecl("hc_client_set_connection_share")
public func hc_client_set_connection_share(_ client: OpaquePointer?, _ share: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(client, as: ClientBox.self) else { return nullArgument("client") }
    guard let share = borrowHandle(share, as: ConnectionShare.self) else { return nullArgument("share") }
    do {
        try box.use(share)
    } catch {
        return fail(error)
    }
    return HC_OK
}

@_cdecl("hc_client_set_host_limit")
public func hc_client_set_host_limit(_ client: OpaquePointer?, _ limit: Int) -> Int32 {
    configure(client) { $0.maxConnectionsPerHost = max(0, limit) }  // size_t past Int.max: none
}

@_cdecl("hc_response_timing")
public func hc_response_timing(_ response: OpaquePointer?, _ phase: Int32) -> Double {
    guard let box = borrowHandle(response, as: ResponseBox.self) else {
        _ = nullArgument("response")
        return -1
    }
    let t = box.response.metrics.timings
    switch phase {
    case 0: return t.dns
    case 1: return t.connect
    case 2: return t.tls
    case 3: return t.pretransfer
    case 4: return t.firstByte
    case 5: return t.total
    case 6: return t.redirect
    default:
        _ = fail(.invalidArgument, "hc_response_timing: unknown phase \(phase)")
        return -1
    }
}
