public import SessionPolicy
public import SessionPolicyDelivery

/// Identifies one stored session: one policy's session of one user on one device.
public struct SessionKey: Sendable, Hashable, CustomStringConvertible {
    /// The policy's name.
    public var policy: String
    /// The user id.
    public var user: String
    /// The device id.
    public var device: String

    /// Creates a key.
    public init(policy: String, user: String, device: String) {
        self.policy = policy
        self.user = user
        self.device = device
    }

    public var description: String { "\(policy)/\(user)/\(device)" }

    /// Keys are equal when their names hold the same Unicode scalars, as the stores compare them
    /// (bytes) and as the engine compares users and devices (docs/machine-format.md, "String
    /// equality"): Swift's `==` on `String` would take two spellings of one name for one key.
    public static func == (a: SessionKey, b: SessionKey) -> Bool {
        a.policy.utf8.elementsEqual(b.policy.utf8) && a.user.utf8.elementsEqual(b.user.utf8)
            && a.device.utf8.elementsEqual(b.device.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        for name in [policy, user, device] {
            hasher.combine(name.utf8.count)
            for byte in name.utf8 { hasher.combine(byte) }
        }
    }
}

/// A stored session state with its revision (incremented by every stored event).
public struct StoredSession: Sendable, Equatable {
    /// The state.
    public var state: SessionState
    /// How many updates the session has had.
    public var revision: Int64
    /// When it was last written (server clock).
    public var updatedAt: Timestamp

    /// Creates a stored session.
    public init(state: SessionState, revision: Int64, updatedAt: Timestamp) {
        self.state = state
        self.revision = revision
        self.updatedAt = updatedAt
    }
}

/// What a device session shows and gives: the display data any app on the device may see, and
/// the user's data only a ticket exchange reveals.
public struct DeviceSession: Sendable, Equatable, Codable {
    /// The user pool.
    public var pool: String
    /// The device id (`identifierForVendor`, `ANDROID_ID`).
    public var device: String
    /// The app that created the session.
    public var app: String
    /// The user id.
    public var user: String
    /// Display name, for "continue as ..." (may be absent).
    public var nickname: String?
    /// Avatar URL (may be absent).
    public var avatar: String?
    /// The user's profile claims from the token that created the session (never the token).
    public var profile: [String: String]
    /// When it was created (server clock).
    public var createdAt: Timestamp
    /// When it ends (the token's expiry, or the configured limit).
    public var expiresAt: Timestamp

