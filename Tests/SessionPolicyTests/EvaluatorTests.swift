import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

@Suite("Compiler and evaluator")
struct EvaluatorTests {
    static let policies = ["kobil-offline-token", "kobil-signed-jwt", "kobil-signed-jwt-hardware", "spendiq"]
    static let t0 = Timestamp.parse("2026-03-01T09:00:00Z")!

    func at(_ span: TimeSpan) -> Timestamp { Self.t0.adding(span) }

    func signedIn(_ mode: AuthMode, state: MachineState = .suspended) -> SessionState {
        SessionState(
            state: state, user: "alice", device: "d1", authMode: mode, lastIdPLogin: Self.t0, lastOnline: Self.t0,
            lastActivity: Self.t0, highestTime: Self.t0)
    }

    func launch(_ span: TimeSpan, network: Network = .offline, keystore: Keystore = .hardware) -> Event {
        Event(.launch, at: at(span), network: network, user: "alice", device: .init(id: "d1", keystore: keystore, integrity: .ok))
    }

    @Test("every (state, event) pair has transitions ending in `otherwise`", arguments: policies)
    func complete(_ name: String) throws {
        let p = try Fixtures.policy(name)
        for s in MachineState.allCases {
            for e in EventKind.allCases {
                let ts = p.machine.transitions(from: s, on: e)
                #expect(!ts.isEmpty, "\(s) on \(e)")
                #expect(ts.last?.guard == .always, "\(s) on \(e) does not end in `otherwise`")
                #expect(ts.dropLast().allSatisfy { $0.guard != .always }, "\(s) on \(e) has an unreachable transition")
            }
        }
        #expect(p.machine.transitions.enumerated().allSatisfy { $0.offset == $0.element.id })
    }

