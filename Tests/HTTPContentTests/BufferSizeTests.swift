import Testing
@testable import HTTPContent
#if canImport(Glibc)
import Glibc
#endif

private let server = TestServer.shared

/// Records the largest chunk libcurl handed over: its receive buffer bounds it.
private final class LargestChunk: ContentHandler {
    var largest = 0
    var total = 0
    func accept(_ head: ResponseHead) throws -> Bool { true }
    func consume(_ chunk: UnsafeRawBufferPointer) throws {
        largest = max(largest, chunk.count)
        total += chunk.count
    }
    func finish() throws -> Int { largest }
}

/// The receive buffer (issue 15): 256 KiB for a request sent alone, 128 KiB for the many
/// transfers of a batch (issue 31: libcurl 7.88's HTTP/2 streams), or what the configuration
/// says; the upload buffer likewise.
@Suite struct BufferSizeTests {
    // libcurl hands the write callback at most CURL_MAX_WRITE_SIZE (16 KiB) at a time whatever
    // its receive buffer: a larger buffer saves recv calls, not callbacks, so the default's
    // effect is seen in the upload reads below (and measured in BENCHMARKS.md), and the receive
    // side is checked with a buffer smaller than that.

    @Test func theConfiguredSizeBoundsEveryChunk() throws {
        var config = ClientConfiguration()
        config.receiveBufferSize = 4096
        let client = try Client(configuration: config)
        let r = try client.get(server.url("/bytes/1000000"), handler: LargestChunk())
        #expect(r.content > 0 && r.content <= 4096)
        let batch = Batch(client: client)
        var largest = -1
        batch.add(.get(server.url("/bytes/1000000")), handler: LargestChunk()) { result in
            if case .success(let r) = result { largest = r.content }
        }
        batch.run()
        #expect(largest > 0 && largest <= 4096)
        for bad in [0, 1023, (10 << 20) + 1] {
            var c = ClientConfiguration()
            c.receiveBufferSize = bad
            #expect(throws: HTTPContentError.self) { try Client(configuration: c) }
        }
        for bad in [1024, (2 << 20) + 1] {
            var c = ClientConfiguration()
            c.uploadBufferSize = bad
            #expect(throws: HTTPContentError.self) { try Client(configuration: c) }
        }
    }

    /// A streamed body of 3 MB whose reads record the largest size libcurl asked for: its
    /// upload buffer.
    private final class Reads: @unchecked Sendable {
        var largest = 0
        var left = 3_000_000
        var request: Request {
            let source = UploadSource.callback(length: 3_000_000) { [self] buffer in
                largest = max(largest, buffer.count)
                let n = min(buffer.count, left)
                if n > 0 { memset(buffer.baseAddress!, 0x61, n) }
                left -= n
                return n
            }
            return Request("POST", server.url("/echo/raw"), body: .stream(source, contentType: nil))
        }
    }

    /// The defaults as documented on `ClientConfiguration.receiveBufferSize`, and what a batch's
    /// transfer is configured with (the handle records what it set).
    @Test func aBatchTransferGets128KiBAndOneSentAlone256KiB() throws {
        let client = try Client()
        #expect(client.aloneBuffers.receive == 256 * 1024)
        #expect(client.multiBuffers.receive == 128 * 1024)
        #expect(client.streamingBuffers.receive == 0)   // libcurl's 16 KiB for streaming handlers
        var config = ClientConfiguration()
        config.receiveBufferSize = 8192
        let configured = try Client(configuration: config)
        #expect(configured.aloneBuffers.receive == 8192 && configured.multiBuffers.receive == 8192)
        let batch = Batch(client: client)
        var ok = false
        batch.add(.get(server.url("/bytes/10")), handler: Bytes()) { ok = (try? $0.get()) != nil }
        batch.run()
        #expect(ok)
        // A plain request's handle goes back to the pool keeping what it set.
        let easy = client.handles.take()
        #expect(easy.applied?.buffers.receive == 128 * 1024)
        client.handles.put(easy)
    }

