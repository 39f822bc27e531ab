import Foundation
import GRDB
import NIOConcurrencyHelpers
public import SessionPolicy
public import SessionPolicyDelivery

/// The embedded store: one SQLite file (GRDB). Writes go through one serial connection in
/// transactions, so events of one session are serialized. The database is in WAL mode with
/// `synchronous=FULL`: an acknowledged write survives a crash of the process or the machine.
///
/// Session updates are committed in groups: updates that arrive while a commit is under way
/// wait for the next one and share it, each applied in order inside the one transaction (so
/// each sees the one before), and none is acknowledged before its group is on disk.
public final class SQLiteStore: SessionStore {
    public let kind = "sqlite"
    private let queue: DatabaseQueue
    private let pending = NIOLockedValueBox(PendingUpdates())
    private let observer = NIOLockedValueBox<(any StoreObserver)?>(nil)

    /// Updates waiting for the next group commit.
    private struct PendingUpdates {
        var items: [PendingUpdate] = []
        var flushing = false
        /// When the oldest update of the group being committed arrived.
        var groupSince: ContinuousClock.Instant?
    }

    private struct PendingUpdate: Sendable {
        var key: SessionKey
        var now: Timestamp
        var update: @Sendable (StoredSession?) throws -> (SessionState, any Sendable)
        var log: (@Sendable (any Sendable) -> DecisionRecord?)?
        var continuation: CheckedContinuation<(StoredSession, any Sendable), any Error>
        /// When it arrived (`/healthz` reports the oldest waiting).
        var enqueued: ContinuousClock.Instant
        /// Where the request's trace learns the size of the group it joined, when it is traced.
        var note: GroupCommitNote?
    }

    /// How long the oldest update not yet answered has waited (nil: none waits).
    public var oldestWaitingWrite: Duration? {
        pending.withLockedValue { p in
            [p.groupSince, p.items.first?.enqueued].compactMap { $0 }.min().map { ContinuousClock.now - $0 }
        }
    }
    /// The database file.
    public let path: String

