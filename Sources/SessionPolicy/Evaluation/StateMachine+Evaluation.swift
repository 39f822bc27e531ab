extension CompiledPolicy {
    /// Evaluates `event` against `state`: the decision and the new state. Pure: no clock,
    /// no I/O, no allocation on the common path. Reads only the machine.
    ///
    /// Fails closed: an event missing a fact it needs (for example `launch` without `network`)
    /// yields `idp_login` with reason `invalid_event`, never `allow`.
    @inline(__always) public func evaluate(_ state: SessionState, _ event: Event) -> Outcome {
        machine.evaluate(state, event)
    }

    /// Evaluates `event` against `state` and updates `state` in place to the new state: the
    /// same decision as `evaluate(_:_:)`, for a caller that keeps the session and feeds it
    /// one event after another. Copies no state and touches the strings it holds only when
    /// the session changes hands.
    @inline(__always) public func evaluate(_ state: inout SessionState, _ event: Event) -> Verdict {
        machine.evaluate(&state, event, trace: nil)
    }

    /// Evaluates like `evaluate(_:_:)` and also returns every guard tried, in order.
    public func explain(_ state: SessionState, _ event: Event) -> (Outcome, [TraceStep]) {
        machine.explain(state, event)
    }

    /// The transition behind an outcome.
    package func transition(of outcome: Outcome) -> Transition? { machine.transition(of: outcome) }
}

extension StateMachine {
    /// Evaluates `event` against `state`: the decision and the new state. Pure: no clock,
    /// no I/O, no allocation on the common path.
    ///
    /// Fails closed: an event missing a fact it needs (for example `launch` without `network`)
    /// yields `idp_login` with reason `invalid_event`, never `allow`.
    @inline(__always) package func evaluate(_ state: SessionState, _ event: Event) -> Outcome {
        var next = state
        let verdict = evaluate(&next, event, trace: nil)
        return Outcome(verdict, state: next)
    }

    /// Evaluates like `evaluate(_:_:)` and also returns every guard tried, in order.
    package func explain(_ state: SessionState, _ event: Event) -> (Outcome, [TraceStep]) {
        var steps: [TraceStep] = []
        var next = state
        let verdict = evaluate(&next, event, trace: &steps)
        return (Outcome(verdict, state: next), steps)
    }

    /// The transition behind an outcome.
    package func transition(of outcome: Outcome) -> Transition? {
        transitions.indices.contains(outcome.transition) ? transitions[outcome.transition] : nil
    }

    /// Inlined into `evaluate` and `explain`, so the hot path carries no trace. Updates
    /// `state` to the new state.
    @inline(__always) package func evaluate(
        _ state: inout SessionState, _ event: Event, trace: UnsafeMutablePointer<[TraceStep]>?
    ) -> Verdict {
        // The common case, an event with its facts and no attributes, costs two tests and no call.
        if let problem = Self.missingFact(event) ?? (event.exactAttributes.isEmpty ? nil : attributeProblem(event)) {
            let mode = state.authMode
            if state.state.hasSession { state.state = .awaitingIdP }
            if let t = trace {
                t.pointee.append(
                    TraceStep(
                        transition: -1, check: "the event has every fact it needs", facts: problem,
                        matched: false, levers: ["built-in"], location: nil))
            }
            // The notices every `idp_login` gets: the network it needs, and read-only mode.
            var notices: Notices = []
            if event.network == .offline { notices.insert(.networkRequired) }
            if state.readOnly { notices.insert(.readOnly) }
            return Verdict(
                decision: .idpLogin, reason: .invalidEvent, message: "the event is incomplete: \(problem)",
                notices: notices, scope: nil, authMode: mode, noticeDelay: nil, transition: -1)
        }
        // Read only the guards while searching; the matching transition is read once.
        let highest = Self.highestSeen(state)
        let now = highest.map { max($0, event.time.millisecondsSinceEpoch) } ?? event.time.millisecondsSinceEpoch
        // The guards through a buffer: no retain of the array and no bounds check per guard.
        let matched = guards.withUnsafeBufferPointer { g -> Int in
            for i in range(from: state.state, on: event.kind) {
                let holds = self.holds(g[i], state, event, now: now, highest: highest)
                if let tr = trace {
                    let t = transitions[i]
                    tr.pointee.append(
                        TraceStep(
                            transition: t.id, check: describe(t.guard), facts: facts(t.guard, state, event),
                            matched: holds, levers: t.source.levers, location: t.source.location))
                }
                if holds { return i }
            }
            return -1
        }
        if matched >= 0 { return apply(matched, &state, event, now: now, highest: highest) }
        // Unreachable for a compiled machine (every group ends in `always`); fail closed anyway.
        return Verdict(
            decision: .idpLogin, reason: .unexpectedEvent, message: Reason.unexpectedEvent.message, notices: [],
            scope: nil, authMode: state.authMode, noticeDelay: nil, transition: -1)
    }

