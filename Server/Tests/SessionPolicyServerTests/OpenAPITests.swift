import Foundation
import HTTPTypes
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// docs/openapi.yaml against the running server: the same routes, and every answer of a tour
/// through the API matches the document's status, headers and schema.
@Suite("OpenAPI document")
struct OpenAPITests {
    @Test("the document describes exactly the server's routes")
    func routes() throws {
        let doc = try OpenAPIDocument.load()
        #expect(doc.unsupportedKeywords().isEmpty, "\(doc.unsupportedKeywords())")
        #expect(Set(doc.operations.map { "\($0.method) \($0.path)" }) == Set(serverRoutes))
    }

    @Test("the document's event schemas require exactly the facts the server requires of each event kind")
    func eventFacts() throws {
        let doc = try OpenAPIDocument.load()
        let event = try #require(doc.schema(named: "Event")), sessionEvent = try #require(doc.schema(named: "SessionEvent"))
        let values: [String: JSONValue] = [
            "network": .string("offline"), "auth_mode": .string("biometric"), "app_id": .string("com.acme.bank"),
            "user": .string("alice"), "cause": .string("network"),
        ]
        let facts = ReaderProbes.eventFactKeys
        #expect(Set(facts) == Set(values.keys))
        for kind in EventKind.allCases {
            // Every subset of the facts: valid exactly when it holds every fact the kind needs
            // (for a session's event, the path's user stands in for `user`).
            for mask in 0..<(1 << facts.count) {
                let given = facts.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element)
                var object: [String: JSONValue] = ["type": .string(kind.rawValue), "time": .string("2026-03-01T09:00:00Z")]
                for fact in given { object[fact] = values[fact] }
                let needed = ReaderProbes.requiredKeys(of: kind)
                let valid = event.validate(.object(object)).isEmpty
                #expect(valid == needed.allSatisfy(given.contains), "\(kind) with \(given): Event says \(valid ? "valid" : "invalid")")
                // A session's event leaves `user` out (the path names it).
                var sessionObject = object
                sessionObject["user"] = nil
                let sessionValid = sessionEvent.validate(.object(sessionObject)).isEmpty
                let sessionNeeded = needed.filter { $0 != "user" }
                #expect(
                    sessionValid == sessionNeeded.allSatisfy { given.contains($0) },
                    "\(kind) with \(given): SessionEvent says \(sessionValid ? "valid" : "invalid")")
            }
        }
    }

    @Test("every answer of a tour through the API matches the document")
    func tour() async throws {
        let doc = try OpenAPIDocument.load()
        try await TestServer.run(
            .sqlite,
            configure: {
                $0.detectPerDevice = .init(perMinute: 1, burst: 3)
                $0.signingKeyPEM = Fixtures.text("spec/conformance/keys/a.key.pem")
            }
        ) { http in
            var seen: Set<OpenAPIDocument.Operation> = []
            func call(
                _ method: HTTPRequest.Method, _ template: String, _ path: String, _ body: String? = nil, token: String? = nil,
                headers: HTTPFields = [:]
            ) async throws -> HTTP.Reply {
                let reply = try await http.send(method, path, body, token: token, headers: headers)
                let op = OpenAPIDocument.Operation(method.rawValue, template)
                seen.insert(op)
                let problems = doc.problems(
                    op, status: reply.status, contentType: reply.headers[.contentType], body: reply.text,
                    headers: Set(reply.headers.map { $0.name.canonicalName.lowercased() }))
                #expect(problems.isEmpty, "\(method.rawValue) \(path) -> \(reply.status): \(problems)\n\(reply.text.prefix(400))")
                return reply
            }
            let user = unique("alice"), device = unique("phone")
            let token = try await Tokens.hs256(user, nickname: "Alice")
            let launch = #"{"type":"launch","time":"2026-03-01T09:00:00Z","network":"offline"}"#

            _ = try await call(.get, "/healthz", "/healthz")
            _ = try await call(.get, "/metrics", "/metrics")
            _ = try await call(.get, "/v1/policies", "/v1/policies")
            let machine = "/v1/policies/{policy}/machine"
            let signed = try await call(.get, machine, "/v1/policies/spendiq/machine")
            #expect(signed.status == 200)
            let etag = try #require(signed.headers[.eTag])
            #expect(try await call(.get, machine, "/v1/policies/spendiq/machine", headers: [.ifNoneMatch: etag]).status == 304)
            #expect(try await call(.get, machine, "/v1/policies/nope/machine").status == 404)
            let eval = "/v1/policies/{policy}/evaluate"
            _ = try await call(.post, eval, "/v1/policies/spendiq/evaluate", "{\"event\":\(launch)}")
            _ = try await call(.post, eval, "/v1/policies/spendiq/evaluate?explain=true", "{\"event\":\(launch)}")
            _ = try await call(.post, eval, "/v1/policies/spendiq/evaluate", "{\"event\":{\"type\":\"lunch\"}}")
            _ = try await call(.post, eval, "/v1/policies/nope/evaluate", "{\"event\":\(launch)}")
            _ = try await call(
                .post, "/v1/policies/{policy}/evaluate/batch", "/v1/policies/spendiq/evaluate/batch",
                "{\"items\":[{\"event\":\(launch)},{\"state\":{\"state\":\"active\",\"user\":\"u\"},\"event\":\(launch)}]}")
            _ = try await call(
                .post, "/v1/policies/{policy}/evaluate/batch", "/v1/policies/spendiq/evaluate/batch",
                "{\"items\":[{\"event\":\(launch)},{\"event\":{\"type\":\"lunch\"}}]}")
            let session = "/v1/policies/{policy}/sessions/{user}/{device}"
            let sessionPath = "/v1/policies/cross-app-device-sso/sessions/\(user)/\(device)"
            _ = try await call(.get, session, sessionPath, token: token)
            _ = try await call(.get, session, sessionPath)
            _ = try await call(.get, session, "/v1/policies/cross-app-device-sso/sessions/bob/\(device)", token: token)
            _ = try await call(
                .post, session + "/events", sessionPath + "/events",
                #"{"event":{"type":"idp_login_succeeded","time":"2026-03-01T09:00:00Z","auth_mode":"none","network":"online"}}"#,
                token: try await Tokens.service())
            // A user token may not report a login (403), and the routes of the back end's door.
            _ = try await call(
                .post, session + "/events", sessionPath + "/events",
                #"{"event":{"type":"token_refreshed","time":"2026-03-01T09:00:00Z"}}"#, token: token)
            _ = try await call(
                .post, session + "/events", sessionPath + "/events",
                #"{"event":{"type":"launch","time":"2026-03-09T09:00:00Z","network":"online"}}"#, token: token)
            let sessions = "/v1/policies/{policy}/sessions/{user}"
            _ = try await call(.get, sessions, "/v1/policies/cross-app-device-sso/sessions/\(user)", token: token)
            _ = try await call(.get, sessions, "/v1/policies/cross-app-device-sso/sessions/bob", token: token)
            _ = try await call(.post, sessions + "/revoke", "/v1/policies/cross-app-device-sso/sessions/\(user)/revoke", token: token)
            let history = try await call(.get, session + "/history", sessionPath + "/history", token: token)
            #expect((history.json?["decisions"] as? [Any])?.count == 2, "\(history.text)")
            _ = try await call(.get, session + "/history", sessionPath + "/history?limit=1", token: token)
            _ = try await call(.get, session + "/history", sessionPath + "/history?limit=9999", token: token)
            _ = try await call(.get, session + "/history", "/v1/policies/cross-app-device-sso/sessions/bob/\(device)/history", token: token)
            let decisions = "/v1/users/{user}/decisions"
            _ = try await call(.get, decisions, "/v1/users/\(user)/decisions", token: try await Tokens.service())
            _ = try await call(.get, decisions, "/v1/users/\(user)/decisions?policy=spendiq&limit=5", token: try await Tokens.service())
            _ = try await call(.get, decisions, "/v1/users/\(user)/decisions", token: token)
            _ = try await call(.get, decisions, "/v1/users/\(user)/decisions")
            let revokeUser = "/v1/users/{user}/revoke"
            _ = try await call(.post, revokeUser, "/v1/users/\(unique("gone"))/revoke", token: try await Tokens.service())
            _ = try await call(.post, revokeUser, "/v1/users/\(user)/revoke", token: token)
            _ = try await call(.get, session, sessionPath, token: token)
            _ = try await call(.delete, session, sessionPath, token: token)
            _ = try await call(.delete, session, sessionPath, token: token)

            _ = try await call(
                .post, "/v1/device-sessions", "/v1/device-sessions",
                "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"com.example.crm\"}", token: token)
            _ = try await call(.post, "/v1/device-sessions", "/v1/device-sessions", #"{"pool":"vendor"}"#, token: token)
            let detectBody =
                "{\"pool\":\"vendor\",\"device\":\"\(device)\",\"app\":\"com.example.field-service\",\"policy\":\"cross-app-device-sso\"}"
            let detected = try await call(.post, "/v1/device-sessions/detect", "/v1/device-sessions/detect", detectBody)
            _ = try await call(
                .post, "/v1/device-sessions/detect", "/v1/device-sessions/detect",
                "{\"pool\":\"vendor\",\"device\":\"\(unique("none"))\",\"app\":\"a\",\"policy\":\"cross-app-device-sso\"}")
            let ticket = try #require(detected.json?["ticket"] as? String)
            let exchange = "{\"pool\":\"vendor\",\"ticket\":\"\(ticket)\"}"
            let ex = "/v1/device-sessions/exchange"
            _ = try await call(.post, ex, ex, exchange, headers: [.poolSecret: "wrong-0123456789abcdef"])
            _ = try await call(.post, ex, ex, exchange, headers: [.poolSecret: TestServer.poolSecret])
            _ = try await call(.post, ex, ex, exchange, headers: [.poolSecret: TestServer.poolSecret])
            for _ in 0..<3 { _ = try await call(.post, "/v1/device-sessions/detect", "/v1/device-sessions/detect", detectBody) }
            _ = try await call(
                .delete, "/v1/device-sessions/{pool}/{device}/{app}", "/v1/device-sessions/vendor/\(device)/com.example.crm",
                token: token)
            _ = try await call(.delete, "/v1/device-sessions/{pool}/{device}", "/v1/device-sessions/vendor/\(device)", token: token)
            _ = try await call(.delete, "/v1/device-sessions/{pool}/{device}", "/v1/device-sessions/vendor/\(device)")

            #expect(Set(doc.operations).subtracting(seen).isEmpty, "not exercised: \(Set(doc.operations).subtracting(seen))")
        }
    }
}
