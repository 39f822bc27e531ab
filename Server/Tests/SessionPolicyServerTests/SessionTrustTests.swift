import Foundation
import JWTKit
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The server trusts no client (issue 12): who may report which event, event times bounded by
/// the server's clock, and the back end's own door (list, sign out everywhere).
@Suite("Session trust")
struct SessionTrustTests {
    static func event(_ json: String) -> String { "{\"event\":\(json)}" }

    /// A valid event of every kind, at `time`, with the facts its kind needs.
    static func sample(_ kind: EventKind, time: String = "2026-03-01T09:00:00Z") -> String {
        var fields = ["\"type\":\"\(kind.rawValue)\"", "\"time\":\"\(time)\""]
        let values = ["network": "online", "auth_mode": "biometric", "app_id": "com.example.other", "cause": "network"]
        for key in ReaderProbes.requiredKeys(of: kind) where key != "user" {  // the path's user
            fields.append("\"\(key)\":\"\(values[key]!)\"")
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The kinds that establish or extend a session, written out here rather than read from the
    /// server's table, so a change of the table must change this test too.
    static let sessionGrants: Set<EventKind> = [.idpLoginSucceeded, .tokenRefreshed, .deviceSessionDetected]

    @Test("a user token may report device events and restrictions, never an event that establishes or extends a session")
    func userTokenEvents() async throws {
        try await TestServer.run(.sqlite) { http in
            var refused = 0
            for kind in EventKind.allCases {
                let user = unique("u"), token = try await Tokens.hs256(user)
                let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone"
                let reply = try await http.post(path + "/events", Self.event(Self.sample(kind)), token: token)
                if Self.sessionGrants.contains(kind) {
                    refused += 1
                    #expect(reply.status == 403, "\(kind.rawValue): \(reply.text)")
                    #expect(reply.code == "forbidden")
                    #expect(reply.text.contains("service token"), "the diagnostic names the credential needed")
                    #expect(try await http.get(path, token: token).status == 404, "\(kind.rawValue): nothing stored")
                } else {
                    #expect(reply.status == 200, "\(kind.rawValue): \(reply.text)")
                }
            }
            #expect(refused == 3)
        }
    }

    @Test("a service token may report every event, for any user; a forged one is a user token that fails")
    func serviceTokenEvents() async throws {
        try await TestServer.run(.sqlite) { http in
            let service = try await Tokens.service()
            for kind in EventKind.allCases {
                let user = unique("s")
                let reply = try await http.post(
                    "/v1/policies/kobil-offline-token/sessions/\(user)/phone/events", Self.event(Self.sample(kind)), token: service)
                #expect(reply.status == 200, "\(kind.rawValue): \(reply.text)")
            }
            // The login a service reports makes a session the user's own token then uses.
            let user = unique("alice"), token = try await Tokens.hs256(user)
            let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone"
            let login = try await http.post(path + "/events", Self.event(Self.sample(.idpLoginSucceeded)), token: service)
            #expect(login.decision == "allow")
            let launch = try await http.post(
                path + "/events", Self.event(#"{"type":"launch","time":"2026-03-02T09:00:00Z","network":"offline"}"#), token: token)
            #expect(launch.decision == "require_biometric")
            // A token signed with the service secret's neighbour is nobody's.
            let forged = try await Tokens.hs256("backend", secret: Tokens.serviceSecret + "x")
            #expect(try await http.post(path + "/events", Self.event(Self.sample(.tokenRefreshed)), token: forged).status == 401)
            // A user token for another user may not write this session at all.
            let mallory = try await Tokens.hs256(unique("mallory"))
            let other = try await http.post(path + "/events", Self.event(Self.sample(.logout)), token: mallory)
            #expect(other.status == 403)
            #expect(try await http.get(path, token: token).json?["revision"] as? Int == 2)
        }
    }

    @Test("an event dated beyond the skew in the server's future is refused; the server's receive time is recorded")
    func futureEvents() async throws {
        let now = Timestamp.parse("2026-03-01T09:00:00Z")!
        try await TestServer.run(.sqlite, clock: { now }) { http in
            let user = unique("f"), token = try await Tokens.hs256(user)
            let path = "/v1/policies/spendiq/sessions/\(user)/d"
            let within = try await http.post(
                path + "/events", Self.event(Self.sample(.background, time: "2026-03-01T09:05:00Z")), token: token)
            #expect(within.status == 200, "\(within.text)")
            #expect(within.json?["received_at"] as? String == "2026-03-01T09:00:00Z")
            let beyond = try await http.post(
                path + "/events", Self.event(Self.sample(.background, time: "2026-03-01T09:05:01Z")), token: token)
            #expect(beyond.status == 400)
            #expect(beyond.code == "event-in-future")
            let service = try await Tokens.service()
            let months = try await http.post(
                path + "/events", Self.event(Self.sample(.tokenRefreshed, time: "2026-06-01T09:00:00Z")), token: service)
            #expect(months.code == "event-in-future", "a service's events are bounded too")
            let stored = try await http.get(path, token: token)
            #expect(stored.json?["revision"] as? Int == 1, "refused events store nothing")
            #expect(stored.json?["updated_at"] as? String == "2026-03-01T09:00:00Z")
        }
    }

    @Test("late events of an offline client are accepted in order within the allowed delay; older ones are refused")
    func lateEvents() async throws {
        let now = Timestamp.parse("2026-03-10T09:00:00Z")!
        try await TestServer.run(.sqlite, configure: { $0.maxEventDelay = .init(seconds: 7 * 86_400) }, clock: { now }) { http in
            let user = unique("late"), token = try await Tokens.hs256(user)
            let path = "/v1/policies/spendiq/sessions/\(user)/d"
            let service = try await Tokens.service()
            let login = try await http.post(
                path + "/events", Self.event(Self.sample(.idpLoginSucceeded, time: "2026-03-04T09:00:00Z")), token: service)
            #expect(login.status == 200, "\(login.text)")
            // Delivered now, in the order they happened offline.
            for time in ["2026-03-05T09:00:00Z", "2026-03-06T09:00:00Z"] {
                let reply = try await http.post(
                    path + "/events", Self.event(#"{"type":"launch","time":"\#(time)","network":"offline"}"#), token: token)
                #expect(reply.status == 200, "\(reply.text)")
            }
            let old = try await http.post(
                path + "/events", Self.event(Self.sample(.background, time: "2026-03-03T08:59:59Z")), token: token)
            #expect(old.status == 400)
            #expect(old.code == "event-too-late")
            let stored = try await http.get(path, token: token)
            #expect(stored.json?["revision"] as? Int == 3)
            #expect((stored.json?["state"] as? [String: Any])?["highest_time"] as? String == "2026-03-06T09:00:00Z")
        }
    }

    @Test("the back end lists a user's sessions and signs the user out everywhere", arguments: TestStorage.available)
    func listAndRevoke(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("multi"), token = try await Tokens.hs256(user)
            let service = try await Tokens.service()
            let base = "/v1/policies/kobil-offline-token/sessions/\(user)"
            for device in ["phone", "tablet"] {
                let login = try await http.post(
                    "\(base)/\(device)/events", Self.event(Self.sample(.idpLoginSucceeded)), token: service)
                #expect(login.decision == "allow")
            }
            let list = try await http.get(base, token: service)
            #expect(list.status == 200, "\(list.text)")
            let sessions = try #require(list.json?["sessions"] as? [[String: Any]])
            #expect(sessions.map { $0["device"] as? String } == ["phone", "tablet"])
            #expect(try await http.get(base, token: token).status == 200, "the user may list their own")
            #expect(try await http.get(base, token: try await Tokens.hs256(unique("eve"))).status == 403)
            #expect(
                try await http.get("/v1/policies/kobil-offline-token/sessions/\(unique("nobody"))", token: service)
                    .json?["sessions"] as? [Any] != nil)

            let revoked = try await http.send(.post, base + "/revoke", token: token)
            #expect(revoked.status == 200, "\(revoked.text)")
            let items = try #require(revoked.json?["sessions"] as? [[String: Any]])
            #expect(items.count == 2)
            for item in items {
                let outcome = item["outcome"] as? [String: Any]
                #expect(outcome?["reason"] as? String == "tokens_revoked")
                #expect(["wipe", "idp_login"].contains(outcome?["decision"] as? String))
            }
            // Every device must sign in at the IdP again.
            let launch = try await http.post(
                "\(base)/phone/events", Self.event(#"{"type":"launch","time":"2026-03-02T09:00:00Z","network":"offline"}"#),
                token: token)
            #expect(launch.decision == "idp_login")
        }
    }

    @Test(
        "the back end signs a user out of every policy and device; one policy's route leaves the others", arguments: TestStorage.available)
    func revokeEverywhere(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("apps"), token = try await Tokens.hs256(user)
            let service = try await Tokens.service()
            let kobil = "/v1/policies/kobil-offline-token/sessions/\(user)"
            let spendiq = "/v1/policies/spendiq/sessions/\(user)"
            for base in [kobil, spendiq] {
                let login = try await http.post("\(base)/phone/events", Self.event(Self.sample(.idpLoginSucceeded)), token: service)
                #expect(login.decision == "allow", "\(login.text)")
            }
            // One policy's "sign out everywhere" leaves the user's session under another policy.
            #expect(try await http.send(.post, kobil + "/revoke", token: token).status == 200)
            let other = try await http.get(spendiq + "/phone", token: service)
            #expect((other.json?["state"] as? [String: Any])?["state"] as? String == "active", "\(other.text)")
            // Every policy's: the back end's door only.
            #expect(try await http.send(.post, "/v1/users/\(user)/revoke", token: token).status == 403)
            let revoked = try await http.send(.post, "/v1/users/\(user)/revoke", token: service)
            #expect(revoked.status == 200, "\(revoked.text)")
            let items = try #require(revoked.json?["sessions"] as? [[String: Any]])
            #expect(items.map { "\($0["policy"] ?? "") \($0["device"] ?? "")" } == ["kobil-offline-token phone", "spendiq phone"])
            #expect(items.allSatisfy { ($0["outcome"] as? [String: Any])?["reason"] as? String == "tokens_revoked" })
            #expect(revoked.json?["not_served"] as? [Any] != nil)
            let after = try await http.get(spendiq + "/phone", token: service)
            #expect((after.json?["state"] as? [String: Any])?["state"] as? String == "signed_out", "\(after.text)")
            let nobody = try await http.send(.post, "/v1/users/\(unique("nobody"))/revoke", token: service)
            #expect(nobody.status == 200 && (nobody.json?["sessions"] as? [Any])?.isEmpty == true, "\(nobody.text)")
        }
    }

    @Test("docs/threat-model.md lists every event kind with the server's trust")
    func threatModelTable() throws {
        let page = Fixtures.text("docs/threat-model.md")
        for kind in EventKind.allCases {
            let trust = EventTrust(kind)
            let row = page.split(separator: "\n").first { $0.hasPrefix("| `\(kind.rawValue)` |") && $0.contains("trust:") }
            let line = try #require(row, "no threat-model row for `\(kind.rawValue)`")
            #expect(line.contains("trust: \(trust.rawValue)"), "\(line)")
            #expect(line.contains(trust.userTokenMay ? "user or service token" : "service token only"), "\(line)")
        }
    }

    /// A payload without `exp`.
    struct NoExpiry: JWTPayload {
        var sub: SubjectClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    @Test("a 401 says why the token is not valid")
    func refusals() async throws {
        try await TestServer.run(.sqlite, configure: { $0.tokenAudience = "sessionpolicy" }) { http in
            let path = "/v1/policies/spendiq/sessions/zoe/d"
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: Tokens.secret), digestAlgorithm: .sha256)
            let noExp = try await keys.sign(NoExpiry(sub: SubjectClaim(value: "zoe")))
            let withAudience = { (exp: TimeInterval, secret: String) async throws -> String in
                let k = JWTKeyCollection()
                await k.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
                return try await k.sign(TokenVerifier.Claims(sub: "zoe", exp: Date().addingTimeInterval(exp), aud: ["sessionpolicy"]))
            }
            let cases: [(String, String)] = [
                (try await withAudience(-120, Tokens.secret), "has expired"),
                (try await withAudience(3600, "another-secret-0123456789abcdef-0123"), "signature was not made by a configured key"),
                ("not.a.jwt", "not a JWT"),
                (noExp, "lacks a required claim"),
                (try await Tokens.hs256("zoe"), "audience (`aud`)"),
                (try await withAudience(-120, Tokens.serviceSecret), "service token is not valid: it has expired"),
            ]
            for (token, reason) in cases {
                let reply = try await http.get(path, token: token)
                #expect(reply.status == 401)
                let message = (reply.json?["diagnostics"] as? [[String: Any]])?.first?["message"] as? String ?? ""
                #expect(message.contains(reason), "\(message)")
            }
            #expect(try await http.get(path, token: try await withAudience(3600, Tokens.secret)).status == 404)
        }
    }

    @Test("a service key equal to the user key is refused")
    func sameKeyRefused() async throws {
        do {
            _ = try await ServerConfiguration.load(
                environment: ["SESSIONPOLICY_HS256_SECRET": Tokens.secret, "SESSIONPOLICY_SERVICE_HS256_SECRET": Tokens.secret])
            Issue.record("the same key for users and services was accepted")
        } catch {
            #expect("\(error)".contains("service token key is the user token key"))
        }
    }
}
