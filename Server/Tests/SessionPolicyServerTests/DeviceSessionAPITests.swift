import Foundation
import HTTPTypes
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// Cross-app device sessions end to end over HTTP (behaviours A1-A3, docs/behaviours.md), against every store.
@Suite("Device session API")
struct DeviceSessionAPITests {
    static let crm = "com.example.crm", field = "com.example.field-service"

    static func detect(
        _ http: HTTP, device: String, app: String = field, policy: String = "cross-app-device-sso"
    ) async throws
        -> HTTP.Reply
    {
        try await http.post(
            "/v1/device-sessions/detect", "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"\(app)\",\"policy\":\"\(policy)\"}")
    }

    static func exchange(_ http: HTTP, _ ticket: String, secret: String = TestServer.poolSecret) async throws -> HTTP.Reply {
        try await http.post(
            "/v1/device-sessions/exchange", "{\"pool\":\"vendor\",\"ticket\":\"\(ticket)\"}", headers: [.poolSecret: secret])
    }

    @Test(
        "create, detect (display data and a ticket, never tokens), exchange once, destroy one app's or all (A2, A3)",
        arguments: TestStorage.available)
    func flow(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("alice"), device = unique("phone")
            let token = try await Tokens.hs256(user, nickname: "Alice")
            #expect(try await Self.detect(http, device: device).json?["found"] as? Bool == false)
            let created = try await http.post(
                "/v1/device-sessions", "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"\(Self.crm)\"}", token: token)
            #expect(created.status == 201, "\(created.text)")
            #expect(created.json?["nickname"] as? String == "Alice")

            let detected = try await Self.detect(http, device: device)
            #expect(detected.status == 200)
            let json = try #require(detected.json)
            #expect(json["found"] as? Bool == true)
            #expect(json["nickname"] as? String == "Alice")
            #expect(json["avatar"] as? String == "https://example.com/Alice.png")
            #expect((json["adoption"] as? [String: Any])?["decision"] as? String == "require_biometric")
            #expect(json["user"] == nil, "detection shows display data only")
            #expect(!detected.text.contains(token), "never a token")
            let ticket = try #require(json["ticket"] as? String)
            #expect(ticket.count >= 40)

            #expect(try await Self.exchange(http, ticket, secret: "wrong-secret-0123456789").status == 401)
            let exchanged = try await Self.exchange(http, ticket)
            #expect(exchanged.status == 200, "\(exchanged.text)")
            #expect(exchanged.json?["user"] as? String == user)
            #expect(exchanged.json?["app"] as? String == Self.crm)
            #expect(exchanged.json?["detected_by"] as? String == Self.field)
            let again = try await Self.exchange(http, ticket)
            #expect(again.status == 404)
            #expect(again.code == "invalid-ticket")

            // Two apps' sessions: ending one leaves the other; destroy_all ends both.
            let other = try await http.post(
                "/v1/device-sessions", "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"\(Self.field)\"}", token: token)
            #expect(other.status == 201)
            let mallory = try await Tokens.hs256("mallory")
            #expect(try await http.send(.delete, "/v1/device-sessions/vendor/\(device)", token: mallory).json?["ended"] as? Int == 0)
            let one = try await http.send(.delete, "/v1/device-sessions/vendor/\(device)/\(Self.crm)", token: token)
            #expect(one.json?["ended"] as? Int == 1)
            #expect(try await Self.detect(http, device: device, app: Self.crm).json?["found"] as? Bool == true)
            let all = try await http.send(.delete, "/v1/device-sessions/vendor/\(device)", token: token)
            #expect(all.json?["ended"] as? Int == 1)
            #expect(try await Self.detect(http, device: device).json?["found"] as? Bool == false)
        }
    }

    @Test("the policy decides adoption: a session of an app it does not list is not found, exactly as no session (A1, A2)")
    func policyRefuses() async throws {
        try await TestServer.run(.sqlite) { http in
            let device = unique("phone")
            let empty = try await Self.detect(http, device: unique("empty"))
            let token = try await Tokens.hs256("alice", nickname: "Alice")
            _ = try await http.post(
                "/v1/device-sessions", "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"com.other.app\"}", token: token)
            let detected = try await Self.detect(http, device: device)
            #expect(detected.status == 200)
            #expect(detected.text == empty.text, "a refusal tells nothing a missing session does not")
            #expect(detected.json?["found"] as? Bool == false)
            let metrics = try await http.get("/metrics")
            #expect(metrics.text.contains("cross_app_not_allowed"), "the refusal is counted, not shown")
        }
    }

    @Test("a policy with `cross_app.reveal_refusal: true` answers a refusal with `found: true` and its reason")
    func policyRevealsRefusal() async throws {
        let dir = try Fixtures.temporaryDirectory("reveal")
        defer { try? FileManager.default.removeItem(at: dir) }
        let shipped = try String(contentsOfFile: Fixtures.path("policies/cross-app-device-sso.yaml"), encoding: .utf8)
        let revealing = shipped.replacingOccurrences(
            of: "cross_app:\n", with: "cross_app:\n  reveal_refusal: true\n")
        #expect(revealing != shipped)
        try revealing.write(to: dir.appendingPathComponent("cross-app-device-sso.yaml"), atomically: true, encoding: .utf8)
        try await TestServer.run(.sqlite, policies: dir.path) { http in
            let device = unique("phone")
            let token = try await Tokens.hs256("alice", nickname: "Alice")
            _ = try await http.post(
                "/v1/device-sessions", "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"com.other.app\"}", token: token)
            let detected = try await Self.detect(http, device: device)
            #expect(detected.status == 200)
            let json = try #require(detected.json)
            #expect(json["found"] as? Bool == true)
            let adoption = try #require(json["adoption"] as? [String: Any])
            #expect(adoption["decision"] as? String == "idp_login")
            #expect(adoption["reason"] as? String == "cross_app_not_allowed")
            #expect(json["ticket"] == nil && json["nickname"] == nil, "a refusal reveals no ticket and no display data")
            #expect(try await Self.detect(http, device: unique("empty")).json?["found"] as? Bool == false)
        }
    }

    @Test("the server, not the caller, decides which policy judges a detection")
    func appBinding() async throws {
        try await TestServer.run(.sqlite) { http in
            let device = unique("phone")
            let unbound = try await Self.detect(http, device: device, app: "com.attacker.app")
            #expect(unbound.status == 403)
            #expect(unbound.code == "unbound-app")
            // Naming a permissive policy for a bound app is refused, not obeyed.
            let steered = try await Self.detect(http, device: device, policy: "spendiq")
            #expect(steered.status == 400)
            #expect(steered.text.contains("bound to `cross-app-device-sso`"))
            let implicit = try await http.post(
                "/v1/device-sessions/detect", "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"\(Self.field)\"}")
            #expect(implicit.status == 200, "\(implicit.text)")
        }
    }

    @Test("logout through the stateful API ends the app's device session (A3)")
    func logoutDestroys() async throws {
        try await TestServer.run(.sqlite) { http in
            let user = unique("alice"), device = unique("phone")
            let token = try await Tokens.hs256(user)
            _ = try await http.post(
                "/v1/device-sessions", "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"\(Self.crm)\"}", token: token)
            let path = "/v1/policies/cross-app-device-sso/sessions/\(user)/\(device)/events"
            _ = try await http.post(
                path, #"{"event":{"type":"idp_login_succeeded","time":"2026-03-01T09:00:00Z","auth_mode":"none","network":"online"}}"#,
                token: try await Tokens.service())
            let logout = try await http.post(
                path, "{\"event\":{\"type\":\"logout\",\"time\":\"2026-03-01T10:00:00Z\",\"app_id\":\"\(Self.crm)\"}}", token: token)
            #expect(logout.decision == "wipe")
            #expect(logout.json?["device_sessions_ended"] as? Int == 1)
            #expect(try await Self.detect(http, device: device).json?["found"] as? Bool == false)
        }
    }

    @Test("detection is rate-limited per device id and per client")
    func rateLimits() async throws {
        try await TestServer.run(
            .sqlite,
            configure: {
                $0.detectPerDevice = .init(perMinute: 1, burst: 3)
                $0.detectPerClient = .init(perMinute: 1, burst: 6)
            }
        ) { http in
            let device = unique("phone")
            for _ in 0..<3 { #expect(try await Self.detect(http, device: device).status == 200) }
            let limited = try await Self.detect(http, device: device)
            #expect(limited.status == 429)
            #expect(limited.code == "rate-limited")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 > 0)
            // Enumerating other device ids runs into the per-client limit.
            var statuses: [Int] = []
            for _ in 0..<4 { statuses.append(try await Self.detect(http, device: unique("guess")).status) }
            #expect(statuses.contains(429))
            let metrics = try await http.get("/metrics")
            #expect(metrics.text.contains("sessionpolicy_rate_limited_total{limit=\"detect_per_device\"}"))
        }
    }

    @Test("an unknown pool is refused everywhere")
    func unknownPool() async throws {
        try await TestServer.run(.sqlite) { http in
            let token = try await Tokens.hs256("alice")
            let created = try await http.post("/v1/device-sessions", #"{"pool":"nope","device":"d","app":"a"}"#, token: token)
            #expect(created.status == 404)
            #expect(created.code == "unknown-pool")
            let exchanged = try await http.post(
                "/v1/device-sessions/exchange", #"{"pool":"nope","ticket":"x"}"#, headers: [.poolSecret: TestServer.poolSecret])
            #expect(exchanged.status == 401)
        }
    }
}

extension HTTPField.Name {
    static let poolSecret = HTTPField.Name("X-Pool-Secret")!
}
