import CSQLite

/// A store in one SQLite database file (the system libsqlite3), shared safely by threads and
/// processes: WAL mode (readers never wait for a writer), a busy timeout for writers.
///
/// Bodies live in `chunks` rows of at most `chunkSize` bytes, written as they arrive and read
/// one row at a time, so a 1 GiB body never sits in memory. A response being written is a
/// `done = 0` row, invisible to readers; `commit` flips it and retires the response it replaces
/// in one transaction (`done = 2`, its rows removed a minute later, so a reader that found it can
/// still read it), then evicts. A process killed mid-store leaves only such an invisible row,
/// removed the next time a store opens the file (after `staleWriteSeconds`). Handlers' products
/// (`CacheProduct`) are `products` rows of their entry, deleted wherever the entry's rows are.
///
/// A file that is not a SQLite database, or a database of another application, is refused with
/// a clear `.io` error; it is never overwritten.
public final class SQLiteCacheStore: CacheStore, @unchecked Sendable {
    /// The most body bytes kept; the least recently used responses go first.
    public let maxBytes: Int64
    public let path: String
    /// The size of a body row.
    static let chunkSize = 256 << 10
    /// `PRAGMA application_id` of our files: "hcch".
    static let applicationId: Int32 = 0x6863_6368
    /// An unfinished write older than this was left by a process that died.
    static let staleWriteSeconds = 600.0
    private let db: Locked<SQLiteConnection>

