/// Turns a validated policy into the explicit state machine. The order in which transitions
/// are added per (state, event) is the order their guards are tried; it is documented in the
/// docs/how-a-decision-is-made.md ("Order of evaluation for a login attempt").
struct Compiler {
    let validated: ValidatedPolicy
    private var transitions: [Transition] = []

    init(_ validated: ValidatedPolicy) { self.validated = validated }

    var policy: Policy { validated.policy }

    /// States that hold a signed-in session the user may resume.
    static let resumable: [MachineState] = [.active, .suspended, .awaitingBiometric, .readOnly]
    /// States with a session on the device (credentials, user data).
    static let withSession: [MachineState] = [.active, .suspended, .awaitingBiometric, .awaitingIdP, .readOnly]

    func build() -> StateMachine {
        var c = self
        c.addDeviceChecks()
        c.addLoginAttempts()
        c.addBiometric()
        c.addOfflineFailure()
        c.addIdP()
        c.addRefresh()
        c.addSignals()
        c.addLifecycle()
        c.addCrossApp()
        let p = policy
        return StateMachine(
            name: p.name, description: p.description, unordered: c.transitions,
            rules: zip(p.rules, validated.conditions).map { CompiledRule(name: $0.name, on: $0.on, condition: $1, text: $0.when) },
            attributes: p.attributes, trustedApps: p.crossApp.apps, revealsDetectionRefusal: p.crossApp.revealRefusal,
            scopes: ScopeTable(credential: p.offline.credential),
            sources: p.sources)
    }

    // MARK: Building blocks

    private func source(_ levers: String...) -> TransitionSource {
        TransitionSource(levers: levers, location: levers.lazy.compactMap { policy.sources[$0] }.first)
    }

    private mutating func add(_ states: [MachineState], _ events: [EventKind], _ g: Guard, _ a: Action, _ s: TransitionSource) {
        for state in states {
            for event in events {
                transitions.append(Transition(id: 0, from: state, event: event, guard: g, action: a, source: s))
            }
        }
    }

    /// The action for a policy reaction. `wipe` deletes the session; `idp_login` sends the user
    /// to the IdP (with the same auth mode as before); `read_only` keeps the session without new data.
    private func react(
        _ reaction: Reaction, _ reason: Reason, from state: MachineState, effects: Effects = [],
        notices: Notices = [], delay: TimeSpan? = nil
    ) -> Action {
        switch reaction {
        case .wipe:
            // A wipe starts from nothing: the failure it answers is not counted into the cleared
            // state. An enrollment change still locks the device's biometric path: the lock
            // outlives the wipe (`clear_session` keeps it) until an IdP login.
            return Action(
                decision: .wipe, reason: reason, target: .state(.signedOut),
                effects: effects.subtracting([.countBiometricFailure, .countOfflineFailure, .countIdPFailure])
                    .union(.clearSession),
                notices: notices, noticeDelay: delay)
        case .idpLogin:
            return Action(
                decision: .idpLogin, reason: reason,
                target: state.hasSession ? .state(.awaitingIdP) : .unchanged,
                effects: effects, notices: notices, usesPreviousAuthMode: true, noticeDelay: delay)
        case .readOnly:
            let target: Target = [.active, .suspended, .readOnly].contains(state) ? .resting : .unchanged
            return Action(
                decision: nil, reason: reason, target: target,
                effects: state.hasSession ? effects.union(.setReadOnly) : effects,
                notices: notices, noticeDelay: delay)
        }
    }

    private func unexpected(from state: MachineState) -> Action {
        react(.idpLogin, .unexpectedEvent, from: state)
    }

    /// The device checks, the first transitions of every device event in every state (docs/how-a-decision-is-made.md,
    /// "The device checks"; server signals have none): integrity, then binding. An IdP login turns
    /// binding into a switch (`addIdP`). This is the only place that adds them.
    private mutating func addDeviceChecks() {
        let p = policy
        for event in EventKind.allCases where !event.isServerSignal {
            for state in MachineState.allCases {
                add(
                    [state], [event], .deviceCompromised, react(p.device.compromised, .deviceCompromised, from: state),
                    source("device.compromised"))
                guard p.device.bindSession, state.hasSession, event != .idpLoginSucceeded else { continue }
                add([state], [event], .differentDevice, react(.wipe, .deviceMismatch, from: state), source("device.bind_session"))
            }
        }
    }

