/// The builders call sites use: `.form(...)`, `.json(...)`, `.text(...)`, `.file(at:)`...
/// Each sets the Content-Type a server expects; a Content-Type header set by the caller wins.
extension RequestBody {
    public static let formContentType = "application/x-www-form-urlencoded"
    public static let jsonContentType = "application/json"

    /// An `application/x-www-form-urlencoded` body.
    public static func form(_ pairs: [FormPair], encoder: FormEncoder = FormEncoder()) -> RequestBody {
        .bytes(encoder.encode(pairs), contentType: formContentType)
    }

    public static func form(_ pairs: KeyValuePairs<String, FormValue>,
                            encoder: FormEncoder = FormEncoder()) -> RequestBody {
        form([FormPair](pairs), encoder: encoder)
    }

    /// A JSON body from bytes that are already JSON (sent as they are, not checked).
    public static func json(_ encoded: [UInt8]) -> RequestBody {
        .bytes(encoded, contentType: jsonContentType)
    }

    /// A JSON body generated from `value`.
    /// - Throws: `.invalidArgument` for what JSON cannot represent (NaN, infinities...).
    public static func json(encoding value: some JSONBodyEncodable) throws(HTTPContentError) -> RequestBody {
        .json(try value.encodedJSON())
    }

    /// `text` in `charset`, as `text/plain; charset=...` (or `mediaType` with that charset).
    /// - Throws: `.invalidArgument` if the charset cannot represent a character of `text`.
    public static func text(_ text: String, charset: TextCharset = .utf8,
                            mediaType: String = "text/plain") throws(HTTPContentError) -> RequestBody {
        .bytes(try charset.encode(text), contentType: "\(mediaType); charset=\(charset.name)")
    }

    /// A file, streamed from disk as it is sent.
    public static func file(at path: String, contentType: String? = nil) -> RequestBody {
        .stream(.file(path: path), contentType: contentType)
    }

    /// A borrowed file descriptor, streamed as it is sent (see `UploadSource.fileDescriptor`).
    public static func fileDescriptor(_ fd: Int32, length: Int64? = nil,
                                      contentType: String? = nil) -> RequestBody {
        .stream(.fileDescriptor(fd, length: length), contentType: contentType)
    }

    /// Bytes produced by `read` as they are sent (see `UploadSource.callback`).
    public static func reader(length: Int64? = nil, contentType: String? = nil,
                              _ read: @escaping @Sendable (UnsafeMutableRawBufferPointer) throws -> Int) -> RequestBody {
        .stream(.callback(length: length, read: read), contentType: contentType)
    }
}