    @Test func aRequestSentAloneHasTheLargeBuffersAndABatchLibcurlsOwn() throws {
        let client = try Client()
        let alone = Reads()
        let r = try client.send(alone.request, handler: LargestChunk())
        #expect(r.metrics.decodedBytes == 3_000_000)
        #expect(alone.largest == 1024 * 1024)

        let inBatch = Reads()
        let batch = Batch(client: client)
        var received = 0
        batch.add(inBatch.request, handler: LargestChunk()) { result in
            if case .success(let r) = result { received = Int(r.metrics.decodedBytes) }
        }
        batch.run()
        #expect(received == 3_000_000)
        #expect(inBatch.largest == 64 * 1024)   // libcurl's default CURLOPT_UPLOAD_BUFFERSIZE

        var config = ClientConfiguration()
        config.uploadBufferSize = 32 * 1024
        let configured = Reads()
        _ = try Client(configuration: config).send(configured.request, handler: Discard())
        #expect(configured.largest == 32 * 1024)
    }

    @Test func aDownloadWithoutFsyncIsStillComplete() throws {
        var template = Array("/tmp/hc-nofsync-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        var options = File.Options()
        options.fsync = false
        let path = dir + "/out.bin"
        let r = try Client().get(server.url("/bytes/300000"), handler: File(path: path, options: options))
        #expect(r.content.size == 300_000)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_size == 300_000)
        unlink(path)
        rmdir(dir)
    }

    /// File gathers chunks into writes of File.writeSize: chunks that straddle the
    /// buffer's end, a first chunk larger than the buffer (written as it is) and a 1-byte tail
    /// must all land in order.
    @Test func aFileKeepsEveryByteWhenChunksStraddleTheWriteBuffer() throws {
        var template = Array("/tmp/hc-gather-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        let path = dir + "/out.bin"
        let size = File.writeSize
        let sizes = [size + 7, 16384, 95232, 13312, size - 3, size, 2 * size + 1, 1]
        let total = sizes.reduce(0, +)
        let body = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) }
        let writer = File(path: path)
        var request = Request("GET", "http://127.0.0.1/")
        try writer.prepare(&request)
        #expect(try writer.accept(ResponseHead(status: 200, headers: Headers())))
        var offset = 0
        try body.withUnsafeBytes { all in
            for n in sizes {
                try writer.consume(UnsafeRawBufferPointer(rebasing: all[offset..<offset + n]))
                offset += n
            }
        }
        let done = try writer.finish()
        writer.cleanup(failed: false)
        #expect(done.size == Int64(total))
        let fd = open(path, O_RDONLY)
        var back = [UInt8](repeating: 0, count: total + 1)
        let got = back.withUnsafeMutableBytes { read(fd, $0.baseAddress, total + 1) }
        close(fd)
        #expect(got == total)
        #expect(Array(back[..<total]) == body)
        unlink(path)
        rmdir(dir)
    }

    /// A body of announced length has its blocks reserved when the response is accepted (one
    /// fallocate, not page by page); an encoded body, whose length on the wire is not the
    /// file's, reserves nothing. The file ends with exactly the body's bytes either way.
    @Test func aFileReservesTheAnnouncedLengthUpFront() throws {
        var template = Array("/tmp/hc-reserve-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { rmdir(dir) }
        let length = 3 << 20
        let body = [UInt8](repeating: 7, count: length)
        for encoded in [false, true] {
            let path = dir + "/out.bin"
            let writer = File(path: path)
            var request = Request("GET", "http://127.0.0.1/")
            try writer.prepare(&request)
            var headers = Headers()
            headers.set("Content-Length", String(length))
            if encoded { headers.set("Content-Encoding", "gzip") }
            #expect(try writer.accept(ResponseHead(status: 200, headers: headers)))
            var info = stat()
            #expect(stat(writer.tempPath ?? "", &info) == 0)
            if encoded {
                #expect(info.st_blocks == 0)
            } else {
                #expect(Int(info.st_blocks) * 512 >= length)  // ext4 and tmpfs both have fallocate
            }
            #expect(info.st_size == 0)  // reserved, not grown: a reader never sees zeros
            try body.withUnsafeBytes { try writer.consume($0) }
            let done = try writer.finish()
            writer.cleanup(failed: false)
            #expect(done.size == Int64(length))
            #expect(stat(path, &info) == 0 && info.st_size == length)
            unlink(path)
        }
    }
}
