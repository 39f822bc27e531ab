import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import Testing

@testable import SessionPolicyVerify

/// `policyctl verify`'s engine: the zones it explores with, and its agreement with the evaluator.
@Suite("Verifier")
struct VerifierTests {
    @Test("a zone splits at a threshold into the ages above it and the rest, and finds a point in each")
    func split() throws {
        var z = Zone()
        z.assign(.lastIdPLogin, from: .reference)  // age 0: the login is now
        z.elapse()  // any time later
        let (above, notAbove) = z.split(.lastIdPLogin, above: 1000)
        let a = try #require(above)
        let b = try #require(notAbove)
        #expect(a.point([.lastIdPLogin])[.lastIdPLogin] == 1001)
        #expect(b.point([.lastIdPLogin])[.lastIdPLogin] == 0)
        #expect(z.includes(a) && z.includes(b) && !a.includes(b) && !b.includes(a))
        #expect(b.constrained(.reference, .lastIdPLogin, -1001) == nil, "above 1000 and at most 1000 is empty")
    }

    @Test("assigning a clock copies another's age; extrapolation forgets what lies past the largest constant")
    func assignAndExtrapolate() throws {
        var z = Zone()
        z.assign(.lastIdPLogin, from: .reference)
        z.elapse()
        let past = try #require(z.split(.lastIdPLogin, above: 5000).above)
        var copy = past
        copy.assign(.lastOnline, from: .lastIdPLogin)
        #expect(copy.contains([.lastIdPLogin: 7000, .lastOnline: 7000]))
        #expect(!copy.contains([.lastIdPLogin: 7000, .lastOnline: 6000]))
        // Above a bound of 100 for every clock, 5001 and more are all "more than 100".
        var m = past
        m.extrapolate([0, 100, 100, 100, 100, 100])
        #expect(m.contains([.lastIdPLogin: 101]))
        #expect(!m.contains([.lastIdPLogin: 100]))
    }

    static let shipped = Fixtures.files(in: "policies").map { ($0 as NSString).lastPathComponent }

    @Test("verify's symbolic successors agree with the engine on the first 100 abstract states", arguments: shipped)
    func consistent(_ file: String) throws {
        let policy = try Fixtures.policy((file as NSString).deletingPathExtension)
        let report = Verifier.verify(policy, stateLimit: 100)
        #expect(report.inconsistencies.isEmpty, "\(report.inconsistencies)")
        #expect(report.states > 10)
        // Stopped at the limit, nothing is claimed: no property is proved, no transition dead.
        #expect(!report.exhaustive && !report.holds)
        #expect(report.properties.allSatisfy { $0.status != .proved })
        #expect(report.deadTransitions.isEmpty)
    }
}