    /// Whether `event` in `state` runs the login-attempt chain (`addAttemptChain`).
    static func isLoginAttempt(_ event: EventKind, in state: MachineState) -> Bool {
        switch event {
        case .launch, .resume: resumable.contains(state)
        case .biometricSucceeded: state == .awaitingBiometric
        default: false
        }
    }

    private mutating func addUnexpected(_ states: [MachineState], _ events: [EventKind]) {
        for state in states {
            add([state], events, .always, unexpected(from: state), source("built-in"))
        }
    }

    // MARK: Custom rules

    /// One guarded step of a chain, before it is placed in a state.
    private typealias Step = (guard: Guard, action: Action, source: TransitionSource)

    /// The transitions of every rule that applies to `event` in `state`, in declaration order:
    /// first "the condition needs a fact the event lacks" (fail closed), then "the condition holds".
    private func ruleSteps(from state: MachineState, on event: EventKind) -> [Step] {
        var steps: [Step] = []
        for (i, rule) in policy.rules.enumerated() where rule.on.contains(event) {
            let lever = "rules[\(i)]"
            let src = TransitionSource(levers: ["rules.\(rule.name)"], location: policy.sources["\(lever).when"] ?? policy.sources[lever])
            steps.append((.ruleFactMissing(i), react(.idpLogin, .ruleFactMissing, from: state), src))
            steps.append((.rule(i), ruleAction(rule, event: event, from: state), src))
        }
        return steps
    }

    private mutating func addRules(_ states: [MachineState], _ event: EventKind) {
        for state in states {
            for step in ruleSteps(from: state, on: event) { add([state], [event], step.guard, step.action, step.source) }
        }
    }

    private func ruleAction(_ rule: Rule, event: EventKind, from state: MachineState) -> Action {
        let o = rule.then
        var a: Action
        if o.readOnly {
            if event == .idpLoginSucceeded {
                a = Action(decision: .allow, reason: o.reason, target: .state(.readOnly), effects: [.establish, .setReadOnly])
            } else {
                a = react(.readOnly, o.reason, from: state, effects: .recordOnline)
            }
        } else {
            switch o.decision {
            case .requireBiometric?:
                a = Action(decision: .requireBiometric, reason: o.reason, target: .state(.awaitingBiometric), namesScope: true)
            case .wipe?:
                a = react(.wipe, o.reason, from: state)
            default:
                a = react(.idpLogin, o.reason, from: state)
            }
        }
        a.notices.formUnion(o.notices)
        a.noticeDelay = o.noticeDelay
        a.message = o.message ?? o.reason.message(for: a.decision)
        return a
    }

    // MARK: Login attempts

    /// The checks of a login attempt, in order. `satisfied` is true after a successful
    /// biometric prompt: the chain then ends in `allow` instead of prompting.
    private mutating func addAttemptChain(_ states: [MachineState], _ events: [EventKind], biometricDone: Bool) {
        let p = policy
        for state in states {
            let start = transitions.count
            defer { addClockCheck(state, events, after: start) }
            if p.device.singleUser {
                add([state], events, .differentUser, react(.wipe, .differentUser, from: state), source("device.single_user"))
            }
            if let max = p.session.max {
                add(
                    [state], events, .sessionMaxExceeded(max), react(p.session.onExpired, .sessionMaxExceeded, from: state),
                    source("session.max", "session.on_expired"))
            }
            if let window = p.offline.window {
                add(
                    [state], events, .offlineWindowExceeded(window), react(p.offline.onExpired, .offlineWindowExceeded, from: state),
                    source("offline.window", "offline.on_expired"))
            }
            if let idle = p.session.idle {
                add(
                    [state], events, .idleExceeded(idle), react(p.session.onExpired, .sessionIdleExceeded, from: state),
                    source("session.idle", "session.on_expired"))
            }
            add([state], events, .authModeMissing, react(.idpLogin, .noAuthMode, from: state), source("built-in"))
            add([state], events, .authModeNeedsIdP, react(.idpLogin, .authModeRequiresIdP, from: state), source("auth_modes.offline"))
            add(
                [state], events, .authModeNotOffline(AuthModeSet(p.authModes.offline)),
                react(.idpLogin, .authModeNotAllowedOffline, from: state),
                source("auth_modes.offline"))
            if p.offline.credential == .signedJWT, p.offline.keyProtection == .hardware {
                add(
                    [state], events, .keystoreNotHardware, react(.idpLogin, .keyProtectionInsufficient, from: state),
                    source("offline.key_protection", "offline.credential"))
            }
            add(
                [state], events, .biometricLocked, react(.idpLogin, .biometricEnrollmentChanged, from: state),
                source("signals.biometric_enrollment_changed"))
            for event in events { addRules([state], event) }
            let resume: Effects = biometricDone ? [.recordActivity, .resetBiometricFailures] : [.recordActivity]
            if biometricDone {
                add(
                    [state], events, .always,
                    Action(decision: .allow, reason: .biometricVerified, target: .resting, effects: resume, namesScope: true),
                    source("auth_modes.offline"))
            } else {
                add(
                    [state], events, .authModeIs(.unprotected),
                    Action(decision: .allow, reason: .withinLimits, target: .resting, effects: resume, namesScope: true),
                    source("auth_modes.offline"))
                add(
                    [state], events, .always,
                    Action(decision: .requireBiometric, reason: .withinLimits, target: .state(.awaitingBiometric), namesScope: true),
                    source("auth_modes.offline"))
            }
        }
    }

