import Foundation
import HTTPTypes
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// Stored sessions over HTTP, against every store.
@Suite("Session API")
struct SessionAPITests {
    static func event(_ json: String) -> String { "{\"event\":\(json)}" }

    @Test(
        "found by schemathesis: a name the store cannot keep, a name that is not a string, the revoke path's other methods",
        arguments: TestStorage.available)
    func contractFindings(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("alice")
            let token = try await Tokens.hs256(user)
            let path = "/v1/policies/spendiq/sessions/\(user)/phone-1"
            // A NUL in `app_id` was a 503 on PostgreSQL (its text cannot hold U+0000).
            let nul = try await http.post(
                path + "/events",
                Self.event(#"{"type":"refresh_failed","time":"2026-03-01T09:00:00Z","cause":"invalid_token","app_id":"a\u0000b"}"#),
                token: token)
            #expect(nul.status == 400 && nul.code == "invalid-value", "\(nul.text)")
            #expect(try await http.get(path, token: token).status == 404, "nothing stored")
            // `"app_id": false` was read as the name `false`.
            let literal = try await http.post(
                path + "/events",
                Self.event(#"{"type":"launch","time":"2026-03-01T09:00:00Z","network":"online","app_id":false}"#), token: token)
            #expect(literal.status == 400 && literal.code == "wrong-type", "\(literal.text)")
            // `GET .../revoke` read the session of a device named `revoke`; the path is the revoke route's.
            let revoke = try await http.get("/v1/policies/spendiq/sessions/\(user)/revoke", token: token)
            #expect(revoke.status == 405 && revoke.headers[.allow] == "POST", "\(revoke.status) \(revoke.text)")
        }
    }

    @Test("events update the stored session; reading and deleting it", arguments: TestStorage.available)
    func lifecycle(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("alice")
            let token = try await Tokens.hs256(user)
            let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone-1"
            #expect(try await http.get(path, token: token).status == 404)
            let login = try await http.post(
                path + "/events",
                Self.event(#"{"type":"idp_login_succeeded","time":"2026-03-01T09:00:00Z","auth_mode":"biometric","network":"online"}"#),
                token: try await Tokens.service())
            #expect(login.status == 200, "\(login.text)")
            #expect(login.decision == "allow")
            #expect(login.json?["revision"] as? Int == 1)
            let launch = try await http.post(
                path + "/events", Self.event(#"{"type":"launch","time":"2026-03-02T09:00:00Z","network":"offline"}"#), token: token)
            #expect(launch.decision == "require_biometric")
            #expect((launch.json?["outcome"] as? [String: Any])?["scope"] as? String == "bio_auth_offline")
            let stored = try await http.get(path, token: token)
            #expect(stored.status == 200)
            #expect(stored.json?["revision"] as? Int == 2)
            #expect((stored.json?["state"] as? [String: Any])?["state"] as? String == "awaiting_biometric")
            #expect((stored.json?["state"] as? [String: Any])?["user"] as? String == user)
            #expect(try await http.send(.delete, path, token: token).status == 204)
            #expect(try await http.get(path, token: token).status == 404)
            #expect(try await http.send(.delete, path, token: token).status == 404)
        }
    }

    @Test("concurrent events of one session over HTTP: every one is stored", arguments: TestStorage.available)
    func concurrentEvents(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("bob")
            let token = try await Tokens.hs256(user)
            let path = "/v1/policies/spendiq/sessions/\(user)/d/events"
            let n = 30
            try await withThrowingTaskGroup(of: Int.self) { group in
                for i in 0..<n {
                    group.addTask {
                        let time = String(format: "2026-03-01T09:00:%02dZ", i)
                        return try await http.post(path, Self.event("{\"type\":\"background\",\"time\":\"\(time)\"}"), token: token).status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let stored = try await http.get("/v1/policies/spendiq/sessions/\(user)/d", token: token)
            #expect(stored.json?["revision"] as? Int == n)
            #expect((stored.json?["state"] as? [String: Any])?["highest_time"] as? String == "2026-03-01T09:00:29Z")
        }
    }

    @Test("tokens: none, forged, expired or another user's are refused; ES256 works")
    func tokens() async throws {
        let (key, pem) = try Tokens.es256()
        try await TestServer.run(.sqlite, configure: { $0.es256PublicKeyPEM = pem }) { http in
            let path = "/v1/policies/spendiq/sessions/carol/d"
            let none = try await http.get(path)
            #expect(none.status == 401)
            #expect(none.code == "unauthorized")
            #expect(none.headers[.wwwAuthenticate] != nil)
            let forged = try await Tokens.hs256("carol", secret: "another-secret-0123456789abcdef-0123")
            #expect(try await http.get(path, token: forged).status == 401)
            let expired = try await Tokens.hs256("carol", expiresIn: -120)
            #expect(try await http.get(path, token: expired).status == 401)
            #expect(try await http.get(path, token: "not.a.jwt").status == 401)
            let dave = try await Tokens.hs256("dave")
            let other = try await http.get(path, token: dave)
            #expect(other.status == 403)
            #expect(other.code == "forbidden")
            #expect(!other.text.contains("state"), "another user's state never leaks")
            let es = try await Tokens.es256("carol", key: key)
            #expect(try await http.get(path, token: es).status == 404)  // valid token, no session yet
            // The `Bearer` scheme in any case, blanks around the token; anything else is no token.
            let carol = try await Tokens.hs256("carol")
            for (header, status) in [
                ("bearer \(carol)", 404), ("BEARER  \(carol) ", 404), ("Bearer\t\(carol)", 404),
                ("Bearer\(carol)", 401), ("Bearer ", 401), ("Bearer   ", 401), ("Basic \(carol)", 401),
                ("Bearér \(carol)", 401), ("Bea", 401),
            ] {
                let reply = try await http.send(.get, path, headers: [.authorization: header])
                #expect(reply.status == status, "Authorization: \(header)")
            }
        }
    }

    @Test("an event naming another user or device does not belong to the session")
    func mismatchedEvent() async throws {
        try await TestServer.run(.sqlite) { http in
            let token = try await Tokens.hs256("erin")
            let path = "/v1/policies/spendiq/sessions/erin/d1/events"
            let user = try await http.post(
                path,
                Self.event(#"{"type":"idp_login_succeeded","time":"2026-03-01T09:00:00Z","auth_mode":"none","user":"frank"}"#),
                token: try await Tokens.service())
            #expect(user.status == 400)
            let device = try await http.post(
                path, Self.event(#"{"type":"background","time":"2026-03-01T09:00:00Z","device":{"id":"d2"}}"#), token: token)
            #expect(device.status == 400)
        }
    }
}