    @Test("every decision other than allow has a reason and a message (S5)", arguments: policies)
    func reasons(_ name: String) throws {
        let p = try Fixtures.policy(name)
        for t in p.machine.transitions where t.action.decision != .allow {
            #expect(!t.action.reason.rawValue.isEmpty)
            #expect(
                !t.action.message.isEmpty && t.action.message != t.action.reason.rawValue.replacingOccurrences(of: "_", with: " "),
                "transition \(t.id) has no written message for \(t.action.reason)")
        }
    }

    @Test("only the biometric path and mode none within limits allow; no signal ever does", arguments: policies)
    func allowOnlyWhereIntended(_ name: String) throws {
        let p = try Fixtures.policy(name)
        let allowing: Set<Reason> = [.withinLimits, .biometricVerified, .idpLoginSucceeded]
        for t in p.machine.transitions where t.action.decision == .allow {
            #expect(allowing.contains(t.action.reason), "transition \(t.id) allows with \(t.action.reason)")
        }
        let signals: Set<EventKind> = [.accountDeactivated, .tokensRevoked, .licenseRevoked, .biometricEnrollmentChanged, .logout]
        #expect(!p.machine.transitions.contains { signals.contains($0.event) && $0.action.decision == .allow })
    }

    @Test("limits are inclusive: at the limit holds, one second more exceeds it")
    func boundaries() throws {
        let kobil = try Fixtures.policy("kobil-offline-token")
        #expect(kobil.evaluate(signedIn(.unprotected), launch(.days(90))).decision == .allow)
        let past = kobil.evaluate(signedIn(.unprotected), launch(TimeSpan(seconds: 90 * 86_400 + 1)))
        #expect(past.decision == .idpLogin)
        #expect(past.reason == .sessionMaxExceeded)
        let spendiq = try Fixtures.policy("spendiq")
        #expect(spendiq.evaluate(signedIn(.unprotected), launch(.days(7))).decision == .allow)
        let wiped = spendiq.evaluate(signedIn(.unprotected), launch(TimeSpan(seconds: 7 * 86_400 + 1)))
        #expect(wiped.decision == .wipe)
        #expect(wiped.state == SessionState(highestTime: at(TimeSpan(seconds: 7 * 86_400 + 1))))
        #expect(wiped.notices == [.networkRequired])
    }

    @Test(
        "scopes follow credential, mode and keystore (K4)",
        arguments: [
            ("kobil-offline-token", AuthMode.unprotected, Keystore.software, Scope.noAuthOffline),
            ("kobil-offline-token", .biometric, .hardware, .bioAuthOffline),
            ("kobil-signed-jwt", .unprotected, .hardware, .noAuthGrant),
            ("kobil-signed-jwt", .biometric, .software, .bioAuthGrant),
            ("kobil-signed-jwt", .biometric, .hardware, .bioAuthGrantSE),
            ("kobil-signed-jwt-hardware", .biometric, .hardware, .bioAuthGrantSE),
        ])
    func scopes(policy: String, mode: AuthMode, keystore: Keystore, scope: Scope) throws {
        let p = try Fixtures.policy(policy)
        let o = p.evaluate(signedIn(mode), launch(.days(1), keystore: keystore))
        #expect(o.scope == scope)
        #expect(o.decision == (mode == .unprotected ? .allow : .requireBiometric))
    }

    @Test("an event missing a fact it needs never allows (X4)")
    func missingFacts() throws {
        let p = try Fixtures.policy("kobil-offline-token")
        var e = launch(.days(1))
        e.network = nil
        let o = p.evaluate(signedIn(.unprotected), e)
        #expect(o.decision == .idpLogin)
        #expect(o.reason == Reason("invalid_event"))
        let bad = p.evaluate(.signedOut, Event(.idpLoginSucceeded, at: Self.t0, network: .online, user: "alice"))
        #expect(bad.decision == .idpLogin)
    }

    @Test("a compromised device gets the policy's reaction from every state (X3)", arguments: policies)
    func compromisedEverywhere(_ name: String) throws {
        let p = try Fixtures.policy(name)
        for s in MachineState.allCases {
            for kind in [EventKind.launch, .resume, .biometricSucceeded, .idpLoginSucceeded] {
                var state = signedIn(.biometric, state: s)
                if s == .signedOut { state = .signedOut }
                let e = Event(
                    kind, at: at(.hours(1)), network: .online, user: "alice",
                    device: .init(id: "d1", keystore: .hardware, integrity: .compromised), authMode: .biometric)
                let o = p.evaluate(state, e)
                #expect(o.decision == .wipe, "\(s) on \(kind)")
                #expect(o.reason == .deviceCompromised)
            }
        }
    }

    @Test("an enrollment change locks only a biometric session's path; any other session is left as it is", arguments: policies)
    func enrollmentChange(_ name: String) throws {
        let p = try Fixtures.policy(name)
        for state in MachineState.allCases where state.hasSession {
            for mode in AuthMode.allCases {
                let s = signedIn(mode, state: state)
                let o = p.evaluate(s, Event(.biometricEnrollmentChanged, at: at(.seconds(60))))
                #expect(o.state.biometricLocked == (mode == .biometric), "\(state) \(mode)")
                if mode != .biometric {
                    #expect(o.decision == nil && o.state.state == state, "\(state) \(mode)")
                }
            }
        }
    }

    @Test("evaluation is deterministic and never reads a clock")
    func deterministic() throws {
        let p = try Fixtures.policy("spendiq")
        let a = p.evaluate(signedIn(.biometric), launch(.days(3)))
        let b = p.evaluate(signedIn(.biometric), launch(.days(3)))
        #expect(a == b)
        #expect(a.state.lastActivity == Self.t0)  // a prompt is not activity yet
        #expect(a.state.highestTime == at(.days(3)))
    }

    @Test("random states and events never produce allow for a revoked, rolled-back or compromised session")
    func randomized() throws {
        var rng = SplitMix(seed: 42)
        let p = try Fixtures.policy("kobil-signed-jwt")
        for _ in 0..<20_000 {
            let state = SessionState(
                state: MachineState.allCases.randomElement(using: &rng)!, user: ["alice", "bob", nil].randomElement(using: &rng)!,
                authMode: ([nil] + AuthMode.allCases.map { $0 }).randomElement(using: &rng)!,
                lastIdPLogin: Bool.random(using: &rng) ? at(.days(Int64.random(in: -200...0, using: &rng))) : nil,
                lastOnline: Bool.random(using: &rng) ? at(.days(Int64.random(in: -20...0, using: &rng))) : nil,
                highestTime: Bool.random(using: &rng) ? at(.days(Int64.random(in: -5...5, using: &rng))) : nil,
                failures: .init(biometric: Int.random(in: 0...5, using: &rng)),
                biometricLocked: Bool.random(using: &rng))
            let event = Event(
                EventKind.allCases.randomElement(using: &rng)!, at: Self.t0, network: Network.allCases.randomElement(using: &rng),
                user: ["alice", "bob", nil].randomElement(using: &rng)!,
                device: .init(
                    id: "d1", keystore: Keystore.allCases.randomElement(using: &rng),
                    integrity: Integrity.allCases.randomElement(using: &rng)),
                authMode: AuthMode.allCases.randomElement(using: &rng), cause: RefreshFailureCause.allCases.randomElement(using: &rng))
            let o = p.evaluate(state, event)
            if o.decision == .allow && event.kind != .idpLoginSucceeded {
                #expect(event.device.integrity != .compromised)
                #expect(state.authMode == .unprotected || state.authMode == .biometric, "\(event.kind) in \(state.state): \(o.reason)")
                #expect(!(state.biometricLocked && state.authMode == .biometric))
                if let h = state.highestTime { #expect(event.time.secondsSinceEpoch >= h.secondsSinceEpoch - 300) }
                #expect(state.lastIdPLogin != nil)
                #expect([EventKind.launch, .resume, .biometricSucceeded].contains(event.kind))
                #expect(event.kind != .biometricSucceeded || state.state == .awaitingBiometric)
            }
            if [EventKind.accountDeactivated, .tokensRevoked].contains(event.kind) {
                #expect(o.decision == .wipe)
            }
        }
    }
}

/// A small seeded generator so randomized tests are reproducible.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
