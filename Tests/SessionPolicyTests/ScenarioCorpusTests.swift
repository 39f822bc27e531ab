import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import Testing

/// The shipped scenarios, run through the library (the CLI tests run them through the binary).
@Suite("Scenario corpus")
struct ScenarioCorpusTests {
    /// With the scenarios of the conformance-only policy (spec/conformance/scenarios), which show
    /// what no shipped policy sets (read-only rules, messages of other reactions).
    static let input = CheckInput.load(
        policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples"), Fixtures.path("spec/conformance/scenarios")])

    @Test("shipped policies and scenarios load without diagnostics, not even a warning")
    func loads() {
        #expect(Self.input.diagnostics.isEmpty, "\(Self.input.diagnostics)")
        #expect(Self.input.scenarios.count >= 30)
    }

    /// A scenario's key: names are unique only within their file, so the file is part of it.
    struct Key: Hashable, Sendable, CustomTestStringConvertible {
        var file: String
        var name: String
        var testDescription: String { "\(file.split(separator: "/").last ?? ""): \(name)" }
    }

    static let keys = input.scenarios.map { Key(file: $0.file, name: $0.name) }

    @Test("every shipped scenario has its own key (file and name)")
    func keysUnique() {
        #expect(Set(Self.keys).count == Self.input.scenarios.count)
    }

    @Test("every shipped scenario passes", arguments: keys)
    func passes(_ key: Key) throws {
        let found = Self.input.scenarios.filter { $0.file == key.file && $0.name == key.name }
        #expect(found.count == 1)
        let s = try #require(found.first)
        let result = ScenarioRunner.run(s, against: try #require(Self.input.policies[s.policy]).compiled)
        #expect(result.passed, "\(result.failure?.mismatches ?? [])")
    }

    @Test("the in-place evaluate decides every step of every shipped scenario as evaluate and explain do", arguments: keys)
    func inPlaceAgrees(_ key: Key) throws {
        let s = try #require(Self.input.scenarios.first { $0.file == key.file && $0.name == key.name })
        let policy = try #require(Self.input.policies[s.policy]).compiled
        var session = s.initial
        var steps = 0
        for step in s.steps {
            guard case let .success(event) = step.event else { continue }
            let before = session
            let outcome = policy.evaluate(before, event)
            let verdict = policy.evaluate(&session, event)
            #expect(verdict == outcome.verdict, "step \(steps + 1)")
            #expect(session == outcome.state, "step \(steps + 1)")
            #expect(Outcome(verdict, state: session) == policy.explain(before, event).0, "step \(steps + 1)")
            steps += 1
        }
        // A scenario of refused inputs only has no step to compare.
        #expect(steps > 0 || s.steps.allSatisfy { if case .failure = $0.event { true } else { false } })
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
        s.steps[index].expect.reason = .offlineWindowExceeded
        let result = ScenarioRunner.run(s, against: try #require(Self.input.policies[s.policy]).compiled)
        let failure = try #require(result.failure)
        #expect(failure.mismatches == ["reason: expected `offline_window_exceeded`, got `session_max_exceeded`"])
        #expect(failure.trace.last?.matched == true)
        #expect(failure.trace.last?.levers.first == "session.max")
    }
}
