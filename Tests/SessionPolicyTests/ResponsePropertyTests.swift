import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

@testable import SessionPolicyVerify

/// Issue 32, section 2: `responds` is strict (a step does not answer itself), and the shipped
/// property `failed-prompt-answered` can fail.
@Suite("Response properties")
struct ResponsePropertyTests {
    static func load(_ text: String, file: String) throws -> [UserProperty] {
        guard case let .success(root?) = YAMLSyntax.parse(text, file: file) else {
            Issue.record("\(file) does not parse")
            return []
        }
        let (properties, diagnostics) = PropertyLoader.load(root, file: file)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        return properties
    }

    static func shipped() throws -> [UserProperty] {
        let file = "examples/properties/sessions.yaml"
        return try load(Fixtures.text(file), file: file).filter { $0.id == "failed-prompt-answered" }
    }

    /// docs/verify.md's example: a failure answered only by a later failure.
    static let strict = """
        properties:
          - id: failure-followed-by-failure
            responds: { when: { event: biometric_failed }, then: { event: biometric_failed } }
            before: { event: idp_login_succeeded }
        """

    @Test("a step matching both `when` and `then` does not answer itself: one failure, then an IdP login, breaks it")
    func strictViolated() throws {
        let policy = try Fixtures.policy("kobil-offline-token")
        let report = Verifier.verify(policy, stateLimit: 3_000, properties: try Self.load(Self.strict, file: "strict.yaml"))
        let r = try #require(report.properties.first { $0.id == "failure-followed-by-failure" })
        #expect(r.status == .violated)
        let kinds = try #require(r.counterexample).steps.map(\.event.kind)
        #expect(kinds.filter { $0 == .biometricFailed }.count == 1 && kinds.last == .idpLoginSucceeded)
    }

    @Test("the shipped failed-prompt-answered is proved on kobil-offline-token")
    func shippedProved() throws {
        let policy = try Fixtures.policy("kobil-offline-token")
        let report = Verifier.verify(policy, properties: try Self.shipped())
        #expect(report.exhaustive)
        let r = try #require(report.properties.first { $0.id == "failed-prompt-answered" })
        #expect(r.status == .proved)
    }

    @Test("failed-prompt-answered fails on an engine whose exhausted prompt stays open")
    func shippedCanFail() throws {
        let policy = try Fixtures.policy("kobil-offline-token")
        // The fault: past the biometric retry limit the user is told to log in at the IdP, but
        // the prompt stays pending, so the next try lets the user in.
        let machine = policy.machine.replacingTransitions { list in
            for i in list.indices where list[i].action.reason == .biometricRetriesExhausted {
                list[i].action.target = .unchanged
            }
        }
        let report = Verifier.verify(CompiledPolicy(policy.validated, machine: machine), stateLimit: 3_000, properties: try Self.shipped())
        let r = try #require(report.properties.first { $0.id == "failed-prompt-answered" })
        #expect(r.status == .violated)
        let c = try #require(r.counterexample)
        #expect(c.steps.last?.event.kind == .biometricSucceeded && c.steps.last?.decision == .allow)
    }
}
