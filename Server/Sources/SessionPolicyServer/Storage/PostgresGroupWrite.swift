import PostgresNIO
import SessionPolicy
import SessionPolicyDelivery

/// Conditional writes waiting for a group.
struct PendingWrites {
    var items: [PendingWrite] = []
    /// Groups being written.
    var inFlight = 0
    /// When the oldest write of the group being written arrived.
    var groupSince: ContinuousClock.Instant?

    /// When the oldest write not yet answered arrived (the group's, or the first that waits).
    var oldest: ContinuousClock.Instant? {
        switch (groupSince, items.first?.enqueued) {
        case let (g?, i?): min(g, i)
        case let (g, i): g ?? i
        }
    }

    /// The group being written is answered.
    mutating func groupDone() { groupSince = nil }

    /// Up to `limit` waiting writes, at most one per session (a second write of a session waits
    /// for the next group, so that it meets the row the first one wrote); nil when none waits.
    mutating func takeGroup(limit: Int) -> [PendingWrite]? {
        guard !items.isEmpty else { return nil }
        var group: [PendingWrite] = []
        var keys = Set<SessionKey>()
        var rest: [PendingWrite] = []
        for item in items {
            if group.count < limit, keys.insert(item.key).inserted { group.append(item) } else { rest.append(item) }
        }
        items = rest
        groupSince = group.first?.enqueued
        return group
    }
}

/// One session's conditional write: `state` at `revision` if the row is at `oldRevision` with
/// `oldState` (no row when `oldRevision` is 0).
struct PendingWrite: Sendable {
    var key: SessionKey
    var state: String
    var revision: Int64
    var updatedAt: Int64
    var oldRevision: Int64
    var oldState: String
    /// The id of the session's newest decision record as read (0: none).
    var oldLastDecision: Int64
    /// That record's `server_time` (0: not known), the new record's `previous_time`.
    var oldLastDecisionTime: Int64
    /// The decision to log with the write, if any.
    var record: DecisionRecord?
    /// When it arrived (`/healthz` reports the oldest write waiting).
    var enqueued: ContinuousClock.Instant
    /// Whether it was written, and the new record's id, false when the row has changed.
    var continuation: CheckedContinuation<(Bool, Int64?), any Error>
    /// Where the request's trace learns the size of the group it joined, when it is traced.
    var note: GroupCommitNote?
}

