import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import Testing

/// The minimal scenarios the differential tests found (Tests/Fixtures/reference-diff: each a
/// policy and a scenario file, shrunk, with the lines of the reference that decide it), kept as regression
/// tests: every one passes on the engine.
@Suite("Reference reproducers")
struct ReproducerTests {
    static let folder = Fixtures.path("Tests/Fixtures/reference-diff")
    static let input = CheckInput.load(policies: [folder], scenarios: [folder])

    @Test("every reproducer the differential tests found loads and passes")
    func passes() throws {
        #expect(Self.input.diagnostics.filter { $0.severity == .error }.isEmpty, "\(Self.input.diagnostics)")
        #expect(Self.input.scenarios.count >= 3)
        for s in Self.input.scenarios {
            let result = ScenarioRunner.run(s, against: try #require(Self.input.policies[s.policy]).compiled)
            #expect(result.passed, "\(s.file): \(s.name): \(result.failure?.mismatches ?? [])")
        }
    }
}
