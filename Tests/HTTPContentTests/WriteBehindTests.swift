#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import HTTPContent

/// File writes a download back to disk in WriteBehind.window-sized windows while it streams
/// and releases the pages of each window once it is on disk: a body of several windows must
/// still land whole, hold few of its pages in memory while it streams, and leave nothing behind
/// when it fails midway.
@Suite struct WriteBehindTests {
    static let window = Int(WriteBehind.window)
    /// Three and a half windows: two are waited on and released before the end.
    static let total = 3 * window + window / 2

    /// A directory on a disk file system: tmpfs keeps its pages whatever fadvise says, so the
    /// residency checks need /tmp on a real disk (it is ext4 here and in CI).
    static func makeDirectory(_ name: String) -> String {
        var template = Array("/tmp/hc-\(name)-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    /// Whether /tmp's file system (the longest mount point over it in /proc/mounts) is not tmpfs.
    static var tmpIsOnDisk: Bool {
        guard let file = fopen("/proc/mounts", "r") else { return false }
        defer { fclose(file) }
        var best = (point: "", type: "")
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), file) != nil {
            let fields = String(cString: line).split(separator: " ")
            guard fields.count > 2 else { continue }
            let point = String(fields[1])
            let covers = point == "/" || point == "/tmp" || "/tmp".hasPrefix(point + "/")
            if covers, point.count >= best.point.count { best = (point, String(fields[2])) }
        }
        return !best.type.isEmpty && best.type != "tmpfs"
    }

