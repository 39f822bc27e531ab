import Foundation
import Hummingbird
import Logging
import NIOCore
import SessionPolicy
import SessionPolicyDelivery

/// Stateful evaluation: the server keeps each (policy, user, device) session's state. Every
/// route takes the user's token, which opens only its own user's sessions and may report only
/// what a device knows (`EventTrust`), or a service token (the back end's), which opens every
/// user's sessions and may report every event.
extension Server {
    /// The policy and user the path names, after checking that the caller may act for that user.
    func sessionOwner(_ request: Request, _ context: ServerRequestContext) async throws -> (CompiledPolicy, String, Caller) {
        let policy = try policy(context)
        let user = context.parameters.get("user") ?? ""
        for (key, value) in [("user", user), ("device", context.parameters.get("device") ?? "")] where !StoredName.isStorable(value) {
            throw APIError.badRequest([.error(.invalidValue, StoredName.message(key), at: nil)])
        }
        let caller = try await self.caller(request, context)
        if case let .user(claims) = caller, claims.sub.value != user {
            throw APIError(
                .forbidden, .forbidden, "the token's user may not read or change another user's session",
                help: "use the session path of the token's own user")
        }
        return (policy, user, caller)
    }

    /// The session the path names, after checking that the caller may act for its user.
    func sessionKey(_ request: Request, _ context: ServerRequestContext) async throws -> (SessionKey, CompiledPolicy, Caller) {
        let (policy, user, caller) = try await sessionOwner(request, context)
        let device = context.parameters.get("device") ?? ""
        return (SessionKey(policy: policy.name, user: user, device: device), policy, caller)
    }

    /// `POST /v1/policies/{policy}/sessions/{user}/{device}/events`: `{event}` -> the decision,
    /// with the new state stored atomically (a session's events are serialized; none is lost).
    func sessionEvent(_ request: Request, _ context: ServerRequestContext) async throws -> SessionEventResponse {
        let (key, policy, caller) = try await sessionKey(request, context)
        let body = try await request.decode(as: EventRequest.self, context: context)
        var event = body.event
        let trust = EventTrust(event.kind)
        var origin = DecisionOrigin(actor: caller.actor, requestID: context.requestID)
        if let idToken = body.idToken {
            // The app's own login, proved by its ID token: the login's time is the token's.
            let login = try await provenLogin(idToken, nonce: body.nonce, event: event, user: key.user)
            event.time = login.time
            origin.amr = login.amr
        } else if case .user = caller, !trust.userTokenMay {
            metrics.refused("untrusted_event")
            throw APIError(
                .forbidden, .forbidden,
                "a user token may not report `\(event.kind.rawValue)`: it establishes or extends a session (\(trust.rawValue))",
                help:
                    "the back end that saw it happen posts it with a service token (`service.hs256.secret`, `service.es256.public.key` or `service.clients`), or the app sends its ID token beside an `idp_login_succeeded` (`id_token`, with `id.token.audience` set); see the threat model, docs/threat-model.md"
            )
        }
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
        let received = clock()
        try checkEventTime(event.time, received: received)
        event.user = key.user
        event.device.id = key.device
        let input = event
        let applied = try await stored("update_session") {
            try await SessionService(store: store, clock: { received }).apply(
                input, to: key, policy: policy, digest: decisionLogDigest(policy.name), origin: origin)
        }
        metrics.decided(policy: policy.name, applied.outcome)
        streamDecision(key, input, received: received, applied, origin: origin)
        return SessionEventResponse(
            deviceSessionsEnded: applied.deviceSessionsEnded, outcome: applied.outcome, policy: policy.name,
            receivedAt: received, revision: applied.revision)
    }

    /// Writes the decision to the decision stream (`--decision-log`), when there is one.
    func streamDecision(
        _ key: SessionKey, _ event: Event, received: Timestamp, _ applied: SessionService.Applied, origin: DecisionOrigin
    ) {
        guard let decisionStream else { return }
        let digest = policies.entry(named: key.policy)?.digest ?? "unknown"
        let record = DecisionRecord(
            key: key, digest: digest, revision: applied.revision, event: event, serverTime: received, outcome: applied.outcome)
        decisionStream.write(origin.stamped(record), event: event)
    }

