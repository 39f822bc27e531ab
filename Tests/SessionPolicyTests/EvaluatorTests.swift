import Foundation
import SessionPolicy
import SessionPolicyCheck
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

    @Test(
        "an enrollment change: a biometric session or a pending prompt gets the reaction; any other session keeps going; the device's prompts locked in every state, signed out and after a wipe too",
        arguments: policies)
    func enrollmentChange(_ name: String) throws {
        let p = try Fixtures.policy(name)
        let reaction = p.policy.signals.biometricEnrollmentChanged.then
        let signedOut = p.evaluate(SessionState(), Event(.biometricEnrollmentChanged, at: at(.seconds(60))))
        #expect(signedOut.decision == nil && signedOut.state.state == .signedOut && signedOut.state.biometricLocked)
        for state in MachineState.allCases where state.hasSession {
            for mode in AuthMode.allCases {
                let s = signedIn(mode, state: state)
                let o = p.evaluate(s, Event(.biometricEnrollmentChanged, at: at(.seconds(60))))
                if mode == .biometric || state == .awaitingBiometric {
                    #expect(o.decision == reaction.decision, "\(state) \(mode)")
                } else {
                    #expect(o.decision == nil && o.state.state == state, "\(state) \(mode)")
                }
                #expect(o.state.biometricLocked, "\(state) \(mode)")
            }
        }
    }

    @Test("evaluation is deterministic: the same input gives the same outcome")
    func deterministic() throws {
        let p = try Fixtures.policy("spendiq")
        let a = p.evaluate(signedIn(.biometric), launch(.days(3)))
        let b = p.evaluate(signedIn(.biometric), launch(.days(3)))
        #expect(a == b)
        #expect(a.state.lastActivity == Self.t0)  // a prompt is not activity yet
        #expect(a.state.highestTime == at(.days(3)))
    }

    /// Moves every time in a session state by `ms` milliseconds.
    static func shifted(_ s: SessionState, by ms: Int64) -> SessionState {
        func move(_ t: Timestamp?) -> Timestamp? { t.map { Timestamp(millisecondsSinceEpoch: $0.millisecondsSinceEpoch + ms) } }
        var s = s
        s.lastIdPLogin = move(s.lastIdPLogin)
        s.lastOnline = move(s.lastOnline)
        s.lastActivity = move(s.lastActivity)
        s.highestTime = move(s.highestTime)
        return s
    }

    /// The names of a value's stored properties that hold a time.
    static func timeFields(_ value: Any) -> [String] {
        Mirror(reflecting: value).children.compactMap { child in
            let type = type(of: child.value)
            return type == Timestamp.self || type == Timestamp?.self ? child.label : nil
        }
    }

    @Test("`shifted` moves every time a session state or an event holds")
    func shiftKnowsEveryTime() {
        #expect(Self.timeFields(SessionState()) == ["lastIdPLogin", "lastOnline", "lastActivity", "highestTime"])
        #expect(Self.timeFields(Event(.launch, at: Self.t0)) == ["time"])
    }

    /// A core that read the real clock (to measure elapsed time, to clamp the event's time, to
    /// stamp the state) would decide differently, or stamp other times, when every time of the
    /// input lies in 1970 or in 2100: here every step of every shipped scenario must give the
    /// same outcome, its times moved by the same amount.
    @Test("no clock: every step of every shipped scenario gives the same outcome with its times moved to 1970 and 2100")
    func noClock() throws {
        let input = CheckInput.load(policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples")])
        #expect(input.scenarios.count >= 30)
        var steps = 0
        for target in ["1970-01-01T00:00:00Z", "2100-01-01T00:00:00Z"] {
            let to = try #require(Timestamp.parse(target))
            for scenario in input.scenarios {
                let policy = try #require(input.policies[scenario.policy]).compiled
                let events = scenario.steps.compactMap { try? $0.event.get() }
                guard let first = events.first else { continue }
                let ms = to.millisecondsSinceEpoch - first.time.millisecondsSinceEpoch
                var state = scenario.initial
                var moved = Self.shifted(state, by: ms)
                for event in events {
                    var later = event
                    later.time = Timestamp(millisecondsSinceEpoch: event.time.millisecondsSinceEpoch + ms)
                    let o = policy.evaluate(state, event)
                    var expected = o
                    expected.state = Self.shifted(o.state, by: ms)
                    let got = policy.evaluate(moved, later)
                    #expect(got == expected, "\(scenario.file): \(scenario.name), \(event.kind) moved to \(later.time)")
                    state = o.state
                    moved = got.state
                    steps += 1
                }
            }
        }
        #expect(steps >= 200)
    }

    /// What reads the clock, or anything else that differs from run to run, in Swift and Foundation.
    static let nondeterministic: [(what: String, pattern: String)] = [
        ("Date()", #"\bDate\s*\(\s*\)"#), ("Date.now", #"\bDate\.now\b"#), (".now", #"\.now\b(?!\s*\()"#),
        ("timeIntervalSinceNow", #"timeIntervalSinceNow"#), ("a Clock", #"\b(Continuous|Suspending)Clock\b"#),
        ("clock_gettime", #"\bclock_gettime\b"#), ("gettimeofday", #"\bgettimeofday\b"#), ("time(nil)", #"\btime\s*\(\s*nil\s*\)"#),
        ("mach time", #"\bmach_(absolute|continuous)_time\b"#), ("ProcessInfo", #"\bProcessInfo\b"#),
        ("DispatchTime", #"\bDispatch(Wall)?Time\b"#), ("CFAbsoluteTimeGetCurrent", #"CFAbsoluteTimeGetCurrent"#),
        ("the current time zone, calendar or locale", #"\b(TimeZone|Calendar|Locale)\.(current|autoupdatingCurrent)\b"#),
        ("randomness", #"\.random\s*\(|\bSystemRandomNumberGenerator\b|\bUUID\s*\(\s*\)|\barc4random"#),
    ]

    @Test("the core's sources read no clock, time zone or randomness")
    func noClockInSources() {
        let files = SourceScan.swiftFiles(under: "Sources/SessionPolicy")
        #expect(files.count >= 20, "found \(files.count) files under Sources/SessionPolicy")
        let patterns = Self.nondeterministic.map { (what: $0.what, regex: try! Regex($0.pattern)) }
        for (path, text) in files {
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? "" : String(line)
                for (what, regex) in patterns where code.contains(regex) {
                    Issue.record("\(path):\(n + 1) reads \(what): `\(line.trimmingCharacters(in: .whitespaces))`")
                }
            }
        }
    }

    @Test("random states and events never produce allow for a revoked, rolled-back or compromised session")
    func randomized() throws {
        var rng = SplitMix(seed: 42)
        let p = try Fixtures.policy("kobil-signed-jwt")
        var allowed: [EventKind: Int] = [:]
        var allowedWithHighestTime = 0
        var revoked = 0
        var tried: [String: Int] = [:]  // inputs that must not allow, by reason
        // Each field mostly takes a value that lets a session resume, so allows are common, and
        // otherwise anything: the properties below must hold for every input.
        func pick<T>(_ likely: T, _ any: [T], _ r: inout SplitMix) -> T {
            Int.random(in: 0..<4, using: &r) == 0 ? any.randomElement(using: &r)! : likely
        }
        for _ in 0..<20_000 {
            let state = SessionState(
                state: MachineState.allCases.randomElement(using: &rng)!,
                user: pick("alice", ["alice", "bob", nil], &rng),
                device: pick("d1", ["d1", "d2", nil], &rng),
                authMode: pick(Bool.random(using: &rng) ? .unprotected : .biometric, [nil] + AuthMode.allCases.map { $0 }, &rng),
                lastIdPLogin: Int.random(in: 0..<8, using: &rng) > 0 ? at(.days(Int64.random(in: -100...0, using: &rng))) : nil,
                lastOnline: Bool.random(using: &rng) ? at(.days(Int64.random(in: -20...0, using: &rng))) : nil,
                highestTime: Bool.random(using: &rng) ? at(.minutes(Int64.random(in: -2 * 1440...2 * 1440, using: &rng))) : nil,
                failures: .init(biometric: pick(0, Array(0...5), &rng)),
                biometricLocked: pick(false, [false, true], &rng))
            let event = Event(
                pick(
                    [EventKind.launch, .resume, .biometricSucceeded].randomElement(using: &rng)!, EventKind.allCases,
                    &rng),
                at: Self.t0, network: Network.allCases.randomElement(using: &rng),
                user: pick("alice", ["alice", "bob", nil], &rng),
                device: .init(
                    id: "d1", keystore: pick(.hardware, Keystore.allCases, &rng),
                    integrity: pick(.ok, Integrity.allCases, &rng)),
                authMode: AuthMode.allCases.randomElement(using: &rng), cause: RefreshFailureCause.allCases.randomElement(using: &rng))
            if [EventKind.launch, .resume, .biometricSucceeded].contains(event.kind) {
                if event.device.integrity == .compromised { tried["compromised", default: 0] += 1 }
                if let h = state.highestTime, h.secondsSinceEpoch - 300 > event.time.secondsSinceEpoch {
                    tried["rolled back", default: 0] += 1
                }
                if state.biometricLocked && state.authMode == .biometric { tried["biometric locked", default: 0] += 1 }
                if state.authMode == .password || state.authMode == .pin { tried["password or pin", default: 0] += 1 }
            }
            let o = p.evaluate(state, event)
            if o.decision == .allow && event.kind != .idpLoginSucceeded {
                allowed[event.kind, default: 0] += 1
                if state.highestTime != nil { allowedWithHighestTime += 1 }
                #expect(event.device.integrity != .compromised)
                #expect(state.authMode == .unprotected || state.authMode == .biometric, "\(event.kind) in \(state.state): \(o.reason)")
                #expect(!(state.biometricLocked && state.authMode == .biometric))
                if let h = state.highestTime { #expect(event.time.secondsSinceEpoch >= h.secondsSinceEpoch - 300) }
                #expect(state.lastIdPLogin != nil)
                #expect([EventKind.launch, .resume, .biometricSucceeded].contains(event.kind))
                #expect(event.kind != .biometricSucceeded || state.state == .awaitingBiometric)
            }
            if [EventKind.accountDeactivated, .tokensRevoked].contains(event.kind) {
                revoked += 1
                #expect(o.decision == .wipe)
            }
        }
        // The assertions above sit in branches: prove the inputs reached them, often enough to mean
        // something, for every event that can allow.
        // (With seed 42: 586 launches, 655 resumes and 279 biometric successes allowed, 532 of them
        // with a highest time seen; 572 revocations.)
        #expect(allowed[.launch, default: 0] >= 300, "\(allowed)")
        #expect(allowed[.resume, default: 0] >= 300, "\(allowed)")
        #expect(allowed[.biometricSucceeded, default: 0] >= 100, "\(allowed)")
        #expect(allowedWithHighestTime >= 250, "\(allowedWithHighestTime)")
        #expect(revoked >= 300, "\(revoked)")
        // And the inputs that must not allow were tried, each often (seed 42: 2005 compromised,
        // 3961 rolled back, 890 biometric locked, 1549 password or pin).
        for risk in ["compromised", "rolled back", "biometric locked", "password or pin"] {
            #expect(tried[risk, default: 0] >= 400, "\(risk): \(tried)")
        }
    }
}
