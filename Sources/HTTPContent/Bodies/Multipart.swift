#if canImport(Glibc)
import Glibc
#endif

/// A `multipart/form-data` body, sent through libcurl's mime API: libcurl writes the boundary,
/// the part headers and the Content-Type, and reads file parts as it sends them.
public struct Multipart: Sendable {
    public enum Part: Sendable, Equatable {
        /// A text field.
        case field(name: String, value: String)
        /// A file read from `path` while sending; `filename` defaults to the path's last
        /// component, `contentType` to libcurl's guess from the filename's extension (else
        /// `application/octet-stream`).
        case file(name: String, path: String, filename: String?, contentType: String?)
        /// Bytes from memory, with an optional filename and type.
        case bytes(name: String, data: [UInt8], filename: String?, contentType: String?)
    }

    public private(set) var parts: [Part] = []

    public init() {}

    /// Adds a text field.
    /// - Throws: `.invalidArgument` if the name has CR, LF or NUL.
    public mutating func addField(_ name: String, _ value: String) throws(HTTPContentError) {
        try Multipart.check(name, what: "part name")
        parts.append(.field(name: name, value: value))
    }

    /// Adds a file part. The file is checked now (it must be a readable file) and read when the
    /// request is sent; if it has gone by then, the send fails with `.localIO` before connecting.
    /// - Throws: `.localIO` if the file is missing or unreadable; `.invalidArgument` for a name,
    ///   filename or type with CR, LF or NUL.
    public mutating func addFile(_ name: String, path: String, filename: String? = nil,
                                 contentType: String? = nil) throws(HTTPContentError) {
        try Multipart.check(name, what: "part name")
        if let filename { try Multipart.check(filename, what: "filename") }
        if let contentType { try Multipart.check(contentType, what: "part content type") }
        try Multipart.checkReadableFile(path)
        parts.append(.file(name: name, path: path, filename: filename, contentType: contentType))
    }

    /// Adds a part with bytes from memory (copied).
    public mutating func addBytes(_ name: String, _ data: [UInt8], filename: String? = nil,
                                  contentType: String? = nil) throws(HTTPContentError) {
        try Multipart.check(name, what: "part name")
        if let filename { try Multipart.check(filename, what: "filename") }
        if let contentType { try Multipart.check(contentType, what: "part content type") }
        parts.append(.bytes(name: name, data: data, filename: filename, contentType: contentType))
    }

    /// Names, filenames and types go into part headers, where CR or LF would start a new line.
    static func check(_ text: String, what: String) throws(HTTPContentError) {
        if text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            throw HTTPContentError(.invalidArgument, "\(what) \(quoted(text)) has CR, LF or NUL")
        }
    }

    static func checkReadableFile(_ path: String) throws(HTTPContentError) {
        var st = stat()
        guard stat(path, &st) == 0, access(path, R_OK) == 0 else {
            throw HTTPContentError(.localIO, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            throw HTTPContentError(.localIO, "cannot read \(path): it is a directory")
        }
    }
}
