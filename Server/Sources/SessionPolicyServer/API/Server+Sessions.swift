import Foundation
import Hummingbird
import NIOCore
import SessionPolicy

/// Stateful evaluation: the server keeps each (policy, user, device) session's state. Every
/// route needs the user's token, and a token opens only its own user's sessions.
extension Server {
    /// The session the path names, after checking that the token's user owns it.
    func sessionKey(_ request: Request, _ context: ServerRequestContext) async throws -> (SessionKey, CompiledPolicy) {
        let policy = try policy(context)
        let user = context.parameters.get("user") ?? ""
        let device = context.parameters.get("device") ?? ""
        let claims = try await self.user(request)
        guard claims.sub.value == user else {
            throw APIError(
                .forbidden, .forbidden, "the token's user may not read or change another user's session",
                help: "use the session path of the token's own user")
        }
        return (SessionKey(policy: policy.name, user: user, device: device), policy)
    }

    /// `POST /v1/policies/{policy}/sessions/{user}/{device}/events`: `{event}` -> the decision,
    /// with the new state stored atomically (a session's events are serialized; none is lost).
    func sessionEvent(_ request: Request, _ context: ServerRequestContext) async throws -> SessionEventResponse {
        let (key, policy) = try await sessionKey(request, context)
        var event = try await request.decode(as: EventRequest.self, context: context).event
        // The path names the session: an event about another user or device does not belong here.
        if let other = event.user, other != key.user {
            throw APIError.badRequest([
                .error(
                    .invalidValue, "`event.user` is `\(other)` but this is the session of `\(key.user)`", at: nil,
                    help: "send the event to the session of `\(other)`, or leave `user` out")
            ])
        }
        if let other = event.device.id, other != key.device {
            throw APIError.badRequest([
                .error(
                    .invalidValue, "`event.device.id` is `\(other)` but this is the session on `\(key.device)`", at: nil,
                    help: "leave `device.id` out; the path names the device")
            ])
        }
        event.user = key.user
        event.device.id = key.device
        let input = event
        let applied = try await stored("update_session") {
            try await SessionService(store: store, clock: clock).apply(input, to: key, policy: policy)
        }
        metrics.decided(policy: policy.name, applied.outcome)
        return SessionEventResponse(
            deviceSessionsEnded: applied.deviceSessionsEnded, outcome: applied.outcome, policy: policy.name,
            revision: applied.revision)
    }

    /// `GET /v1/policies/{policy}/sessions/{user}/{device}`: the stored state.
    func getSession(_ request: Request, _ context: ServerRequestContext) async throws -> SessionReport {
        let (key, _) = try await sessionKey(request, context)
        guard let s = try await stored("get_session", { try await store.session(key) }) else {
            throw APIError.notFound("no stored session for this user and device", help: "its first event creates it")
        }
        return SessionReport(
            policy: key.policy, user: key.user, device: key.device, revision: s.revision, updatedAt: s.updatedAt,
            state: s.state)
    }

    /// `DELETE /v1/policies/{policy}/sessions/{user}/{device}`: forgets the stored state.
    func deleteSession(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let (key, _) = try await sessionKey(request, context)
        guard try await stored("delete_session", { try await store.deleteSession(key) }) else {
            throw APIError.notFound("no stored session for this user and device")
        }
        return Response(status: .noContent)
    }
}

/// What reading a stored session returns.
struct SessionReport: ResponseEncodable {
    var policy: String
    var user: String
    var device: String
    var revision: Int64
    var updatedAt: Timestamp
    var state: SessionState

    enum CodingKeys: String, CodingKey {
        case policy, user, device, revision, state
        case updatedAt = "updated_at"
    }
}
