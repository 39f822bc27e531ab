import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// A login that ends one session and establishes another (another user, another device) passes
/// every check a fresh login faces (docs/how-a-decision-is-made.md, "Switching user or device"). Checked on the structure
/// of every compiled machine, and on the decisions themselves.
@Suite("Switching user or device")
struct SessionSwitchTests {
    static let shipped = Fixtures.files(in: "policies").map { String($0.dropFirst("policies/".count).dropLast(".yaml".count)) }

    /// Policies beyond the shipped ones: every combination of the two switches, and rules of
    /// every kind on `idp_login_succeeded` (wipe, IdP, read-only acceptance, a fact-missing path).
    static let extra: [String: String] = {
        var out: [String: String] = [:]
        for single in [true, false] {
            for bind in [true, false] {
                out["switch-\(single)-\(bind)"] = """
                    version: 1
                    name: switch-\(single)-\(bind)
                    auth_modes: { offline: [none, biometric] }
                    signals: { license_revoked: read_only }
                    device: { single_user: \(single), bind_session: \(bind) }
                    cross_app: { adopt: allow, apps: [app-1] }
                    attributes:
                      tier: [gold, basic, blocked]
                    rules:
                      - name: blocked
                        on: [idp_login_succeeded, launch]
                        when: tier == blocked
                        then: { decision: wipe, reason: blocked }
                      - name: basic-needs-idp-again
                        on: [idp_login_succeeded]
                        when: tier == basic and auth_mode == password
                        then: { decision: idp_login, reason: stronger_login_needed }
                      - name: basic-read-only
                        on: [idp_login_succeeded]
                        when: tier == basic
                        then: { state: read_only, reason: basic_read_only }
                    """
            }
        }
        return out
    }()

    static func compiled(_ name: String) throws -> CompiledPolicy {
        if let text = extra[name] { return try PolicyFile.compile(text: text, file: "\(name).yaml").get() }
        return try Fixtures.policy(name)
    }

    static let all = shipped + extra.keys.sorted()

    /// Guards that read only the event, so a check of them before a switch holds for the new login too.
    static func readsOnlyTheEvent(_ g: Guard) -> Bool {
        switch g {
        case .deviceCompromised, .networkOffline, .refreshCause, .unsyncedItems, .appNotTrusted, .keystoreNotHardware: true
        default: false
        }
    }

