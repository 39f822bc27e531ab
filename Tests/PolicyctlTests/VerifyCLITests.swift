import Foundation
import SessionPolicyTestSupport
import Testing

/// `policyctl verify` as a user runs it.
@Suite("policyctl verify")
struct VerifyCLITests {
    @Test("a violation is a concrete run of the engine, written as a scenario that check runs and fails at its last step")
    func counterexample() throws {
        let dir = try Fixtures.temporaryDirectory("verify")
        let r = try CLI.run(["verify", "policies/i360-salesforce.yaml", "--state-limit", "300", "--counterexamples", dir.path])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("violated clock-rollback"))
        let file = dir.appendingPathComponent("i360-salesforce-clock-rollback.yaml").path
        let check = try CLI.run(["check", file])
        #expect(check.status == 1, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("step 2 (launch"), "\(check.stdout)")
        #expect(check.stdout.contains("decision: expected `wipe`, got `idp_login`"), "\(check.stdout)")
    }
}
