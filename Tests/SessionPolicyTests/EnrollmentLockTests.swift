import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

@testable import SessionPolicyVerify

/// Issue 32, section 1: an enrollment change locks the device's biometric path until an IdP
/// login, across sign-outs, wipes and adoptions, and `enrollment-change` checks exactly that.
@Suite("Enrollment lock")
struct EnrollmentLockTests {
    /// The user properties written from the built-in properties' sentences (docs/verify.md).
    static func sentences() throws -> [UserProperty] {
        let file = "Tests/Fixtures/properties/built-in-sentences.yaml"
        guard case let .success(root?) = YAMLSyntax.parse(Fixtures.text(file), file: file) else {
            Issue.record("\(file) does not parse")
            return []
        }
        let (properties, diagnostics) = PropertyLoader.load(root, file: file)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        return properties
    }

    /// The engine before issue 32, as far as a machine can say it: an enrollment change while
    /// signed out locks nothing, and an adoption does not look at the lock. (Its evaluator also
    /// cleared the lock on a wipe and on an adoption; the first run of the issue needs neither.)
    static func oldMachine(_ policy: CompiledPolicy) -> CompiledPolicy {
        let machine = policy.machine.replacingTransitions { list in
            list.removeAll { $0.from == .signedOut && $0.event == .deviceSessionDetected && $0.guard == .biometricLocked }
            for i in list.indices where list[i].from == .signedOut && list[i].event == .biometricEnrollmentChanged {
                list[i].action.effects.remove(.lockBiometric)
            }
        }
        return CompiledPolicy(policy.validated, machine: machine)
    }

    @Test("verify finds the issue's first run on the old engine, for the built-in property and for its sentence")
    func oldEngineViolates() throws {
        let policy = try Fixtures.policy("cross-app-device-sso")
        let report = Verifier.verify(Self.oldMachine(policy), stateLimit: 3_000, properties: try Self.sentences())
        let builtIn = try #require(report.properties.first { $0.id == "enrollment-change" })
        #expect(builtIn.status == .violated)
        let c = try #require(builtIn.counterexample)
        #expect(c.concrete)
        #expect(c.steps.map(\.event.kind) == [.biometricEnrollmentChanged, .deviceSessionDetected, .biometricSucceeded])
        #expect(c.steps.last?.decision == .allow && c.steps.last?.reason == .biometricVerified)
        let written = try #require(report.properties.first { $0.id == "enrollment-change-as-written" })
        #expect(written.status == .violated)
        // The same run on the engine ends without `allow`: the adoption asks for an IdP login.
        var state = SessionState()
        var decisions: [Decision?] = []
        for step in c.steps {
            let outcome = policy.evaluate(state, step.event)
            decisions.append(outcome.decision)
            state = outcome.state
        }
        #expect(decisions == [nil, .idpLogin, .idpLogin])
    }

    @Test("the engine keeps every built-in property and its sentence on cross-app-device-sso, with no disagreement")
    func engineProves() throws {
        let policy = try Fixtures.policy("cross-app-device-sso")
        let report = Verifier.verify(policy, properties: try Self.sentences())
        #expect(report.exhaustive && report.inconsistencies.isEmpty)
        for p in report.properties where p.status != .notApplicable {
            #expect(p.status == .proved, "\(p.id): \(p.counterexample?.detail ?? "")")
        }
        #expect(report.properties.filter { $0.status == .proved }.count == BuiltInProperty.allCases.count - 1 + 3)
    }

    /// Events of the issue's second run, at one minute apart from `t0`.
    static func run(_ policy: CompiledPolicy, _ kinds: [EventKind]) -> [Outcome] {
        let t0 = Verifier.start
        let device = Event.DeviceFacts(id: "vendor-device-1", keystore: .hardware, integrity: .ok)
        var state = SessionState()
        var out: [Outcome] = []
        for (i, kind) in kinds.enumerated() {
            var e = Event(
                kind, at: Timestamp(millisecondsSinceEpoch: t0 + Int64(i) * 60_000), network: .online, user: "dana", device: device,
                authMode: kind == .idpLoginSucceeded ? .biometric : nil)
            if kind == .deviceSessionDetected { e.appID = "com.example.crm" }
            let o = policy.evaluate(state, e)
            out.append(o)
            state = o.state
        }
        return out
    }

    @Test("the lock outlives a logout's wipe and an adoption; only an IdP login clears it")
    func lockOutlivesWipe() throws {
        let policy = try Fixtures.policy("cross-app-device-sso")
        let r = Self.run(policy, [.idpLoginSucceeded, .biometricEnrollmentChanged, .logout, .deviceSessionDetected, .biometricSucceeded])
        #expect(r.map(\.decision) == [.allow, .idpLogin, .wipe, .idpLogin, .idpLogin])
        #expect(r[2].state.biometricLocked && r[2].state.user == nil)
        #expect(r[3].reason == .biometricEnrollmentChanged)
        let after = Self.run(policy, [.biometricEnrollmentChanged, .idpLoginSucceeded])
        #expect(after[0].state.biometricLocked && !after[1].state.biometricLocked)
    }

    /// `adopt: allow` prompts for nothing: the adoption goes ahead and keeps the lock, so a
    /// prompt a rule asks for later is still refused.
    static let adoptAllow = """
        version: 1
        name: adopt-allow
        offline: { credential: offline_token, window: 7d }
        auth_modes: { offline: [none, biometric] }
        cross_app: { adopt: allow, apps: [com.example.crm] }
        rules:
          - name: offline-step-up
            when: network == offline
            then: { decision: require_biometric, reason: offline_step_up }
        """

    @Test("an adoption without a prompt keeps the lock: a later prompt is refused")
    func adoptionKeepsLock() throws {
        let policy = try PolicyFile.compile(text: Self.adoptAllow, file: "adopt-allow.yaml").get()
        let r = Self.run(policy, [.biometricEnrollmentChanged, .deviceSessionDetected])
        #expect(r[1].decision == .allow && r[1].state.biometricLocked)
        let device = Event.DeviceFacts(id: "vendor-device-1", keystore: .hardware, integrity: .ok)
        let t = Timestamp(millisecondsSinceEpoch: Verifier.start + 600_000)
        let launch = policy.evaluate(r[1].state, Event(.launch, at: t, network: .offline, user: "dana", device: device))
        #expect(launch.decision == .requireBiometric)
        let prompt = policy.evaluate(launch.state, Event(.biometricSucceeded, at: t, network: .offline, user: "dana", device: device))
        #expect(prompt.decision == .idpLogin && prompt.reason == .biometricEnrollmentChanged)
    }
}