    /// Opens (creating if needed) the cache database at `path`.
    /// - Throws: `.io` when the file cannot be opened, is not a SQLite database, or belongs to
    ///   another application.
    public init(path: String, maxBytes: Int64 = 256 << 20) throws(HTTPContentError) {
        self.path = path
        self.maxBytes = maxBytes
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw HTTPContentError(.io, "cannot open cache file \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, 10_000)
        db = Locked(SQLiteConnection(handle))
        // Failing here, deinit closes the handle (every stored property is set by now).
        try setUp()
    }

    deinit {
        db.withLock { $0.close() }
    }

    // MARK: - Schema

    private func setUp() throws(HTTPContentError) {
        // Checked and created under the write lock: a process that finds tables being created
        // by another waits for it (busy timeout) instead of reading a half-made file as foreign.
        try transaction { db throws(HTTPContentError) in
            let appId = try db.int("PRAGMA application_id")
            let tables = try db.int("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
            if appId != Int64(SQLiteCacheStore.applicationId) && (appId != 0 || tables != 0) {
                throw HTTPContentError(.io, "\(path) is a database of another application, not an httpcontent cache")
            }
            try db.exec("""
                PRAGMA application_id = \(SQLiteCacheStore.applicationId);
                CREATE TABLE IF NOT EXISTS entries(
                    id INTEGER PRIMARY KEY, url TEXT NOT NULL, variant TEXT NOT NULL, meta BLOB NOT NULL,
                    size INTEGER NOT NULL DEFAULT 0, used REAL NOT NULL, done INTEGER NOT NULL DEFAULT 0);
                CREATE INDEX IF NOT EXISTS entries_by_url ON entries(url, done);
                CREATE INDEX IF NOT EXISTS entries_by_use ON entries(done, used);
                CREATE TABLE IF NOT EXISTS chunks(entry INTEGER NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
                    PRIMARY KEY(entry, seq));
                CREATE TABLE IF NOT EXISTS products(entry INTEGER NOT NULL, fingerprint TEXT NOT NULL,
                    checksum INTEGER NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY(entry, fingerprint));
                """, path: path)
        }
        _ = try queryInt("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = NORMAL")
        let before = CachePolicy.now() - SQLiteCacheStore.staleWriteSeconds
        try exec("""
            BEGIN IMMEDIATE;
            DELETE FROM chunks WHERE entry IN (SELECT id FROM entries WHERE done = 0 AND used < \(before));
            DELETE FROM products WHERE entry IN (SELECT id FROM entries WHERE done = 0 AND used < \(before));
            DELETE FROM entries WHERE done = 0 AND used < \(before);
            COMMIT;
            """)
    }

    // MARK: - CacheStore

    public func variants(of url: String) throws(HTTPContentError) -> [StoredResponse] {
        var found: [StoredResponse] = []
        var unreadable: [Int64] = []
        try run("SELECT id, meta, used FROM entries WHERE url = ?1 AND done = 1 ORDER BY id DESC",
                bind: { hc_sqlite3_bind_text_copy($0, 1, url) }) { stmt in
            let id = sqlite3_column_int64(stmt, 0)
            let count = Int(sqlite3_column_bytes(stmt, 1))
            let bytes = sqlite3_column_blob(stmt, 1).map {
                UnsafeRawBufferPointer(start: $0, count: count)
            } ?? UnsafeRawBufferPointer(start: nil, count: 0)
            // An entry that does not decode is dropped, not served (and not a crash).
            if let entry = try? CacheEntryCodec.decode(bytes), entry.url == url {
                found.append(StoredResponse(id: id, entry: entry, lastUsed: sqlite3_column_double(stmt, 2)))
            } else {
                unreadable.append(id)
            }
        }
        for id in unreadable { try? delete(id) }
        return found
    }

    public func readBody(_ response: StoredResponse, _ chunk: (UnsafeRawBufferPointer) throws -> Void) throws(HTTPContentError) {
        var total: Int64 = 0
        var failure: (any Error)?
        // One read transaction: a snapshot (WAL) in which another process's commit replacing or
        // evicting this response cannot remove rows half way. Rows are stepped one at a time,
        // so memory holds one chunk. The store's lock is held meanwhile: a handler must not use
        // the same store from inside `consume`.
        try db.withLock { (db: inout SQLiteConnection) throws(HTTPContentError) in
            try db.step("BEGIN")
            defer { try? db.step("COMMIT") }
            try db.step("SELECT data FROM chunks WHERE entry = ?1 ORDER BY seq",
                        { sqlite3_bind_int64($0, 1, response.id) }) { stmt in
                guard failure == nil else { return }
                let count = Int(sqlite3_column_bytes(stmt, 0))
                total += Int64(count)
                guard count > 0, let p = sqlite3_column_blob(stmt, 0) else { return }
                do { try chunk(UnsafeRawBufferPointer(start: p, count: count)) } catch { failure = error }
            }
        }
        if let failure { throw HTTPContentError.wrapping(failure) }
        guard total == response.entry.bodySize else {
            throw HTTPContentError(.io, "cached body of \(response.entry.url) was replaced or evicted before it was read")
        }
    }

    public func beginStore(_ entry: CacheEntry) throws(HTTPContentError) -> any CacheBodyWriter {
        let meta = CacheEntryCodec.encode(entry)
        let id = try db.withLock { (db: inout SQLiteConnection) throws(HTTPContentError) -> Int64 in
            try db.step("INSERT INTO entries(url, variant, meta, used, done) VALUES (?1, ?2, ?3, ?4, 0)") { s in
                _ = hc_sqlite3_bind_text_copy(s, 1, entry.url)
                _ = hc_sqlite3_bind_text_copy(s, 2, entry.variantKey)
                _ = meta.withUnsafeBytes { hc_sqlite3_bind_blob_copy(s, 3, $0.baseAddress, Int32($0.count)) }
                return sqlite3_bind_double(s, 4, CachePolicy.now())
            }
            return sqlite3_last_insert_rowid(db.db)
        }
        return SQLiteWriter(store: self, id: id, entry: entry)
    }

    public func updateHead(_ response: StoredResponse, _ entry: CacheEntry) throws(HTTPContentError) {
        let meta = CacheEntryCodec.encode(entry)
        try run("UPDATE entries SET meta = ?1, used = ?2 WHERE id = ?3 AND done = 1", bind: { s in
            _ = meta.withUnsafeBytes { hc_sqlite3_bind_blob_copy(s, 1, $0.baseAddress, Int32($0.count)) }
            sqlite3_bind_double(s, 2, CachePolicy.now())
            return sqlite3_bind_int64(s, 3, response.id)
        })
    }

    public func touch(_ response: StoredResponse) {
        let now = CachePolicy.now()
        // Once a second is precise enough for eviction, and spares a write per hit.
        guard now - response.lastUsed > 1 else { return }
        try? run("UPDATE entries SET used = ?1 WHERE id = ?2", bind: { s in
            sqlite3_bind_double(s, 1, now)
            return sqlite3_bind_int64(s, 2, response.id)
        })
    }

    public func remove(url: String) throws(HTTPContentError) {
        try transaction { db throws(HTTPContentError) in
            let bind = { (s: OpaquePointer) in hc_sqlite3_bind_text_copy(s, 1, url) }
            try db.step("DELETE FROM chunks WHERE entry IN (SELECT id FROM entries WHERE url = ?1 AND done = 1)", bind)
            try db.step("DELETE FROM products WHERE entry IN (SELECT id FROM entries WHERE url = ?1 AND done = 1)", bind)
            try db.step("DELETE FROM entries WHERE url = ?1 AND done = 1", bind)
        }
    }

    public func storedBytes() throws(HTTPContentError) -> Int64 {
        try db.withLock { (db: inout SQLiteConnection) throws(HTTPContentError) in try SQLiteCacheStore.total(db) }
    }

    // MARK: - Products

    public func readProduct(_ response: StoredResponse, fingerprint: String, _ use: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        var outcome: Bool?
        try? run("SELECT checksum, data FROM products WHERE entry = ?1 AND fingerprint = ?2", bind: { s in
            sqlite3_bind_int64(s, 1, response.id)
            return hc_sqlite3_bind_text_copy(s, 2, fingerprint)
        }) { stmt in
            let count = Int(sqlite3_column_bytes(stmt, 1))
            let bytes = UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 1), count: count)
            // Read in place (no copy); a damaged product is never handed to the handler.
            outcome = CacheProductChecksum.of(bytes) == sqlite3_column_int64(stmt, 0) && use(bytes)
        }
        guard let outcome else { return false }
        if !outcome {
            try? run("DELETE FROM products WHERE entry = ?1 AND fingerprint = ?2", bind: { s in
                sqlite3_bind_int64(s, 1, response.id)
                return hc_sqlite3_bind_text_copy(s, 2, fingerprint)
            })
        }
        return outcome
    }

