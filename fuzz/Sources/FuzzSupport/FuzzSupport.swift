#if canImport(Glibc)
import Glibc
#endif
import CLibFuzzer

/// Runs libFuzzer's driver with the process's arguments and `test` as the target; returns its
/// exit status.
public func runFuzzer(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, test))
}

/// Reads structured choices off the front of a fuzz input; the rest is the payload.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var index = 0

    public init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))
    }

    public var isAtEnd: Bool { index >= bytes.count }

    /// The next byte, or 0 once the input is exhausted.
    public mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// Up to `n` bytes.
    public mutating func take(_ n: Int) -> [UInt8] {
        let end = min(bytes.count, index + max(0, n))
        defer { index = end }
        return Array(bytes[index..<end])
    }

    /// A length-prefixed (one byte) run of bytes.
    public mutating func lengthPrefixed() -> [UInt8] { take(Int(byte())) }

    /// Everything not read yet.
    public mutating func rest() -> [UInt8] { take(bytes.count - index) }
}

/// A small deterministic generator (xorshift64), seeded from the input so a crash reproduces.
public struct XorShift: RandomNumberGenerator {
    var state: UInt64
    public init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    public mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// Splits `bytes` into consecutive chunks of random sizes (some empty, many of one byte), as a
/// network would deliver them.
public func randomChunks(_ bytes: [UInt8], seed: UInt64) -> [ArraySlice<UInt8>] {
    var rng = XorShift(seed: seed)
    var chunks: [ArraySlice<UInt8>] = []
    var i = 0
    while i < bytes.count {
        let n: Int
        switch rng.next() % 4 {
        case 0: n = 0
        case 1: n = 1
        case 2: n = Int(rng.next() % 4) + 1
        default: n = Int(rng.next() % 64) + 1
        }
        let end = min(bytes.count, i + n)
        chunks.append(bytes[i..<end])
        i = end
    }
    return chunks
}

/// Fails the fuzz run with a message: libFuzzer records the input as a crash.
public func fuzzFail(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    let text = Array("FUZZ CHECK FAILED (\(file):\(line)): \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fuzzFail(message(), file: file, line: line) }
}

/// Hex of a few bytes, for messages.
public func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}

/// The image format a body's magic bytes name ("png", "gif", "webp", "bmp", "jpeg", as
/// `ImageInfo.Format`'s raw values), nil for none: the image targets' own oracle, written apart
/// from the library's sniffer so that it checks it.
public func magicImageFormat(_ b: [UInt8]) -> String? {
    if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
    if b.starts(with: Array("GIF8".utf8)) { return "gif" }
    if b.starts(with: Array("RIFF".utf8)) && b.count >= 12 && Array(b[8..<12]) == Array("WEBP".utf8) { return "webp" }
    if b.starts(with: Array("BM".utf8)) { return "bmp" }
    if b.starts(with: [0xFF, 0xD8]) { return "jpeg" }
    return nil
}