    /// Places the clock check of a login attempt just before the first check of its chain (from
    /// `start` on) that would decide more permissively than the `clock_rollback` reaction, so a
    /// rolled-back attempt gets the stricter of the two: that reaction, or what the same attempt
    /// gets at the highest time seen (the checks before it measure time from there, docs/how-a-decision-is-made.md,
    /// "The clock check"). Another user's rolled-back launch is thus still wiped as another user's.
    private mutating func addClockCheck(_ state: MachineState, _ events: [EventKind], after start: Int) {
        let p = policy
        let reaction = react(p.device.clockRollback, .clockRollback, from: state)
        let strictness = reaction.decision?.permissiveness ?? Decision.allow.permissiveness
        for event in events {
            let index =
                transitions[start...].firstIndex {
                    $0.from == state && $0.event == event
                        && ($0.action.decision?.permissiveness ?? Decision.allow.permissiveness) > strictness
                } ?? transitions.endIndex
            transitions.insert(
                Transition(
                    id: 0, from: state, event: event, guard: .clockRolledBack(tolerance: p.device.clockTolerance), action: reaction,
                    source: source("device.clock_rollback", "device.clock_tolerance")),
                at: index)
        }
    }

    private mutating func addLoginAttempts() {
        let attempts: [EventKind] = [.launch, .resume]
        addAttemptChain(Self.resumable, attempts, biometricDone: false)
        add([.signedOut], attempts, .always, react(.idpLogin, .noSession, from: .signedOut), source("built-in"))
        add([.awaitingIdP], attempts, .always, react(.idpLogin, .idpLoginRequired, from: .awaitingIdP), source("built-in"))
    }

    // MARK: Biometric prompt

    private mutating func addBiometric() {
        let p = policy
        addAttemptChain([.awaitingBiometric], [.biometricSucceeded], biometricDone: true)
        let limit = p.retry.biometric
        add(
            [.awaitingBiometric], [.biometricFailed], .failureLimitReached(.biometric, limit: limit.max),
            react(
                limit.then, .biometricRetriesExhausted, from: .awaitingBiometric,
                effects: .countBiometricFailure, notices: .suggestAuthModeChange),
            source("retry.biometric.max", "retry.biometric.then"))
        add(
            [.awaitingBiometric], [.biometricFailed], .always,
            Action(
                decision: .requireBiometric, reason: .biometricFailed, target: .state(.awaitingBiometric),
                effects: .countBiometricFailure, namesScope: true),
            source("retry.biometric.max"))
        let others = MachineState.allCases.filter { $0 != .awaitingBiometric }
        for event in [EventKind.biometricSucceeded, .biometricFailed] { addUnexpected(others, [event]) }
    }

    // MARK: Offline login failure

    private mutating func addOfflineFailure() {
        let p = policy
        let event: [EventKind] = [.offlineLoginFailed]
        for state in Self.resumable {
            add(
                [state], event, .failureLimitReached(.offlineLogin, limit: p.retry.offlineLogin.max),
                react(p.retry.offlineLogin.then, .offlineLoginRetriesExhausted, from: state, effects: .countOfflineFailure),
                source("retry.offline_login.max", "retry.offline_login.then"))
            // Below the limit the offline path stays open: the user is told to sign in at the IdP
            // (same auth mode as before) but may try offline again later.
            var fallback = react(p.fallback.onOfflineFailure, .offlineLoginFailed, from: state, effects: .countOfflineFailure)
            if p.fallback.onOfflineFailure == .idpLogin { fallback.target = .unchanged }
            add([state], event, .always, fallback, source("fallback.on_offline_failure", "retry.offline_login.max"))
        }
        addUnexpected([.signedOut, .awaitingIdP], event)
    }

    // MARK: IdP login

