import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The scenario corpus through the HTTP front door: every step of every shipped scenario,
/// evaluated by the server, must give exactly the library's outcome.
@Suite("Evaluation API")
struct EvaluationAPITests {
    /// (policy name, state before, event, the library's outcome) for every scenario step.
    static let corpus: [(String, SessionState, Event, Outcome)] = {
        let input = CheckInput.load(policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples")])
        var out: [(String, SessionState, Event, Outcome)] = []
        for scenario in input.scenarios {
            guard let policy = input.policies[scenario.policy]?.compiled else { continue }
            var state = scenario.initial
            for step in scenario.steps {
                guard case let .success(event) = step.event else { continue }
                let outcome = policy.evaluate(state, event)
                out.append((policy.name, state, event, outcome))
                state = outcome.state
            }
        }
        return out
    }()

    @Test("every scenario step over HTTP gives the library's outcome")
    func corpusOverHTTP() async throws {
        #expect(Self.corpus.count > 100)
        try await TestServer.run(.sqlite) { http in
            for (policy, state, event, expected) in Self.corpus {
                let body = "{\"state\":\(jsonText(state)),\"event\":\(jsonText(event))}"
                let reply = try await http.post("/v1/policies/\(policy)/evaluate", body)
                #expect(reply.status == 200, "\(reply.text)")
                let outcome = try JSONDecoder().decode(Reply.self, from: Data(reply.text.utf8)).outcome
                #expect(outcome == expected, "\(policy) \(event.kind)")
                // The fast writer's bytes are JSONEncoder's (sorted keys), byte for byte.
                let encoded = "{\"outcome\":\(jsonText(expected)),\"policy\":\(jsonText(policy))}"
                #expect(reply.text.trimmingCharacters(in: .newlines) == encoded)
            }
        }
    }

    @Test("the batch form gives the same outcomes, in order")
    func batch() async throws {
        let byPolicy = Dictionary(grouping: Self.corpus, by: \.0)
        try await TestServer.run(.sqlite) { http in
            for (policy, items) in byPolicy {
                let body =
                    "{\"items\":[" + items.map { "{\"state\":\(jsonText($0.1)),\"event\":\(jsonText($0.2))}" }.joined(separator: ",") + "]}"
                let reply = try await http.post("/v1/policies/\(policy)/evaluate/batch", body)
                #expect(reply.status == 200, "\(reply.text.prefix(500))")
                let results = try JSONDecoder().decode(BatchReply.self, from: Data(reply.text.utf8))
                #expect(results.policy == policy)
                #expect(results.results == items.map(\.3))
                let encoded = "{\"policy\":\(jsonText(policy)),\"results\":\(jsonText(items.map(\.3)))}"
                #expect(reply.text.trimmingCharacters(in: .newlines) == encoded)
            }
        }
    }

    @Test("a batch answers per item: an invalid item gets its own diagnostics, the others their outcomes")
    func batchPerItem() async throws {
        try await TestServer.run(.sqlite) { http in
            let good = #"{"event":{"type":"launch","time":"2026-03-01T09:00:00Z","network":"offline"}}"#
            let bad = #"{"event":{"type":"launch","time":"yesterday","network":"offline"}}"#
            let noNetwork = #"{"event":{"type":"launch","time":"2026-03-01T09:00:00Z"}}"#
            let reply = try await http.post(
                "/v1/policies/spendiq/evaluate/batch", "{\"items\":[\(good),\(bad),\(good),\(noNetwork)]}")
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(reply.json?["results"] as? [[String: Any]])
            #expect(results.count == 4)
            #expect(results[0]["decision"] as? String == "idp_login")
            #expect(results[2]["decision"] as? String == "idp_login")
            let diagnostics = results[1]["diagnostics"] as? [[String: Any]]
            #expect(diagnostics?.first?["code"] as? String == "invalid-time")
            #expect(diagnostics?.first?["file"] as? String == "body" && diagnostics?.first?["line"] as? Int == 1)
            #expect((results[3]["diagnostics"] as? [[String: Any]])?.first?["code"] as? String == "missing-key")
            #expect(results[1]["decision"] == nil)
            // The batch itself wrong is still a 400: not an object of items, or broken JSON.
            #expect(try await http.post("/v1/policies/spendiq/evaluate/batch", #"{"items":[\#(good)"#).status == 400)
            #expect(try await http.post("/v1/policies/spendiq/evaluate/batch", #"{"things":[]}"#).status == 400)
        }
    }

    @Test("a wrong method on a known route is a 405 with Allow; an unknown path a 404; every error one compact line")
    func methodsAndErrorFormat() async throws {
        try await TestServer.run(.sqlite) { http in
            let put = try await http.send(.put, "/v1/policies")
            #expect(put.status == 405)
            #expect(put.code == "method-not-allowed")
            #expect(put.headers[.allow] == "GET")
            let session = try await http.send(.patch, "/v1/policies/spendiq/sessions/u/d")
            #expect(session.status == 405)
            #expect(session.headers[.allow] == "GET, DELETE")
            let unknown = try await http.get("/v1/nothing")
            #expect(unknown.status == 404)
            #expect(unknown.code == "not-found")
            for reply in [put, session, unknown, try await http.post("/v1/policies/spendiq/evaluate", "{")] {
                #expect(reply.text.hasSuffix("}\n") && reply.text.dropLast().contains("\n") == false, "\(reply.text)")
                #expect(reply.text.hasPrefix(#"{"diagnostics":[{"#))
            }
        }
    }

    @Test("explain=true names the deciding transition and every guard tried")
    func explain() async throws {
        try await TestServer.run(.sqlite) { http in
            let reply = try await http.post(
                "/v1/policies/spendiq/evaluate?explain=true",
                #"{"event":{"type":"launch","time":"2026-01-01T00:00:00Z","network":"offline"}}"#)
            #expect(reply.status == 200)
            let json = try #require(reply.json)
            #expect((json["decided_by"] as? [String: Any])?["check"] != nil)
            #expect(((json["trace"] as? [Any])?.count ?? 0) >= 1)
        }
    }

    @Test(
        "bad requests get the CLI's located diagnostics",
        arguments: [
            (#"{"event":{"type":"launch","time":"2026-01-01T00:00:00Z","netwrk":"online"}}"#, "unknown-key", 1),
            ("{\"event\":\n  {\"type\":\"launch\",}}", "invalid-json", 2),
            (#"{"event":{"type":"lunch","time":"2026-01-01T00:00:00Z","network":"online"}}"#, "invalid-value", 1),
            (#"{"event":{"type":"launch","time":"yesterday","network":"online"}}"#, "invalid-time", 1),
            (
                #"{"state":{"state":"active","failures":{"biometric":-1}},"event":{"type":"launch","time":"2026-01-01T00:00:00Z","network":"online"}}"#,
                "invalid-value", 1
            ),
            (#"[1,2]"#, "wrong-type", 1),
            ("", "empty-document", 1),
            // The input limits and the strict reader's refusals, as for every JSON input.
            (String(repeating: "[", count: 10_000), "nesting-too-deep", 1),
            ("{\"event\": {\"type\": \"launch\",\n  \"type\": \"launch\"}}", "duplicate-key", 2),
            ("{\"event\": {\"type\": \"la\\qunch\"}}", "invalid-json", 1),
            ("{\"event\": {}}\n# a comment", "invalid-json", 2),
            ("event:\n  type: launch\n", "invalid-json", 1),
        ])
    func badRequests(_ body: String, _ code: String, _ line: Int) async throws {
        try await TestServer.run(.sqlite) { http in
            let reply = try await http.post("/v1/policies/spendiq/evaluate", body)
            #expect(reply.status == 400, "\(reply.text)")
            let diagnostics = try #require(reply.json?["diagnostics"] as? [[String: Any]])
            #expect(diagnostics.contains { $0["code"] as? String == code }, "\(reply.text)")
            let first = try #require(diagnostics.first { $0["code"] as? String == code })
            #expect(first["file"] as? String == "body")
            #expect(first["line"] as? Int == line)
            #expect(first["column"] != nil)
        }
    }

    @Test("an unknown policy is a 404 with a suggestion; an unknown route and a large body get diagnostics too")
    func notFoundAndLimits() async throws {
        try await TestServer.run(.sqlite, configure: { $0.maxBodyBytes = 1024 }) { http in
            let event = #"{"event":{"type":"launch","time":"2026-01-01T00:00:00Z","network":"online"}}"#
            let unknown = try await http.post("/v1/policies/spendiqq/evaluate", event)
            #expect(unknown.status == 404)
            #expect(unknown.code == "unknown-policy")
            #expect(unknown.text.contains("did you mean `spendiq`"))
            let route = try await http.get("/v1/nothing")
            #expect(route.status == 404)
            #expect(route.code == "not-found")
            let big = try await http.post("/v1/policies/spendiq/evaluate", "{\"x\":\"" + String(repeating: "a", count: 5000) + "\"}")
            #expect(big.status == 413)
            #expect(big.code == "input-too-large", "\(big.text) \(big.headers)")
            let items = (0..<3).map { _ in #"{"event":{"type":"background","time":"2026-01-01T00:00:00Z"}}"# }
            let unknownKey = try await TestServer.batchWithUnknownKey(http, items)
            #expect(unknownKey.status == 400)
        }
    }
}

extension TestServer {
    /// A batch whose envelope has a key besides `items`.
    static func batchWithUnknownKey(_ http: HTTP, _ items: [String]) async throws -> HTTP.Reply {
        try await http.post("/v1/policies/spendiq/evaluate/batch", "{\"items\":[\(items.joined(separator: ","))],\"extra\":1}")
    }
}

struct Reply: Decodable {
    var outcome: Outcome
    var policy: String
}

struct BatchReply: Decodable {
    var policy: String
    var results: [Outcome]
}