    /// Refuses an event dated beyond the allowed clock skew in the server's future, or delivered
    /// later than the allowed delay (a 400; nothing is stored).
    func checkEventTime(_ time: Timestamp, received: Timestamp) throws(APIError) {
        let skew = configuration.clockSkew
        if time > received.adding(skew) {
            metrics.refused("event_in_future")
            throw APIError(
                .badRequest, .eventInFuture,
                "the event is dated \(time), more than \(skew) after the server's clock (\(received))",
                help: "send the time the event happened on a correctly set clock; the allowed skew is `clock.skew`")
        }
        let delay = configuration.maxEventDelay
        if time < received.adding(TimeSpan(seconds: -delay.seconds)) {
            metrics.refused("event_too_late")
            throw APIError(
                .badRequest, .eventTooLate,
                "the event is dated \(time), more than \(delay) before the server received it (\(received))",
                help: "events must reach the server within `clock.max.delay`; the device signs in online again")
        }
    }

    /// The session `GET` and `DELETE` name. `/sessions/{user}/revoke` is the revoke route's
    /// path (a fixed segment wins over `{device}`, as in docs/openapi.yaml), so a device named
    /// `revoke` is not read or deleted here: a 405 that says to `POST`.
    func storedSessionKey(_ request: Request, _ context: ServerRequestContext) async throws -> (SessionKey, Caller) {
        if context.parameters.get("device") == "revoke" { throw APIError.methodNotAllowed(request, allowed: [.post]) }
        let (key, _, caller) = try await sessionKey(request, context)
        return (key, caller)
    }

    /// `GET /v1/policies/{policy}/sessions/{user}/{device}`: the stored state.
    func getSession(_ request: Request, _ context: ServerRequestContext) async throws -> SessionReport {
        let (key, _) = try await storedSessionKey(request, context)
        guard let s = try await stored("get_session", { try await store.session(key) }) else {
            throw APIError.notFound("no stored session for this user and device", help: "its first event creates it")
        }
        return SessionReport(
            policy: key.policy, user: key.user, device: key.device, revision: s.revision, updatedAt: s.updatedAt,
            state: s.state)
    }

    /// `DELETE /v1/policies/{policy}/sessions/{user}/{device}`: forgets the stored state. The
    /// decision log records decisions, not this: it is logged (`session deleted`) with its actor.
    func deleteSession(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let (key, caller) = try await storedSessionKey(request, context)
        guard try await stored("delete_session", { try await store.deleteSession(key) }) else {
            throw APIError.notFound("no stored session for this user and device")
        }
        let hash = configuration.decisionLogHashUsers
        Logger(label: "sessionpolicy.sessions").info(
            "session deleted",
            metadata: [
                "policy": "\(key.policy)", "user": "\(hash ? DecisionStream.hash(key.user) : key.user)", "device": "\(key.device)",
                "actor": "\((hash ? DecisionStream.hashed(caller.actor) : caller.actor).text)",
            ])
        return Response(status: .noContent)
    }

    /// `GET /v1/policies/{policy}/sessions/{user}`: the user's stored sessions on every device.
    func listSessions(_ request: Request, _ context: ServerRequestContext) async throws -> SessionList {
        let (policy, user, _) = try await sessionOwner(request, context)
        let sessions = try await stored("list_sessions") { try await store.sessions(policy: policy.name, user: user) }
        return SessionList(
            policy: policy.name, user: user,
            sessions: sessions.map {
                SessionList.Item(device: $0.device, revision: $0.session.revision, updatedAt: $0.session.updatedAt, state: $0.session.state)
            })
    }

    /// `POST /v1/policies/{policy}/sessions/{user}/revoke`: "sign out everywhere". Applies
    /// `tokens_revoked`, dated by the server's clock, to every stored session of the user, so each
    /// gets the policy's reaction (`signals.tokens_revoked`) and its device sessions end as a wipe
    /// ends them.
    func revokeSessions(_ request: Request, _ context: ServerRequestContext) async throws -> RevocationReport {
        let (policy, user, caller) = try await sessionOwner(request, context)
        let sessions = try await stored("list_sessions") { try await store.sessions(policy: policy.name, user: user) }
        let now = clock()
        let origin = DecisionOrigin(actor: caller.actor, requestID: context.requestID)
        var ended: [RevocationReport.Item] = []
        for (device, _) in sessions {
            let applied = try await revoke(SessionKey(policy: policy.name, user: user, device: device), policy, at: now, origin: origin)
            ended.append(
                .init(
                    device: device, outcome: applied.outcome, revision: applied.revision,
                    deviceSessionsEnded: applied.deviceSessionsEnded))
        }
        return RevocationReport(policy: policy.name, user: user, sessions: ended)
    }

