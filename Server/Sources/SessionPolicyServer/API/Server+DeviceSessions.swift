import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SessionPolicy

/// Cross-app device sessions (seeds 002/004: create, track, exchange, destroy). An app that
/// signed in creates one for (pool, device, app); another app of the vendor on that device
/// detects it without a login and gets display data and a one-time ticket, never tokens, if the
/// policy lets it adopt the session; its back end exchanges the ticket, with the pool secret,
/// for the user's data.
extension Server {
    /// `POST /v1/device-sessions` with the user's token: `{pool, device, app, nickname?, avatar?}`.
    func createDeviceSession(_ request: Request, _ context: ServerRequestContext) async throws -> EditedResponse<DeviceSessionReport> {
        let claims = try await user(request, context)
        let fields = try await request.decode(as: NamesRequest<CreationKeys>.self, context: context)
        let pool = try knownPool(fields.required("pool"))
        let now = clock()
        let limit = now.adding(TimeSpan(seconds: configuration.deviceSessionLifetime.components.seconds))
        let tokenExpiry = Timestamp(millisecondsSinceEpoch: Int64(claims.exp.value.timeIntervalSince1970 * 1000))
        let session = DeviceSession(
            pool: pool, device: fields.required("device"), app: fields.required("app"), user: claims.sub.value,
            nickname: fields["nickname"] ?? claims.nickname ?? claims.name, avatar: fields["avatar"] ?? claims.picture,
            profile: claims.profile, createdAt: now, expiresAt: min(limit, tokenExpiry))
        try await stored("put_device_session") { try await store.putDeviceSession(session) }
        return EditedResponse(status: .created, response: DeviceSessionReport(session))
    }

    /// `POST /v1/device-sessions/detect`, no login: `{pool, device, app, policy?, integrity?}`.
    /// Rate-limited per client address and per device id (device ids can be guessed). The
    /// policy that decides is the one the configuration binds to the app (`apps`).
    func detectDeviceSession(_ request: Request, _ context: ServerRequestContext) async throws -> DetectionReport {
        let fields = try await request.decode(as: NamesRequest<DetectionKeys>.self, context: context)
        let pool = try knownPool(fields.required("pool"))
        let device = fields.required("device"), app = fields.required("app")
        let now = clock()
        let seconds = Double(now.millisecondsSinceEpoch) / 1000
        let client = context.remoteAddress?.ipAddress ?? "unknown"
        for (limiter, key, name) in [(detectPerClient, client, "client"), (detectPerDevice, "\(pool)\u{0}\(device)", "device")] {
            if let wait = limiter.spend(key, now: seconds) {
                metrics.rateLimited("detect_per_\(name)")
                throw APIError(
                    .tooManyRequests, .rateLimited, "too many detections for this \(name); try again later",
                    help: "wait \(Int(wait.rounded(.up))) s", headers: [.retryAfter: String(Int(wait.rounded(.up)))])
            }
        }
        // The server decides which policy judges an app's detections, never the caller.
        guard let bound = configuration.apps[app] else {
            throw APIError(
                .forbidden, .unboundApp, "the app `\(app)` is not bound to a policy on this server",
                help: "bind it with `--app \(app):POLICY` (`SESSIONPOLICY_APPS`)")
        }
        if let named = fields["policy"], named != bound {
            throw APIError.badRequest([
                .error(
                    .invalidValue, "`policy` is `\(named)`, but the app `\(app)` is bound to `\(bound)`", at: nil,
                    help: "leave `policy` out: the server decides by the app")
            ])
        }
        guard let policy = policies.policy(named: bound) else {
            throw APIError.unknownPolicy(bound, known: Array(policies.snapshot.policies.keys))
        }
        var integrity: Integrity?
        if let text = fields["integrity"] {
            guard let value = Integrity(rawValue: text) else {
                throw APIError.badRequest([
                    .error(.invalidValue, "`integrity` must be `ok` or `compromised`, found `\(text)`", at: nil)
                ])
            }
            integrity = value
        }
        let sessions = try await stored("device_sessions") { try await store.deviceSessions(pool: pool, device: device, now: now) }
        // Another app's session, the newest first; the asking app's own only if there is no other.
        guard let found = sessions.reversed().first(where: { $0.app != app }) ?? sessions.last else {
            return DetectionReport(found: false)
        }
        var event = Event(.deviceSessionDetected, at: now)
        event.appID = found.app
        event.user = found.user
        event.device = Event.DeviceFacts(id: device, integrity: integrity)
        let outcome = policy.evaluate(SessionState(device: device), event)
        metrics.decided(policy: policy.name, outcome)
        let adoption = DetectionReport.Adoption(outcome)
        guard outcome.decision == .allow || outcome.decision == .requireBiometric else {
            // The policy refuses: unless it says otherwise (`cross_app.reveal_refusal`), the answer
            // is exactly "not found", so a refusal does not tell anyone that someone is signed in
            // on this device. The app signs in at its IdP.
            Logger(label: "sessionpolicy.detect").debug(
                "detection refused by the policy", metadata: ["policy": "\(policy.name)", "reason": "\(outcome.reason)"])
            guard policy.revealsDetectionRefusal else { return DetectionReport(found: false) }
            return DetectionReport(found: true, adoption: adoption)
        }
        let ticket = Secrets.newTicket()
        let expires = now.adding(TimeSpan(seconds: configuration.ticketLifetime.components.seconds))
        let grant = TicketGrant(pool: pool, device: device, detectedBy: app, session: found, expiresAt: expires)
        try await stored("put_ticket") { try await store.putTicket(hash: Secrets.hash(ticket: ticket), grant: grant) }
        return DetectionReport(
            found: true, nickname: found.nickname, avatar: found.avatar, ticket: ticket, ticketExpiresAt: expires,
            adoption: adoption)
    }

