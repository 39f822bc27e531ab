import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// Regressions from an adversarial review: each of these once failed open, trapped or was off by a fraction.
@Suite("Fail closed")
struct FailClosedTests {
    static let t0 = Timestamp.parse("2026-03-01T09:00:00Z")!

    func compile(_ yaml: String) throws -> CompiledPolicy {
        try PolicyFile.compile(text: "version: 1\nname: t\n" + yaml, file: "t.yaml").get()
    }

    @Test("a policy built in code gets the file's checks: read_only cannot end a session")
    func codeBuiltPolicy() {
        var p = Policy(name: "x")
        p.session.max = .days(1)
        p.session.onExpired = .readOnly
        #expect(throws: DiagnosticError.self) { try CompiledPolicy(p) }
        var q = Policy(name: "y")
        q.device.compromised = .readOnly
        q.authModes.offline = [.password]
        q.retry.biometric.max = 0
        do {
            _ = try CompiledPolicy(q)
            Issue.record("compiled")
        } catch {
            #expect(error.diagnostics.map(\.code) == [.offlineModeNeedsIdP, .reactionNotAllowed, .retryMaxBelowOne])
        }
    }

    @Test("a failure counter at the integer maximum neither traps nor allows")
    func counterOverflow() throws {
        let p = try Fixtures.policy("kobil-offline-token")
        let s = SessionState(
            state: .awaitingBiometric, user: "a", authMode: .biometric, lastIdPLogin: Self.t0,
            failures: .init(biometric: Int.max, offlineLogin: Int.max, idpLogin: Int.max))
        let o = p.evaluate(s, Event(.biometricFailed, at: Self.t0.adding(.minutes(1))))
        #expect(o.decision == .idpLogin)
        #expect(o.reason == .biometricRetriesExhausted)
        #expect(o.state.failures.biometric == Int.max)
        let idp = p.evaluate(s, Event(.idpLoginFailed, at: Self.t0.adding(.minutes(1))))
        #expect(idp.decision == .wipe)
    }

    @Test("an abandoned biometric prompt does not keep an idle session alive")
    func idleKeepAlive() throws {
        let p = try compile("session:\n  idle: 3d\nauth_modes:\n  offline: [biometric]\n")
        var s = SessionState(
            state: .suspended, user: "a", authMode: .biometric, lastIdPLogin: Self.t0, lastOnline: Self.t0,
            lastActivity: Self.t0, highestTime: Self.t0)
        // Day 3: exactly at the idle limit, a prompt; the user backgrounds the app without answering it.
        let prompt = p.evaluate(s, Event(.launch, at: Self.t0.adding(.days(3)), network: .offline, user: "a"))
        #expect(prompt.decision == .requireBiometric)
        s = p.evaluate(prompt.state, Event(.background, at: Self.t0.adding(.days(3)))).state
        #expect(s.lastActivity == Self.t0)
        let o = p.evaluate(s, Event(.launch, at: Self.t0.adding(.days(6)), network: .offline, user: "a"))
        #expect(o.decision == .idpLogin)
        #expect(o.reason == .sessionIdleExceeded)
    }

    @Test("a clock rollback is caught even when the state records no highest time")
    func rollbackWithoutHighest() throws {
        let p = try Fixtures.policy("kobil-offline-token")
        let s = SessionState(state: .suspended, user: "a", authMode: .unprotected, lastIdPLogin: Self.t0, lastOnline: Self.t0)
        let o = p.evaluate(s, Event(.launch, at: Self.t0.subtracting(.days(300)), network: .offline, user: "a"))
        #expect(o.reason == .clockRollback)
        #expect(o.state.highestTime == Self.t0)
    }

    @Test("limits hold at exactly the limit and not one millisecond more")
    func fractionBoundary() throws {
        let p = try Fixtures.policy("spendiq")
        let s = SessionState(
            state: .suspended, user: "a", authMode: .unprotected, lastIdPLogin: Self.t0, lastOnline: Self.t0,
            lastActivity: Self.t0, highestTime: Self.t0)
        let at = Timestamp.parse("2026-03-08T09:00:00.000Z")!
        #expect(p.evaluate(s, Event(.launch, at: at, network: .offline, user: "a")).decision == .allow)
        let over = Timestamp.parse("2026-03-08T09:00:00.001Z")!
        #expect(p.evaluate(s, Event(.launch, at: over, network: .offline, user: "a")).decision == .wipe)
        #expect(over.description == "2026-03-08T09:00:00.001Z")
    }

    @Test(
        "times outside the years 0001 to 9999 are refused, so every stored time reads back",
        arguments: ["0000-01-01T00:00:00+01:00", "9999-12-31T23:59:59-23:59", "10000-01-01T00:00:00Z"])
    func timeRange(_ text: String) {
        #expect(Timestamp.parse(text) == nil)
    }

    @Test("a file starting with a byte-order mark reads like any other")
    func byteOrderMark() throws {
        let text = "\u{FEFF}version: 1\nname: bom\n"
        let p = try PolicyFile.compile(text: text, file: "bom.yaml").get()
        #expect(p.name == "bom")
    }

    @Test("a very long line is quoted around the column, not in full")
    func longLine() {
        let text = "version: 1\nname: t\ndescription: " + String(repeating: "x", count: 5_000) + "\noffline:\n  windw: 7d\n"
        guard
            case let .failure(e) = PolicyFile.compile(
                text: "version: 1\nname: t\nsession: " + String(repeating: "y", count: 5_000), file: "l.yaml")
        else { Issue.record("accepted"); return }
        let out = DiagnosticRenderer(sources: ["l.yaml": "version: 1\nname: t\nsession: " + String(repeating: "y", count: 5_000)]).render(
            e.diagnostics)
        #expect(out.count < 600, "\(out.count) characters")
        _ = text
    }
}
