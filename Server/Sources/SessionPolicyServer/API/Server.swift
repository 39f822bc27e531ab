import Foundation
import Hummingbird
import Logging
import NIOCore
import SessionPolicy
import SessionPolicyDelivery

/// The server's shared parts, which the route handlers use: policies, store, token verifier,
/// rate limits, metrics, configuration and the server clock (injectable for tests).
struct Server: Sendable {
    let configuration: ServerConfiguration
    let policies: PolicyRegistry
    let store: any SessionStore
    let verifier: TokenVerifier
    /// Verifies service tokens: the back end's credential, with keys of its own.
    let serviceVerifier: TokenVerifier
    let metrics: ServerMetrics
    let detectPerClient: RateLimiter
    let detectPerDevice: RateLimiter
    /// Each policy's signed machine, when the server has a signing key.
    let machines: SignedMachines?
    /// Where every decision is also written as a JSON line (`--decision-log`), if anywhere.
    let decisionStream: DecisionStream?
    let clock: @Sendable () -> Timestamp

    /// Every route: method, path (`{name}` for parameters) and handler. docs/openapi.yaml
    /// documents exactly these (a test checks).
    static let routes: [Route] = [
        Route(.get, "/healthz") { $0.health },
        Route(.get, "/metrics") { $0.metricsText },
        Route(.get, "/v1/policies") { $0.listPolicies },
        Route(.get, "/v1/policies/{policy}/machine") { $0.signedMachine },
        Route(.post, "/v1/policies/{policy}/evaluate") { $0.evaluate },
        Route(.post, "/v1/policies/{policy}/evaluate/batch") { $0.evaluateBatch },
        Route(.post, "/v1/policies/{policy}/sessions/{user}/{device}/events") { $0.sessionEvent },
        Route(.get, "/v1/policies/{policy}/sessions/{user}/{device}") { $0.getSession },
        Route(.get, "/v1/policies/{policy}/sessions/{user}") { $0.listSessions },
        Route(.post, "/v1/policies/{policy}/sessions/{user}/revoke") { $0.revokeSessions },
        Route(.delete, "/v1/policies/{policy}/sessions/{user}/{device}") { $0.deleteSession },
        Route(.get, "/v1/policies/{policy}/sessions/{user}/{device}/history") { $0.sessionHistory },
        Route(.get, "/v1/users/{user}/decisions") { $0.userDecisions },
        Route(.post, "/v1/users/{user}/revoke") { $0.revokeUser },
        Route(.post, "/v1/device-sessions") { $0.createDeviceSession },
        Route(.post, "/v1/device-sessions/detect") { $0.detectDeviceSession },
        Route(.post, "/v1/device-sessions/exchange") { $0.exchangeTicket },
        Route(.delete, "/v1/device-sessions/{pool}/{device}/{app}") { $0.destroyDeviceSessions },
        Route(.delete, "/v1/device-sessions/{pool}/{device}") { $0.destroyDeviceSessions },
    ]

    /// The routes a separate admin listener serves instead (`admin.port`).
    static let adminPaths: Set<String> = ["/healthz", "/metrics"]

    /// One route of the API.
    struct Route: Sendable {
        typealias Handler = @Sendable (Request, ServerRequestContext) async throws -> Response
        var method: HTTPRequest.Method
        var path: String
        var handler: @Sendable (Server) -> Handler

        /// A route whose handler takes the request (its body read with
        /// `request.decode(as:context:)`) and returns a value the context's encoder writes.
        init<Value: ResponseGenerator>(
            _ method: HTTPRequest.Method, _ path: String,
            _ handler: @escaping @Sendable (Server) -> @Sendable (Request, ServerRequestContext) async throws -> Value
        ) {
            self.method = method
            self.path = path
            self.handler = { server in
                let handle = handler(server)
                return { request, context in try await handle(request, context).response(from: request, context: context) }
            }
        }
    }

    /// The digest to record a decision of `policy` with, or nil when the decision log is off.
    func decisionLogDigest(_ policy: String) -> String? {
        guard configuration.decisionLogRetention.seconds > 0 else { return nil }
        return policies.entry(named: policy)?.digest
    }

    /// The policy named in the path, or a 404 naming the ones that serve.
    func policy(_ context: ServerRequestContext) throws(APIError) -> CompiledPolicy {
        let name = context.parameters.get("policy") ?? ""
        guard let policy = policies.policy(named: name) else {
            throw APIError.unknownPolicy(name, known: Array(policies.snapshot.policies.keys))
        }
        return policy
    }