    /// The fact an event of its kind must carry but does not, if any (`EventKind.requiredFacts`).
    static func missingFact(_ event: Event) -> String? {
        event.kind.requiredFacts.firstMissing(in: event).map { "`\(event.kind.rawValue)` needs `\($0.field.key)`" }
    }

    /// An attribute the event reports that the policy does not declare, or a value of the wrong type.
    func attributeProblem(_ event: Event) -> String? {
        guard !event.exactAttributes.isEmpty else { return nil }
        // The first problem in the order of the attributes' names (by their UTF-8 bytes), so the
        // message is the same in every run and on every runtime (a dictionary has no order).
        var first: (name: String, problem: String)?
        for (key, value) in event.exactAttributes {
            let name = key.text
            if let f = first, !Array(name.utf8).lexicographicallyPrecedes(Array(f.name.utf8)) { continue }
            if let declared = attributes.first(where: { $0.name.isExactly(name) }) {
                if !declared.type.accepts(value) { first = (name, "attribute `\(name)` cannot be `\(value)`: it is \(declared.type.name)") }
            } else {
                first = (name, "attribute `\(name)` is not declared by the policy")
            }
        }
        return first?.problem
    }

    /// The highest time the session has seen: the recorded highest time, and never earlier than
    /// any other time the state records (a state without `highest_time` still knows its logins).
    @inline(__always) static func highestSeen(_ s: SessionState) -> Int64? {
        // Unrolled on purpose (an array literal here would allocate on every evaluation), and
        // without optional chaining, which compiles to a branchy unwrap per step.
        var h = Int64.min
        var known = false
        if let t = s.highestTime { h = t.millisecondsSinceEpoch; known = true }
        if let t = s.lastIdPLogin { h = max(h, t.millisecondsSinceEpoch); known = true }
        if let t = s.lastOnline { h = max(h, t.millisecondsSinceEpoch); known = true }
        if let t = s.lastActivity { h = max(h, t.millisecondsSinceEpoch); known = true }
        return known ? h : nil
    }

    /// The time used for elapsed-time checks, in milliseconds: the event's time, but never
    /// earlier than the highest time seen, so a clock set back never extends a window
    /// (behaviour X1, docs/behaviours.md).
    @inline(__always) static func now(_ state: SessionState, _ event: Event) -> Int64 {
        let t = event.time.millisecondsSinceEpoch
        guard let h = highestSeen(state) else { return t }
        return t > h ? t : h
    }

    /// Whether more than `limit` passed since `reference`; an unknown reference counts as exceeded.
    @inline(__always) static func exceeded(_ limit: TimeSpan, since reference: Timestamp?, now: Int64) -> Bool {
        guard let r = reference?.millisecondsSinceEpoch else { return true }
        return now - r > limit.seconds * 1000
    }

    /// Whether guard `g` holds. `now` and `highest` are `now(_:_:)` and `highestSeen(_:)`, computed once per event.
    @inline(__always) func holds(_ g: Guard, _ s: SessionState, _ e: Event, now: Int64, highest: Int64?) -> Bool {
        switch g {
        case .always:
            return true
        case .deviceCompromised:
            return e.device.integrity == .compromised
        case let .clockRolledBack(tolerance):
            guard let h = highest else { return false }
            return e.time.millisecondsSinceEpoch < h - tolerance.seconds * 1000
        case .differentDevice:
            guard let a = e.device.id, let b = s.device else { return false }
            return !a.isExactly(b)
        case .differentUser:
            guard let a = e.user, let b = s.user else { return false }
            return !a.isExactly(b)
        case let .sessionMaxExceeded(limit):
            return Self.exceeded(limit, since: s.lastIdPLogin, now: now)
        case let .idleExceeded(limit):
            return Self.exceeded(limit, since: s.lastActivity ?? s.lastIdPLogin, now: now)
        case let .offlineWindowExceeded(limit):
            return Self.exceeded(limit, since: s.lastOnline ?? s.lastIdPLogin, now: now)
        case .authModeMissing:
            return s.authMode == nil
        case .authModeNeedsIdP:
            return s.authMode?.needsIdP ?? true
        case let .authModeNotOffline(offline):
            guard let m = s.authMode else { return true }
            return !offline.contains(m)
        case .keystoreNotHardware:
            return e.device.keystore != .hardware
        case .biometricLocked:
            // A biometric session's every attempt; any session's prompt, however it was asked for;
            // and the adoption of another app's device session, which would ask for a prompt.
            return s.biometricLocked
                && (s.authMode == .biometric || e.kind == .biometricSucceeded || e.kind == .deviceSessionDetected)
        case let .authModeIs(mode):
            return s.authMode == mode
        case let .failureLimitReached(path, limit):
            let count: Int
            switch path {
            case .biometric: count = s.failures.biometric
            case .offlineLogin: count = s.failures.offlineLogin
            case .idpLogin: count = s.failures.idpLogin
            }
            return count >= limit - 1  // `count + 1` could overflow on a tampered state
        case .networkOffline:
            return e.network == .offline
        case let .refreshCause(cause):
            return e.cause == cause
        case .unsyncedItems:
            return (e.unsyncedItems ?? 0) > 0
        case .appNotTrusted:
            guard let app = e.appID else { return true }
            return !trustedApps.containsExactly(app)
        case let .ruleFactMissing(i):
            if case .unknown = truth(rules[i].condition, s, e, now: now) { return true }
            return false
        case let .rule(i):
            return truth(rules[i].condition, s, e, now: now) == .yes
        case let .switched(kind, inner):
            return holdsSwitched(kind, inner, s, e, now: now, highest: highest)
        }
    }