/// A group of conditional writes as one statement, prepared once per connection (PostgreSQL
/// parses and plans it once). Its rows number the writes (from 1) that matched: an update of a
/// row still at its old revision and state, or the insert of a session's first row.
struct GroupWrite: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::int8[], $7::int8[], $8::text[],
            $9::text[], $10::int8[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::int4[], $17::text[],
            $18::int8[], $19::text[], $20::text[], $21::text[], $22::int8[])
            WITH ORDINALITY AS t(policy, user_id, device_id, state, revision, updated_at, old_revision, old_state,
              digest, event_time, event, network, decision, reason, notices, transition, machine_state, old_last, amr, actor, request_id,
              old_last_time, n)
        ), ids AS MATERIALIZED (
          SELECT n, CASE WHEN digest <> '' THEN nextval(pg_get_serial_sequence('decisions', 'id')) END AS decision_id FROM input
        ), updated AS (
          UPDATE sessions s SET state = i.state, revision = i.revision, updated_at = i.updated_at,
            last_decision = COALESCE(x.decision_id, s.last_decision),
            last_decision_time = CASE WHEN x.decision_id IS NULL THEN s.last_decision_time ELSE i.updated_at END,
            last_decision_time_of = CASE WHEN x.decision_id IS NULL THEN s.last_decision_time_of ELSE x.decision_id END
          FROM input i JOIN ids x ON x.n = i.n
          WHERE i.old_revision > 0 AND s.policy = i.policy AND s.user_id = i.user_id AND s.device_id = i.device_id
            AND s.revision = i.old_revision AND s.state = i.old_state
          RETURNING i.n
        ), inserted AS (
          INSERT INTO sessions (policy, user_id, device_id, state, revision, updated_at, last_decision, last_decision_time,
            last_decision_time_of)
          SELECT i.policy, i.user_id, i.device_id, i.state, i.revision, i.updated_at, x.decision_id,
            CASE WHEN x.decision_id IS NOT NULL THEN i.updated_at END, x.decision_id
          FROM input i JOIN ids x ON x.n = i.n WHERE i.old_revision = 0
          ON CONFLICT DO NOTHING
          RETURNING policy, user_id, device_id
        ), written AS (
          SELECT n FROM updated
          UNION ALL
          SELECT i.n FROM inserted JOIN input i USING (policy, user_id, device_id) WHERE i.old_revision = 0
        ), logged AS (
          INSERT INTO decisions (id, policy, digest, user_id, device_id, revision, event_time, server_time, event, network,
            decision, reason, notices, transition, state, previous, amr, actor, request_id, previous_time)
          SELECT x.decision_id, i.policy, i.digest, i.user_id, i.device_id, i.revision, i.event_time, i.updated_at, i.event,
            NULLIF(i.network, ''), NULLIF(i.decision, ''), i.reason, i.notices, i.transition, i.machine_state,
            NULLIF(i.old_last, 0), NULLIF(i.amr, ''), NULLIF(i.actor, ''), NULLIF(i.request_id, ''),
            CASE WHEN i.old_last > 0 THEN NULLIF(i.old_last_time, 0) END
          FROM written w JOIN input i ON i.n = w.n JOIN ids x ON x.n = w.n
          WHERE i.digest <> ''
        )
        SELECT w.n, COALESCE(x.decision_id, 0) FROM written w JOIN ids x ON x.n = w.n
        """
    typealias Row = (Int64, Int64)
    var writes: [PendingWrite]

    init(_ writes: [PendingWrite]) { self.writes = writes }

    func makeBindings() throws -> PostgresBindings {
        var b = SessionGroupWrite.sessionColumns(writes, capacity: 22)
        b.append(writes.map { $0.record?.digest ?? "" })
        b.append(writes.map { $0.record?.eventTime.millisecondsSinceEpoch ?? 0 })
        b.append(writes.map { $0.record?.event ?? "" })
        b.append(writes.map { $0.record?.network ?? "" })
        b.append(writes.map { $0.record?.decision ?? "" })
        b.append(writes.map { $0.record?.reason ?? "" })
        b.append(writes.map { $0.record?.notices.joined(separator: ",") ?? "" })
        b.append(writes.map { Int32(clamping: $0.record?.transition ?? 0) })
        b.append(writes.map { $0.record?.state ?? "" })
        b.append(writes.map(\.oldLastDecision))
        b.append(writes.map { $0.record?.amr?.joined(separator: " ") ?? "" })
        b.append(writes.map { $0.record?.actor?.text ?? "" })
        b.append(writes.map { $0.record?.requestID ?? "" })
        b.append(writes.map(\.oldLastDecisionTime))
        return b
    }

    func decodeRow(_ row: PostgresRow) throws -> (Int64, Int64) { try row.decode((Int64, Int64).self) }
}

/// ``GroupWrite`` without the decision log: the conditional writes of a group's sessions, one
/// statement; it returns the number (from 1) of each write that matched its row.
struct SessionGroupWrite: PostgresPreparedStatement {
    static let sql = """
        WITH input AS (
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int8[], $6::int8[], $7::int8[], $8::text[])
            WITH ORDINALITY AS t(policy, user_id, device_id, state, revision, updated_at, old_revision, old_state, n)
        ), updated AS (
          UPDATE sessions s SET state = i.state, revision = i.revision, updated_at = i.updated_at
          FROM input i
          WHERE i.old_revision > 0 AND s.policy = i.policy AND s.user_id = i.user_id AND s.device_id = i.device_id
            AND s.revision = i.old_revision AND s.state = i.old_state
          RETURNING i.n
        ), inserted AS (
          INSERT INTO sessions (policy, user_id, device_id, state, revision, updated_at)
          SELECT policy, user_id, device_id, state, revision, updated_at FROM input WHERE old_revision = 0
          ON CONFLICT DO NOTHING
          RETURNING policy, user_id, device_id
        )
        SELECT n FROM updated
        UNION ALL
        SELECT i.n FROM inserted JOIN input i USING (policy, user_id, device_id) WHERE i.old_revision = 0
        """
    typealias Row = Int64
    var writes: [PendingWrite]

    init(_ writes: [PendingWrite]) { self.writes = writes }

    func makeBindings() throws -> PostgresBindings { Self.sessionColumns(writes, capacity: 8) }

    /// The eight session columns both group statements start with ($1 ... $8).
    static func sessionColumns(_ writes: [PendingWrite], capacity: Int) -> PostgresBindings {
        var b = PostgresBindings(capacity: capacity)
        b.append(writes.map(\.key.policy))
        b.append(writes.map(\.key.user))
        b.append(writes.map(\.key.device))
        b.append(writes.map(\.state))
        b.append(writes.map(\.revision))
        b.append(writes.map(\.updatedAt))
        b.append(writes.map(\.oldRevision))
        b.append(writes.map(\.oldState))
        return b
    }

    func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
}
