import Crypto
import Foundation
import HTTPTypes
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The decision log (docs/decision-log.md): every stateful decision recorded with the state it
/// produced, read back as a session's history and as a user's decisions for the back end,
/// purged after its retention, and streamed as JSON lines.
@Suite("Decision log")
struct DecisionLogTests {
    static func event(_ json: String) -> String { #"{"event":\#(json)}"# }
    static let login = event(#"{"type":"idp_login_succeeded","time":"2026-03-01T09:00:00Z","auth_mode":"biometric","network":"online"}"#)
    static let offline = event(#"{"type":"launch","time":"2026-03-02T09:00:00Z","network":"offline"}"#)

    @Test(
        "each decision is recorded with its revision; the history pages newest first; only the user or the back end reads it",
        arguments: TestStorage.available)
    func history(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("alice")
            let token = try await Tokens.hs256(user)
            let service = try await Tokens.service()
            let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone-1"
            #expect(try await http.post(path + "/events", Self.login, token: service).status == 200)
            let launch = try await http.post(path + "/events", Self.offline, token: token)
            #expect(launch.decision == "require_biometric")
            let revoked = try await http.post("/v1/policies/kobil-offline-token/sessions/\(user)/revoke", "", token: service)
            #expect(revoked.status == 200, "\(revoked.text)")
            let reply = try await http.get(path + "/history", token: token)
            #expect(reply.status == 200, "\(reply.text)")
            let decisions = try #require(reply.json?["decisions"] as? [[String: Any]])
            #expect(decisions.count == 3)
            #expect(decisions.map { $0["event"] as? String } == ["tokens_revoked", "launch", "idp_login_succeeded"])
            #expect(decisions.map { $0["revision"] as? Int } == [3, 2, 1])
            let second = decisions[1]
            #expect(second["decision"] as? String == "require_biometric")
            #expect(second["reason"] as? String == launch.json.flatMap { ($0["outcome"] as? [String: Any])?["reason"] as? String })
            #expect(second["network"] as? String == "offline")
            #expect(second["time"] as? String == "2026-03-02T09:00:00Z")
            #expect(second["received_at"] as? String == "\(TestServer.now)")
            #expect(second["state"] as? String == "awaiting_biometric")
            #expect((second["digest"] as? String)?.hasPrefix("sha256:") == true)
            #expect(second["transition"] as? Int == (launch.json?["outcome"] as? [String: Any])?["transition"] as? Int)
            #expect(reply.json?["next"] is NSNull)
            // The stored session's revision is the newest record's.
            #expect(try await http.get(path, token: token).json?["revision"] as? Int == 3)
            // Pages.
            let first = try await http.get(path + "/history?limit=2", token: token)
            #expect((first.json?["decisions"] as? [[String: Any]])?.count == 2)
            let next = try #require(first.json?["next"] as? Int)
            let rest = try await http.get(path + "/history?limit=2&before=\(next)", token: token)
            #expect((rest.json?["decisions"] as? [[String: Any]])?.map { $0["event"] as? String } == ["idp_login_succeeded"])
            #expect(try await http.get(path + "/history?limit=0", token: token).code == "invalid-value")
            #expect(try await http.get(path + "/history?before=x", token: token).code == "invalid-value")
            // Another user's token may not; the back end may.
            let mallory = try await Tokens.hs256(unique("mallory"))
            #expect(try await http.get(path + "/history", token: mallory).status == 403)
            #expect(try await http.get(path + "/history", token: service).status == 200)
            #expect(try await http.get(path + "/history").status == 401)
        }
    }

    @Test("a user's decisions across devices and policies, for the service token only", arguments: TestStorage.available)
    func userDecisions(_ storage: TestStorage) async throws {
        try await TestServer.run(storage) { http in
            let user = unique("carol")
            let token = try await Tokens.hs256(user)
            let service = try await Tokens.service()
            for (policy, device) in [("kobil-offline-token", "phone"), ("kobil-offline-token", "tablet"), ("spendiq", "phone")] {
                let r = try await http.post("/v1/policies/\(policy)/sessions/\(user)/\(device)/events", Self.login, token: service)
                #expect(r.status == 200, "\(r.text)")
            }
            let all = try await http.get("/v1/users/\(user)/decisions", token: service)
            #expect(all.status == 200, "\(all.text)")
            let decisions = try #require(all.json?["decisions"] as? [[String: Any]])
            #expect(
                decisions.map { "\($0["policy"] as? String ?? "")/\($0["device"] as? String ?? "")" } == [
                    "spendiq/phone", "kobil-offline-token/tablet", "kobil-offline-token/phone",
                ])
            let narrowed = try await http.get("/v1/users/\(user)/decisions?policy=kobil-offline-token&device=tablet", token: service)
            #expect((narrowed.json?["decisions"] as? [[String: Any]])?.count == 1)
            let refused = try await http.get("/v1/users/\(user)/decisions", token: token)
            #expect(refused.status == 403)
            #expect(refused.code == "forbidden")
        }
    }

    @Test("every decision streamed as one JSON line in the shape of OPA's decision logs, the user hashed when asked")
    func stream() async throws {
        let dir = try Fixtures.temporaryDirectory("stream")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("decisions.jsonl").path
        let user = unique("frank")
        try await TestServer.run(
            .sqlite,
            configure: {
                $0.decisionLogStream = file
                $0.decisionLogHashUsers = true
            }
        ) { http in
            let token = try await Tokens.hs256(user)
            let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone-1/events"
            #expect(try await http.post(path, Self.login, token: try await Tokens.service()).status == 200)
            #expect(try await http.post(path, Self.offline, token: token).status == 200)
        }
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let last = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(Set(last.keys) == ["bundles", "decision_id", "input", "labels", "path", "req_id", "requested_by", "result", "timestamp"])
        #expect(last["path"] as? String == "sessionpolicy/kobil-offline-token")
        let input = try #require(last["input"] as? [String: Any])
        let hashed = SHA256Hex.of(user)
        #expect(input["user"] as? String == hashed)
        #expect((input["event"] as? [String: Any])?["user"] as? String == hashed)
        #expect(!lines.joined().contains(user))
        let result = try #require(last["result"] as? [String: Any])
        #expect(result["decision"] as? String == "require_biometric")
        #expect(result["revision"] as? Int == 2)
        #expect(((last["bundles"] as? [String: Any])?["kobil-offline-token"] as? [String: Any])?["revision"] as? String != nil)
    }

    @Test("the retention purge deletes only older records, in batches", arguments: TestStorage.available)
    func retention(_ storage: TestStorage) async throws {
        try await storage.withStore { store in
            let user = unique("dave")
            let key = SessionKey(policy: "p", user: user, device: "d")
            let t0 = Timestamp.parse("2026-03-01T00:00:00Z")!
            for day in 0..<5 { try await TestStorage.decide(store, key, at: t0.adding(.days(Int64(day))), transition: day) }
            #expect(try await store.decisions(DecisionQuery(user: user)).count == 5)
            let n = try await store.purgeDecisions(before: t0.adding(.days(2)), limit: 1)
            #expect(n == 1)
            #expect(try await store.purgeDecisions(before: t0.adding(.days(2)), limit: 100) == 1)
            let left = try await store.decisions(DecisionQuery(user: user))
            #expect(left.map(\.transition) == [4, 3, 2])
            #expect(left.map(\.revision) == [5, 4, 3])
        }
    }

    @Test("no decision is stored without its record: a refused update stores neither", arguments: TestStorage.available)
    func together(_ storage: TestStorage) async throws {
        struct Refused: Error {}
        try await storage.withStore { store in
            let user = unique("erin")
            let key = SessionKey(policy: "p", user: user, device: "d")
            let now = Timestamp.parse("2026-03-01T00:00:00Z")!
            let event = Event(.launch, at: now, network: .online, user: user)
            await #expect(throws: Refused.self) {
                _ = try await store.updateSession(
                    key, now: now,
                    log: { (o: Outcome) in DecisionRecord(key: key, digest: "sha256:x", event: event, serverTime: now, outcome: o) }
                ) { _ -> (SessionState, Outcome) in throw Refused() }
            }
            let session = try await store.session(key)
            let records = try await store.decisions(DecisionQuery(user: user))
            #expect(session == nil)
            #expect(records.isEmpty)
        }
    }
}

enum SHA256Hex {
    static func of(_ text: String) -> String { SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined() }
}