    /// Runs a store operation, turning any failure of it into a 503 with a diagnostic, counted
    /// in `sessionpolicy_store_errors_total` and logged at `error`. Only a request's own error
    /// (an ``APIError``) passes through: whatever else a driver or pool throws is the store's,
    /// never a 500 with an empty body.
    func stored<T>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        defer { metrics.stored(operation, ContinuousClock.now - start) }
        do {
            return try await RequestTracing.span("store.\(operation)", kind: .client) { span in
                guard let span else { return try await body() }
                span.attributes["db.system.name"] = store.kind == "postgres" ? "postgresql" : store.kind
                span.attributes["db.operation.name"] = operation
                let note = GroupCommitNote()
                let value = try await GroupCommitNote.$current.withValue(note) { try await body() }
                if note.groupSize > 0 { span.attributes["sessionpolicy.store.group_commit.size"] = note.groupSize }
                return value
            }
        } catch let error as APIError {
            throw error
        } catch {
            throw storeFailed(operation, error)
        }
    }

    /// Counts and logs a failed store operation; the 503 to answer.
    func storeFailed(_ operation: String, _ error: any Error) -> APIError {
        metrics.storeError(operation)
        Logger(label: "sessionpolicy.store").error(
            "store operation failed", metadata: ["operation": "\(operation)", "error": "\(error)"])
        return APIError.store(error as? StoreError ?? StoreError("\(error)"))
    }

    /// Who sent a request: a user with a verified user token, or the back end with a verified
    /// service token.
    enum Caller {
        case user(TokenVerifier.Claims)
        case service(TokenVerifier.Claims)

        /// Who it is, as decision records keep it: the user's id, or the service's client id
        /// (its `sub` when the token names no client).
        var actor: DecisionActor {
            switch self {
            case let .user(claims): DecisionActor(kind: "user", id: claims.sub.value)
            case let .service(claims): DecisionActor(kind: "service", id: claims.client ?? claims.sub.value)
            }
        }
    }

    /// The caller of a route that takes either a user token or a service token, or a 401; noted
    /// for the access log.
    func caller(_ request: Request, _ context: ServerRequestContext) async throws(APIError) -> Caller {
        let caller = try await RequestTracing.span("token.verify") { span throws(APIError) in
            let caller = try await self.caller(request)
            span?.attributes["sessionpolicy.caller"] = caller.actor.kind
            if RequestTracing.userIDs, case let .user(claims) = caller { span?.attributes["enduser.id"] = claims.sub.value }
            return caller
        }
        context.actorSeen?.note(caller.actor)
        return caller
    }

    /// The caller of a route that takes either a user token or a service token, or a 401.
    private func caller(_ request: Request) async throws(APIError) -> Caller {
        let token = request.headers[.authorization].flatMap(Self.bearerToken)
        // Tokens seen before: two lookups, no signature check (the user's token, on every event).
        if let token {
            if let claims = verifier.cached(token) { return classify(claims) }
            if let claims = serviceVerifier.cached(token) { return .service(claims) }
        }
        if serviceVerifier.hasKeys, let token {
            do {
                return .service(try await serviceVerifier.verify(token))
            } catch let refusal where refusal.signatureMatched {
                // A service token with another problem (expired, wrong audience): say that.
                throw Self.unauthorized(refusal, service: true)
            } catch {}
        }
        return classify(try await user(request))
    }

    /// A verified token of the issuer is the back end's when its client id is one of
    /// `service.clients` or it carries a scope or role of `service.scopes`; else the user's.
    func classify(_ claims: TokenVerifier.Claims) -> Caller {
        if let client = claims.client, configuration.serviceClients.contains(client) { return .service(claims) }
        if !configuration.serviceScopes.isEmpty, claims.scopes.contains(where: configuration.serviceScopes.contains) {
            return .service(claims)
        }
        return .user(claims)
    }

    /// The 401 for a token refused for `refusal`, logged with the reason.
    static func unauthorized(_ refusal: TokenVerifier.Refusal, service: Bool = false) -> APIError {
        let what = service ? "service token" : "token"
        Logger(label: "sessionpolicy.auth").info("token refused", metadata: ["reason": "\(refusal)", "kind": "\(what)"])
        return APIError(
            .unauthorized, .unauthorized, "the \(what) is not valid: \(refusal)",
            help: "send an unexpired token with the user claim and `exp`, signed with a key the server is configured with "
                + "or the issuer publishes (and the configured `iss` and `aud`)",
            headers: [.wwwAuthenticate: wwwAuthenticate(refusal)])
    }

    /// The `WWW-Authenticate` challenge of a refused token (RFC 6750 §3): `invalid_token` and
    /// the reason, in the characters an `error_description` may hold (%x20-21 / %x23-5B / %x5D-7E).
    static func wwwAuthenticate(_ refusal: TokenVerifier.Refusal) -> String {
        let description = String(
            String.UnicodeScalarView(
                refusal.description.unicodeScalars.map { c in
                    c == "\"" ? "'" : (c.value >= 0x20 && c.value <= 0x7E && c != "\\") ? c : "?"
                }))
        return "Bearer error=\"invalid_token\", error_description=\"\(description)\""
    }

    /// The verified claims of the request's `Authorization: Bearer` user token, or a 401; noted
    /// for the access log.
    func user(_ request: Request, _ context: ServerRequestContext) async throws(APIError) -> TokenVerifier.Claims {
        let claims = try await user(request)
        context.actorSeen?.note(DecisionActor(kind: "user", id: claims.sub.value))
        return claims
    }

    /// The verified claims of the request's `Authorization: Bearer` user token, or a 401.
    private func user(_ request: Request) async throws(APIError) -> TokenVerifier.Claims {
        guard let header = request.headers[.authorization], let token = Self.bearerToken(header) else {
            throw APIError(
                .unauthorized, .unauthorized, "this request needs the user's token", help: "send `Authorization: Bearer <JWT>`",
                headers: [.wwwAuthenticate: "Bearer"])
        }
        do {
            return try await verifier.verify(token)
        } catch {
            throw Self.unauthorized(error)
        }
    }

    /// The token of an `Authorization: Bearer <token>` header (the scheme in any case, spaces
    /// or tabs around the token), or nil for another scheme or an empty token. Byte-wise: this
    /// runs for every stateful request, and Foundation's trimming was 4% of the server's time.
    static func bearerToken(_ header: String) -> String? {
        let bytes = header.utf8
        let scheme = "bearer".utf8
        guard bytes.count > scheme.count,
            zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 })
        else { return nil }
        let isBlank = { (b: UInt8) in b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
        let rest = bytes.dropFirst(scheme.count)
        guard let first = rest.first, isBlank(first) else { return nil }
        guard let start = rest.firstIndex(where: { !isBlank($0) }), let last = rest.lastIndex(where: { !isBlank($0) })
        else { return nil }
        return String(Substring(header.utf8[start...last]))
    }
}