    /// What an `idp_login_succeeded` faces after the device checks when there is no session to
    /// keep: the rules, then acceptance. From `state`, whose facts the rules read.
    private func loginSteps(from state: MachineState) -> [Step] {
        ruleSteps(from: state, on: .idpLoginSucceeded) + [
            (
                .always, Action(decision: .allow, reason: .idpLoginSucceeded, target: .state(.active), effects: .establish),
                source("built-in")
            )
        ]
    }

    /// A switch (another device, another user) followed by `inner`, what the login gets from
    /// `signed_out`: the previous session's data is wiped whatever the new login's fate, and the
    /// new login is judged exactly as a fresh one. The reason is the new login's when a check or a
    /// rule refused or restricted it, and the switch's when it was accepted as it is.
    private func switchStep(_ kind: SessionSwitch, _ inner: Step) -> Step {
        var a = inner.action
        a.decision = .wipe
        a.effects.formUnion(.clearSession)
        if a.target == .unchanged { a.target = .state(.signedOut) }
        a.usesPreviousAuthMode = false
        a.namesScope = false
        if inner.action.reason == .idpLoginSucceeded {
            a.reason = kind.reason
            a.message = kind.reason.message
        }
        let lever = kind == .user ? "device.single_user" : "device.bind_session"
        let src = TransitionSource(
            levers: [lever] + inner.source.levers.filter { $0 != "built-in" },
            location: inner.source.location ?? policy.sources[lever])
        return (.switched(kind, inner.guard), a, src)
    }

    private mutating func addIdP() {
        let p = policy
        let all = MachineState.allCases
        let login: [EventKind] = [.idpLoginSucceeded]
        for step in loginSteps(from: .signedOut) { add([.signedOut], login, step.guard, step.action, step.source) }
        // A login that ends another session passes every check of a fresh login: the fresh
        // chain is derived here, not written twice, so no later check can be skipped.
        let switches = (p.device.bindSession ? [SessionSwitch.device] : []) + (p.device.singleUser ? [.user] : [])
        for state in Self.withSession {
            for kind in switches {
                for step in loginSteps(from: .signedOut) {
                    let s = switchStep(kind, step)
                    add([state], login, s.guard, s.action, s.source)
                }
            }
            for step in loginSteps(from: state) { add([state], login, step.guard, step.action, step.source) }
        }

        let limit = p.retry.idpLogin
        for state in all {
            add(
                [state], [.idpLoginFailed], .failureLimitReached(.idpLogin, limit: limit.max),
                react(limit.then, .idpLoginRetriesExhausted, from: state, effects: .countIdPFailure),
                source("retry.idp_login.max", "retry.idp_login.then"))
            add(
                [state], [.idpLoginFailed], .always,
                react(.idpLogin, .idpLoginFailed, from: state, effects: .countIdPFailure), source("retry.idp_login.max"))
        }
    }

    // MARK: Token refresh

    private mutating func addRefresh() {
        let p = policy
        let live: [MachineState] = Self.resumable
        addRules(live, .tokenRefreshed)
        add(
            live, [.tokenRefreshed], .always,
            Action(decision: nil, reason: .tokenRefreshed, target: .unchanged, effects: .recordOnline), source("built-in"))
        addUnexpected([.signedOut, .awaitingIdP], [.tokenRefreshed])

        // An invalid refresh token gets the signal's reaction in every state (signed out, it
        // removes whatever the app still holds); a network failure loses nothing and is retried,
        // and signed out there is nothing to retry.
        let invalid = p.signals.refreshTokenInvalid
        for state in MachineState.allCases {
            add(
                [state], [.refreshFailed], .refreshCause(.invalidToken),
                react(invalid.then, .refreshTokenInvalid, from: state, delay: invalid.noticeDelay),
                source("signals.refresh_token_invalid"))
            if state.hasSession {
                add(
                    [state], [.refreshFailed], .always,
                    Action(decision: nil, reason: .refreshDeferred, target: .unchanged, notices: .retryLater), source("built-in"))
            } else {
                add([state], [.refreshFailed], .always, unexpected(from: state), source("built-in"))
            }
        }
    }

    // MARK: Server signals and logout

