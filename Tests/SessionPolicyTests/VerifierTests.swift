import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
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
        #expect(copy.contains(Self.ages([.lastIdPLogin: 7000, .lastOnline: 7000])))
        #expect(!copy.contains(Self.ages([.lastIdPLogin: 7000, .lastOnline: 6000])))
        // Above a bound of 100 for every clock, 5001 and more are all "more than 100".
        var m = past
        m.extrapolate([0, 100, 100, 100, 100, 100])
        #expect(m.contains(Self.ages([.lastIdPLogin: 101])))
        #expect(!m.contains(Self.ages([.lastIdPLogin: 100])))
    }

    @Test("one evaluation per class proves what evaluating every step and choice proves, with no disagreement")
    func selfCheck() throws {
        let policy = try Fixtures.policy("i360-salesforce")
        let fast = Verifier.verify(policy)
        let checked = Verifier.verify(policy, selfCheck: true)
        #expect(checked.inconsistencies.isEmpty, "\(checked.inconsistencies)")
        #expect(fast.holds && checked.holds)
        #expect(fast.properties.map(\.status) == checked.properties.map(\.status))
        #expect(fast.deadTransitions.map(\.transition) == checked.deadTransitions.map(\.transition))
        #expect(fast.states == checked.states && fast.steps == checked.steps)
    }

    static func ages(_ values: [Zone.Clock: Int64]) -> Ages {
        var a = Ages()
        for (c, v) in values { a[c] = v }
        return a
    }

    static let shipped = Fixtures.files(in: "policies").map { ($0 as NSString).lastPathComponent }

    @Test("verify's symbolic successors agree with the engine on the first 100 abstract states, every step checked", arguments: shipped)
    func consistent(_ file: String) throws {
        let policy = try Fixtures.policy((file as NSString).deletingPathExtension)
        let report = Verifier.verify(policy, stateLimit: 100, selfCheck: true)
        #expect(report.inconsistencies.isEmpty, "\(report.inconsistencies)")
        #expect(report.states > 10)
        // Stopped at the limit, nothing is claimed: no property is proved, no transition dead.
        #expect(!report.exhaustive && !report.holds)
        #expect(report.properties.allSatisfy { $0.status != .proved })
        #expect(report.deadTransitions.isEmpty)
    }

    @Test("a clock check placed before the single-user check is caught: another user's rolled-back launch escapes its wipe")
    func clockCheckFirst() throws {
        let policy = try Fixtures.policy("i360-salesforce")
        // The fault this check once had: the clock check first in every login attempt.
        let machine = policy.machine.replacingTransitions { list in
            let clock = list.filter { if case .clockRolledBack = $0.guard { true } else { false } }
            list.removeAll { if case .clockRolledBack = $0.guard { true } else { false } }
            for t in clock.reversed() {
                let first = list.firstIndex { $0.from == t.from && $0.event == t.event && $0.guard != .deviceCompromised }
                list.insert(t, at: first ?? list.endIndex)
            }
        }
        let report = Verifier.verify(CompiledPolicy(policy.validated, machine: machine), stateLimit: 300)
        let result = try #require(report.properties.first { $0.id == "clock-rollback" })
        #expect(result.status == .violated)
        let c = try #require(result.counterexample)
        #expect(c.concrete && c.expected == .wipe)
        #expect(c.steps.last?.decision == .idpLogin && c.steps.last?.reason == .clockRollback)
        // The counterexample is a run of the mutated machine, and the true engine wipes.
        var state = SessionState()
        for step in c.steps.dropLast() { state = policy.evaluate(state, step.event).state }
        let last = try #require(c.steps.last)
        #expect(policy.evaluate(state, last.event).decision == .wipe)
    }

    /// A policy whose rule asks a non-biometric session for a biometric prompt offline.
    static let stepUp = """
        version: 1
        name: step-up
        offline:
          credential: offline_token
          window: 7d
        auth_modes:
          offline: [none, biometric]
        rules:
          - name: offline-step-up
            when: network == offline
            then: { decision: require_biometric, reason: offline_step_up }
        """

    @Test("a fingerprint added to a session that is not biometric still cannot pass a prompt a rule asks for later")
    func enrollmentLocksEveryPrompt() throws {
        let policy = try PolicyFile.compile(text: Self.stepUp, file: "step-up.yaml").get()
        let t0 = Timestamp(millisecondsSinceEpoch: Verifier.start)
        func at(_ s: Int64) -> Timestamp { Timestamp(millisecondsSinceEpoch: t0.millisecondsSinceEpoch + s * 1000) }
        var state = SessionState()
        let device = Event.DeviceFacts(id: "phone", keystore: .hardware, integrity: .ok)
        state =
            policy.evaluate(state, Event(.idpLoginSucceeded, at: t0, network: .online, user: "ana", device: device, authMode: .unprotected))
            .state
        let changed = policy.evaluate(state, Event(.biometricEnrollmentChanged, at: at(60)))
        #expect(changed.decision == nil && changed.state.biometricLocked)
        let launch = policy.evaluate(changed.state, Event(.launch, at: at(120), network: .offline, user: "ana", device: device))
        #expect(launch.decision == .requireBiometric && launch.reason.rawValue == "offline_step_up")
        let prompt = policy.evaluate(launch.state, Event(.biometricSucceeded, at: at(130), network: .offline, user: "ana", device: device))
        #expect(prompt.decision == .idpLogin && prompt.reason == .biometricEnrollmentChanged)
        // Online, the rule asks nothing: the session that is not biometric goes on as before.
        let online = policy.evaluate(changed.state, Event(.launch, at: at(120), network: .online, user: "ana", device: device))
        #expect(online.decision == .allow)
    }
}
