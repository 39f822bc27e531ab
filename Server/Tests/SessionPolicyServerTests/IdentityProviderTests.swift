import Foundation
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The server beside an OpenID Connect provider (issue 34): keys by discovery, every algorithm,
/// the back end told by its client id, rotation, a key-id flood, an outage, HTTPS with a private
/// CA, and the claims and algorithm confusions refused. The provider is a real one built on
/// joserfc (`TestProvider`), not JWT bytes made by hand.
@Suite("Identity provider", .serialized)
struct IdentityProviderTests {
    static let audience = "sessionpolicy"
    static let backEnd = (client: "backend", secret: "backend-secret")

    /// Runs a server whose only token configuration is the provider's issuer, the audience and
    /// the back end's client id (the static keys of `TestServer` removed).
    static func run(
        _ provider: TestProvider, _ storage: TestStorage = .sqlite, configure: (inout ServerConfiguration) -> Void = { _ in },
        clock: @escaping @Sendable () -> Timestamp = { TestServer.now },
        _ body: @escaping @Sendable (HTTP) async throws -> Void
    ) async throws {
        try await TestServer.run(
            storage,
            configure: {
                $0.hs256Secret = nil
                $0.serviceHS256Secret = nil
                $0.tokenIssuer = provider.issuer
                $0.tokenAudience = audience
                $0.serviceClients = [backEnd.client]
                configure(&$0)
            }, clock: clock, body)
    }

    static func path(_ user: String) -> String { "/v1/policies/kobil-offline-token/sessions/\(user)/phone/events" }
    static let launch = SessionTrustTests.event(SessionTrustTests.sample(.launch))
    static let login = SessionTrustTests.event(SessionTrustTests.sample(.idpLoginSucceeded))