    @Test("no transition establishes a session while skipping a guard the same event faces from signed_out", arguments: all)
    func noSkippedGuard(_ name: String) throws {
        let p = try Self.compiled(name)
        var establishing = 0
        for event in EventKind.allCases {
            let fresh = Array(p.machine.transitions(from: .signedOut, on: event))
            for state in MachineState.allCases where state.hasSession {
                let chain = Array(p.machine.transitions(from: state, on: event))
                for (k, t) in chain.enumerated() where t.action.effects.contains(.establish) {
                    establishing += 1
                    var kind: SessionSwitch?
                    var g = t.guard
                    if case let .switched(k, inner) = t.guard { (kind, g) = (k, inner) }
                    // The fresh login's transition with the same guard, and what it faced first.
                    let twin = try #require(
                        fresh.firstIndex { $0.guard == g && $0.action.effects.contains(.establish) },
                        "\(name): #\(t.id) (\(state) on \(event)) establishes a session where no fresh login does")
                    let required = fresh[..<twin].map(\.guard)
                    let faced: [Guard] = chain[..<k].compactMap { u in
                        if case let .switched(uk, inner) = u.guard { return uk == kind ? inner : nil }
                        return kind == nil || Self.readsOnlyTheEvent(u.guard) ? u.guard : nil
                    }
                    for r in required where !faced.contains(r) {
                        Issue.record("\(name): #\(t.id) (\(state) on \(event)) establishes without facing `\(p.machine.describe(r))`")
                    }
                    // A plain (same-session) login is reached only once every switch was ruled out.
                    if kind == nil {
                        if p.policy.device.singleUser {
                            #expect(
                                chain[..<k].contains { $0.guard == .switched(.user, .always) }, "\(name): #\(t.id) skips the user switch")
                        }
                        if p.policy.device.bindSession {
                            #expect(
                                chain[..<k].contains { $0.guard == .switched(.device, .always) }, "\(name): #\(t.id) skips device binding")
                        }
                    }
                }
            }
        }
        #expect(establishing > 0)
    }

    static let t0 = Timestamp.parse("2026-01-10T08:00:00Z")!

    /// Every attribute combination a policy's rules could see, including "not reported".
    static func attributeCombinations(_ p: CompiledPolicy) -> [[String: String]] {
        var combos: [[String: String]] = [[:]]
        for a in p.policy.attributes {
            guard case let .words(words) = a.type else { continue }
            combos = combos.flatMap { c in [c] + words.map { c.merging([a.name: $0]) { $1 } } }
        }
        return combos
    }

    @Test("a switched login decides exactly as a fresh one, after wiping the previous session", arguments: all)
    func switchedDecidesAsFresh(_ name: String) throws {
        let p = try Self.compiled(name)
        var checked = 0
        for state in MachineState.allCases where state.hasSession {
            for mode in AuthMode.allCases {
                let alice = SessionState(
                    state: state, user: "alice", device: "phone-1", authMode: mode, lastIdPLogin: Self.t0, lastOnline: Self.t0,
                    lastActivity: Self.t0, highestTime: Self.t0.adding(TimeSpan(seconds: 60)),
                    failures: .init(biometric: 1, offlineLogin: 1, idpLogin: 1), readOnly: state == .readOnly)
                // Another user; another device; both (the device is checked first).
                for (user, device) in [("bob", "phone-1"), ("alice", "phone-2"), ("bob", "phone-2")] {
                    for attributes in Self.attributeCombinations(p) {
                        for login in AuthMode.allCases {
                            let e = Event(
                                .idpLoginSucceeded, at: Self.t0.adding(TimeSpan(seconds: 3600)), network: .online, user: user,
                                device: .init(id: device), authMode: login, attributes: attributes)
                            let switched = p.evaluate(alice, e)
                            var cleared = SessionState()
                            cleared.highestTime = alice.highestTime
                            let fresh = p.evaluate(cleared, e)
                            checked += 1
                            let expectedKind: SessionSwitch? =
                                p.policy.device.bindSession && device != alice.device
                                ? .device : p.policy.device.singleUser && user != alice.user ? .user : nil
                            guard let expectedKind else {
                                // No switch applies: the login is judged against the session it continues.
                                #expect(switched.reason != SessionSwitch.user.reason && switched.reason != SessionSwitch.device.reason)
                                continue
                            }
                            #expect(switched.decision == .wipe, "\(name) \(state) \(user)@\(device) \(attributes): \(switched.reason)")
                            #expect(switched.state == fresh.state, "\(name) \(state) \(user)@\(device) \(attributes)")
                            let reason = fresh.reason == .idpLoginSucceeded ? expectedKind.reason : fresh.reason
                            #expect(switched.reason == reason, "\(name) \(state) \(user)@\(device) \(attributes)")
                            #expect(switched.noticeDelay == fresh.noticeDelay)
                            #expect(switched.authMode == nil && switched.scope == nil)
                        }
                    }
                }
            }
        }
        #expect(checked > 0)
    }

    @Test("the reported case: another user without a licence is refused on i360-marketsharp, from any session state")
    func reportedCase() throws {
        let p = try Fixtures.policy("i360-marketsharp")
        for state in MachineState.allCases {
            let s = SessionState(
                state: state, user: state == .signedOut ? nil : "alice", device: state == .signedOut ? nil : "phone-3",
                authMode: state == .signedOut ? nil : .unprotected, lastIdPLogin: Self.t0, lastOnline: Self.t0, lastActivity: Self.t0,
                highestTime: Self.t0)
            let e = Event(
                .idpLoginSucceeded, at: Self.t0.adding(TimeSpan(seconds: 86400)), network: .online, user: "bob",
                device: .init(id: "phone-3"), authMode: .unprotected, attributes: ["company_license_format": "named", "license": "none"])
            let o = p.evaluate(s, e)
            #expect(o.decision == .wipe && o.reason == Reason("no_license"), "\(state): \(o.reason)")
            #expect(o.state.state == .signedOut && o.state.user == nil, "\(state)")
            let next = p.evaluate(o.state, Event(.launch, at: Self.t0.adding(TimeSpan(seconds: 86460)), network: .offline, user: "bob"))
            #expect(next.decision == .idpLogin && next.reason == .noSession, "\(state)")
        }
    }
}
