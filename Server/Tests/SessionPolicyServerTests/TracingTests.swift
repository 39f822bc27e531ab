import Foundation
import HTTPTypes
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// OpenTelemetry traces (`tracing.otlp.endpoint`), as a collector receives them: the test
/// collector decodes every OTLP/HTTP export with the OpenTelemetry protobuf definitions.
@Suite("Tracing")
struct TracingTests {
    /// A W3C `traceparent` of a caller's span: its trace id and span id.
    static func traceparent() -> (header: String, traceID: String, spanID: String) {
        let hex = { (n: Int) in (0..<n).map { _ in String(format: "%02x", UInt8.random(in: 1...255)) }.joined() }
        let trace = hex(16), span = hex(8)
        return ("00-\(trace)-\(span)-01", trace, span)
    }

    static func configure(_ collector: TestCollector, userIDs: Bool = false) -> (inout ServerConfiguration) -> Void {
        { c in
            c.tracingEndpoint = collector.endpoint
            c.tracingExportDelay = .seconds(1)
            c.tracingUserIDs = userIDs
        }
    }

    @Test(
        "a session event continues the caller's trace: spans for the request, the token check, the store's read and write and the evaluation",
        arguments: TestStorage.available)
    func sessionEventSpans(storage: TestStorage) async throws {
        try await TestCollector.with { collector in
            try await TestServer.run(storage, configure: Self.configure(collector)) { http in
                let user = unique("trace")
                let parent = Self.traceparent()
                let event = #"{"event":{"type":"launch","time":"2026-03-02T09:00:00Z","network":"online"}}"#
                let reply = try await http.post(
                    "/v1/policies/spendiq/sessions/\(user)/phone/events", event, token: try await Tokens.hs256(user),
                    headers: [HTTPField.Name("traceparent")!: parent.header])
                #expect(reply.status == 200)
                let spans = try await collector.spans(of: parent.traceID, atLeast: storage == .postgres ? 6 : 4)
                #expect(collector.received().errors.isEmpty, "every export decodes: \(collector.received().errors)")
                let byName = Dictionary(spans.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
                let request = try #require(byName["POST /v1/policies/{policy}/sessions/{user}/{device}/events"], "\(spans.map(\.name))")
                #expect(request.parentSpanID == parent.spanID, "the request continues the caller's span")
                #expect(request.kind == "server")
                #expect(request.attributes["http.response.status_code"] == "200")
                #expect(request.attributes["http.route"] == "/v1/policies/{policy}/sessions/{user}/{device}/events")
                #expect(request.attributes["sessionpolicy.request_id"] == reply.headers[.requestID])
                #expect(request.resource["service.name"] == "sessionpolicy")
                let token = try #require(byName["token.verify"])
                #expect(token.parentSpanID == request.spanID)
                #expect(token.attributes["sessionpolicy.caller"] == "user")
                let store = try #require(byName["store.update_session"])
                #expect(store.parentSpanID == request.spanID)
                #expect(store.kind == "client")
                #expect(store.attributes["db.system.name"] == (storage == .postgres ? "postgresql" : "sqlite"))
                #expect(Int(store.attributes["sessionpolicy.store.group_commit.size"] ?? "") ?? 0 >= 1, "the group commit it joined")
                let evaluation = try #require(byName["evaluate"])
                #expect(evaluation.parentSpanID == store.spanID)
                #expect(evaluation.attributes["sessionpolicy.policy"] == "spendiq")
                #expect(evaluation.attributes["sessionpolicy.decision"] == reply.decision)
                #expect(evaluation.attributes["sessionpolicy.reason"] == "no_session")
                #expect(evaluation.attributes["sessionpolicy.machine.digest"]?.hasPrefix("sha256:") == true)
                if storage == .postgres {
                    #expect(byName["store.read"]?.parentSpanID == store.spanID)
                    #expect(byName["store.write"]?.parentSpanID == store.spanID)
                    #expect(byName["store.write"]?.attributes["sessionpolicy.store.written"] == "true")
                }
                // No user id unless configured: not in a name, not in an attribute.
                for span in spans {
                    #expect(!span.name.contains(user) && !span.attributes.values.contains { $0.contains(user) }, "\(span)")
                }
            }
        }
    }

    @Test("`tracing.user.ids` puts the user's id on the token check; a request without traceparent starts a trace")
    func userIDsAndNewTraces() async throws {
        try await TestCollector.with { collector in
            try await TestServer.run(.sqlite, configure: Self.configure(collector, userIDs: true)) { http in
                let user = unique("traced")
                let parent = Self.traceparent()
                let event = #"{"event":{"type":"launch","time":"2026-03-02T09:00:00Z","network":"online"}}"#
                _ = try await http.post(
                    "/v1/policies/spendiq/sessions/\(user)/phone/events", event, token: try await Tokens.hs256(user),
                    headers: [HTTPField.Name("traceparent")!: parent.header])
                let spans = try await collector.spans(of: parent.traceID, atLeast: 4)
                #expect(spans.first { $0.name == "token.verify" }?.attributes["enduser.id"] == user)

                let reply = try await http.post("/v1/policies/spendiq/evaluate", event)
                #expect(reply.status == 200)
                let root = try await collector.span(named: "POST /v1/policies/{policy}/evaluate")
                #expect(root.parentSpanID.isEmpty, "a new trace: \(root); received \(collector.received().spans)")
                #expect(root.traceID != parent.traceID)
                let evaluation = try await collector.span(named: "evaluate", trace: root.traceID)
                #expect(evaluation.parentSpanID == root.spanID)
                #expect(evaluation.attributes["sessionpolicy.decision"] == reply.decision)
            }
        }
    }
}
