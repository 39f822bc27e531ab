public import SessionPolicy

/// One stateful decision of the server, as its decision log keeps it (docs/decision-log.md):
/// written in the same transaction as the session state it produced, so neither is stored
/// without the other.
///
/// The one type of a decision record wherever it is stored or sent: the server's stores, the
/// items of its history routes (`GET /v1/users/{user}/decisions`, `docs/openapi.yaml`), the
/// lines `policyctl-sessions --decisions-of` writes and `policyctl history` reads. Its JSON has
/// the keys `id`, `policy`, `digest`, `user`, `device`, `revision`, `event`, `network`, `time`,
/// `received_at`, `decision`, `reason`, `notices`, `transition` and `state`, `network` and
/// `decision` written as `null` when absent; `amr`, the authentication methods of the ID token
/// that proved an app's own `idp_login_succeeded`, only when there was one; `actor` (who asked)
/// and `request_id` (the request that made it), only on records that know them (records written
/// before version 0.2.0 do not).
public struct DecisionRecord: Sendable, Equatable, Codable {
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
    /// The event's time, as the client dated it (`time`).
    public var eventTime: Timestamp
    /// When the server received it, by its own clock (`received_at`).
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
    /// The ID token's `amr` (authentication methods, OpenID Connect Core §2) when the app
    /// proved its own IdP login with one; nil otherwise.
    public var amr: [String]?
    /// Who made the request that changed the session: a user token's user or the back end's
    /// service token.
    public var actor: DecisionActor?
    /// The request's id (`X-Request-Id`, taken from the request or made by the server).
    public var requestID: String?

    /// A record with every field given (as read back from a store).
    public init(
        id: Int64, policy: String, digest: String, user: String, device: String, revision: Int64, eventTime: Timestamp,
        serverTime: Timestamp, event: String, network: String?, decision: String?, reason: String, notices: [String],
        transition: Int, state: String, amr: [String]? = nil, actor: DecisionActor? = nil, requestID: String? = nil
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
        self.amr = amr
        self.actor = actor
        self.requestID = requestID
    }

    /// The JSON keys.
    enum CodingKeys: String, CodingKey {
        case id, policy, digest, user, device, revision, event, network, decision, reason, notices, transition, state, amr, actor
        case eventTime = "time"
        case serverTime = "received_at"
        case requestID = "request_id"
    }

    /// Writes the record, `network` and `decision` as `null` when absent.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(policy, forKey: .policy)
        try c.encode(digest, forKey: .digest)
        try c.encode(user, forKey: .user)
        try c.encode(device, forKey: .device)
        try c.encode(revision, forKey: .revision)
        try c.encode(event, forKey: .event)
        try c.encode(network, forKey: .network)
        try c.encode(eventTime, forKey: .eventTime)
        try c.encode(serverTime, forKey: .serverTime)
        try c.encode(decision, forKey: .decision)
        try c.encode(reason, forKey: .reason)
        try c.encode(notices, forKey: .notices)
        try c.encode(transition, forKey: .transition)
        try c.encode(state, forKey: .state)
        try c.encodeIfPresent(amr, forKey: .amr)
        try c.encodeIfPresent(actor, forKey: .actor)
        try c.encodeIfPresent(requestID, forKey: .requestID)
    }
}

/// Who asked for a stateful change (`{"kind": "user", "id": "alice"}`): `user`, a user token's
/// user (its user claim), or `service`, the back end's service token, named by its client id
/// (`azp`, `client_id`, `cid` or `appid`) or else its `sub`.
public struct DecisionActor: Sendable, Equatable, Hashable, Codable {
    /// `user` or `service`.
    public var kind: String
    /// The user id, or the service's client id.
    public var id: String

    /// The actor `id` of `kind`.
    public init(kind: String, id: String) {
        self.kind = kind
        self.id = id
    }

    /// `kind:id`, as the stores keep it and the access log writes it.
    public var text: String { kind + ":" + id }

    /// The actor `text` spells (`kind:id`; the id may hold colons); nil for anything else.
    public init?(text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        self.init(kind: String(text[..<colon]), id: String(text[text.index(after: colon)...]))
    }
}

/// One stored session as the server exports it (`policyctl-sessions`, a JSON line per session)
/// and `policyctl diff --storage` reads it: `{"device", "revision", "state", "updated_at",
/// "user"}`, `state` as the store keeps it.
public struct ExportedSession: Sendable, Equatable, Codable {
    /// The user id.
    public var user: String
    /// The device id.
    public var device: String
    /// How many updates the session has had.
    public var revision: Int64
    /// The session state.
    public var state: SessionState
    /// When it was last written, by the server's clock (`updated_at`).
    public var updatedAt: Timestamp

    /// A stored session of `user` on `device`.
    public init(user: String, device: String, revision: Int64, state: SessionState, updatedAt: Timestamp) {
        self.user = user
        self.device = device
        self.revision = revision
        self.state = state
        self.updatedAt = updatedAt
    }

    /// The JSON keys.
    enum CodingKeys: String, CodingKey {
        case user, device, revision, state
        case updatedAt = "updated_at"
    }
}
