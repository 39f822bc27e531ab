import Foundation
import Logging
import NIOConcurrencyHelpers
public import PostgresNIO
public import ServiceLifecycle
public import SessionPolicy
public import SessionPolicyDelivery

/// The shared store: PostgreSQL through a postgres-nio connection pool, for several servers.
///
/// An event is a conditional write when this server wrote or read the session last: it succeeds
/// only if the row is still the one the event was evaluated against (`revision = r AND state =
/// s`, or no row at all for a first event). Writes are committed in groups: the writes that
/// arrive while ``maxGroupsInFlight`` groups are under way wait and go together, as one statement
/// (one round trip, one commit), and none is acknowledged before its group is committed. A write
/// whose row another server (or a concurrent event) changed matches no row; that event is
/// evaluated again against the row as it is now (read once more) and written again: optimistic
/// concurrency, so no event is lost or applied twice, across servers too. After `maxAttempts`
/// conflicts an event falls back to a transaction holding the row's lock
/// (`SELECT ... FOR UPDATE`), which always makes progress. The store is a `Service`: its pool
/// runs in the application's service group.
public final class PostgresStore: SessionStore, Service {
    public let kind = "postgres"
    let client: PostgresClient
    let logger: Logger
    /// The bound of every wait on the database (`store.timeout`).
    let timeout: Duration
    /// The last row this server read or wrote of each session: its value and its text as stored.
    private let cache = NIOLockedValueBox([SessionKey: Remembered]())
    /// Most sessions remembered (about 1 KB each); past it, one is forgotten for each new one.
    static let cacheLimit = 131_072
    /// Conditional writes tried before the locking transaction.
    static let maxAttempts = 8
    /// Conditional writes waiting for the next group.
    private let pending = NIOLockedValueBox(PendingWrites())
    private let observer = NIOLockedValueBox<(any StoreObserver)?>(nil)
    /// The pool's connections as the store leases them (`poolStatus`).
    let pool: PostgresPoolGauge
    /// Groups written at once; the writes that arrive meanwhile wait for the next group. One:
    /// under load (32 connections, `load/realistic.sh`) it gave 77% of pgbench's rate, two 65%
    /// and four 62%, as fewer, larger groups leave the shared cores to the server.
    static let maxGroupsInFlight = 1
    /// Most writes in one group (one statement's arrays).
    static let maxGroupSize = 512

    /// Creates a store for `configuration`; queries wait until ``run()`` runs the pool. Every
    /// wait on the database (a connection from the pool, the statements of one operation) is
    /// bounded by `timeout`: past it the operation fails with a ``StoreError`` and the connection
    /// it held is closed. The driver's connection failures are logged at `error`.
    public init(configuration: PostgresClient.Configuration, timeout: Duration = .seconds(5), logger: Logger) {
        self.client = PostgresClient(configuration: configuration, backgroundLogger: Self.driverLogger(logger))
        self.pool = PostgresPoolGauge(max: configuration.options.maximumConnections)
        self.logger = logger
        self.timeout = timeout
    }

    public var poolStatus: PoolStatus? { pool.status }

    /// How long the oldest write not yet answered has waited (nil: none waits).
    public var oldestWaitingWrite: Duration? {
        pending.withLockedValue { p in p.oldest.map { ContinuousClock.now - $0 } }
    }

    /// A migration may take longer than one request's statement (`SET LOCAL` in ``prepare()``).
    static let migrationTimeout: Duration = .seconds(300)