    public func storeProduct(_ response: StoredResponse, fingerprint: String, _ bytes: UnsafeRawBufferPointer) {
        guard response.entry.bodySize + Int64(bytes.count) <= maxBytes else { return }
        let maxBytes = self.maxBytes
        try? transaction { db throws(HTTPContentError) in
            // Only beside a response still stored: one replaced or evicted meanwhile gets none.
            guard try db.int("SELECT count(*) FROM entries WHERE id = ?1 AND done = 1", { sqlite3_bind_int64($0, 1, response.id) }) == 1
            else { return }
            try SQLiteCacheStore.insertProduct(db, response.id, fingerprint, bytes)
            try SQLiteCacheStore.evict(db, maxBytes: maxBytes)
        }
    }

    private static func insertProduct(_ db: SQLiteConnection, _ id: Int64, _ fingerprint: String,
                                      _ bytes: UnsafeRawBufferPointer) throws(HTTPContentError) {
        try db.step("INSERT OR REPLACE INTO products(entry, fingerprint, checksum, size, data) VALUES (?1, ?2, ?3, ?4, ?5)") { s in
            sqlite3_bind_int64(s, 1, id)
            _ = hc_sqlite3_bind_text_copy(s, 2, fingerprint)
            sqlite3_bind_int64(s, 3, CacheProductChecksum.of(bytes))
            sqlite3_bind_int64(s, 4, Int64(bytes.count))
            return hc_sqlite3_bind_blob_copy(s, 5, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count))
        }
    }

    // MARK: - Writing

    fileprivate func writeChunk(_ id: Int64, seq: Int64, _ bytes: UnsafeRawBufferPointer) throws(HTTPContentError) {
        try run("INSERT INTO chunks(entry, seq, data) VALUES (?1, ?2, ?3)", bind: { s in
            sqlite3_bind_int64(s, 1, id)
            sqlite3_bind_int64(s, 2, seq)
            return hc_sqlite3_bind_blob_copy(s, 3, bytes.baseAddress, Int32(bytes.count))
        })
    }

    fileprivate func commit(_ id: Int64, entry: CacheEntry, products: [(String, [UInt8])]) throws(HTTPContentError) {
        let meta = CacheEntryCodec.encode(entry)
        let maxBytes = self.maxBytes
        try transaction { db throws(HTTPContentError) in
            // The response it replaces (same URL and variant) is retired in the same transaction
            // (done = 2: no longer found), and removed a minute later, so that a reader in another
            // process that found it just before can still read its body.
            let now = CachePolicy.now()
            try db.step("UPDATE entries SET done = 2, used = ?3 WHERE url = ?1 AND variant = ?2 AND done = 1") { s in
                _ = hc_sqlite3_bind_text_copy(s, 1, entry.url)
                _ = hc_sqlite3_bind_text_copy(s, 2, entry.variantKey)
                return sqlite3_bind_double(s, 3, now)
            }
            let retired = "SELECT id FROM entries WHERE done = 2 AND used < ?1"
            let before = { (s: OpaquePointer) in sqlite3_bind_double(s, 1, now - 60) }
            try db.step("DELETE FROM chunks WHERE entry IN (\(retired))", before)
            try db.step("DELETE FROM products WHERE entry IN (\(retired))", before)
            try db.step("DELETE FROM entries WHERE id IN (\(retired))", before)
            try db.step("UPDATE entries SET meta = ?1, size = ?2, used = ?3, done = 1 WHERE id = ?4 AND done = 0") { s in
                _ = meta.withUnsafeBytes { hc_sqlite3_bind_blob_copy(s, 1, $0.baseAddress, Int32($0.count)) }
                sqlite3_bind_int64(s, 2, entry.bodySize)
                sqlite3_bind_double(s, 3, CachePolicy.now())
                return sqlite3_bind_int64(s, 4, id)
            }
            guard sqlite3_changes(db.db) == 1 else {
                throw HTTPContentError(.io, "cache write of \(entry.url) was cleaned up before it finished")
            }
            for (fingerprint, bytes) in products {
                let failure: HTTPContentError? = bytes.withUnsafeBytes { b in
                    do throws(HTTPContentError) { try SQLiteCacheStore.insertProduct(db, id, fingerprint, b) } catch { return error }
                    return nil
                }
                if let failure { throw failure }
            }
            try SQLiteCacheStore.evict(db, maxBytes: maxBytes)
        }
    }

    /// The bytes stored responses take: bodies and products.
    private static func total(_ db: SQLiteConnection) throws(HTTPContentError) -> Int64 {
        try db.int("""
            SELECT (SELECT coalesce(sum(size), 0) FROM entries WHERE done = 1)
                 + (SELECT coalesce(sum(p.size), 0) FROM products p JOIN entries e ON e.id = p.entry WHERE e.done = 1)
            """)
    }

    /// Least recently used first, until the bodies and products fit.
    private static func evict(_ db: SQLiteConnection, maxBytes: Int64) throws(HTTPContentError) {
        var total = try SQLiteCacheStore.total(db)
        while total > maxBytes {
            var victim: (Int64, Int64)?
            try db.step("""
                SELECT id, size + (SELECT coalesce(sum(size), 0) FROM products WHERE entry = entries.id)
                FROM entries WHERE done = 1 ORDER BY used LIMIT 1
                """, row: { victim = (sqlite3_column_int64($0, 0), sqlite3_column_int64($0, 1)) })
            guard let (vid, size) = victim else { break }
            try SQLiteCacheStore.deleteEntry(db, vid)
            total -= size
        }
    }

    fileprivate func delete(_ id: Int64) throws(HTTPContentError) {
        try transaction { db throws(HTTPContentError) in try SQLiteCacheStore.deleteEntry(db, id) }
    }

    private static func deleteEntry(_ db: SQLiteConnection, _ id: Int64) throws(HTTPContentError) {
        try db.step("DELETE FROM chunks WHERE entry = ?1") { sqlite3_bind_int64($0, 1, id) }
        try db.step("DELETE FROM products WHERE entry = ?1") { sqlite3_bind_int64($0, 1, id) }
        try db.step("DELETE FROM entries WHERE id = ?1") { sqlite3_bind_int64($0, 1, id) }
    }

    // MARK: - SQLite plumbing

    private func transaction(_ body: (SQLiteConnection) throws(HTTPContentError) -> Void) throws(HTTPContentError) {
        try db.withLock { (db: inout SQLiteConnection) throws(HTTPContentError) in
            try db.step("BEGIN IMMEDIATE")
            do throws(HTTPContentError) {
                try body(db)
                try db.step("COMMIT")
            } catch {
                sqlite3_exec(db.db, "ROLLBACK", nil, nil, nil)
                throw error
            }
        }
    }

    private func exec(_ sql: String) throws(HTTPContentError) {
        try db.withLock { (db: inout SQLiteConnection) throws(HTTPContentError) in try db.exec(sql, path: path) }
    }

    private func queryInt(_ sql: String) throws(HTTPContentError) -> Int64 {
        try db.withLock { (db: inout SQLiteConnection) throws(HTTPContentError) in try db.int(sql) }
    }

    private func run(_ sql: String, bind: (OpaquePointer) -> Int32,
                     row: (OpaquePointer) -> Void = { _ in }) throws(HTTPContentError) {
        try db.withLock { (db: inout SQLiteConnection) throws(HTTPContentError) in try db.step(sql, bind, row: row) }
    }
}

