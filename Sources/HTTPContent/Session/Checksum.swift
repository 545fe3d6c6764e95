import CCrypto
#if canImport(Glibc)
import Glibc
#endif

/// The digest algorithms a download can be checked with (OpenSSL's libcrypto computes them).
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha256, sha512, md5

    fileprivate var evp: OpaquePointer? {
        switch self {
        case .sha256: return EVP_sha256()
        case .sha512: return EVP_sha512()
        case .md5: return EVP_md5()
        }
    }
}

/// A digest the downloaded bytes must have: the algorithm and the value in hex.
public struct ExpectedDigest: Sendable, Equatable {
    public var algorithm: DigestAlgorithm
    public var bytes: [UInt8]

    /// - Throws: `.invalidArgument` for hex of the wrong length or with other characters.
    public init(_ algorithm: DigestAlgorithm, hex: String) throws(HTTPContentError) {
        let want = algorithm == .md5 ? 16 : algorithm == .sha256 ? 32 : 64
        var bytes: [UInt8] = []
        var high: UInt8?
        for c in hex.utf8 {
            let v: UInt8
            switch c {
            case 0x30...0x39: v = c - 0x30
            case 0x61...0x66: v = c - 0x61 + 10
            case 0x41...0x46: v = c - 0x41 + 10
            default: throw HTTPContentError(.invalidArgument, "\(algorithm.rawValue) digest is not hex")
            }
            if let h = high { bytes.append(h << 4 | v); high = nil } else { high = v }
        }
        guard high == nil, bytes.count == want else {
            throw HTTPContentError(.invalidArgument, "a \(algorithm.rawValue) digest is \(want * 2) hex digits")
        }
        self.algorithm = algorithm
        self.bytes = bytes
    }

    init(_ algorithm: DigestAlgorithm, bytes: [UInt8]) {
        self.algorithm = algorithm
        self.bytes = bytes
    }
}

/// One running digest (EVP_MD_CTX).
final class RunningDigest {
    let algorithm: DigestAlgorithm
    private let ctx: OpaquePointer

    init(_ algorithm: DigestAlgorithm) {
        guard let ctx = EVP_MD_CTX_new() else { fatalError("httpcontent: EVP_MD_CTX_new failed (out of memory)") }
        self.algorithm = algorithm
        self.ctx = ctx
        EVP_DigestInit_ex(ctx, algorithm.evp, nil)
    }

    deinit { EVP_MD_CTX_free(ctx) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress, bytes.count > 0 { EVP_DigestUpdate(ctx, base, bytes.count) }
    }

    func restart() { EVP_DigestInit_ex(ctx, algorithm.evp, nil) }

    func final() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var len: UInt32 = 0
        EVP_DigestFinal_ex(ctx, &out, &len)
        return Array(out.prefix(Int(len)))
    }
}

/// Checks a download while its bytes stream: against the digest the caller expects, and the
/// ones the server sends (RFC 9530 Repr-Digest, Content-Digest on a whole unencoded body, and
/// RFC 3230's legacy Digest). A resumed download hashes its part file first, so the digest
/// covers the whole file. A File composes one; it knows nothing of files.
final class DownloadVerifier {
    private let expected: ExpectedDigest?
    /// What each running digest must end as, and who said so (for the message).
    private var checks: [(digest: RunningDigest, want: [UInt8], source: String)] = []
    /// The digest reported as computed (the caller's algorithm, else the server's first).
    private(set) var reported: String?

    init(expected: ExpectedDigest?) {
        self.expected = expected
    }

    /// Sets up the digests for the response `head`; `existing` feeds the bytes already in a
    /// resumed part (nil: the body starts the file).
    func start(_ head: ResponseHead, existing: ((UnsafeRawBufferPointer) -> Void) -> Void) {
        checks = []
        reported = nil
        if let expected {
            checks.append((RunningDigest(expected.algorithm), expected.bytes, "the expected \(expected.algorithm.rawValue)"))
        }
        let encoded = head.headers["content-encoding"].map { !$0.isEmpty && $0.lowercased() != "identity" } ?? false
        if !encoded {
            var server: [(DigestAlgorithm, [UInt8], String)] = []
            if let value = head.headers["repr-digest"] { server += DownloadVerifier.structured(value).map { ($0.0, $0.1, "Repr-Digest") } }
            if head.status == 200, let value = head.headers["content-digest"] {
                server += DownloadVerifier.structured(value).map { ($0.0, $0.1, "Content-Digest") }
            }
            if let value = head.headers["digest"] { server += DownloadVerifier.legacy(value).map { ($0.0, $0.1, "Digest") } }
            for (algorithm, want, source) in server {
                checks.append((RunningDigest(algorithm), want, "the server's \(source) \(algorithm.rawValue)"))
            }
        }
        if !checks.isEmpty { existing { bytes in for c in checks { c.digest.update(bytes) } } }
    }

