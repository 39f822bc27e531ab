public import SessionPolicy
public import SessionPolicyDelivery

extension DecisionRecord {
    /// A record of `outcome` of `event` on the session `key` (`id` 0 until it is stored).
    public init(
        id: Int64 = 0, key: SessionKey, digest: String, revision: Int64 = 0, event: Event, serverTime: Timestamp, outcome: Outcome
    ) {
        self.init(
            id: id, policy: key.policy, digest: digest, user: key.user, device: key.device, revision: revision,
            eventTime: event.time, serverTime: serverTime, event: event.kind.rawValue, network: event.network?.rawValue,
            decision: outcome.decision?.rawValue, reason: outcome.reason.rawValue, notices: outcome.notices.names,
            transition: outcome.transition, state: outcome.state.state.rawValue)
    }
}

/// Which decisions to read from the log, newest first.
public struct DecisionQuery: Sendable, Equatable {
    /// The user whose decisions to read.
    public var user: String
    /// Only this policy's, when set.
    public var policy: String?
    /// Only this device's, when set.
    public var device: String?
    /// Only records older than this id (the previous page's last), when set.
    public var before: Int64?
    /// At most this many.
    public var limit: Int

    public init(user: String, policy: String? = nil, device: String? = nil, before: Int64? = nil, limit: Int = 50) {
        self.user = user
        self.policy = policy
        self.device = device
        self.before = before
        self.limit = limit
    }
}

/// A part of the decision log dropped whole by the retention purge (a PostgreSQL partition).
public struct DroppedDecisions: Sendable, Equatable {
    /// The part's name (`decisions_20260801`).
    public var part: String
    /// Its records as the database last estimated them (`pg_class.reltuples`).
    public var estimatedRecords: Int64
    /// How long dropping it took, its lock's wait included.
    public var duration: Duration
}