    /// `POST /v1/device-sessions/exchange` from a back end, with `X-Pool-Secret`: `{pool, ticket}`
    /// -> the user's data. A ticket works once.
    func exchangeTicket(_ request: Request, _ context: ServerRequestContext) async throws -> ExchangeReport {
        let fields = try await request.decode(as: NamesRequest<ExchangeKeys>.self, context: context)
        let pool = fields.required("pool")
        // Compare against a stand-in for unknown pools too, so timing tells nothing.
        let secret = configuration.pools[pool] ?? "\u{0}unknown-pool\u{0}"
        let given = request.headers[.poolSecret] ?? ""
        guard Secrets.equal(given, secret), configuration.pools[pool] != nil else {
            throw APIError(
                .unauthorized, .unauthorized, "the pool secret is missing or wrong",
                help: "send the pool's secret in `X-Pool-Secret`, from a back end only")
        }
        let hash = Secrets.hash(ticket: fields.required("ticket"))
        guard let grant = try await stored("take_ticket", { try await store.takeTicket(hash: hash, pool: pool, now: clock()) })
        else {
            throw APIError(
                .notFound, .invalidTicket, "the ticket is unknown, already used or expired",
                help: "detect the session again for a new ticket")
        }
        return ExchangeReport(grant)
    }

    /// `DELETE /v1/device-sessions/{pool}/{device}/{app}` with the user's token: ends that app's
    /// device session; `DELETE /v1/device-sessions/{pool}/{device}` ends every app's
    /// (`destroy_all`). Only the token's user's sessions end.
    func destroyDeviceSessions(_ request: Request, _ context: ServerRequestContext) async throws -> DestroyReport {
        let claims = try await user(request, context)
        let pool = try knownPool(context.parameters.get("pool") ?? "")
        let device = context.parameters.get("device") ?? ""
        let app = context.parameters.get("app")
        let n = try await stored("delete_device_sessions") {
            try await store.deleteDeviceSessions(pool: pool, device: device, user: claims.sub.value, app: app)
        }
        return DestroyReport(ended: n)
    }

    private func knownPool(_ pool: String) throws(APIError) -> String {
        guard configuration.pools[pool] != nil else {
            throw APIError(
                .notFound, .unknownPool, "no user pool `\(pool)`",
                help: "the server is configured with `--pool ID:SECRET` for each pool it serves")
        }
        return pool
    }
}

extension HTTPField.Name {
    /// The header a back end sends a pool's secret in.
    static let poolSecret = HTTPField.Name("X-Pool-Secret")!
}

/// The body of `POST /v1/device-sessions`.
enum CreationKeys: NameKeys {
    static let required = ["pool", "device", "app"]
    static let optional = ["nickname", "avatar"]
}

/// The body of `POST /v1/device-sessions/detect`.
enum DetectionKeys: NameKeys {
    static let required = ["pool", "device", "app"]
    static let optional = ["policy", "integrity"]
}

/// The body of `POST /v1/device-sessions/exchange`.
enum ExchangeKeys: NameKeys {
    static let required = ["pool", "ticket"]
    static let optional: [String] = []
}

/// A device session as the API shows it to its own user.
struct DeviceSessionReport: ResponseEncodable {
    var session: DeviceSession
    init(_ session: DeviceSession) { self.session = session }

    enum CodingKeys: String, CodingKey {
        case pool, device, app, user, nickname, avatar
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(session.pool, forKey: .pool)
        try c.encode(session.device, forKey: .device)
        try c.encode(session.app, forKey: .app)
        try c.encode(session.user, forKey: .user)
        try c.encodeIfPresent(session.nickname, forKey: .nickname)
        try c.encodeIfPresent(session.avatar, forKey: .avatar)
        try c.encode(session.createdAt, forKey: .createdAt)
        try c.encode(session.expiresAt, forKey: .expiresAt)
    }
}

/// What detection returns: display data and a ticket, never the user id or a token.
struct DetectionReport: ResponseEncodable {
    struct Adoption: Encodable {
        var decision: Decision?
        var reason: Reason
        var message: String
        init(_ o: Outcome) {
            decision = o.decision
            reason = o.reason
            message = o.message
        }
    }
    var found: Bool
    var nickname: String?
    var avatar: String?
    var ticket: String?
    var ticketExpiresAt: Timestamp?
    var adoption: Adoption?

    enum CodingKeys: String, CodingKey {
        case found, nickname, avatar, ticket, adoption
        case ticketExpiresAt = "ticket_expires_at"
    }
}

/// How many device sessions a destroy ended.
struct DestroyReport: ResponseEncodable {
    var ended: Int
}

/// What a ticket is exchanged for.
struct ExchangeReport: ResponseEncodable {
    var user: String
    var profile: [String: String]
    var app: String
    var device: String
    var detectedBy: String

    init(_ g: TicketGrant) {
        user = g.session.user
        profile = g.session.profile
        app = g.session.app
        device = g.device
        detectedBy = g.detectedBy
    }

    enum CodingKeys: String, CodingKey {
        case user, profile, app, device
        case detectedBy = "detected_by"
    }
}
