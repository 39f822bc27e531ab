public import SessionPolicyDelivery

/// Where a stateful decision came from, as its decision record keeps it: who asked, in which
/// request, and the ID token's authentication methods when one proved the login.
public struct DecisionOrigin: Sendable, Equatable {
    /// The caller: a user token's user, or the back end's service token.
    public var actor: DecisionActor?
    /// The request's id (`X-Request-Id`).
    public var requestID: String?
    /// The ID token's `amr`, when the app proved its own IdP login with one.
    public var amr: [String]?

    /// An origin; every part optional (a record then says nothing of it).
    public init(actor: DecisionActor? = nil, requestID: String? = nil, amr: [String]? = nil) {
        self.actor = actor
        self.requestID = requestID
        self.amr = amr
    }

    /// `record` with this origin's parts.
    func stamped(_ record: DecisionRecord) -> DecisionRecord {
        var record = record
        record.actor = actor
        record.requestID = requestID
        record.amr = amr
        return record
    }
}