    /// Creates a device session.
    public init(
        pool: String, device: String, app: String, user: String, nickname: String? = nil, avatar: String? = nil,
        profile: [String: String] = [:], createdAt: Timestamp, expiresAt: Timestamp
    ) {
        self.pool = pool
        self.device = device
        self.app = app
        self.user = user
        self.nickname = nickname
        self.avatar = avatar
        self.profile = profile
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// What a ticket is exchanged for: the user's data, as the device session recorded it.
public struct TicketGrant: Sendable, Equatable, Codable {
    /// The user pool the ticket belongs to.
    public var pool: String
    /// The device the session was detected on.
    public var device: String
    /// The app that detected it.
    public var detectedBy: String
    /// The session that was detected.
    public var session: DeviceSession
    /// When the ticket stops working.
    public var expiresAt: Timestamp

    /// Creates a grant.
    public init(pool: String, device: String, detectedBy: String, session: DeviceSession, expiresAt: Timestamp) {
        self.pool = pool
        self.device = device
        self.detectedBy = detectedBy
        self.session = session
        self.expiresAt = expiresAt
    }
}

/// Durable storage for session states, device sessions and tickets. Two implementations:
/// ``SQLiteStore`` (embedded, the default) and ``PostgresStore`` (shared by several servers).
/// Both pass the same conformance suite.
public protocol SessionStore: Sendable {
    /// A short name for logs and `/healthz` (`sqlite`, `postgres`).
    var kind: String { get }

    /// Creates the schema or upgrades it to this server's version (with `migrate` false, fails
    /// instead when it would change it); what it found. Safe to run from several servers at
    /// once; runs against a newer schema whose newer steps only expand it, and refuses one that
    /// needs a newer server (docs/storage.md#upgrades-without-downtime).
    func prepare(migrate: Bool) async throws -> SchemaStatus

    /// The store's schema and what ``prepare(migrate:)`` would run, changing nothing.
    func schemaStatus() async throws -> SchemaStatus

    /// Reports the store's session writes to `observer` from now on.
    func observe(_ observer: any StoreObserver)

    /// The signed machines of `policy` the servers of this store share, one per signing key.
    func sharedEnvelopes(policy: String) async throws -> [SharedEnvelope]

    /// Keeps `envelope` as its policy's and key's shared signed machine, unless the one kept is of
    /// the same machine and issued after `freshSince` (another server signed it first);
    /// the one kept after.
    func share(_ envelope: SharedEnvelope, freshSince: Timestamp) async throws -> SharedEnvelope

    /// The stored state of `key`, if any.
    func session(_ key: SessionKey) async throws -> StoredSession?

    /// Loads the state of `key` (nil if none), lets `update` compute the next one, stores it
    /// and returns `update`'s result, atomically: concurrent updates of one key are serialized,
    /// none is lost. If `update` throws, nothing is stored. The write is durable when this returns.
    /// `update` may run more than once (a store that writes optimistically evaluates again
    /// after a conflict); only the run whose result is stored counts, so it must be pure.
    ///
    /// When `log` gives a record for the result stored, it is appended to the decision log in
    /// the same transaction, with the new revision: the state and its record are stored together
    /// or not at all.
    func updateSession<R: Sendable>(
        _ key: SessionKey, now: Timestamp, log: (@Sendable (R) -> DecisionRecord?)?,
        _ update: @escaping @Sendable (StoredSession?) throws -> (SessionState, R)
    ) async throws -> (StoredSession, R)

    /// The decision log's records for `query`, newest first.
    func decisions(_ query: DecisionQuery) async throws -> [DecisionRecord]

    /// Deletes up to `limit` of the records received before `cutoff`, oldest first; how many.
    /// The retention purge calls it in small batches, so writers wait for no long delete.
    /// (PostgreSQL: only in the partitions that are not a day's, see ``dropDecisions(before:)``.)
    func purgeDecisions(before cutoff: Timestamp, limit: Int) async throws -> Int

    /// Readies the decision log for the records of the days around `now` (PostgreSQL: creates
    /// the day partitions ahead); the names of the parts created. Nothing to do by default.
    func prepareDecisionLog(now: Timestamp) async throws -> [String]

    /// Drops the parts of the decision log whose records were all received before `cutoff`
    /// (PostgreSQL: whole day partitions); what was dropped. Nothing by default.
    func dropDecisions(before cutoff: Timestamp) async throws -> [DroppedDecisions]

    /// Up to `limit` stored sessions of `policy`, ordered by user id then device id, after the
    /// session `after` (from the first when nil): a page of a read-only walk through every
    /// stored session, whose memory does not grow with their number (`policyctl diff --storage`).
    func sessionPage(policy: String, after: SessionKey?, limit: Int) async throws -> [(key: SessionKey, session: StoredSession)]

    /// Deletes the state of `key`; true if there was one.
    func deleteSession(_ key: SessionKey) async throws -> Bool

    /// The stored sessions of `user` under `policy` on every device, by device id.
    func sessions(policy: String, user: String) async throws -> [(device: String, session: StoredSession)]

    /// The stored sessions of `user` under every policy and on every device, by policy, then
    /// device id (the `sessions_by_user` index).
    func sessions(user: String) async throws -> [(key: SessionKey, session: StoredSession)]

    /// Creates or replaces the device session of (pool, device, app).
    func putDeviceSession(_ session: DeviceSession) async throws

    /// The live device sessions on a device (not expired at `now`), oldest first.
    func deviceSessions(pool: String, device: String, now: Timestamp) async throws -> [DeviceSession]

    /// Deletes the device sessions of `user` on a device: one app's, or every app's when `app`
    /// is nil; in one pool, or in every pool when `pool` is nil. Returns how many ended.
    func deleteDeviceSessions(pool: String?, device: String, user: String, app: String?) async throws -> Int

    /// Stores a ticket under the hash of its value.
    func putTicket(hash: String, grant: TicketGrant) async throws

    /// Takes the ticket with this hash: returns its grant and deletes it, atomically, so a
    /// ticket works once. Nil if unknown, already used, or expired at `now`.
    func takeTicket(hash: String, pool: String, now: Timestamp) async throws -> TicketGrant?

    /// Records the first use of an ID token (by the hash of its text) until `expiresAt`:
    /// true the first time, false when it was used before (a replay).
    func useIDToken(hash: String, expiresAt: Timestamp) async throws -> Bool

    /// Deletes expired tickets, device sessions and used ID tokens; returns how many rows went.
    func purgeExpired(now: Timestamp) async throws -> Int

    /// Releases connections. The store is unusable afterwards.
    func close() async

    /// How long the oldest session write not yet answered has waited; nil when none waits.
    /// `/healthz` reports it, and fails past `health.max.write.wait` (a wedged writer).
    var oldestWaitingWrite: Duration? { get }

    /// The connection pool's use now (`/metrics`); nil for a store without a pool (SQLite).
    var poolStatus: PoolStatus? { get }
}

/// A storage failure, reported as `store-unavailable` (503) and counted in `/metrics`.
public struct StoreError: Error, CustomStringConvertible {
    /// What failed, for logs.
    public var description: String
    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// What a store tells of its session writes, for metrics (``ServerMetrics`` is one): group
/// commits, and on PostgreSQL the conditional writes that found their row changed.
public protocol StoreObserver: Sendable {
    /// A group of `size` session writes committed together (one transaction or statement).
    func groupCommitted(size: Int)
    /// A conditional write found its row changed by another server or event: the event is
    /// evaluated again against the row as it is now.
    func writeConflicted()
    /// An event fell back to the locking transaction after repeated conflicts.
    func lockedFallback()
}

/// A policy's signed machine as the servers of one store share it (`signed_machines`), so that
/// every server answers the same envelope and `ETag`.
public struct SharedEnvelope: Sendable, Equatable {
    public var policy: String
    /// The signing key's id.
    public var keyID: String
    /// The machine's digest.
    public var digest: String
    public var serial: Int64
    public var issuedAt: Timestamp
    /// The envelope's text.
    public var envelope: String

    public init(policy: String, keyID: String, digest: String, serial: Int64, issuedAt: Timestamp, envelope: String) {
        self.policy = policy
        self.keyID = keyID
        self.digest = digest
        self.serial = serial
        self.issuedAt = issuedAt
        self.envelope = envelope
    }
}

extension SessionStore {
    /// A store without a queue of writes reports none waiting.
    public var oldestWaitingWrite: Duration? { nil }

    /// A store without a pool reports none.
    public var poolStatus: PoolStatus? { nil }

    /// Creates the schema or upgrades it to this server's version.
    public func prepare() async throws { _ = try await prepare(migrate: true) }

    /// A store that reports nothing ignores an observer.
    public func observe(_ observer: any StoreObserver) {}

    /// A log kept in one table has nothing to ready.
    public func prepareDecisionLog(now: Timestamp) async throws -> [String] { [] }

    /// A log kept in one table is purged by ``purgeDecisions(before:limit:)`` alone.
    public func dropDecisions(before cutoff: Timestamp) async throws -> [DroppedDecisions] { [] }

    /// `updateSession(_:now:log:_:)` without a decision record.
    public func updateSession<R: Sendable>(
        _ key: SessionKey, now: Timestamp, _ update: @escaping @Sendable (StoredSession?) throws -> (SessionState, R)
    ) async throws -> (StoredSession, R) {
        try await updateSession(key, now: now, log: nil, update)
    }
}