    /// Runs the connection pool until the task is cancelled or the service group shuts down.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.client.run()
        }
    }

    public func prepare(migrate: Bool) async throws -> SchemaStatus {
        try await transaction(Self.migrationTimeout + .seconds(5)) { conn in
            // The server's sessions have `statement_timeout` = `store.timeout`; a migration may take longer.
            try await conn.query("SET LOCAL statement_timeout = '300s'", logger: self.logger)
            // One server migrates at a time; the others wait here, then find nothing to do.
            try await conn.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(Schema.advisoryLock))"), logger: self.logger)
            let (applied, oldest) = try await self.schema(conn)
            let (pending, status) = try Schema.prepare(applied: applied, oldestServer: oldest, dialect: .postgres, migrate: migrate)
            guard !pending.isEmpty else { return status }
            try await conn.query(PostgresQuery(unsafeSQL: Schema.bookkeeping(.postgres)), logger: self.logger)
            for sql in Schema.statements(pending, .postgres, appliedAt: Int64(Date().timeIntervalSince1970 * 1000)) {
                try await conn.query(PostgresQuery(unsafeSQL: sql), logger: self.logger)
            }
            return status
        }
    }

    public func schemaStatus() async throws -> SchemaStatus {
        try await bounded { conn in
            let (applied, oldest) = try await self.schema(conn)
            return try Schema.prepare(applied: applied, oldestServer: oldest, dialect: .postgres, migrate: true).status
        }
    }

    public func observe(_ observer: any StoreObserver) { self.observer.withLockedValue { $0 = observer } }

    public func sharedEnvelopes(policy: String) async throws -> [SharedEnvelope] {
        try await bounded { conn in
            let rows = try await conn.query(
                "SELECT key_id, digest, serial, issued_at, envelope FROM signed_machines WHERE policy = \(policy)", logger: self.logger)
            var out: [SharedEnvelope] = []
            for try await (key, digest, serial, issued, envelope) in rows.decode((String, String, Int64, Int64, String).self) {
                out.append(
                    SharedEnvelope(
                        policy: policy, keyID: key, digest: digest, serial: serial, issuedAt: Timestamp(millisecondsSinceEpoch: issued),
                        envelope: envelope))
            }
            return out
        }
    }

    public func share(_ e: SharedEnvelope, freshSince: Timestamp) async throws -> SharedEnvelope {
        try await bounded { conn in
            try await conn.query(
                """
                INSERT INTO signed_machines (policy, key_id, digest, serial, issued_at, envelope)
                VALUES (\(e.policy), \(e.keyID), \(e.digest), \(e.serial), \(e.issuedAt.millisecondsSinceEpoch), \(e.envelope))
                ON CONFLICT (policy, key_id) DO UPDATE SET digest = excluded.digest, serial = excluded.serial,
                  issued_at = excluded.issued_at, envelope = excluded.envelope
                WHERE NOT (signed_machines.digest = excluded.digest AND signed_machines.issued_at > \(freshSince.millisecondsSinceEpoch))
                """, logger: self.logger)
            let rows = try await conn.query(
                "SELECT digest, serial, issued_at, envelope FROM signed_machines WHERE policy = \(e.policy) AND key_id = \(e.keyID)",
                logger: self.logger)
            var kept = e
            for try await (digest, serial, issued, envelope) in rows.decode((String, Int64, Int64, String).self) {
                kept = SharedEnvelope(
                    policy: e.policy, keyID: e.keyID, digest: digest, serial: serial, issuedAt: Timestamp(millisecondsSinceEpoch: issued),
                    envelope: envelope)
            }
            return kept
        }
    }

    /// The newest migration applied and the oldest server it needs (nil before version 4).
    private func schema(_ conn: PostgresConnection) async throws -> (applied: Int, oldestServer: Int?) {
        var exists = false
        for try await v in try await conn.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger).decode(Bool.self) {
            exists = v
        }
        guard exists else { return (0, nil) }
        var applied = 0
        for try await v in try await conn.query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", logger: logger).decode(Int.self)
        {
            applied = v
        }
        guard applied >= Schema.oldestServerColumnSince else { return (applied, nil) }
        var oldest: Int?
        for try await v in try await conn.query("SELECT MAX(oldest_server) FROM schema_migrations", logger: logger).decode(Int?.self) {
            oldest = v
        }
        return (applied, oldest)
    }

    public func session(_ key: SessionKey) async throws -> StoredSession? {
        try await bounded { conn in
            let rows = try await conn.query(
                """
                SELECT state, revision, updated_at FROM sessions
                WHERE policy = \(key.policy) AND user_id = \(key.user) AND device_id = \(key.device)
                """, logger: self.logger)
            return try await Self.stored(rows)
        }
    }

    /// A session as this server last read or wrote it: the state, its text as stored, the id of
    /// its newest decision record (0: none) and that record's `server_time` (0: not known, as
    /// after a write by a server of schema 5), which names its partition.
    typealias Remembered = (session: StoredSession, text: String, lastDecision: Int64, lastDecisionTime: Int64)

    public func updateSession<R: Sendable>(
        _ key: SessionKey, now: Timestamp, log: (@Sendable (R) -> DecisionRecord?)?,
        _ update: @escaping @Sendable (StoredSession?) throws -> (SessionState, R)
    ) async throws -> (StoredSession, R) {
        for _ in 0..<Self.maxAttempts {
            let old = try await RequestTracing.span("store.read") { span in
                span?.attributes["sessionpolicy.store.cached"] = cache.withLockedValue { $0[key] != nil }
                return try await remembered(key)
            }
            let (state, result) = try update(old?.session)
            let stored = StoredSession(state: state, revision: (old?.session.revision ?? 0) + 1, updatedAt: now)
            let text = StoredJSON.encode(state)
            var record = log?(result)
            record?.revision = stored.revision
            let (written, decision) = try await RequestTracing.span("store.write") { span in
                let answer = try await write(key, stored, text: text, over: old, record: record)
                span?.attributes["sessionpolicy.store.written"] = answer.0
                return answer
            }
            if written {
                remember(
                    key, stored, text: text, lastDecision: decision ?? old?.lastDecision ?? 0,
                    lastDecisionTime: decision != nil ? now.millisecondsSinceEpoch : old?.lastDecisionTime ?? 0)
                return (stored, result)
            }
            forget(key)
            observer.withLockedValue { $0 }?.writeConflicted()
        }
        observer.withLockedValue { $0 }?.lockedFallback()
        return try await lockedUpdate(key, now: now, log: log, update)
    }

    /// The session as this server last saw it, or as stored now when it has not seen it.
    private func remembered(_ key: SessionKey) async throws -> Remembered? {
        if let entry = cache.withLockedValue({ $0[key] }) { return entry }
        let entry = try await bounded { conn -> Remembered? in
            let rows = try await conn.query(
                """
                SELECT state, revision, updated_at, COALESCE(last_decision, 0), \(unescaped: Self.headTime) FROM sessions
                WHERE policy = \(key.policy) AND user_id = \(key.user) AND device_id = \(key.device) AND state IS NOT NULL
                """, logger: self.logger)
            var out: Remembered?
            for try await (state, revision, updated, last, lastTime) in rows.decode((String, Int64, Int64, Int64, Int64).self) {
                out = (
                    StoredSession(
                        state: try StoredJSON.decode(SessionState.self, state), revision: revision,
                        updatedAt: Timestamp(millisecondsSinceEpoch: updated)),
                    state, last, lastTime
                )
            }
            return out
        }
        if let entry {
            remember(key, entry.session, text: entry.text, lastDecision: entry.lastDecision, lastDecisionTime: entry.lastDecisionTime)
        }
        return entry
    }

    /// Writes `stored` if the row is still `old` (no row when `old` is nil), in the next group.
    /// False when the row has changed.
    /// (And `record` after the session's newest; the second value is the new record's id.)
    private func write(
        _ key: SessionKey, _ stored: StoredSession, text: String, over old: Remembered?, record: DecisionRecord?
    )
        async throws -> (Bool, Int64?)
    {
        try await withCheckedThrowingContinuation { continuation in
            let write = PendingWrite(
                key: key, state: text, revision: stored.revision, updatedAt: stored.updatedAt.millisecondsSinceEpoch,
                oldRevision: old?.session.revision ?? 0, oldState: old?.text ?? "", oldLastDecision: old?.lastDecision ?? 0,
                oldLastDecisionTime: old?.lastDecisionTime ?? 0,
                record: record, enqueued: .now, continuation: continuation, note: GroupCommitNote.current)
            let group = pending.withLockedValue { p -> [PendingWrite]? in
                p.items.append(write)
                guard p.inFlight < Self.maxGroupsInFlight else { return nil }
                p.inFlight += 1
                return p.takeGroup(limit: Self.maxGroupSize)
            }
            if let group { Task { await self.commitGroups(group) } }
        }
    }

    /// Writes `group`, then each group that waited meanwhile, until none waits.
    private func commitGroups(_ first: [PendingWrite]) async {
        var next: [PendingWrite]? = first
        while let group = next {
            do {
                let written = try await bounded { conn -> [Int64: Int64] in
                    var written: [Int64: Int64] = [:]
                    if group.contains(where: { $0.record != nil }) {
                        let statement = GroupWrite(group)
                        for try await (n, id) in try await conn.execute(statement, logger: self.logger) { written[n] = id }
                    } else {
                        // No decision to log (`--decision-log-retention 0`): the sessions alone.
                        let statement = SessionGroupWrite(group)
                        for try await n in try await conn.execute(statement, logger: self.logger) { written[n] = 0 }
                    }
                    return written
                }
                observer.withLockedValue { $0 }?.groupCommitted(size: group.count)
                for (n, item) in group.enumerated() {
                    item.note?.joined(group.count)
                    let id = written[Int64(n + 1)]
                    item.continuation.resume(returning: (id != nil, id.flatMap { $0 > 0 ? $0 : nil }))
                }
            } catch {
                // The group's statement failed: none of it is stored, and nothing acknowledged.
                for item in group { item.continuation.resume(throwing: error) }
            }
            next = pending.withLockedValue { p -> [PendingWrite]? in
                p.groupDone()
                let next = p.takeGroup(limit: Self.maxGroupSize)
                if next == nil { p.inFlight -= 1 }
                return next
            }
        }
    }

    private func remember(_ key: SessionKey, _ session: StoredSession, text: String, lastDecision: Int64, lastDecisionTime: Int64) {
        cache.withLockedValue { cache in
            if cache.count >= Self.cacheLimit, cache[key] == nil { cache.remove(at: cache.startIndex) }
            cache[key] = (session, text, lastDecision, lastDecisionTime)
        }
    }

    private func forget(_ key: SessionKey) {
        _ = cache.withLockedValue { $0.removeValue(forKey: key) }
    }

    /// The pessimistic path: load, evaluate and store in one transaction holding the row's lock.
    private func lockedUpdate<R: Sendable>(
        _ key: SessionKey, now: Timestamp, log: (@Sendable (R) -> DecisionRecord?)?,
        _ update: @escaping @Sendable (StoredSession?) throws -> (SessionState, R)
    ) async throws -> (StoredSession, R) {
        let millis = now.millisecondsSinceEpoch
        let (stored, text, result, lastDecision) = try await transaction { conn in
            let select: PostgresQuery = """
                SELECT state, revision, updated_at FROM sessions
                WHERE policy = \(key.policy) AND user_id = \(key.user) AND device_id = \(key.device) FOR UPDATE
                """
            let lastSelect: PostgresQuery = """
                SELECT COALESCE(last_decision, 0), \(unescaped: Self.headTime) FROM sessions
                WHERE policy = \(key.policy) AND user_id = \(key.user) AND device_id = \(key.device)
                """
            var rows = try await conn.query(select, logger: self.logger)
            var found = try await Self.row(rows)
            if found == nil {
                // A session's first event: a row to lock (rolled back with the transaction), so
                // that concurrent first events wait for each other too.
                try await conn.query(
                    """
                    INSERT INTO sessions (policy, user_id, device_id, state, revision, updated_at)
                    VALUES (\(key.policy), \(key.user), \(key.device), NULL, 0, \(millis)) ON CONFLICT DO NOTHING
                    """, logger: self.logger)
                rows = try await conn.query(select, logger: self.logger)
                found = try await Self.row(rows)
            }
            let old = found ?? nil
            let (state, result) = try update(old)
            let stored = StoredSession(state: state, revision: (old?.revision ?? 0) + 1, updatedAt: now)
            let json = StoredJSON.encode(state)
            var (last, lastTime): (Int64, Int64) = (0, 0)
            for try await v in try await conn.query(lastSelect, logger: self.logger).decode((Int64, Int64).self) { (last, lastTime) = v }
            if var r = log?(result) {
                r.revision = stored.revision
                let notices = r.notices.joined(separator: ",")
                let transition = Int32(clamping: r.transition)
                let previous: Int64? = last > 0 ? last : nil
                let previousTime: Int64? = last > 0 && lastTime > 0 ? lastTime : nil
                let rows = try await conn.query(
                    """
                    INSERT INTO decisions (policy, digest, user_id, device_id, revision, event_time, server_time, event,
                      network, decision, reason, notices, transition, state, previous, amr, actor, request_id, previous_time)
                    VALUES (\(r.policy), \(r.digest), \(r.user), \(r.device), \(r.revision), \(r.eventTime.millisecondsSinceEpoch),
                      \(r.serverTime.millisecondsSinceEpoch), \(r.event), \(r.network), \(r.decision), \(r.reason), \(notices),
                      \(transition), \(r.state), \(previous), \(r.amr?.joined(separator: " ")), \(r.actor?.text),
                      \(r.requestID), \(previousTime))
                    RETURNING id
                    """, logger: self.logger)
                for try await id in rows.decode(Int64.self) { (last, lastTime) = (id, r.serverTime.millisecondsSinceEpoch) }
            }
            let lastDecision: Int64? = last > 0 ? last : nil
            let lastDecisionTime: Int64? = last > 0 && lastTime > 0 ? lastTime : nil
            try await conn.query(
                """
                UPDATE sessions SET state = \(json), revision = \(stored.revision), updated_at = \(millis),
                  last_decision = \(lastDecision), last_decision_time = \(lastDecisionTime), last_decision_time_of = \(lastDecision)
                WHERE policy = \(key.policy) AND user_id = \(key.user) AND device_id = \(key.device)
                """, logger: self.logger)
            return (stored, json, result, (last, lastTime))
        }
        remember(key, stored, text: text, lastDecision: lastDecision.0, lastDecisionTime: lastDecision.1)
        return (stored, result)
    }

    /// A session's newest record's `server_time` as the session's row holds it, or 0 when not
    /// known (a server of schema 5 moved `last_decision` without it).
    static let headTime = "COALESCE(CASE WHEN last_decision_time_of = last_decision THEN last_decision_time END, 0)"

    public func decisions(_ query: DecisionQuery) async throws -> [DecisionRecord] {
        try await bounded { conn in
            // The sessions the query names, each with its newest record; then each session's
            // chain, newest first (a walk along `previous`), and the newest `limit`. Each step
            // names the record's `server_time` when known, so that PostgreSQL looks in one
            // partition; unknown (0), it looks in every partition.
            let heads = try await conn.query(
                """
                SELECT last_decision, \(unescaped: Self.headTime) FROM sessions
                WHERE user_id = \(query.user) AND last_decision IS NOT NULL
                  AND (\(query.policy)::text IS NULL OR policy = \(query.policy))
                  AND (\(query.device)::text IS NULL OR device_id = \(query.device))
                """, logger: self.logger)
            var ids: [(Int64, Int64)] = []
            for try await head in heads.decode((Int64, Int64).self) { ids.append(head) }
            let before = query.before ?? Int64.max
            var out: [DecisionRecord] = []
            for (head, time) in ids {
                let rows = try await conn.query(Self.chain(head: head, time: time, before: before, limit: query.limit), logger: self.logger)
                for try await row in rows {
                    let c = try row.decode(
                        (
                            Int64, String, String, String, String, Int64, Int64, Int64, String, String?, String?, String, String, Int32,
                            String, String?, String?, String?
                        )
                        .self)
                    out.append(
                        DecisionRecord(
                            id: c.0, policy: c.1, digest: c.2, user: c.3, device: c.4, revision: c.5,
                            eventTime: Timestamp(millisecondsSinceEpoch: c.6), serverTime: Timestamp(millisecondsSinceEpoch: c.7),
                            event: c.8, network: c.9, decision: c.10, reason: c.11,
                            notices: c.12.isEmpty ? [] : c.12.split(separator: ",").map(String.init), transition: Int(c.13), state: c.14,
                            amr: c.15.map { $0.split(separator: " ").map(String.init) },
                            actor: c.16.flatMap(DecisionActor.init(text:)), requestID: c.17))
                }
            }
            return Array(out.sorted { $0.id > $1.id }.prefix(query.limit))
        }
    }

    /// The newest `limit` records of one session's chain below id `before`, from its newest
    /// record `head` received at `time` (0: not known): `decision_chain` (schema 6) walks it.
    private static func chain(head: Int64, time: Int64, before: Int64, limit: Int) -> PostgresQuery {
        """
        SELECT id, policy, digest, user_id, device_id, revision, event_time, server_time, event,
          network, decision, reason, notices, transition, state, amr, actor, request_id
        FROM decision_chain(\(head)::int8, \(time)::int8, \(before)::int8, \(Int32(clamping: limit))::int4)
        """
    }

    /// Day partitions are dropped whole (``dropDecisions(before:)``); this deletes in the two
    /// that are not a day's: the records from before partitioning, and the default partition's.
    public func purgeDecisions(before cutoff: Timestamp, limit: Int) async throws -> Int {
        try await bounded { conn in
            var n = 0
            for part in try await self.decisionPartitions(conn) where part.lower == nil && n < limit {
                let rows = try await conn.query(
                    PostgresQuery(
                        unsafeSQL: """
                            DELETE FROM \(part.name) WHERE id IN (
                              SELECT id FROM \(part.name) WHERE server_time < \(cutoff.millisecondsSinceEpoch) ORDER BY server_time
                              LIMIT \(limit - n))
                            RETURNING id
                            """), logger: self.logger)
                for try await _ in rows.decode(Int64.self) { n += 1 }
            }
            return n
        }
    }

    public func sessions(policy: String, user: String) async throws -> [(device: String, session: StoredSession)] {
        try await bounded { conn in
            let rows = try await conn.query(
                """
                SELECT device_id, state, revision, updated_at FROM sessions
                WHERE policy = \(policy) AND user_id = \(user) AND state IS NOT NULL ORDER BY device_id
                """, logger: self.logger)
            var out: [(device: String, session: StoredSession)] = []
            for try await (device, state, revision, updated) in rows.decode((String, String, Int64, Int64).self) {
                out.append(
                    (
                        device,
                        StoredSession(
                            state: try StoredJSON.decode(SessionState.self, state), revision: revision,
                            updatedAt: Timestamp(millisecondsSinceEpoch: updated))
                    ))
            }
            return out
        }
    }

    public func sessions(user: String) async throws -> [(key: SessionKey, session: StoredSession)] {
        try await bounded { conn in
            let rows = try await conn.query(
                """
                SELECT policy, device_id, state, revision, updated_at FROM sessions
                WHERE user_id = \(user) AND state IS NOT NULL ORDER BY policy, device_id
                """, logger: self.logger)
            var out: [(key: SessionKey, session: StoredSession)] = []
            for try await (policy, device, state, revision, updated) in rows.decode((String, String, String, Int64, Int64).self) {
                out.append(
                    (
                        SessionKey(policy: policy, user: user, device: device),
                        StoredSession(
                            state: try StoredJSON.decode(SessionState.self, state), revision: revision,
                            updatedAt: Timestamp(millisecondsSinceEpoch: updated))
                    ))
            }
            return out
        }
    }

    public func sessionPage(
        policy: String, after: SessionKey?, limit: Int
    ) async throws -> [(
        key: SessionKey, session: StoredSession
    )] {
        try await bounded { conn in
            let user = after?.user ?? ""
            let device = after?.device ?? ""
            let rows = try await conn.query(
                """
                SELECT user_id, device_id, state, revision, updated_at FROM sessions
                WHERE policy = \(policy) AND state IS NOT NULL AND (user_id, device_id) > (\(user), \(device))
                ORDER BY user_id, device_id LIMIT \(limit)
                """, logger: self.logger)
            var out: [(key: SessionKey, session: StoredSession)] = []
            for try await (user, device, state, revision, updated) in rows.decode((String, String, String, Int64, Int64).self) {
                out.append(
                    (
                        SessionKey(policy: policy, user: user, device: device),
                        StoredSession(
                            state: try StoredJSON.decode(SessionState.self, state), revision: revision,
                            updatedAt: Timestamp(millisecondsSinceEpoch: updated))
                    ))
            }
            return out
        }
    }

    public func deleteSession(_ key: SessionKey) async throws -> Bool {
        forget(key)
        return try await bounded { conn in
            let rows = try await conn.query(
                """
                DELETE FROM sessions WHERE policy = \(key.policy) AND user_id = \(key.user) AND device_id = \(key.device)
                RETURNING state
                """, logger: self.logger)
            var found = false
            for try await state in rows.decode(String?.self) where state != nil { found = true }
            return found
        }
    }

    public func putDeviceSession(_ s: DeviceSession) async throws {
        let data = try StoredJSON.encode(s)
        _ = try await bounded { conn in
            try await conn.query(
                """
                INSERT INTO device_sessions (pool, device_id, app_id, user_id, data, created_at, expires_at)
                VALUES (\(s.pool), \(s.device), \(s.app), \(s.user), \(data), \(s.createdAt.millisecondsSinceEpoch),
                        \(s.expiresAt.millisecondsSinceEpoch))
                ON CONFLICT (pool, device_id, app_id) DO UPDATE SET
                  user_id = excluded.user_id, data = excluded.data, created_at = excluded.created_at,
                  expires_at = excluded.expires_at
                """, logger: self.logger)
        }
    }

    public func deviceSessions(pool: String, device: String, now: Timestamp) async throws -> [DeviceSession] {
        let texts = try await bounded { conn in
            let rows = try await conn.query(
                """
                SELECT data FROM device_sessions WHERE pool = \(pool) AND device_id = \(device)
                AND expires_at >= \(now.millisecondsSinceEpoch) ORDER BY created_at, app_id
                """, logger: self.logger)
            var out: [String] = []
            for try await d in rows.decode(String.self) { out.append(d) }
            return out
        }
        return try texts.map { try StoredJSON.decode(DeviceSession.self, $0) }
    }

    public func deleteDeviceSessions(pool: String?, device: String, user: String, app: String?) async throws -> Int {
        try await bounded { conn in
            let rows = try await conn.query(
                """
                DELETE FROM device_sessions WHERE device_id = \(device) AND user_id = \(user)
                AND (\(pool)::text IS NULL OR pool = \(pool)) AND (\(app)::text IS NULL OR app_id = \(app))
                RETURNING app_id
                """, logger: self.logger)
            var n = 0
            for try await _ in rows.decode(String.self) { n += 1 }
            return n
        }
    }

    public func useIDToken(hash: String, expiresAt: Timestamp) async throws -> Bool {
        try await bounded { conn in
            let rows = try await conn.query(
                """
                INSERT INTO used_id_tokens (hash, expires_at) VALUES (\(hash), \(expiresAt.millisecondsSinceEpoch))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: self.logger)
            var first = false
            for try await _ in rows.decode(Int.self) { first = true }
            return first
        }
    }

    public func putTicket(hash: String, grant: TicketGrant) async throws {
        let data = try StoredJSON.encode(grant)
        _ = try await bounded { conn in
            try await conn.query(
                """
                INSERT INTO tickets (hash, pool, data, expires_at)
                VALUES (\(hash), \(grant.pool), \(data), \(grant.expiresAt.millisecondsSinceEpoch))
                """, logger: self.logger)
        }
    }

    public func takeTicket(hash: String, pool: String, now: Timestamp) async throws -> TicketGrant? {
        let data = try await bounded { conn in
            // DELETE ... RETURNING: of two servers taking one ticket, exactly one gets the row.
            let rows = try await conn.query(
                "DELETE FROM tickets WHERE hash = \(hash) AND pool = \(pool) RETURNING data, expires_at", logger: self.logger)
            var out: String?
            for try await (d, expires) in rows.decode((String, Int64).self) where expires >= now.millisecondsSinceEpoch {
                out = d
            }
            return out
        }
        return try data.map { try StoredJSON.decode(TicketGrant.self, $0) }
    }

    public func purgeExpired(now: Timestamp) async throws -> Int {
        let t = now.millisecondsSinceEpoch
        return try await transaction { conn in
            var n = 0
            for try await _ in try await conn.query("DELETE FROM tickets WHERE expires_at < \(t) RETURNING 1", logger: self.logger)
                .decode(Int.self)
            {
                n += 1
            }
            for try await _ in try await conn.query(
                "DELETE FROM used_id_tokens WHERE expires_at < \(t) RETURNING 1", logger: self.logger
            ).decode(Int.self) {
                n += 1
            }
            for try await _ in try await conn.query(
                "DELETE FROM device_sessions WHERE expires_at < \(t) RETURNING 1", logger: self.logger
            ).decode(Int.self) {
                n += 1
            }
            return n
        }
    }

    public func close() async {}

    // MARK: -

    private static func stored(_ rows: PostgresRowSequence) async throws -> StoredSession? {
        try await row(rows) ?? nil
    }

    /// nil for no row; `.some(nil)` for a row without a state yet (a first event's placeholder).
    private static func row(_ rows: PostgresRowSequence) async throws -> StoredSession?? {
        var out: StoredSession?? = nil
        for try await (state, revision, updated) in rows.decode((String?, Int64, Int64).self) {
            guard let state else {
                out = .some(nil)
                continue
            }
            out = StoredSession(
                state: try StoredJSON.decode(SessionState.self, state), revision: revision,
                updatedAt: Timestamp(millisecondsSinceEpoch: updated))
        }
        return out
    }
}