    /// `.switched(kind, inner)`: the switch holds on the session, and `inner` on the session
    /// cleared (as `clearSession` leaves it), so the new login is judged as from `signed_out`.
    @inline(never) func holdsSwitched(
        _ kind: SessionSwitch, _ inner: Guard, _ s: SessionState, _ e: Event, now: Int64, highest: Int64?
    ) -> Bool {
        guard holds(kind.trigger, s, e, now: now, highest: highest) else { return false }
        return holds(inner, Self.cleared(highest: highest, locked: s.biometricLocked), e, now: now, highest: highest)
    }

    /// The session as a wipe leaves it: signed out, keeping only the highest time seen and the
    /// device's biometric lock (an enrollment change is the device's, not the session's).
    static func cleared(highest: Int64?, locked: Bool) -> SessionState {
        var c = SessionState()
        c.highestTime = highest.map { Timestamp(millisecondsSinceEpoch: $0) }
        c.biometricLocked = locked
        return c
    }

    /// Applies transition `id`'s action to `s` in place, reading the action's fields in place
    /// (`actions[id]`), never a copy.
    @inline(__always) func apply(
        _ id: Int, _ s: inout SessionState, _ e: Event, now: Int64, highest: Int64?
    ) -> Verdict {
        let previousMode = s.authMode
        let fx = actions[id].effects
        if let h = highest, h > e.time.millisecondsSinceEpoch {
            s.highestTime = Timestamp(millisecondsSinceEpoch: h)
        } else {
            s.highestTime = e.time
        }
        if fx.contains(.clearSession) {
            // A wipe forgets the session, not the device: the highest time seen and the biometric
            // lock stay (a fingerprint added before a sign-out is no more the user's after it).
            let highest = s.highestTime
            let locked = s.biometricLocked
            s = SessionState()
            s.highestTime = highest
            s.biometricLocked = locked
        }
        if fx.contains(.establish) {
            s.user = e.user ?? s.user
            s.device = e.device.id ?? s.device
            // An adopted session's mode is the policy's (`cross_app.adopt`), never the event's: a
            // detection that reports `auth_mode: none` must not skip the biometric prompt.
            s.authMode =
                fx.contains(.adoptBehindBiometric)
                ? .biometric : e.kind == .deviceSessionDetected ? .unprotected : (e.authMode ?? .unprotected)
            s.lastIdPLogin = e.time
            s.lastOnline = e.time
            s.lastActivity = e.time
            s.highestTime = e.time
            s.failures = SessionState.Failures()
            s.readOnly = false
            // Only an IdP login unlocks the biometric path; an adopted device session does not.
            if e.kind == .idpLoginSucceeded { s.biometricLocked = false }
        }
        if fx.contains(.recordOnline) {
            s.lastOnline = e.time
            s.failures.offlineLogin = 0
        }
        if fx.contains(.recordActivity) { s.lastActivity = Timestamp(millisecondsSinceEpoch: now) }
        if fx.contains(.countBiometricFailure) { s.failures.biometric = Self.increment(s.failures.biometric) }
        if fx.contains(.countOfflineFailure) { s.failures.offlineLogin = Self.increment(s.failures.offlineLogin) }
        if fx.contains(.countIdPFailure) { s.failures.idpLogin = Self.increment(s.failures.idpLogin) }
        if fx.contains(.resetBiometricFailures) { s.failures.biometric = 0 }
        if fx.contains(.lockBiometric) { s.biometricLocked = true }
        if fx.contains(.setReadOnly) { s.readOnly = true }
        switch actions[id].target {
        case let .state(next): s.state = next
        case .resting: s.state = s.readOnly ? .readOnly : .active
        case .unchanged: break
        }
        var notices = actions[id].notices
        if e.network == .offline, actions[id].decision == .idpLogin || actions[id].decision == .wipe { notices.insert(.networkRequired) }
        if s.readOnly { notices.insert(.readOnly) }
        let scope = actions[id].namesScope ? scopes.scope(for: s.authMode, keystore: e.device.keystore) : nil
        let mode = actions[id].usesPreviousAuthMode && actions[id].decision == .idpLogin ? previousMode : nil
        return Verdict(
            decision: actions[id].decision, reason: actions[id].reason, message: actions[id].message, notices: notices, scope: scope,
            authMode: mode, noticeDelay: actions[id].noticeDelay, transition: id)
    }

    /// `n + 1`, saturating: a tampered counter can never trap.
    @inline(__always) static func increment(_ n: Int) -> Int { n < Int.max ? max(n, 0) + 1 : n }
}