    /// `POST /v1/users/{user}/revoke`: signs the user out of every app and device, the back end's
    /// "sign out everywhere" (a service token only). `tokens_revoked`, dated by the server's
    /// clock, is applied to every stored session of the user under every policy that serves; a
    /// session stored under a policy that no longer serves cannot be decided, and is listed apart.
    func revokeUser(_ request: Request, _ context: ServerRequestContext) async throws -> UserRevocationReport {
        let user = context.parameters.get("user") ?? ""
        guard StoredName.isStorable(user) else { throw APIError.badRequest([.error(.invalidValue, StoredName.message("user"), at: nil)]) }
        let caller = try await self.caller(request, context)
        guard case .service = caller else {
            throw APIError(
                .forbidden, .forbidden, "signing a user out of every policy is for the back end's service token",
                help: "a user signs out of one policy's sessions at `/v1/policies/{policy}/sessions/{user}/revoke`")
        }
        let sessions = try await stored("list_sessions") { try await store.sessions(user: user) }
        let now = clock()
        let origin = DecisionOrigin(actor: caller.actor, requestID: context.requestID)
        var report = UserRevocationReport(user: user, sessions: [], notServed: [])
        for (key, _) in sessions {
            guard let policy = policies.policy(named: key.policy) else {
                report.notServed.append(.init(policy: key.policy, device: key.device))
                continue
            }
            let applied = try await revoke(key, policy, at: now, origin: origin)
            report.sessions.append(
                .init(
                    policy: key.policy, device: key.device, outcome: applied.outcome, revision: applied.revision,
                    deviceSessionsEnded: applied.deviceSessionsEnded))
        }
        return report
    }

    /// Applies `tokens_revoked` at `now` to the stored session `key`: stored, counted, streamed.
    private func revoke(
        _ key: SessionKey, _ policy: CompiledPolicy, at now: Timestamp, origin: DecisionOrigin
    ) async throws -> SessionService.Applied {
        let event = Event(.tokensRevoked, at: now, user: key.user, device: .init(id: key.device))
        let applied = try await stored("update_session") {
            try await SessionService(store: store, clock: { now }).apply(
                event, to: key, policy: policy, digest: decisionLogDigest(policy.name), origin: origin)
        }
        metrics.decided(policy: policy.name, applied.outcome)
        streamDecision(key, event, received: now, applied, origin: origin)
        return applied
    }
}

/// What signing a user out of every policy did.
struct UserRevocationReport: ResponseEncodable {
    struct Item: Encodable {
        var policy: String
        var device: String
        var outcome: Outcome
        var revision: Int64
        var deviceSessionsEnded: Int
        enum CodingKeys: String, CodingKey {
            case policy, device, outcome, revision
            case deviceSessionsEnded = "device_sessions_ended"
        }
    }
    /// A stored session of a policy that does not serve: left as it is.
    struct Unserved: Encodable {
        var policy: String
        var device: String
    }
    var user: String
    var sessions: [Item]
    var notServed: [Unserved]
    enum CodingKeys: String, CodingKey {
        case user, sessions
        case notServed = "not_served"
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

/// A user's stored sessions under one policy.
struct SessionList: ResponseEncodable {
    struct Item: Encodable {
        var device: String
        var revision: Int64
        var updatedAt: Timestamp
        var state: SessionState
        enum CodingKeys: String, CodingKey {
            case device, revision, state
            case updatedAt = "updated_at"
        }
    }
    var policy: String
    var user: String
    var sessions: [Item]
}

/// What "sign out everywhere" did to each session.
struct RevocationReport: ResponseEncodable {
    struct Item: Encodable {
        var device: String
        var outcome: Outcome
        var revision: Int64
        var deviceSessionsEnded: Int
        enum CodingKeys: String, CodingKey {
            case device, outcome, revision
            case deviceSessionsEnded = "device_sessions_ended"
        }
    }
    var policy: String
    var user: String
    var sessions: [Item]
}