    /// Opens (creating if needed) the database at `path`; with `readOnly`, opens an existing
    /// database and never writes to it. A statement waits at most `busyTimeout` for another
    /// connection's lock (SQLite's busy timeout: `store.timeout`).
    public init(path: String, readOnly: Bool = false, busyTimeout: Duration = .seconds(5)) throws {
        let busySeconds = Double(busyTimeout.components.seconds) + Double(busyTimeout.components.attoseconds) / 1e18
        self.path = path
        var config = Configuration()
        config.readonly = readOnly
        if !readOnly { config.journalMode = .wal }
        config.busyMode = .timeout(busySeconds)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: config)
        } catch {
            throw StoreError("cannot open the SQLite database `\(path)`: \(error)")
        }
    }

    public func prepare(migrate: Bool) async throws -> SchemaStatus {
        try await write { db in
            let (applied, oldest) = try Self.schema(db)
            let (pending, status) = try Schema.prepare(applied: applied, oldestServer: oldest, dialect: .sqlite, migrate: migrate)
            guard !pending.isEmpty else { return status }
            try db.execute(sql: Schema.bookkeeping(.sqlite))
            for sql in Schema.statements(pending, .sqlite, appliedAt: Int64(Date().timeIntervalSince1970 * 1000)) {
                try db.execute(sql: sql)
            }
            return status
        }
    }

    public func schemaStatus() async throws -> SchemaStatus {
        try await read { db in
            let (applied, oldest) = try Self.schema(db)
            return try Schema.prepare(applied: applied, oldestServer: oldest, dialect: .sqlite, migrate: true).status
        }
    }

    public func observe(_ observer: any StoreObserver) { self.observer.withLockedValue { $0 = observer } }

    public func sharedEnvelopes(policy: String) async throws -> [SharedEnvelope] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT key_id, digest, serial, issued_at, envelope FROM signed_machines WHERE policy = ?", arguments: [policy]
            ).map {
                SharedEnvelope(
                    policy: policy, keyID: $0[0], digest: $0[1], serial: $0[2], issuedAt: Timestamp(millisecondsSinceEpoch: $0[3]),
                    envelope: $0[4])
            }
        }
    }

    public func share(_ e: SharedEnvelope, freshSince: Timestamp) async throws -> SharedEnvelope {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO signed_machines (policy, key_id, digest, serial, issued_at, envelope) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (policy, key_id) DO UPDATE SET digest = excluded.digest, serial = excluded.serial,
                      issued_at = excluded.issued_at, envelope = excluded.envelope
                    WHERE NOT (signed_machines.digest = excluded.digest AND signed_machines.issued_at > ?)
                    """,
                arguments: [
                    e.policy, e.keyID, e.digest, e.serial, e.issuedAt.millisecondsSinceEpoch, e.envelope, freshSince.millisecondsSinceEpoch,
                ])
            let row = try Row.fetchOne(
                db, sql: "SELECT digest, serial, issued_at, envelope FROM signed_machines WHERE policy = ? AND key_id = ?",
                arguments: [e.policy, e.keyID])
            guard let row else { return e }
            return SharedEnvelope(
                policy: e.policy, keyID: e.keyID, digest: row[0], serial: row[1], issuedAt: Timestamp(millisecondsSinceEpoch: row[2]),
                envelope: row[3])
        }
    }

    /// The newest migration applied and the oldest server it needs (nil before version 4).
    static func schema(_ db: Database) throws -> (applied: Int, oldestServer: Int?) {
        guard try db.tableExists("schema_migrations") else { return (0, nil) }
        let applied = try Int.fetchOne(db, sql: "SELECT MAX(version) FROM schema_migrations") ?? 0
        guard applied >= Schema.oldestServerColumnSince else { return (applied, nil) }
        return (applied, try Int.fetchOne(db, sql: "SELECT MAX(oldest_server) FROM schema_migrations"))
    }

    public func session(_ key: SessionKey) async throws -> StoredSession? {
        try await read { db in try Self.load(db, key) }
    }

    public func updateSession<R: Sendable>(
        _ key: SessionKey, now: Timestamp, log: (@Sendable (R) -> DecisionRecord?)?,
        _ update: @escaping @Sendable (StoredSession?) throws -> (SessionState, R)
    ) async throws -> (StoredSession, R) {
        let erased: (@Sendable (any Sendable) -> DecisionRecord?)? = log.map { log in { @Sendable result in log(result as! R) } }
        let note = GroupCommitNote.current
        let (stored, result) = try await withCheckedThrowingContinuation { continuation in
            let item = PendingUpdate(
                key: key, now: now, update: { old in try update(old) }, log: erased, continuation: continuation, enqueued: .now,
                note: note)
            let startFlushing = pending.withLockedValue { p -> Bool in
                p.items.append(item)
                if p.flushing { return false }
                p.flushing = true
                return true
            }
            if startFlushing { queue.asyncWriteWithoutTransaction { db in self.commitGroup(db) } }
        }
        return (stored, result as! R)
    }

    /// Commits the waiting updates as one group, in one transaction, on the writer's queue;
    /// then queues itself again while updates wait. Going to the back of the queue between
    /// groups lets the store's other writes (deletes, device sessions, purges) take turns.
    private func commitGroup(_ db: Database) {
        let group = pending.withLockedValue { p -> [PendingUpdate] in
            defer { p.items = [] }
            p.groupSince = p.items.first?.enqueued
            return p.items
        }
        var results: [Result<(StoredSession, any Sendable), any Error>] = []
        results.reserveCapacity(group.count)
        do {
            // BEGIN and COMMIT as cached statements too (GRDB's `inTransaction` prepares them anew).
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
            do {
                for item in group {
                    let loaded = try Self.loadWithLog(db, item.key)
                    let old = loaded?.session
                    let next: (SessionState, any Sendable)
                    do {
                        next = try item.update(old)
                    } catch {
                        results.append(.failure(error))  // this update stores nothing; the others go on
                        continue
                    }
                    let stored = StoredSession(state: next.0, revision: (old?.revision ?? 0) + 1, updatedAt: item.now)
                    // The record first, then the session pointing at it: a chain newest to oldest.
                    var last = loaded?.lastDecision
                    if var record = item.log?(next.1) {
                        record.revision = stored.revision
                        last = try Self.log(db, record, previous: last)
                    }
                    try Self.save(db, item.key, stored, lastDecision: last)
                    results.append(.success((stored, next.1)))
                }
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            } catch {
                try? db.rollback()
                throw error
            }
            observer.withLockedValue { $0 }?.groupCommitted(size: group.count)
            for (item, result) in zip(group, results) {
                item.note?.joined(group.count)
                item.continuation.resume(with: result)
            }
        } catch {
            // The group's transaction failed: nothing of it is stored, and nothing acknowledged.
            let failure = (error as? StoreError) ?? StoreError("SQLite: \(error)")
            for item in group { item.continuation.resume(throwing: failure) }
        }
        let more = pending.withLockedValue { p -> Bool in
            p.groupSince = nil
            if p.items.isEmpty { p.flushing = false }
            return p.flushing
        }
        if more { queue.asyncWriteWithoutTransaction { db in self.commitGroup(db) } }
    }

    public func decisions(_ query: DecisionQuery) async throws -> [DecisionRecord] {
        try await read { db in
            // The sessions the query names, each with its newest record; then each session's
            // chain, newest first, and the newest `limit` of them all.
            var sql = "SELECT last_decision FROM sessions WHERE user_id = ? AND last_decision IS NOT NULL"
            var arguments: StatementArguments = [query.user]
            if let policy = query.policy {
                sql += " AND policy = ?"
                arguments += [policy]
            }
            if let device = query.device {
                sql += " AND device_id = ?"
                arguments += [device]
            }
            let heads = try Int64.fetchAll(db, sql: sql, arguments: arguments)
            let before = query.before ?? Int64.max
            var all: [DecisionRecord] = []
            for head in heads {
                all += try Row.fetchAll(db, sql: Self.chainSQL, arguments: [head, before, query.limit]).map { row in
                    let notices: String = row[12]
                    let amr: String? = row[15]
                    let actor: String? = row[16]
                    return DecisionRecord(
                        id: row[0], policy: row[1], digest: row[2], user: row[3], device: row[4], revision: row[5],
                        eventTime: Timestamp(millisecondsSinceEpoch: row[6]), serverTime: Timestamp(millisecondsSinceEpoch: row[7]),
                        event: row[8], network: row[9], decision: row[10], reason: row[11],
                        notices: notices.isEmpty ? [] : notices.split(separator: ",").map(String.init), transition: row[13],
                        state: row[14], amr: amr.map { $0.split(separator: " ").map(String.init) },
                        actor: actor.flatMap(DecisionActor.init(text:)), requestID: row[17])
                }
            }
            return Array(all.sorted { $0.id > $1.id }.prefix(query.limit))
        }
    }

    /// One session's records older than `?2`, newest first, at most `?3`: walked from its newest
    /// (`?1`) along `previous` (point lookups by id; the log keeps no other index).
    static let chainSQL = """
        WITH RECURSIVE chain(id, taken) AS (
          SELECT ?1, CASE WHEN ?1 < ?2 THEN 1 ELSE 0 END
          UNION ALL
          SELECT d.previous, c.taken + CASE WHEN d.previous < ?2 THEN 1 ELSE 0 END
          FROM chain c JOIN decisions d ON d.id = c.id
          WHERE d.previous IS NOT NULL AND c.taken < ?3
        )
        SELECT d.id, d.policy, d.digest, d.user_id, d.device_id, d.revision, d.event_time, d.server_time, d.event, d.network,
          d.decision, d.reason, d.notices, d.transition, d.state, d.amr, d.actor, d.request_id
        FROM chain c JOIN decisions d ON d.id = c.id WHERE d.id < ?2 ORDER BY d.id DESC LIMIT ?3
        """

    public func purgeDecisions(before cutoff: Timestamp, limit: Int) async throws -> Int {
        try await write { db in
            try db.execute(
                sql: """
                    DELETE FROM decisions WHERE id IN (
                      SELECT id FROM decisions WHERE server_time < ? ORDER BY server_time LIMIT ?)
                    """, arguments: [cutoff.millisecondsSinceEpoch, limit])
            return db.changesCount
        }
    }

    public func sessions(policy: String, user: String) async throws -> [(device: String, session: StoredSession)] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT device_id, state, revision, updated_at FROM sessions
                    WHERE policy = ? AND user_id = ? AND state IS NOT NULL ORDER BY device_id
                    """,
                arguments: [policy, user]
            ).map { row in
                let text: String = row[1]
                return (
                    row[0],
                    StoredSession(
                        state: try StoredJSON.decode(SessionState.self, text), revision: row[2],
                        updatedAt: Timestamp(millisecondsSinceEpoch: row[3]))
                )
            }
        }
    }

    public func sessions(user: String) async throws -> [(key: SessionKey, session: StoredSession)] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT policy, device_id, state, revision, updated_at FROM sessions
                    WHERE user_id = ? AND state IS NOT NULL ORDER BY policy, device_id
                    """,
                arguments: [user]
            ).map { row in
                let text: String = row[2]
                return (
                    SessionKey(policy: row[0], user: user, device: row[1]),
                    StoredSession(
                        state: try StoredJSON.decode(SessionState.self, text), revision: row[3],
                        updatedAt: Timestamp(millisecondsSinceEpoch: row[4]))
                )
            }
        }
    }

    public func sessionPage(
        policy: String, after: SessionKey?, limit: Int
    ) async throws -> [(
        key: SessionKey, session: StoredSession
    )] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT user_id, device_id, state, revision, updated_at FROM sessions
                    WHERE policy = ? AND state IS NOT NULL AND (user_id, device_id) > (?, ?)
                    ORDER BY user_id, device_id LIMIT ?
                    """,
                arguments: [policy, after?.user ?? "", after?.device ?? "", limit]
            ).map { row in
                let text: String = row[2]
                return (
                    SessionKey(policy: policy, user: row[0], device: row[1]),
                    StoredSession(
                        state: try StoredJSON.decode(SessionState.self, text), revision: row[3],
                        updatedAt: Timestamp(millisecondsSinceEpoch: row[4]))
                )
            }
        }
    }

    public func deleteSession(_ key: SessionKey) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM sessions WHERE policy = ? AND user_id = ? AND device_id = ?",
                arguments: [key.policy, key.user, key.device])
            return db.changesCount > 0
        }
    }

    public func putDeviceSession(_ s: DeviceSession) async throws {
        let data = try StoredJSON.encode(s)
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO device_sessions (pool, device_id, app_id, user_id, data, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (pool, device_id, app_id) DO UPDATE SET
                      user_id = excluded.user_id, data = excluded.data, created_at = excluded.created_at,
                      expires_at = excluded.expires_at
                    """,
                arguments: [
                    s.pool, s.device, s.app, s.user, data, s.createdAt.millisecondsSinceEpoch,
                    s.expiresAt.millisecondsSinceEpoch,
                ])
        }
    }

    public func deviceSessions(pool: String, device: String, now: Timestamp) async throws -> [DeviceSession] {
        let rows = try await read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT data FROM device_sessions WHERE pool = ? AND device_id = ? AND expires_at >= ?
                    ORDER BY created_at, app_id
                    """,
                arguments: [pool, device, now.millisecondsSinceEpoch])
        }
        return try rows.map { try StoredJSON.decode(DeviceSession.self, $0) }
    }

    public func deleteDeviceSessions(pool: String?, device: String, user: String, app: String?) async throws -> Int {
        try await write { db in
            var sql = "DELETE FROM device_sessions WHERE device_id = ? AND user_id = ?"
            var arguments: StatementArguments = [device, user]
            if let pool {
                sql += " AND pool = ?"
                arguments += [pool]
            }
            if let app {
                sql += " AND app_id = ?"
                arguments += [app]
            }
            try db.execute(sql: sql, arguments: arguments)
            return db.changesCount
        }
    }

    public func putTicket(hash: String, grant: TicketGrant) async throws {
        let data = try StoredJSON.encode(grant)
        try await write { db in
            try db.execute(
                sql: "INSERT INTO tickets (hash, pool, data, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [hash, grant.pool, data, grant.expiresAt.millisecondsSinceEpoch])
        }
    }

    public func takeTicket(hash: String, pool: String, now: Timestamp) async throws -> TicketGrant? {
        let data = try await write { db -> String? in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT data, expires_at, pool FROM tickets WHERE hash = ?", arguments: [hash])
            else { return nil }
            let rowPool: String = row["pool"]
            // A ticket shown to the wrong pool is not consumed: its owner may still use it.
            guard rowPool == pool else { return nil }
            try db.execute(sql: "DELETE FROM tickets WHERE hash = ?", arguments: [hash])
            let expires: Int64 = row["expires_at"]
            return expires >= now.millisecondsSinceEpoch ? row["data"] : nil
        }
        return try data.map { try StoredJSON.decode(TicketGrant.self, $0) }
    }

    public func useIDToken(hash: String, expiresAt: Timestamp) async throws -> Bool {
        try await write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO used_id_tokens (hash, expires_at) VALUES (?, ?)",
                arguments: [hash, expiresAt.millisecondsSinceEpoch])
            return db.changesCount == 1
        }
    }

    public func purgeExpired(now: Timestamp) async throws -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM tickets WHERE expires_at < ?", arguments: [now.millisecondsSinceEpoch])
            var n = db.changesCount
            try db.execute(sql: "DELETE FROM used_id_tokens WHERE expires_at < ?", arguments: [now.millisecondsSinceEpoch])
            n += db.changesCount
            try db.execute(sql: "DELETE FROM device_sessions WHERE expires_at < ?", arguments: [now.millisecondsSinceEpoch])
            n += db.changesCount
            return n
        }
    }

    public func close() async {
        try? queue.close()
    }

    // MARK: -

    private func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await queue.write(body)
        } catch let error as DatabaseError {
            throw StoreError("SQLite: \(error)")
        }
    }

    private func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await queue.read(body)
        } catch let error as DatabaseError {
            throw StoreError("SQLite: \(error)")
        }
    }
}
