import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

/// An `hc_error`: an HTTPContentError plus the C strings lent out from it.
final class ErrorBox {
    let error: HTTPContentError
    let strings = CStringCache()
    lazy var bodyCopy = ByteBuffer(error.body)
    /// The rejected response's header fields, in order, made on first use.
    lazy var fields: [HeaderField] = error.response?.headers.fields ?? []
    /// Made by hc_error_copy: the caller owns it, and hc_error_free releases it. The thread's
    /// last error is never one, so hc_error_free cannot free what the library still lends.
    let isCopy: Bool
    /// The "no error" value (code HC_OK), or a copy of it.
    private(set) var isNone = false
    init(_ error: HTTPContentError, isCopy: Bool = false) {
        self.error = error
        self.isCopy = isCopy
    }

    /// The "no error" value returned by hc_error_last before anything fails.
    nonisolated(unsafe) static let none: ErrorBox = {
        let none = ErrorBox(HTTPContentError(.invalidArgument, ""))
        none.isNone = true
        return none
    }()

    func copy() -> ErrorBox {
        let copy = ErrorBox(error, isCopy: true)
        copy.isNone = isNone
        return copy
    }

    // The last error lives in a pthread key, released when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            if let raw { Unmanaged<ErrorBox>.fromOpaque(raw).release() }
        }
        return key
    }()

    static func setLast(_ error: HTTPContentError) {
        clearLast()
        pthread_setspecific(key, Unmanaged.passRetained(ErrorBox(error)).toOpaque())
    }

    static func clearLast() {
        if let old = pthread_getspecific(key) {
            pthread_setspecific(key, nil)
            Unmanaged<ErrorBox>.fromOpaque(old).release()
        }
    }

    static var last: ErrorBox? {
        pthread_getspecific(key).map { Unmanaged<ErrorBox>.fromOpaque($0).takeUnretainedValue() }
    }
}

@_cdecl("hc_error_last")
public func hc_error_last() -> OpaquePointer {
    OpaquePointer(Unmanaged.passUnretained(ErrorBox.last ?? ErrorBox.none).toOpaque())
}

@_cdecl("hc_error_clear")
public func hc_error_clear() {
    ErrorBox.clearLast()
}

@_cdecl("hc_error_code")
public func hc_error_code(_ err: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { return HTTPContentError.Code.invalidArgument.rawValue }
    return box.isNone ? HC_OK : box.error.code.rawValue
}

@_cdecl("hc_error_message")
public func hc_error_message(_ err: OpaquePointer?) -> UnsafePointer<CChar> {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { return staticString("hc_error_message: err is NULL") }
    if box.isNone { return staticString("") }
    return box.strings.get("message") { box.error.message } ?? staticString("")
}

@_cdecl("hc_error_curl_code")
public func hc_error_curl_code(_ err: OpaquePointer?) -> Int32 {
    borrowHandle(err, as: ErrorBox.self)?.error.curlCode ?? 0
}

@_cdecl("hc_error_status")
public func hc_error_status(_ err: OpaquePointer?) -> Int32 {
    Int32(borrowHandle(err, as: ErrorBox.self)?.error.response?.status ?? 0)
}

@_cdecl("hc_error_header")
public func hc_error_header(_ err: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { nullArgument("err"); return nil }
    guard let name = string(name) else { nullArgument("name"); return nil }
    guard !box.isNone else { return nil }
    return box.strings.get("header:" + name.lowercased()) { box.error.response?.headers[name] }
}

@_cdecl("hc_error_body")
public func hc_error_body(_ err: OpaquePointer?, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                          _ len: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { return nullArgument("err") }
    guard let data, let len else { return nullArgument("data or len") }
    box.bodyPointer(data, len)
    return HC_OK
}

@_cdecl("hc_error_offset")
public func hc_error_offset(_ err: OpaquePointer?) -> Int64 {
    borrowHandle(err, as: ErrorBox.self)?.error.offset.map(Int64.init) ?? -1
}

@_cdecl("hc_error_server_message")
public func hc_error_server_message(_ err: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { nullArgument("err"); return nil }
    guard !box.isNone else { return nil }
    return box.strings.get("server") { box.error.serverMessage }
}

@_cdecl("hc_error_header_count")
public func hc_error_header_count(_ err: OpaquePointer?) -> Int {
    guard let box = borrowHandle(err, as: ErrorBox.self), !box.isNone else { return 0 }
    return box.fields.count
}

@_cdecl("hc_error_header_at")
public func hc_error_header_at(_ err: OpaquePointer?, _ index: Int,
                               _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                               _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { return nullArgument("err") }
    return lendField(box.isNone ? [] : box.fields, index, box.strings, name, value, "hc_error_header_at")
}

@_cdecl("hc_error_url")
public func hc_error_url(_ err: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { nullArgument("err"); return nil }
    guard !box.isNone else { return nil }
    return box.strings.get("url") { box.error.url }
}

@_cdecl("hc_error_method")
public func hc_error_method(_ err: OpaquePointer?) -> UnsafePointer<CChar>? {
    guard let box = borrowHandle(err, as: ErrorBox.self) else { nullArgument("err"); return nil }
    guard !box.isNone else { return nil }
    return box.strings.get("method") { box.error.method }
}

@_cdecl("hc_error_connection_failed")
public func hc_error_connection_failed(_ err: OpaquePointer?) -> Int32 {
    guard let box = borrowHandle(err, as: ErrorBox.self), !box.isNone else { return 0 }
    return box.error.isConnectionFailure ? 1 : 0
}

@_cdecl("hc_error_copy")
public func hc_error_copy(_ err: OpaquePointer?) -> OpaquePointer? {
    guard let box = borrowHandle(err, as: ErrorBox.self) else {
        nullArgument("err")
        return nil
    }
    // A box of its own: its lent strings are its own, so it may go to another thread.
    return retainHandle(box.copy())
}

@_cdecl("hc_error_free")
public func hc_error_free(_ err: OpaquePointer?) {
    guard let box = borrowHandle(err, as: ErrorBox.self), box.isCopy else { return }
    releaseHandle(err, as: ErrorBox.self)
}

extension ErrorBox {
    /// Lends the body bytes, from a copy owned by this box.
    func bodyPointer(_ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>, _ len: UnsafeMutablePointer<Int>) {
        data.pointee = error.body.isEmpty ? nil : UnsafePointer(bodyCopy.baseAddress)
        len.pointee = error.body.count
    }
}

// MARK: - Names and version

nonisolated(unsafe) private let codeNames: [UnsafePointer<CChar>] = (0...12).map { raw in
    let name = raw == 0 ? "ok" : (HTTPContentError.Code(rawValue: Int32(raw))?.name ?? "unknown")
    return UnsafePointer(strdup(name)!)
}

func staticString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("hc_code_name")
public func hc_code_name(_ code: Int32) -> UnsafePointer<CChar> {
    (0...12).contains(code) ? codeNames[Int(code)] : staticString("unknown")
}

nonisolated(unsafe) private let versionString: UnsafePointer<CChar> = UnsafePointer(strdup(HTTPContentVersion.string)!)

@_cdecl("hc_version")
public func hc_version() -> UnsafePointer<CChar> {
    versionString
}
