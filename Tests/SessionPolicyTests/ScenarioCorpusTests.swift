import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import Testing

/// The shipped scenarios, run through the library (the CLI tests run them through the binary).
@Suite("Scenario corpus")
struct ScenarioCorpusTests {
    static let input = CheckInput.load(policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples")])

    @Test("shipped policies and scenarios load without diagnostics, not even a warning")
    func loads() {
        #expect(Self.input.diagnostics.isEmpty, "\(Self.input.diagnostics)")
        #expect(Self.input.scenarios.count >= 30)
    }

    @Test("every shipped scenario passes", arguments: input.scenarios.map(\.name))
    func passes(_ name: String) throws {
        let s = try #require(Self.input.scenarios.first { $0.name == name })
        let result = ScenarioRunner.run(s, against: try #require(Self.input.policies[s.policy]).compiled)
        #expect(result.passed, "\(result.failure?.mismatches ?? [])")
    }

    @Test("every shipped policy has scenarios")
    func everyPolicyTested() {
        let used = Set(Self.input.scenarios.map(\.policy))
        #expect(Set(Self.input.policies.keys).subtracting(used) == [])
    }

    @Test("a wrong expectation fails with the difference and an explanation")
    func failureReport() throws {
        var s = try #require(Self.input.scenarios.first { $0.covers.contains("K3") })
        let index = try #require(s.steps.firstIndex { $0.expect.reason == .sessionMaxExceeded })
        s.steps[index].expect.reason = .offlineWindowExpired
        let result = ScenarioRunner.run(s, against: try #require(Self.input.policies[s.policy]).compiled)
        let failure = try #require(result.failure)
        #expect(failure.mismatches == ["reason: expected `offline_window_expired`, got `session_max_exceeded`"])
        #expect(failure.trace.last?.matched == true)
        #expect(failure.trace.last?.levers.first == "session.max")
    }
}
