import Foundation
import Hummingbird
import SessionPolicy
import SessionPolicyDelivery

/// The decision log, read: a session's history for its user (or the back end), and a user's
/// decisions across policies and devices for the back end (docs/decision-log.md).
extension Server {
    /// `GET /v1/policies/{policy}/sessions/{user}/{device}/history`: the session's decisions,
    /// newest first, a page at a time (`limit`, `before`); the user's own token or a service token.
    func sessionHistory(_ request: Request, _ context: ServerRequestContext) async throws -> DecisionHistory {
        let (key, _, _) = try await sessionKey(request, context)
        let (limit, before) = try Self.page(request)
        let query = DecisionQuery(user: key.user, policy: key.policy, device: key.device, before: before, limit: limit)
        let records = try await stored("decisions") { try await store.decisions(query) }
        return DecisionHistory(records, limit: limit, user: key.user, policy: key.policy, device: key.device)
    }

    /// `GET /v1/users/{user}/decisions`: a user's decisions under every policy and on every
    /// device (`policy`, `device` narrow it), newest first; a service token only.
    func userDecisions(_ request: Request, _ context: ServerRequestContext) async throws -> DecisionHistory {
        let user = context.parameters.get("user") ?? ""
        guard StoredName.isStorable(user) else { throw APIError.badRequest([.error(.invalidValue, StoredName.message("user"), at: nil)]) }
        guard case .service = try await caller(request, context) else {
            throw APIError(
                .forbidden, .forbidden, "a user's decisions across devices are for the back end's service token",
                help: "a user reads one session's history at `/v1/policies/{policy}/sessions/{user}/{device}/history`")
        }
        let (limit, before) = try Self.page(request)
        let policy = request.uri.queryParameters["policy"].map(String.init)
        let device = request.uri.queryParameters["device"].map(String.init)
        let query = DecisionQuery(user: user, policy: policy, device: device, before: before, limit: limit)
        let records = try await stored("decisions") { try await store.decisions(query) }
        return DecisionHistory(records, limit: limit, user: user, policy: policy, device: device)
    }

    /// `limit` (1 to 500, default 50) and `before` (a record id) of a history request, or a 400.
    static func page(_ request: Request) throws(APIError) -> (limit: Int, before: Int64?) {
        var limit = 50
        if let text = request.uri.queryParameters["limit"] {
            guard let n = Int(String(text)), (1...500).contains(n) else {
                throw APIError.badRequest([
                    .error(.invalidValue, "`limit` is `\(text)`, not a number from 1 to 500", at: nil, help: "for example `?limit=50`")
                ])
            }
            limit = n
        }
        var before: Int64?
        if let text = request.uri.queryParameters["before"] {
            guard let n = Int64(String(text)), n > 0 else {
                throw APIError.badRequest([
                    .error(
                        .invalidValue, "`before` is `\(text)`, not a record id", at: nil,
                        help: "give the `next` of the previous page")
                ])
            }
            before = n
        }
        return (limit, before)
    }
}

/// A page of the decision log, newest first: each item a `DecisionRecord`.
struct DecisionHistory: ResponseEncodable {
    var user: String
    var policy: String?
    var device: String?
    var decisions: [DecisionRecord]
    /// The `before` of the next page, or null on the last.
    var next: Int64?

    init(_ records: [DecisionRecord], limit: Int, user: String, policy: String?, device: String?) {
        self.user = user
        self.policy = policy
        self.device = device
        decisions = records
        next = records.count == limit ? records.last?.id : nil
    }

    enum CodingKeys: String, CodingKey { case user, policy, device, decisions, next }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(user, forKey: .user)
        try c.encode(policy, forKey: .policy)
        try c.encode(device, forKey: .device)
        try c.encode(decisions, forKey: .decisions)
        try c.encode(next, forKey: .next)
    }
}
