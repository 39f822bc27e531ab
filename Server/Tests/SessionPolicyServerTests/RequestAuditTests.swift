import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// Who did what (issue 37 §3, docs/operations.md#who-did-what): every response carries a
/// request id, every decision record its actor and request id, the stream the same, and the
/// access log (`log.access`) one line per request; logs written while serving carry the id.
@Suite("Request ids, actors and the access log")
struct RequestAuditTests {
    static let requestID = HTTPField.Name("X-Request-Id")!

    /// 32 lowercase hex digits: an id the server made.
    static func isMade(_ id: String?) -> Bool {
        guard let id else { return false }
        return id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    @Test("a usable X-Request-Id is returned as sent, another is replaced, errors carry one too")
    func requestIDs() async throws {
        try await TestServer.run(.sqlite) { http in
            var headers: HTTPFields = [:]
            headers[Self.requestID] = "4bf92f35-77b3-4da6-a3ce-929d0e0e4736"
            let kept = try await http.send(.get, "/healthz", headers: headers)
            #expect(kept.headers[Self.requestID] == "4bf92f35-77b3-4da6-a3ce-929d0e0e4736")
            let made = try await http.get("/healthz")
            #expect(Self.isMade(made.headers[Self.requestID]), "\(made.headers)")
            let again = try await http.get("/healthz")
            #expect(again.headers[Self.requestID] != made.headers[Self.requestID])
            for refused in ["two words", String(repeating: "a", count: 129), "quote\"d", "semi;colon"] {
                headers[Self.requestID] = refused
                let reply = try await http.send(.get, "/healthz", headers: headers)
                #expect(Self.isMade(reply.headers[Self.requestID]), "`\(refused)` -> \(reply.headers[Self.requestID] ?? "none")")
            }
            // A 404, a 401 and a 400 say theirs too.
            headers[Self.requestID] = "err-1"
            #expect(try await http.send(.get, "/nowhere", headers: headers).headers[Self.requestID] == "err-1")
            let unauthorized = try await http.send(
                .post, "/v1/policies/kobil-offline-token/sessions/u/d/events", DecisionLogTests.offline, headers: headers)
            #expect(unauthorized.status == 401)
            #expect(unauthorized.headers[Self.requestID] == "err-1")
        }
    }

    @Test("each decision record names its actor and request; the stream the same", arguments: TestStorage.available)
    func actors(_ storage: TestStorage) async throws {
        let dir = try Fixtures.temporaryDirectory("audit")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("decisions.jsonl").path
        try await TestServer.run(storage, configure: { $0.decisionLogStream = file }) { http in
            let user = unique("alice")
            let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone-1"
            var headers: HTTPFields = [:]
            headers[Self.requestID] = "login-\(user)"
            let service = try await Tokens.service("crm-backend")
            #expect(try await http.post(path + "/events", DecisionLogTests.login, token: service, headers: headers).status == 200)
            let launch = try await http.post(path + "/events", DecisionLogTests.offline, token: try await Tokens.hs256(user))
            #expect(launch.status == 200)
            let revoked = try await http.post("/v1/users/\(user)/revoke", "", token: service)
            #expect(revoked.status == 200, "\(revoked.text)")

            let reply = try await http.get("/v1/users/\(user)/decisions", token: service)
            let records = try #require(reply.json?["decisions"] as? [[String: Any]], "\(reply.text)")
            #expect(records.map { $0["event"] as? String } == ["tokens_revoked", "launch", "idp_login_succeeded"])
            let actors = records.map { ($0["actor"] as? [String: String]).map { "\($0["kind"] ?? ""):\($0["id"] ?? "")" } }
            #expect(actors == ["service:crm-backend", "user:\(user)", "service:crm-backend"])
            let ids = records.map { $0["request_id"] as? String }
            #expect(ids == [revoked.headers[Self.requestID], launch.headers[Self.requestID], "login-\(user)"])
            #expect(Self.isMade(ids[0]) && Self.isMade(ids[1]))

            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
            let streamed = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(streamed.map { $0["requested_by"] as? String } == ["service:crm-backend", "user:\(user)", "service:crm-backend"])
            #expect(streamed.map { $0["req_id"] as? String } == ids.reversed())
        }
    }

    @Test("with decision.log.hash.users, the stream's actor is the user's hash; a service's client id stays")
    func hashedActor() async throws {
        let dir = try Fixtures.temporaryDirectory("audit-hash")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("decisions.jsonl").path
        try await TestServer.run(
            .sqlite,
            configure: {
                $0.decisionLogStream = file
                $0.decisionLogHashUsers = true
            }
        ) { http in
            let user = unique("bob")
            let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone-1/events"
            #expect(try await http.post(path, DecisionLogTests.login, token: try await Tokens.service()).status == 200)
            #expect(try await http.post(path, DecisionLogTests.offline, token: try await Tokens.hs256(user)).status == 200)
            let streamed = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let hash = SHA256Hex.of(user)
            #expect(streamed.map { $0["requested_by"] as? String } == ["service:backend", "user:\(hash)"])
        }
    }

    @Test(
        "the access log: one line per request with method, route, status, duration, actor and id; logs carry the id; nothing above info from a start and a stop",
        arguments: TestStorage.available)
    func accessLog(storage: TestStorage) async throws {
        let dir = try Fixtures.temporaryDirectory("access")
        defer { try? FileManager.default.removeItem(at: dir) }
        let secret = dir.appendingPathComponent("user.secret")
        try Tokens.secret.write(to: secret, atomically: true, encoding: .utf8)
        let errors = dir.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let handle = try FileHandle(forWritingTo: errors)
        let (process, port) = try await ServeProcess.start(
            [
                "--port", "0", "--policies", Fixtures.path("policies"), "--storage",
                storage == .postgres ? TestStorage.postgresURL! : "sqlite:\(dir.path)/s.sqlite",
                "--hs256-secret-file", secret.path, "--log-access",
            ],
            standardError: handle)
        defer { process.terminate() }
        let user = unique("carol")
        let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone"
        func send(_ method: HTTPMethod, _ uri: String, body: String? = nil, id: String, token: Bool = true) async throws -> Int {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(uri)")
            request.method = method
            request.headers.add(name: "X-Request-Id", value: id)
            if token { request.headers.add(name: "Authorization", value: "Bearer \(try await Tokens.hs256(user))") }
            if let body { request.body = .bytes(ByteBuffer(string: body)) }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.headers["X-Request-Id"].first == id)
            return Int(response.status.code)
        }
        let now = IdentityProviderTests.realClock().description
        let event = SessionTrustTests.event(SessionTrustTests.sample(.launch, time: now))
        #expect(try await send(.POST, path + "/events", body: event, id: "launch-\(user)") == 200)
        #expect(try await send(.DELETE, path, id: "delete-\(user)") == 204)
        #expect(try await send(.GET, "/healthz", id: "health-\(user)", token: false) == 200)
        #expect(try await send(.GET, path, id: "missing-\(user)", token: false) == 401)
        process.terminate()
        process.waitUntilExit()
        let log = try String(contentsOf: errors, encoding: .utf8).split(separator: "\n").map(String.init)
        func line(_ id: String, _ msg: String) -> String? { log.first { $0.contains("request_id=\(id)") && $0.contains("msg=\(msg)") } }
        let launch = try #require(line("launch-\(user)", "request"), "\(log.joined(separator: "\n"))")
        for part in [
            "label=sessionpolicy.access", "method=POST", "route=/v1/policies/{policy}/sessions/{user}/{device}/events", "status=200",
            "actor=user:\(user)", "duration_ms=",
        ] {
            #expect(launch.contains(part), "\(part) in \(launch)")
        }
        #expect(line("delete-\(user)", "request")?.contains("status=204") == true)
        #expect(line("health-\(user)", "request")?.contains("actor=-") == true)
        #expect(line("missing-\(user)", "request")?.contains("status=401") == true)
        // A line the handler writes carries the request's id.
        let deleted = try #require(line("delete-\(user)", "\"session deleted\""), "\(log.joined(separator: "\n"))")
        #expect(deleted.contains("actor=user:\(user)"))
        // A start, these requests and a stop log no warning or error (the refused token is `info`).
        let loud = log.filter { !$0.contains("level=info") && !$0.contains("level=notice") && !$0.contains("level=debug") }
        #expect(loud.isEmpty, "\(loud.joined(separator: "\n"))")
    }
}