    private mutating func addSignals() {
        let p = policy
        let all = MachineState.allCases
        for state in all {
            let signals: [(EventKind, Policy.SignalReaction, Reason, String)] = [
                (.accountDeactivated, p.signals.accountDeactivated, .accountDeactivated, "signals.account_deactivated"),
                (.tokensRevoked, p.signals.tokensRevoked, .tokensRevoked, "signals.tokens_revoked"),
                (.licenseRevoked, p.signals.licenseRevoked, .licenseRevoked, "signals.license_revoked"),
            ]
            for (event, reaction, reason, lever) in signals {
                add([state], [event], .always, react(reaction.then, reason, from: state, delay: reaction.noticeDelay), source(lever))
            }
            // Only a biometric session, or one waiting for a biometric prompt (a cross-app
            // adoption or a rule may ask any session for one), has a biometric path to close; any
            // other changes nothing.
            let enrollment = p.signals.biometricEnrollmentChanged
            if state.hasSession {
                add(
                    [state], [.biometricEnrollmentChanged], state == .awaitingBiometric ? .always : .authModeIs(.biometric),
                    react(
                        enrollment.then, .biometricEnrollmentChanged, from: state, effects: .lockBiometric,
                        delay: enrollment.noticeDelay),
                    source("signals.biometric_enrollment_changed"))
            }
            // The path is locked all the same, on every session and on a device with none (the
            // lock outlives a sign-out): a prompt a rule asks for later, or the adoption of
            // another app's device session, is not accepted before an IdP login (`Guard.biometricLocked`).
            if state != .awaitingBiometric {
                add(
                    [state], [.biometricEnrollmentChanged], .always,
                    Action(decision: nil, reason: .biometricEnrollmentChanged, target: .unchanged, effects: .lockBiometric),
                    source("signals.biometric_enrollment_changed"))
            }
            let logout = p.signals.logout
            add(
                [state], [.logout], .unsyncedItems,
                react(logout.then, .logout, from: state, notices: .unsyncedData, delay: logout.noticeDelay),
                source("signals.logout"))
            add(
                [state], [.logout], .always, react(logout.then, .logout, from: state, delay: logout.noticeDelay),
                source("signals.logout"))
        }
    }

    // MARK: Cross-app device sessions

    /// A signed-out app that detects a device session of a trusted app of the same vendor may
    /// adopt it, per `cross_app.adopt`. An app with a session of its own ignores the detection,
    /// also while it waits for an IdP login: adopting then would skip the login its own checks
    /// asked for (a session max, a biometric lockout).
    private mutating func addCrossApp() {
        let p = policy
        let event: [EventKind] = [.deviceSessionDetected]
        let src = source("cross_app.adopt", "cross_app.apps")
        if p.crossApp.adopt == .never {
            add([.signedOut], event, .always, react(.idpLogin, .crossAppNotAllowed, from: .signedOut), src)
        } else {
            add([.signedOut], event, .appNotTrusted, react(.idpLogin, .crossAppNotAllowed, from: .signedOut), source("cross_app.apps"))
            let biometric = p.crossApp.adopt == .requireBiometric
            if biometric {
                // After an enrollment change the prompt of an adoption could not be accepted: ask
                // for the IdP login that unlocks the device instead.
                add(
                    [.signedOut], event, .biometricLocked, react(.idpLogin, .biometricEnrollmentChanged, from: .signedOut),
                    source("signals.biometric_enrollment_changed"))
            }
            add(
                [.signedOut], event, .always,
                Action(
                    decision: biometric ? .requireBiometric : .allow, reason: .crossAppSession,
                    target: .state(biometric ? .awaitingBiometric : .active),
                    effects: biometric ? [.establish, .adoptBehindBiometric] : .establish, namesScope: true),
                src)
        }
        add(Self.withSession, event, .always, Action(decision: nil, reason: .sessionExists, target: .unchanged), source("built-in"))
    }

    // MARK: Registration and app lifecycle

    private mutating func addLifecycle() {
        let all = MachineState.allCases
        add(
            all, [.register], .networkOffline,
            Action(decision: .idpLogin, reason: .registrationRequiresNetwork, target: .unchanged, notices: .networkRequired),
            source("built-in"))
        add(
            all, [.register], .always,
            Action(decision: .idpLogin, reason: .registration, target: .unchanged), source("built-in"))
        add(
            [.active, .readOnly], [.background], .always,
            Action(decision: nil, reason: .backgrounded, target: .state(.suspended), effects: .recordActivity),
            source("built-in"))
        // An abandoned prompt is not activity: it must not keep an idle session alive.
        add(
            [.awaitingBiometric], [.background], .always,
            Action(decision: nil, reason: .backgrounded, target: .state(.suspended)), source("built-in"))
        add(
            [.signedOut, .suspended, .awaitingIdP], [.background], .always,
            Action(decision: nil, reason: .backgrounded, target: .unchanged), source("built-in"))
    }
}