    @Test("every algorithm the provider signs with verifies end to end, from discovery alone")
    func everyAlgorithm() async throws {
        try await TestProvider.with { provider in
            try await Self.run(provider) { http in
                for alg in ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"] {
                    let user = unique("u")
                    let token = try await provider.mint(["alg": alg, "sub": user, "aud": Self.audience])
                    let reply = try await http.post(Self.path(user), Self.launch, token: token)
                    #expect(reply.status == 200, "\(alg): \(reply.text)")
                }
            }
            let stats = try await provider.stats()
            #expect(stats["discovery_fetches"] == 1 && stats["jwks_fetches"] == 1, "\(stats)")
        }
    }

    @Test("the back end's client-credentials token may report a login; a user's or another client's may not")
    func backEndByClientID() async throws {
        try await TestProvider.with { provider in
            try await provider.control(
                "/control/client", ["client_id": Self.backEnd.client, "client_secret": Self.backEnd.secret, "audience": Self.audience])
            try await provider.control(
                "/control/client", ["client_id": "other-app", "client_secret": "other-secret", "audience": Self.audience])
            try await Self.run(provider) { http in
                let user = unique("u")
                let service = try await provider.clientCredentials(client: Self.backEnd.client, secret: Self.backEnd.secret)
                #expect(try await http.post(Self.path(user), Self.login, token: service).status == 200)
                let userToken = try await provider.mint(["alg": "RS256", "sub": user, "aud": Self.audience, "azp": "mobile-app"])
                let refused = try await http.post(Self.path(user), Self.login, token: userToken)
                #expect(refused.status == 403 && refused.text.contains("service token"), "\(refused.text)")
                let other = try await provider.clientCredentials(client: "other-app", secret: "other-secret")
                // Another client's token is a user token at most: its subject is not this user.
                #expect(try await http.post(Self.path(user), Self.login, token: other).status == 403)
                let otherOwn = try await http.post(Self.path("service-account-other-app"), Self.login, token: other)
                #expect(otherOwn.status == 403, "\(otherOwn.text)")
                // Entra ID v1.0 names the client `appid`; Okta `cid`.
                for claim in ["appid", "cid", "client_id"] {
                    let token = try await provider.mint([
                        "alg": "RS256", "sub": "svc", "aud": Self.audience, "claims": [claim: Self.backEnd.client],
                    ])
                    #expect(try await http.post(Self.path(user), Self.login, token: token).status == 200, "\(claim)")
                }
            }
        }
    }

    @Test("refused: a future nbf or iat, an expired token, another issuer or audience, and every algorithm confusion")
    func refusals() async throws {
        try await TestProvider.with { provider in
            try await Self.run(provider) { http in
                let user = unique("u")
                let base: [String: any Sendable] = ["alg": "RS256", "sub": user, "aud": Self.audience]
                func with(_ extra: [String: any Sendable]) -> [String: any Sendable] { base.merging(extra) { $1 } }
                let header = #"{"alg":"none","typ":"JWT"}"#, payload = #"{"sub":"\#(user)","exp":9999999999,"aud":"sessionpolicy"}"#
                let none =
                    [header, payload].map { Data($0.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "") }
                    .joined(separator: ".") + "."
                let cases: [(String, String)] = [
                    (try await provider.mint(with(["nbf_in": 3600])), "not valid before"),
                    (try await provider.mint(with(["iat_in": 3600])), "issued in the future"),
                    (try await provider.mint(with(["exp_in": -120])), "has expired"),
                    (try await provider.mint(with(["exp_in": NSNull()])), "lacks a required claim"),
                    (try await provider.mint(with(["iss": "https://elsewhere.example"])), "its issuer (`iss`)"),
                    (try await provider.mint(with(["aud": "another-api"])), "audience (`aud`)"),
                    (
                        try await provider.mint(with(["alg": "HS256", "kid": "rsa-1", "hs256_secret": String(repeating: "k", count: 40)])),
                        "does not go with the RSA key"
                    ),
                    (
                        try await provider.mint(with(["alg": "HS256", "hs256_secret": String(repeating: "k", count: 40)])),
                        "no configured key takes its algorithm `HS256`"
                    ),
                    (try await provider.mint(with(["alg": "ES256", "kid": "rsa-1"])), "does not go with the RSA key"),
                    (try await provider.mint(with(["alg": "PS256", "kid": "ec-1"])), "does not go with the EC key"),
                    (none, "`none` is not one the server takes"),
                    (try await provider.mint(with(["claims": ["token_use": "id"]])), "an ID token is not a bearer token"),
                ]
                for (token, reason) in cases {
                    let reply = try await http.post(Self.path(user), Self.launch, token: token)
                    #expect(reply.status == 401, "\(reason): \(reply.text)")
                    let challenge = reply.headers[.wwwAuthenticate] ?? ""
                    #expect(challenge.hasPrefix("Bearer error=\"invalid_token\", error_description=\""), "\(challenge)")
                    #expect(challenge.contains(reason) && reply.text.contains(reason), "\(reason): \(challenge)")
                }
                // Within the leeway (60 s by default), clocks that differ a little are accepted.
                let early = try await provider.mint(with(["nbf_in": 30, "iat_in": 30]))
                #expect(try await http.post(Self.path(user), Self.launch, token: early).status == 200)
            }
        }
    }

    @Test("a rotation under load loses no request: tokens of a key not yet fetched wait for the one fetch")
    func rotationUnderLoad() async throws {
        try await TestProvider.with { provider in
            try await Self.run(provider, configure: { $0.keySet.refetchInterval = .seconds(30) }) { http in
                var pairs: [(String, String)] = []
                for _ in 0..<40 {
                    let user = unique("u")
                    pairs.append((user, try await provider.mint(["alg": "RS256", "sub": user, "aud": Self.audience])))
                }
                // The provider rotates; the server has not fetched the new key when these arrive, all at once.
                try await provider.control("/control/rotate", ["type": "RSA", "drop_old": false])
                for _ in 0..<40 {
                    let user = unique("u")
                    pairs.append((user, try await provider.mint(["alg": "RS256", "sub": user, "aud": Self.audience])))
                }
                let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                    for (user, token) in pairs {
                        group.addTask {
                            var out: [Int] = []
                            for _ in 0..<5 { out.append(try await http.post(Self.path(user), Self.launch, token: token).status) }
                            return out
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0 += $1 }
                }
                #expect(statuses.count == 400)
                #expect(statuses.allSatisfy { $0 == 200 }, "\(Dictionary(grouping: statuses) { $0 }.mapValues(\.count))")
            }
            let stats = try await provider.stats()
            #expect(stats["jwks_fetches"] == 2, "one at start, one for the new key id: \(stats)")
        }
    }

    @Test("10,000 tokens with invented key ids fetch the key set no more often than the interval allows")
    func keyIDFlood() async throws {
        try await TestProvider.with { provider in
            try await Self.run(provider, configure: { $0.keySet.refetchInterval = .seconds(2) }) { http in
                let batch = try await provider.control(
                    "/control/mint-batch", ["alg": "RS256", "sub": "flood", "aud": Self.audience, "count": 10_000, "random_kid": true])
                let tokens = try #require(batch["tokens"] as? [String])
                #expect(tokens.count == 10_000)
                let start = ContinuousClock.now
                let refused = try await withThrowingTaskGroup(of: Int.self) { group in
                    for slice in 0..<50 {
                        group.addTask {
                            var n = 0
                            for token in stride(from: slice, to: tokens.count, by: 50).map({ tokens[$0] }) {
                                let reply = try await http.post(Self.path("flood"), Self.launch, token: token)
                                if reply.status == 401, reply.text.contains("key id (`kid`)") { n += 1 }
                            }
                            return n
                        }
                    }
                    return try await group.reduce(0, +)
                }
                let seconds = Double((ContinuousClock.now - start).components.seconds) + 1
                #expect(refused == 10_000)
                let fetches = try await provider.stats()["jwks_fetches"] ?? 0
                let allowed = 1 + Int((seconds / 2).rounded(.up)) + 1
                print("key-id flood: 10000 tokens in \(seconds) s, \(fetches) JWKS fetches (at most \(allowed) allowed)")
                #expect(fetches <= allowed, "\(fetches) fetches in \(seconds) s")
            }
        }
    }

    @Test("the provider down: the cached keys still verify and /healthz says degraded; past the bound, 401; back, ok")
    func outage() async throws {
        try await TestProvider.with { provider in
            try await Self.run(
                provider,
                configure: {
                    $0.keySet.cacheMin = .seconds(1)
                    $0.keySet.cacheMax = .seconds(1)
                    $0.keySet.refetchInterval = .seconds(1)
                    $0.keySet.maxStale = .seconds(4)
                    $0.keySet.fetchTimeout = .seconds(1)
                }
            ) { http in
                func fresh() async throws -> Int {
                    let user = unique("u")
                    let token = try await provider.mint(["alg": "ES256", "sub": user, "aud": Self.audience])
                    return try await http.post(Self.path(user), Self.launch, token: token).status
                }
                func keys() async throws -> [String: Any] {
                    let health = try await http.get("/healthz")
                    #expect(health.status == 200)
                    let sets = health.json?["token_keys"] as? [[String: Any]] ?? []
                    #expect(sets.count == 1)
                    return (sets.first ?? [:]).merging(["status": health.json?["status"] ?? ""]) { $1 }
                }
                #expect(try await fresh() == 200)
                #expect(try await keys()["ok"] as? Bool == true)
                try await provider.control("/control/outage", ["down": true, "mode": "503"])
                try await Task.sleep(for: .seconds(2))
                let degraded = try await keys()
                #expect(degraded["status"] as? String == "degraded" && degraded["ok"] as? Bool == false, "\(degraded)")
                #expect(degraded["usable"] as? Bool == true)
                #expect(try await fresh() == 200, "the last good keys still verify")
                try await Task.sleep(for: .seconds(3))
                #expect(try await keys()["usable"] as? Bool == false)
                #expect(try await fresh() == 401, "past token.jwks.max.stale")
                try await provider.control("/control/outage", ["down": false])
                try await Task.sleep(for: .seconds(2))
                #expect(try await keys()["ok"] as? Bool == true)
                #expect(try await fresh() == 200)
            }
        }
    }

    @Test("HTTPS with a private CA: trusted with token.ca.file, refused without it")
    func privateCA() async throws {
        try await TestProvider.with(tls: true) { provider in
            let ca = try #require(provider.tlsDirectory).appendingPathComponent("ca.pem").path
            let user = unique("u")
            let token = try await provider.mint(["alg": "EdDSA", "sub": user, "aud": Self.audience])
            try await Self.run(provider, configure: { $0.keySet.caFile = ca }) { http in
                let reply = try await http.post(Self.path(user), Self.launch, token: token)
                #expect(reply.status == 200, "\(reply.text)")
            }
            try await Self.run(provider) { http in
                let reply = try await http.post(Self.path(user), Self.launch, token: token)
                #expect(reply.status == 401 && reply.text.contains("could not be fetched"), "\(reply.text)")
            }
        }
    }

    @Test("a JWKS file for an air-gapped deployment, and the user named by another claim")
    func fileAndUserClaim() async throws {
        try await TestProvider.with { provider in
            let dir = try Fixtures.temporaryDirectory("jwks")
            defer { try? FileManager.default.removeItem(at: dir) }
            let file = dir.appendingPathComponent("jwks.json")
            try await provider.jwks().write(to: file, atomically: true, encoding: .utf8)
            try await Self.run(
                provider,
                configure: {
                    $0.keySet.jwksURL = "file:" + file.path
                    $0.tokenUserClaim = "oid"
                }
            ) { http in
                let user = unique("u")
                let token = try await provider.mint(
                    ["alg": "PS256", "sub": "pairwise-subject", "aud": Self.audience, "claims": ["oid": user]])
                #expect(try await http.post(Self.path(user), Self.launch, token: token).status == 200)
                #expect(try await http.post(Self.path("pairwise-subject"), Self.launch, token: token).status == 403)
            }
            #expect(try await provider.stats()["discovery_fetches"] == 0)
        }
    }

    /// The server's clock for the ID token tests: now, as the provider's `auth_time` is.
    static let realClock: @Sendable () -> Timestamp = { Timestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000)) }

    @Test(
        "a user token reports its own login with a fresh ID token of the same user; another user's, another app's, an old one, a used one are refused",
        arguments: TestStorage.available)
    func idTokenProvesLogin(_ storage: TestStorage) async throws {
        try await TestProvider.with { provider in
            try await Self.run(provider, storage, configure: { $0.idTokenAudiences = ["mobile-app"] }, clock: Self.realClock) { http in
                let user = unique("u")
                let now = Self.realClock()
                let access = try await provider.mint(["alg": "RS256", "sub": user, "aud": Self.audience])
                func idToken(_ extra: [String: any Sendable] = [:]) async throws -> String {
                    let base: [String: any Sendable] = [
                        "alg": "ES256", "sub": user, "aud": "mobile-app", "auth_time_in": -5, "nonce": "n-1", "amr": ["pwd", "mfa"],
                    ]
                    return try await provider.mint(base.merging(extra) { $1 })
                }
                func login(_ token: String?, nonce: String? = nil, kind: EventKind = .idpLoginSucceeded) -> String {
                    var fields = ["\"event\":\(SessionTrustTests.sample(kind, time: now.description))"]
                    if let token { fields.append("\"id_token\":\"\(token)\"") }
                    if let nonce { fields.append("\"nonce\":\"\(nonce)\"") }
                    return "{" + fields.joined(separator: ",") + "}"
                }
                let fresh = try await idToken()
                let accepted = try await http.post(Self.path(user), login(fresh, nonce: "n-1"), token: access)
                #expect(accepted.status == 200, "\(accepted.text)")
                #expect(accepted.decision == "allow", "\(accepted.text)")
                let history = try await http.get(Self.path(user).replacingOccurrences(of: "/events", with: "/history"), token: access)
                let records = history.json?["decisions"] as? [[String: Any]] ?? []
                #expect(records.first?["amr"] as? [String] == ["pwd", "mfa"], "\(history.text)")
                let cases: [(String, String)] = [
                    (login(fresh, nonce: "n-1"), "it was used before"),
                    (login(try await idToken(["sub": "somebody-else"])), "not of `\(user)`"),
                    (login(try await idToken(["aud": "another-app"])), "not one of the apps' client ids"),
                    (login(try await idToken(["auth_time_in": -3600])), "more than 10m before"),
                    (login(try await idToken(), nonce: "n-2"), "`nonce` is not the request's"),
                    (login(try await idToken(["exp_in": -300])), "has expired"),
                    (login(try await idToken(), kind: .tokenRefreshed), "not a `token_refreshed`"),
                    (login(nil), "a user token may not report `idp_login_succeeded`"),
                ]
                for (body, reason) in cases {
                    let reply = try await http.post(Self.path(user), body, token: access)
                    #expect(reply.status == 403 && reply.text.contains(reason), "\(reason): \(reply.text)")
                }
            }
        }
    }

    @Test("opaque tokens are introspected with the server's client credentials (RFC 7662), each answer remembered")
    func introspection() async throws {
        try await TestProvider.with { provider in
            try await provider.control(
                "/control/client", ["client_id": "sessionpolicy-server", "client_secret": "server-secret", "audience": Self.audience])
            try await Self.run(
                provider,
                configure: {
                    $0.introspectionClientID = "sessionpolicy-server"
                    $0.introspectionClientSecret = "server-secret"
                }
            ) { http in
                let user = unique("u")
                let opaque = try await provider.mint(["sub": user, "aud": Self.audience, "opaque": true])
                #expect(!opaque.contains("."), "an opaque token: \(opaque)")
                for _ in 0..<3 {
                    let reply = try await http.post(Self.path(user), Self.launch, token: opaque)
                    #expect(reply.status == 200, "\(reply.text)")
                }
                #expect(try await provider.stats()["introspections"] == 1, "the answer is remembered")
                let expired = try await provider.mint(["sub": user, "aud": Self.audience, "opaque": true, "exp_in": -30])
                let inactive = try await http.post(Self.path(user), Self.launch, token: expired)
                #expect(inactive.status == 401 && inactive.text.contains("not active"), "\(inactive.text)")
                let unknown = try await http.post(Self.path(user), Self.launch, token: "no-such-token")
                #expect(unknown.status == 401, "\(unknown.text)")
                let otherAudience = try await provider.mint(["sub": user, "aud": "another-api", "opaque": true])
                let refused = try await http.post(Self.path(user), Self.launch, token: otherAudience)
                #expect(refused.status == 401 && refused.text.contains("audience"), "\(refused.text)")
            }
            try await Self.run(
                provider,
                configure: {
                    $0.introspectionClientID = "sessionpolicy-server"
                    $0.introspectionClientSecret = "wrong-secret"
                }
            ) { http in
                let user = unique("u")
                let opaque = try await provider.mint(["sub": user, "aud": Self.audience, "opaque": true])
                let reply = try await http.post(Self.path(user), Self.launch, token: opaque)
                #expect(reply.status == 401 && reply.text.contains("answered 401"), "\(reply.text)")
            }
        }
    }

    @Test("two issuers at once (production and staging), each with its own audience and keys")
    func twoIssuers() async throws {
        try await TestProvider.with { production in
            try await TestProvider.with { staging in
                try await Self.run(production, configure: { $0.extraIssuers = [.init(issuer: staging.issuer, audience: "staging-api")] }) {
                    http in
                    let user = unique("u")
                    let prod = try await production.mint(["alg": "RS256", "sub": user, "aud": Self.audience])
                    let stage = try await staging.mint(["alg": "ES256", "sub": user, "aud": "staging-api"])
                    #expect(try await http.post(Self.path(user), Self.launch, token: prod).status == 200)
                    #expect(try await http.post(Self.path(user), Self.launch, token: stage).status == 200)
                    // Each issuer's audience is its own; each issuer's keys are its own.
                    let crossed = try await staging.mint(["alg": "ES256", "sub": user, "aud": Self.audience])
                    let refused = try await http.post(Self.path(user), Self.launch, token: crossed)
                    #expect(refused.status == 401 && refused.text.contains("staging-api"), "\(refused.text)")
                    let forged = try await production.mint(["alg": "RS256", "sub": user, "aud": "staging-api", "iss": staging.issuer])
                    let wrongKeys = try await http.post(Self.path(user), Self.launch, token: forged)
                    #expect(wrongKeys.status == 401, "production's key does not sign for staging: \(wrongKeys.text)")
                    let health = try await http.get("/healthz")
                    #expect((health.json?["token_keys"] as? [[String: Any]])?.count == 2, "\(health.text)")
                }
            }
        }
    }

    @Test("an issuer's keys over plain HTTP are refused unless the issuer is on loopback")
    func plainHTTP() async throws {
        for (issuer, refused) in [("http://id.example", true), ("http://127.0.0.1:9", false), ("https://id.example", false)] {
            do {
                _ = try await ServerConfiguration.load(environment: ["SESSIONPOLICY_TOKEN_ISSUER": issuer])
                #expect(!refused, "\(issuer)")
            } catch {
                #expect(refused, "\(issuer): \(error)")
                #expect("\(error)".contains("not loopback"), "\(error)")
            }
        }
    }
}
