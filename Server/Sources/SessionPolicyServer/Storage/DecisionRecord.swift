public import SessionPolicy

/// One stateful decision of the server, as the decision log keeps it (README, "Decision log"):
/// written in the same transaction as the session state it produced, so neither is stored
/// without the other.
public struct DecisionRecord: Sendable, Equatable {
    /// The log's own number, increasing with every record (0 before it is stored).
    public var id: Int64
    /// The policy's name.
    public var policy: String
    /// The digest of the machine that decided (`sha256:...`).
    public var digest: String
    /// The user id.
    public var user: String
    /// The device id.
    public var device: String
    /// The session's revision after the decision.
    public var revision: Int64
    /// The event's time, as the client dated it.
    public var eventTime: Timestamp
    /// When the server received it (its own clock).
    public var serverTime: Timestamp
    /// The event's type (`launch`, `tokens_revoked`, ...).
    public var event: String
    /// The event's network, when it carried one (`online`, `offline`).
    public var network: String?
    /// The decision, nil for an event that decides nothing (`background`).
    public var decision: String?
    /// The reason.
    public var reason: String
    /// The notices, in the engine's order.
    public var notices: [String]
    /// The transition that decided (its id in the machine; -1 when none was reached).
    public var transition: Int
    /// The state after the decision.
    public var state: String

    /// A record of `outcome` of `event` on the session `key`.
    public init(
        id: Int64 = 0, key: SessionKey, digest: String, revision: Int64 = 0, event: Event, serverTime: Timestamp, outcome: Outcome
    ) {
        self.id = id
        self.policy = key.policy
        self.digest = digest
        self.user = key.user
        self.device = key.device
        self.revision = revision
        self.eventTime = event.time
        self.serverTime = serverTime
        self.event = event.kind.rawValue
        self.network = event.network?.rawValue
        self.decision = outcome.decision?.rawValue
        self.reason = outcome.reason.rawValue
        self.notices = outcome.notices.names
        self.transition = outcome.transition
        self.state = outcome.state.state.rawValue
    }

    /// A record as read back from a store.
    public init(
        id: Int64, policy: String, digest: String, user: String, device: String, revision: Int64, eventTime: Timestamp,
        serverTime: Timestamp, event: String, network: String?, decision: String?, reason: String, notices: [String],
        transition: Int, state: String
    ) {
        self.id = id
        self.policy = policy
        self.digest = digest
        self.user = user
        self.device = device
        self.revision = revision
        self.eventTime = eventTime
        self.serverTime = serverTime
        self.event = event
        self.network = network
        self.decision = decision
        self.reason = reason
        self.notices = notices
        self.transition = transition
        self.state = state
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