    var active: Bool { !checks.isEmpty }

    func update(_ chunk: UnsafeRawBufferPointer) {
        for c in checks { c.digest.update(chunk) }
    }

    /// Compares every digest. - Throws: `.checksumMismatch` naming the first that differs.
    func verify(response head: ResponseHead?) throws(HTTPContentError) {
        for (i, c) in checks.enumerated() {
            let got = c.digest.final()
            if i == 0 { reported = "\(c.digest.algorithm.rawValue):\(hex(got))" }
            if got != c.want {
                throw HTTPContentError(.checksumMismatch,
                    "the downloaded bytes do not match \(c.source) digest (expected \(hex(c.want)), got \(hex(got)))",
                    response: head)
            }
        }
    }

    // MARK: - Parsing the servers' digest fields

    private static func algorithm(_ name: Substring) -> DigestAlgorithm? {
        switch name.lowercased() {
        case "sha-256": return .sha256
        case "sha-512": return .sha512
        case "md5": return .md5
        default: return nil
        }
    }

    /// RFC 9530: `sha-256=:BASE64:, sha-512=:BASE64:` (a structured dictionary of byte
    /// sequences). Unknown algorithms are skipped.
    static func structured(_ value: String) -> [(DigestAlgorithm, [UInt8])] {
        value.split(separator: ",").compactMap { member in
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let algorithm = algorithm(parts[0].trimmingCharacters()),
                  algorithm != .md5 else { return nil }
            let body = parts[1].trimmingCharacters()
            guard body.count >= 2, body.first == ":", body.last == ":",
                  let bytes = base64(body.dropFirst().dropLast()) else { return nil }
            return (algorithm, bytes)
        }
    }

    /// RFC 3230: `SHA-256=BASE64, MD5=BASE64`.
    static func legacy(_ value: String) -> [(DigestAlgorithm, [UInt8])] {
        value.split(separator: ",").compactMap { member in
            let parts = member.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let algorithm = algorithm(parts[0].trimmingCharacters()),
                  let bytes = base64(parts[1].trimmingCharacters()) else { return nil }
            return (algorithm, bytes)
        }
    }

    static func base64(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        var acc: UInt32 = 0, bits = 0
        for c in text.utf8 {
            let v: UInt32
            switch c {
            case 0x41...0x5A: v = UInt32(c - 0x41)
            case 0x61...0x7A: v = UInt32(c - 0x61 + 26)
            case 0x30...0x39: v = UInt32(c - 0x30 + 52)
            case 0x2B: v = 62
            case 0x2F: v = 63
            case 0x3D: continue
            default: return nil
            }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((acc >> UInt32(bits)) & 0xFF))
            }
        }
        return out.isEmpty ? nil : out
    }
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}

extension Substring {
    func trimmingCharacters() -> Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}

/// The validators of a resumable download's part, kept beside it in `PATH.part.meta`, so that
/// a resume asks for the rest only of the same version of the file (If-Range).
struct PartValidators: Equatable {
    var etag: String?
    var lastModified: String?

    init(etag: String?, lastModified: String?) {
        self.etag = etag
        self.lastModified = lastModified
    }

    init(_ head: ResponseHead) {
        self.init(etag: head.headers["etag"], lastModified: head.headers["last-modified"])
    }

    /// The If-Range value: a strong ETag, else the date; nil when neither is known.
    var ifRange: String? {
        if let etag, !etag.hasPrefix("W/"), !etag.isEmpty { return etag }
        return lastModified
    }

    static func read(_ path: String) -> PartValidators? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = Glibc.read(fd, &bytes, bytes.count)
        guard n > 0 else { return nil }
        var found = PartValidators(etag: nil, lastModified: nil)
        for line in String(decoding: bytes.prefix(n), as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("etag: ") { found.etag = String(line.dropFirst(6)) }
            if line.hasPrefix("last-modified: ") { found.lastModified = String(line.dropFirst(15)) }
        }
        return found.ifRange == nil ? nil : found
    }

    /// Writes the file, or removes it when there is nothing to keep.
    func write(_ path: String) {
        guard ifRange != nil else {
            unlink(path)
            return
        }
        var text = ""
        if let etag, !etag.contains("\n") { text += "etag: \(etag)\n" }
        if let lastModified, !lastModified.contains("\n") { text += "last-modified: \(lastModified)\n" }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }
}
