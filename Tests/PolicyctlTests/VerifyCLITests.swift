import Foundation
import SessionPolicyTestSupport
import Testing

/// `policyctl verify` as a user runs it.
@Suite("policyctl verify")
struct VerifyCLITests {
    @Test("an exploration stopped at its state limit proves nothing, says so, and exits 1")
    func stateLimit() throws {
        let r = try CLI.run(["verify", "policies/i360-salesforce.yaml", "--state-limit", "50"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("the exploration stopped at its state limit: nothing is proved"), "\(r.stdout)")
        #expect(!r.stdout.contains("proved "), "\(r.stdout)")
    }
}