/// A body on its way into the SQLite store: buffered up to one chunk, then written as a row.
private final class SQLiteWriter: CacheBodyWriter {
    let store: SQLiteCacheStore
    let id: Int64
    var entry: CacheEntry
    var buffer: [UInt8] = []
    var seq: Int64 = 0
    var products: [(String, [UInt8])] = []
    var open = true

    init(store: SQLiteCacheStore, id: Int64, entry: CacheEntry) {
        self.store = store
        self.id = id
        self.entry = entry
        buffer.reserveCapacity(SQLiteCacheStore.chunkSize)
    }

    deinit { abort() }

    func write(_ chunk: UnsafeRawBufferPointer) throws(HTTPContentError) {
        guard open else { return }
        entry.bodySize += Int64(chunk.count)
        if entry.bodySize > store.maxBytes { abort(); return }  // can never fit: not stored
        var rest = chunk
        while !rest.isEmpty {
            let n = min(rest.count, SQLiteCacheStore.chunkSize - buffer.count)
            buffer += rest.prefix(n)
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(n))
            if buffer.count == SQLiteCacheStore.chunkSize { try flush() }
        }
    }

    private func flush() throws(HTTPContentError) {
        guard !buffer.isEmpty else { return }
        let failure: HTTPContentError? = buffer.withUnsafeBytes { b in
            do throws(HTTPContentError) { try store.writeChunk(id, seq: seq, b) } catch { return error }
            return nil
        }
        if let failure {
            abort()
            throw failure
        }
        seq += 1
        buffer.removeAll(keepingCapacity: true)
    }

    func commit() throws(HTTPContentError) {
        guard open else { return }
        try flush()
        open = false
        do { try store.commit(id, entry: entry, products: products) } catch {
            try? store.delete(id)
            throw error
        }
    }

    func setProduct(fingerprint: String, _ bytes: UnsafeRawBufferPointer) {
        guard open else { return }
        products.removeAll { $0.0 == fingerprint }
        products.append((fingerprint, Array(bytes)))
    }

    func abort() {
        guard open else { return }
        open = false
        buffer = []
        products = []
        try? store.delete(id)
    }
}
