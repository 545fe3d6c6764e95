import CSQLite

/// One SQLite connection with its statements prepared once and reset after each use: a hit runs
/// the same few queries every time, and preparing one costs as much as running it. Used only
/// under the store's lock.
final class SQLiteConnection {
    let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    init(_ db: OpaquePointer) {
        self.db = db
    }

    /// Finalizes the statements, then closes the connection.
    func close() {
        for stmt in statements.values { sqlite3_finalize(stmt) }
        statements = [:]
        sqlite3_close(db)
    }

    /// Runs `sql` (one statement, its text fixed: values go through `bind`), calling `row` for
    /// each result row.
    func step(_ sql: String, _ bind: (OpaquePointer) -> Int32 = { _ in SQLITE_OK },
              row: (OpaquePointer) -> Void = { _ in }) throws(HTTPContentError) {
        let stmt = try statement(sql)
        defer {
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
        }
        _ = bind(stmt)
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_ROW { row(stmt); continue }
            if rc == SQLITE_DONE { return }
            throw SQLiteConnection.failure(db, rc, nil)
        }
    }

    /// The first column of the first row of `sql` (0 when none).
    func int(_ sql: String, _ bind: (OpaquePointer) -> Int32 = { _ in SQLITE_OK }) throws(HTTPContentError) -> Int64 {
        var value: Int64 = 0
        try step(sql, bind) { value = sqlite3_column_int64($0, 0) }
        return value
    }

    /// Runs several statements once (set-up), not kept prepared.
    func exec(_ sql: String, path: String? = nil) throws(HTTPContentError) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteConnection.failure(db, rc, path) }
    }

    private func statement(_ sql: String) throws(HTTPContentError) -> OpaquePointer {
        if let stmt = statements[sql] { return stmt }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw SQLiteConnection.failure(db, rc, nil) }
        statements[sql] = stmt
        return stmt
    }

    static func failure(_ db: OpaquePointer, _ rc: Int32, _ path: String?) -> HTTPContentError {
        let message = String(cString: sqlite3_errmsg(db))
        let primary = rc & 0xFF
        if primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT {
            return HTTPContentError(.io, "cache file\(path.map { " " + $0 } ?? "") is not a usable httpcontent cache: \(message)")
        }
        return HTTPContentError(.io, "cache store: \(message) (SQLite code \(rc))")
    }
}