    /// A prime-length pattern repeated (appended in blocks: a debug build is slow per byte).
    static func body(_ count: Int) -> [UInt8] {
        let pattern = (0..<65521).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 9) }
        var body = [UInt8]()
        body.reserveCapacity(count)
        while body.count < count { body.append(contentsOf: pattern.prefix(count - body.count)) }
        return body
    }

    /// Whether the file at `path` holds exactly `expected`.
    static func holds(_ path: String, _ expected: [UInt8]) -> Bool {
        let back = contents(path)
        return back.count == expected.count
            && back.withUnsafeBytes { a in expected.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    /// A File for `path` that has prepared a GET and accepted a 200.
    static func accepted(_ path: String, _ options: File.Options = File.Options()) throws -> File {
        let writer = File(path: path, options: options)
        var request = Request("GET", "http://127.0.0.1/")
        try writer.prepare(&request)
        #expect(try writer.accept(ResponseHead(status: 200, headers: Headers())))
        return writer
    }

    /// Writes `old` to `path` as the file a download will replace (fsync'd when `synced`).
    static func write(_ old: [UInt8], to path: String, synced: Bool = false) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = old.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if synced { fsync(fd) }
        close(fd)
    }

    /// Feeds `body` in libcurl's 16 KiB pieces.
    static func feed(_ writer: File, _ body: [UInt8]) throws {
        try body.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let n = min(16384, all.count - offset)
                try writer.consume(UnsafeRawBufferPointer(rebasing: all[offset..<offset + n]))
                offset += n
            }
        }
    }

    /// Resident pages of `path` in [from, to), by mincore over a read-only mapping.
    static func residentPages(_ path: String, from: Int, to: Int) -> Int {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let map = mmap(nil, to - from, PROT_READ, MAP_SHARED, fd, off_t(from)), map != MAP_FAILED else { return -1 }
        defer { munmap(map, to - from) }
        var vector = [UInt8](repeating: 0, count: (to - from + page - 1) / page)
        guard mincore(map, to - from, &vector) == 0 else { return -1 }
        return vector.filter { $0 & 1 != 0 }.count
    }

    static func contents(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var back = [UInt8](repeating: 0, count: total + 1)
        let got = back.withUnsafeMutableBytes { read(fd, $0.baseAddress, total + 1) }
        return Array(back[..<max(got, 0)])
    }

    @Test(.enabled(if: tmpIsOnDisk, "tmpfs keeps released pages: /tmp must be on a disk file system"),
          arguments: [true, false])
    func aBodyOfSeveralWindowsLandsWholeWithItsEarlyWindowsReleased(fsync: Bool) throws {
        let dir = Self.makeDirectory("writebehind")
        defer { rmdir(dir) }
        let path = dir + "/out.bin"
        var options = File.Options()
        options.fsync = fsync
        let writer = try Self.accepted(path, options)
        let body = Self.body(Self.total)
        try Self.feed(writer, body)
        let temp = try #require(writer.tempPath)
        // Windows 0 and 1 were waited on and released; the last ones are still cached.
        #expect(Self.residentPages(temp, from: 0, to: 2 * Self.window) == 0)
        #expect(Self.residentPages(temp, from: 3 * Self.window, to: Self.total - File.writeSize) > 0)
        let done = try writer.finish()
        writer.cleanup(failed: false)
        #expect(done.size == Int64(Self.total))
        #expect(Self.holds(path, body))
        unlink(path)
    }

    @Test(arguments: [true, false])
    func aDownloadFailingAfterSeveralWindowsLeavesTheOldFileAndNoOther(fsync: Bool) throws {
        let dir = Self.makeDirectory("writebehind-fail")
        defer { rmdir(dir) }
        let path = dir + "/out.bin"
        let old = Array("previous".utf8)
        Self.write(old, to: path)
        var options = File.Options()
        options.fsync = fsync
        let writer = try Self.accepted(path, options)
        try Self.feed(writer, Self.body(Self.total))
        writer.cleanup(failed: true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.bin"])
        #expect(Self.contents(path) == old)
        unlink(path)
    }

    /// A resumable download that fails midway keeps a part with every byte it received, the
    /// released windows included, so the next attempt continues after the last one.
    @Test func aResumablePartKeepsEveryByteAcrossReleasedWindows() throws {
        let dir = Self.makeDirectory("writebehind-part")
        defer { rmdir(dir) }
        let path = dir + "/out.bin"
        var options = File.Options()
        options.resume = true
        let writer = try Self.accepted(path, options)
        let body = Self.body(Self.total - 12345)
        try Self.feed(writer, body)
        writer.cleanup(failed: true)
        #expect(Self.holds(path + ".part", body))
        #expect(access(path, F_OK) != 0)
        unlink(path + ".part")
        unlink(path + ".part.meta")
    }

    /// Accepting a download releases the cached pages of the file it will replace (as a
    /// truncating open would) without touching the file: a failed download leaves it whole. A
    /// symlink's target is not the file replaced (the rename replaces the link): kept cached.
    @Test(.enabled(if: tmpIsOnDisk, "tmpfs keeps released pages: /tmp must be on a disk file system"))
    func acceptingReleasesTheReplacedFilesCacheAndLeavesItWhole() throws {
        let dir = Self.makeDirectory("writebehind-old")
        defer { rmdir(dir) }
        let old = Self.body(4 << 20)
        for viaLink in [false, true] {
            let real = dir + "/real.bin", path = viaLink ? dir + "/link.bin" : real
            Self.write(old, to: real, synced: true)
            if viaLink { symlink(real, path) }
            #expect(Self.holds(real, old))  // read back: cached
            #expect(Self.residentPages(real, from: 0, to: old.count) == old.count / 4096)
            let writer = try Self.accepted(path)
            let left = Self.residentPages(real, from: 0, to: old.count)
            #expect(viaLink ? left == old.count / 4096 : left == 0)
            try Self.feed(writer, Self.body(100_000))
            writer.cleanup(failed: true)
            #expect(Self.holds(real, old))
            unlink(path)
            unlink(real)
        }
    }

    /// Descriptors of this process open on `path` (by /proc/self/fd; an unlinked file shows as
    /// "PATH (deleted)").
    static func descriptors(on path: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + fd)
            return link == path || link == path + " (deleted)"
        }.count
    }

    /// A large file being replaced is held open until the rename (so the rename does not wait
    /// for its blocks to be freed) and closed after it, off the caller's path: nothing stays
    /// open on it. A failed download closes it at once and leaves it whole.
    @Test(arguments: [true, false])
    func aLargeReplacedFileIsLetGoAfterTheRenameAndKeptWholeOnFailure(fails: Bool) throws {
        let dir = Self.makeDirectory("writebehind-replaced")
        defer { rmdir(dir) }
        let path = dir + "/out.bin"
        let old = Self.body(Self.window + 4096)
        Self.write(old, to: path)
        let writer = try Self.accepted(path)
        #expect(Self.descriptors(on: path) == 1)  // held from accept on
        let body = Self.body(100_000)
        try Self.feed(writer, body)
        if fails {
            writer.cleanup(failed: true)
            #expect(Self.descriptors(on: path) == 0)
            #expect(Self.holds(path, old))
        } else {
            _ = try writer.finish()
            writer.cleanup(failed: false)
            #expect(Self.holds(path, body))
            var left = Self.descriptors(on: path)
            for _ in 0..<200 where left > 0 {  // the background close: at most 2 s
                usleep(10_000)
                left = Self.descriptors(on: path)
            }
            #expect(left == 0)
        }
        unlink(path)
    }
}
