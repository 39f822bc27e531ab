import GRDB
import GRDBSQLite
import SessionPolicy
import SessionPolicyDelivery

/// The two statements every stateful event runs (read the session, write it back), on the
/// SQLite C interface under GRDB's cached statements. Every event of the server goes through
/// here; GRDB's general row and argument machinery was a third of the writer's time under load.
extension SQLiteStore {
    static let loadSQL =
        "SELECT state, revision, updated_at, last_decision FROM sessions WHERE policy = ? AND user_id = ? AND device_id = ?"
    static let saveSQL = """
        INSERT INTO sessions (policy, user_id, device_id, state, revision, updated_at, last_decision) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (policy, user_id, device_id) DO UPDATE SET
          state = excluded.state, revision = excluded.revision, updated_at = excluded.updated_at,
          last_decision = excluded.last_decision
        """

    /// The stored session of `key`, or nil.
    static func load(_ db: Database, _ key: SessionKey) throws -> StoredSession? {
        try loadWithLog(db, key)?.session
    }

    /// The stored session of `key` and the id of its newest decision record, or nil.
    static func loadWithLog(_ db: Database, _ key: SessionKey) throws -> (session: StoredSession, lastDecision: Int64?)? {
        let statement = try db.cachedStatement(sql: loadSQL).sqliteStatement
        defer { sqlite3_reset(statement) }
        try bind(db, statement, 1, key.policy)
        try bind(db, statement, 2, key.user)
        try bind(db, statement, 3, key.device)
        switch sqlite3_step(statement) {
        case SQLITE_DONE:
            return nil
        case SQLITE_ROW:
            let text = UnsafeRawBufferPointer(
                start: sqlite3_column_blob(statement, 0), count: Int(sqlite3_column_bytes(statement, 0)))
            let last = sqlite3_column_type(statement, 3) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 3)
            return (
                StoredSession(
                    state: try StoredJSON.decodeState(text), revision: sqlite3_column_int64(statement, 1),
                    updatedAt: Timestamp(millisecondsSinceEpoch: sqlite3_column_int64(statement, 2))),
                last
            )
        case let code:
            throw error(db, code)
        }
    }

    /// Writes `stored` as the session of `key`.
    static func save(_ db: Database, _ key: SessionKey, _ stored: StoredSession, lastDecision: Int64?) throws {
        let statement = try db.cachedStatement(sql: saveSQL).sqliteStatement
        defer { sqlite3_reset(statement) }
        try bind(db, statement, 1, key.policy)
        try bind(db, statement, 2, key.user)
        try bind(db, statement, 3, key.device)
        try bind(db, statement, 4, StoredJSON.encode(stored.state))
        try check(db, sqlite3_bind_int64(statement, 5, stored.revision))
        try check(db, sqlite3_bind_int64(statement, 6, stored.updatedAt.millisecondsSinceEpoch))
        if let lastDecision {
            try check(db, sqlite3_bind_int64(statement, 7, lastDecision))
        } else {
            try check(db, sqlite3_bind_null(statement, 7))
        }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw error(db, code) }
    }

    static let logSQL = """
        INSERT INTO decisions (policy, digest, user_id, device_id, revision, event_time, server_time, event, network,
          decision, reason, notices, transition, state, previous, amr, actor, request_id)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Appends `record` to the decision log after `previous` (the session's newest record); its id.
    static func log(_ db: Database, _ record: DecisionRecord, previous: Int64?) throws -> Int64 {
        let statement = try db.cachedStatement(sql: logSQL).sqliteStatement
        defer { sqlite3_reset(statement) }
        try bind(db, statement, 1, record.policy)
        try bind(db, statement, 2, record.digest)
        try bind(db, statement, 3, record.user)
        try bind(db, statement, 4, record.device)
        try check(db, sqlite3_bind_int64(statement, 5, record.revision))
        try check(db, sqlite3_bind_int64(statement, 6, record.eventTime.millisecondsSinceEpoch))
        try check(db, sqlite3_bind_int64(statement, 7, record.serverTime.millisecondsSinceEpoch))
        try bind(db, statement, 8, record.event)
        if let network = record.network { try bind(db, statement, 9, network) } else { try check(db, sqlite3_bind_null(statement, 9)) }
        if let decision = record.decision { try bind(db, statement, 10, decision) } else { try check(db, sqlite3_bind_null(statement, 10)) }
        try bind(db, statement, 11, record.reason)
        try bind(db, statement, 12, record.notices.joined(separator: ","))
        try check(db, sqlite3_bind_int64(statement, 13, Int64(record.transition)))
        try bind(db, statement, 14, record.state)
        if let previous {
            try check(db, sqlite3_bind_int64(statement, 15, previous))
        } else {
            try check(db, sqlite3_bind_null(statement, 15))
        }
        // The ID token's methods, space-separated (an `amr` value is a short word).
        if let amr = record.amr {
            try bind(db, statement, 16, amr.joined(separator: " "))
        } else {
            try check(db, sqlite3_bind_null(statement, 16))
        }
        if let actor = record.actor { try bind(db, statement, 17, actor.text) } else { try check(db, sqlite3_bind_null(statement, 17)) }
        if let id = record.requestID { try bind(db, statement, 18, id) } else { try check(db, sqlite3_bind_null(statement, 18)) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else { throw error(db, code) }
        return sqlite3_last_insert_rowid(db.sqliteConnection)
    }

    /// Binds `text` as a copy (SQLite owns it, so it outlives this call).
    private static func bind(_ db: Database, _ statement: SQLiteStatement, _ index: Int32, _ text: String) throws {
        var text = text
        let code = text.withUTF8 { utf8 in
            // An empty string still needs a pointer, or SQLite binds NULL.
            guard let base = utf8.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(statement, index, $0, Int32(utf8.count), transient)
            }
        }
        try check(db, code)
    }

    private static func check(_ db: Database, _ code: Int32) throws {
        guard code == SQLITE_OK else { throw error(db, code) }
    }

    private static func error(_ db: Database, _ code: Int32) -> StoreError {
        let message = db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) } ?? "error \(code)"
        return StoreError("SQLite: \(message)")
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the bound bytes.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
