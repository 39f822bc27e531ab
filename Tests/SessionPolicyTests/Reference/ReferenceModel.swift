import Foundation
import SessionPolicy

// An independent reference model of SessionPolicy's decisions, written from the documents only
// (then in the README, now in docs/): docs/policy-language.md (with "Attributes and rules"),
// docs/how-a-decision-is-made.md, docs/state-events-outcomes.md; docs/machine-format.md
// "Evaluating an event", "String equality", "Reading a state and an event"; docs/reasons.md. It
// does not use the compiler, the compiled machine or the evaluator: it reads the policy's levers
// and walks the documents' lists in their order. Clarity over speed.
//
// Where the documents are silent or ambiguous the model picks a reading and says so in a
// comment starting with `AMBIGUITY:`; each is listed in the report of issue 16.

/// What the model decides for one event. `message` is nil where no document fixes it (a rule
/// without `message:`); `transition` is -1 for `invalid_event` (fixed by docs/how-a-decision-is-made.md) and nil
/// otherwise (the id is the engine's own).
struct ModelOutcome: Equatable, Sendable {
    var decision: Decision?
    var reason: Reason
    var message: String?
    var notices: Notices
    var scope: Scope?
    var authMode: AuthMode?
    var noticeDelay: TimeSpan?
    var state: SessionState
    var transition: Int?
    /// Fields the documents do not fix for this outcome (the documents silent or ambiguous): the
    /// comparison leaves them out. Each is an `AMBIGUITY:` below and in the report of issue 16.
    var unspecified: Set<String> = []
}

/// The built-in messages, as docs/reasons.md lists them (`invalid_event` is built from the
/// text of docs/how-a-decision-is-made.md instead).
let referenceMessages: [String: String] = [
    "within_limits": "the session is within the policy's limits",
    "biometric_verified": "biometric verification succeeded",
    "no_session": "there is no session on this device: sign in with your identity provider",
    "idp_login_required": "sign in with your identity provider to continue",
    "idp_login_succeeded": "signed in with the identity provider",
    "idp_login_failed": "sign-in with the identity provider failed: try again",
    "idp_login_retries_exhausted": "too many failed sign-ins: local data is removed",
    "session_max_exceeded": "your session has reached its maximum length: sign in again",
    "session_idle_exceeded": "your session expired after a period of inactivity: sign in again",
    "offline_window_exceeded": "you have been offline too long: sign in again with a network connection",
    "auth_mode_requires_idp": "your sign-in method (password or PIN) needs your identity provider",
    "auth_mode_not_allowed_offline": "your sign-in method cannot resume a session without your identity provider: sign in again",
    "key_protection_insufficient": "this device cannot protect the sign-in key in hardware: sign in with your identity provider",
    "biometric_failed": "biometric verification failed: try again",
    "biometric_retries_exhausted": "biometric verification failed too often: sign in with your identity provider",
    "biometric_enrollment_changed": "biometric settings changed on this device: sign in with your identity provider",
    "offline_login_failed": "offline login failed: sign in with your identity provider using the same method as before",
    "offline_login_retries_exhausted": "offline login failed too often",
    "different_user": "another user signed in on this device: the previous user's data is removed",
    "device_mismatch": "this session belongs to another device: local data is removed",
    "clock_rollback": "the device clock went back: sign in again",
    "device_compromised": "this device failed its integrity check",
    "account_deactivated": "your account was deactivated: you are signed out and local data is removed",
    "tokens_revoked": "your access was revoked: you are signed out and local data is removed",
    "license_revoked": "you do not have a license assigned: contact your system administrator",
    "refresh_token_invalid": "your session is no longer valid: you will be signed out",
    "refresh_deferred": "the session could not be refreshed: it will be retried when the network is back",
    "token_refreshed": "the session was refreshed online",
    "logout": "you signed out: local data is removed",
    "registration_requires_network": "registration needs an internet connection",
    "registration": "register with your identity provider",
    "backgrounded": "the app went to the background",
    "unexpected_event": "this event is not expected in the session's current state: sign in again",
    "no_auth_mode": "the session does not record how you signed in: sign in again",
    "rule_fact_missing": "the event does not report a fact a policy rule needs: sign in again",
    "cross_app_not_allowed": "this app cannot use the sign-in of another app on this device: sign in",
    "cross_app_session": "signed in with the session of another app on this device",
    "session_exists": "this app already has a session",
]

/// The messages that follow the decision, as docs/reasons.md "Messages by decision" lists them:
/// `"reason decision"` (`none` for no decision) -> message.
let referenceMessagesByDecision: [String: String] = [
    "idp_login_retries_exhausted idp_login": "too many failed sign-ins: try again with your identity provider",
    "account_deactivated idp_login": "your account was deactivated: sign in with your identity provider",
    "tokens_revoked idp_login": "your access was revoked: sign in with your identity provider",
    "logout idp_login": "you signed out: sign in with your identity provider to continue",
    "refresh_token_invalid idp_login": "your session is no longer valid: sign in with your identity provider",
    "biometric_enrollment_changed wipe": "biometric settings changed on this device: you are signed out and local data is removed",
    "biometric_enrollment_changed none":
        "biometric settings changed on this device: biometric sign-in is locked until you sign in with your identity provider",
    "offline_login_failed wipe": "offline login failed: local data is removed, sign in with your identity provider",
    "biometric_retries_exhausted wipe":
        "biometric verification failed too often: local data is removed, sign in with your identity provider",
]

/// Three-valued truth of a rule condition (docs/machine-format.md "Conditions").
enum Truth3: Equatable { case yes, no, unknown }

struct ReferenceModel {
    let policy: Policy
    /// Each rule's condition, parsed and type-checked by the policy language's front end (the
    /// parser and the type checker); the model evaluates them itself (`truth`).
    let conditions: [Condition]
    /// A fault seeded on purpose, to show that the differential test finds and shrinks it
    /// (`DifferentialTests.seededFault`). Nil in every other use.
    var fault: SeededFault? = nil

    enum SeededFault { case limitInclusive }

    init(policy validated: ValidatedPolicy) {
        self.init(policy: validated.policy)
    }

    init(policy: Policy) {
        self.policy = policy
        let checker = ConditionChecker(attributes: policy.attributes)
        self.conditions = policy.rules.map { rule in
            guard case let .success(e) = ExpressionParser.parse(rule.when), case let .success(c) = checker.check(e) else {
                fatalError("a validated policy's rule `\(rule.name)` does not parse: \(rule.when)")
            }
            return c
        }
    }

    // MARK: - Evaluating an event

    func evaluate(_ s: SessionState, _ e: Event) -> ModelOutcome {
        // machine-format "1. The incomplete-event check": before anything else, nothing moves
        // but the state name.
        if let problem = incompleteProblem(e) {
            var n = s
            if s.state != .signedOut { n.state = .awaitingIdP }
            var notices: Notices = []
            if e.network == .offline { notices.insert(.networkRequired) }
            if s.readOnly { notices.insert(.readOnly) }
            return ModelOutcome(
                decision: .idpLogin, reason: .invalidEvent, message: "the event is incomplete: " + problem,
                notices: notices, scope: nil, authMode: s.authMode, noticeDelay: nil, state: n, transition: -1)
        }
        // machine-format 2 and 3: the highest time seen, and `now`.
        let highest = [s.highestTime, s.lastIdPLogin, s.lastOnline, s.lastActivity].compactMap { $0 }.max()
        let now = max(e.time, highest ?? e.time)
        let step = Decide(model: self, s: s, e: e, highest: highest, now: now)
        let d = step.decide()

        // What every outcome adds (docs/how-a-decision-is-made.md, "Read-only"; reasons.md "Notices").
        var notices = d.notices
        if e.network == .offline, d.decision == .idpLogin || d.decision == .wipe { notices.insert(.networkRequired) }
        if d.next.readOnly { notices.insert(.readOnly) }
        // docs/how-a-decision-is-made.md: "`auth_mode` is set on every `idp_login` decision to the mode the session
        // recorded before the event (none when it recorded none), except for `register`".
        let mode: AuthMode? = d.decision == .idpLogin && d.usesPreviousMode ? s.authMode : nil
        let scope: Scope? = d.namesScope ? scopeFor(mode: d.next.authMode, keystore: e.device.keystore) : nil
        let byDecision = referenceMessagesByDecision["\(d.reason.rawValue) \(d.decision?.rawValue ?? "none")"]
        let message = d.message ?? (d.builtIn ? byDecision ?? referenceMessages[d.reason.rawValue] : nil)
        return ModelOutcome(
            decision: d.decision, reason: d.reason, message: message, notices: notices, scope: scope,
            authMode: mode, noticeDelay: d.noticeDelay, state: d.next, transition: nil, unspecified: d.unspecified)
    }

    /// docs/behaviours.md K4 and machine-format "scopes": by the offline credential, the
    /// session's auth mode and whether the event's keystore is hardware.
    func scopeFor(mode: AuthMode?, keystore: Keystore?) -> Scope {
        let biometric = mode == .biometric
        switch policy.offline.credential {
        case .offlineToken: return biometric ? .bioAuthOffline : .noAuthOffline
        case .signedJWT:
            if !biometric { return .noAuthGrant }
            return keystore == .hardware ? .bioAuthGrantSE : .bioAuthGrant
        }
    }

    // MARK: - The incomplete-event check

    /// The first problem of an event that cannot be judged, or nil.
    func incompleteProblem(_ e: Event) -> String? {
        // The facts each kind needs, in the documented order `network`, `auth_mode`, `app_id`, `user`, `cause`.
        let needs: [(String, Bool)]
        switch e.kind {
        case .launch, .resume, .register: needs = [("network", e.network != nil)]
        case .idpLoginSucceeded: needs = [("auth_mode", e.authMode != nil), ("user", e.user != nil)]
        case .deviceSessionDetected: needs = [("app_id", e.appID != nil), ("user", e.user != nil)]
        case .refreshFailed: needs = [("cause", e.cause != nil)]
        default: needs = []
        }
        if let missing = needs.first(where: { !$0.1 }) { return "`\(e.kind.rawValue)` needs `\(missing.0)`" }

        var problems: [(name: String, text: String)] = []
        for (key, value) in e.exactAttributes {
            // String equality is scalar by scalar (docs/machine-format.md), not Swift's `==`
            // (canonical equivalence): two spellings of a name are two attributes.
            let name = key.text
            guard let declared = policy.attributes.first(where: { sameScalars($0.name, name) }) else {
                problems.append((name, "attribute `\(name)` is not declared by the policy"))
                continue
            }
            if !ReferenceGrammar.accepts(declared.type, value) {
                problems.append((name, "attribute `\(name)` cannot be `\(value)`: it is \(ReferenceGrammar.typeName(declared.type))"))
            }
        }
        // The one whose name comes first by its UTF-8 bytes.
        let first = problems.min { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
        return first?.text
    }

    // MARK: - Rule conditions (machine-format "Conditions")

    /// The truth of rule `index`'s condition against session `s` (the state before the event,
    /// or the cleared session after a switch), event `e` and `now`.
    func truth(of index: Int, _ s: SessionState, _ e: Event, now: Timestamp) -> Truth3 {
        truth(conditions[index], s, e, now: now)
    }

    func truth(_ c: Condition, _ s: SessionState, _ e: Event, now: Timestamp) -> Truth3 {
        switch c {
        case let .oneOf(fact, values, negated):
            guard let text = text(of: fact, s, e) else { return .unknown }
            let member = values.contains { sameScalars($0, text) }
            return (member != negated) ? .yes : .no
        case let .number(fact, op, value):
            guard let n = number(of: fact, s, e, now: now) else { return .unknown }
            return compare(n, op, value) ? .yes : .no
        case let .version(fact, op, version):
            guard let text = text(of: fact, s, e), let parts = ReferenceGrammar.versionParts(text) else { return .unknown }
            let order = ReferenceGrammar.compareVersions(parts, version.parts.map { Int64($0) })
            return compare(Int64(order), op, 0) ? .yes : .no
        case let .and(l, r):
            let a = truth(l, s, e, now: now)
            if a == .no { return .no }
            let b = truth(r, s, e, now: now)
            if b == .no { return .no }
            if a == .unknown { return .unknown }
            return b
        case let .or(l, r):
            let a = truth(l, s, e, now: now)
            if a == .yes { return .yes }
            let b = truth(r, s, e, now: now)
            if b == .yes { return .yes }
            if a == .unknown { return .unknown }
            return b
        case let .not(x):
            switch truth(x, s, e, now: now) {
            case .yes: return .no
            case .no: return .yes
            case .unknown: return .unknown
            }
        }
    }

    func compare(_ a: Int64, _ op: SessionPolicy.Expression.Comparison, _ b: Int64) -> Bool {
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        case .less: return a < b
        case .lessOrEqual: return a <= b
        case .greater: return a > b
        case .greaterOrEqual: return a >= b
        case .isIn: return a == b
        }
    }

    func text(of fact: Fact, _ s: SessionState, _ e: Event) -> String? {
        switch fact {
        case .event: return e.kind.rawValue
        case .state: return s.state.rawValue
        case .network: return e.network?.rawValue
        case .authMode: return s.authMode?.rawValue
        case .keystore: return e.device.keystore?.rawValue
        case .integrity: return e.device.integrity?.rawValue
        case .readOnly: return s.readOnly ? "true" : "false"
        case let .attribute(name): return e.exactAttributes.first { sameScalars($0.key.text, name) }?.value
        case .sinceIdPLogin, .sinceOnline, .sinceActivity, .biometricFailures, .offlineFailures, .idpFailures: return nil
        }
    }

    func number(of fact: Fact, _ s: SessionState, _ e: Event, now: Timestamp) -> Int64? {
        func since(_ t: Timestamp?) -> Int64? { t.map { now.millisecondsSinceEpoch - $0.millisecondsSinceEpoch } }
        switch fact {
        case .sinceIdPLogin: return since(s.lastIdPLogin)
        case .sinceOnline: return since(s.lastOnline ?? s.lastIdPLogin)
        case .sinceActivity: return since(s.lastActivity ?? s.lastIdPLogin)
        case .biometricFailures: return Int64(s.failures.biometric)
        case .offlineFailures: return Int64(s.failures.offlineLogin)
        case .idpFailures: return Int64(s.failures.idpLogin)
        case let .attribute(name):
            guard let raw = e.exactAttributes.first(where: { sameScalars($0.key.text, name) })?.value else { return nil }
            if let i = ReferenceGrammar.integer(raw) { return i }
            if let seconds = ReferenceGrammar.durationSeconds(raw) { return seconds * 1000 }
            return nil
        case .event, .state, .network, .authMode, .keystore, .integrity, .readOnly: return nil
        }
    }
}

/// The grammars of attribute values in events (docs/machine-format.md "Durations, integers and
/// versions in events"), written out here.
enum ReferenceGrammar {
    static func isDigits<S: Sequence>(_ s: S) -> Bool where S.Element == UInt8 {
        var any = false
        for b in s {
            guard b >= 48 && b <= 57 else { return false }
            any = true
        }
        return any
    }

    /// An optional `-`, then one or more ASCII digits, within signed 64 bits.
    static func integer(_ raw: String) -> Int64? {
        let bytes = Array(raw.utf8)
        let digits = bytes.first == UInt8(ascii: "-") ? Array(bytes.dropFirst()) : bytes
        guard isDigits(digits) else { return nil }
        var value: Int64 = 0
        let negative = bytes.first == UInt8(ascii: "-")
        for b in digits {
            let d = Int64(b - 48)
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (n, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
            if o1 || o2 { return nil }
            value = n
        }
        return value
    }

    /// One or more groups of digits and a unit (`w`, `d`, `h`, `m`, `s`), lower case, the sum at
    /// most 3,162,240,000 s.
    static func durationSeconds(_ raw: String) -> Int64? {
        let limit: Int64 = 3_162_240_000
        let units: [UInt8: Int64] = [
            UInt8(ascii: "w"): 604_800, UInt8(ascii: "d"): 86_400, UInt8(ascii: "h"): 3600, UInt8(ascii: "m"): 60, UInt8(ascii: "s"): 1,
        ]
        var total: Int64 = 0
        var number: Int64? = nil
        var groups = 0
        for b in raw.utf8 {
            if b >= 48 && b <= 57 {
                let (m, o1) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (n, o2) = m.addingReportingOverflow(Int64(b - 48))
                if o1 || o2 || n > limit { return nil }
                number = n
            } else if let size = units[b] {
                guard let n = number else { return nil }
                let (v, o1) = n.multipliedReportingOverflow(by: size)
                let (t, o2) = total.addingReportingOverflow(v)
                if o1 || o2 || t > limit { return nil }
                total = t
                number = nil
                groups += 1
            } else {
                return nil
            }
        }
        guard number == nil, groups > 0 else { return nil }
        return total
    }

    /// 1 to 4 parts separated by `.`, each one or more ASCII digits whose value fits in 64 bits.
    static func versionParts(_ raw: String) -> [Int64]? {
        let pieces = raw.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard (1...4).contains(pieces.count) else { return nil }
        var parts: [Int64] = []
        for p in pieces {
            guard isDigits(p), let v = integer(String(decoding: p, as: UTF8.self)) else { return nil }
            parts.append(v)
        }
        return parts
    }

    /// -1, 0 or 1, part by part, a missing part being 0.
    static func compareVersions(_ a: [Int64], _ b: [Int64]) -> Int {
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            if x != y { return x < y ? -1 : 1 }
        }
        return 0
    }

    static func accepts(_ type: AttributeType, _ raw: String) -> Bool {
        switch type {
        case let .words(words): return words.contains { sameScalars($0, raw) }
        case .version: return versionParts(raw) != nil
        case .boolean: return raw == "true" || raw == "false"
        case .integer: return integer(raw) != nil
        case .duration: return durationSeconds(raw) != nil
        case .string: return true
        }
    }

    static func typeName(_ type: AttributeType) -> String {
        switch type {
        case let .words(words): return "one of " + words.map { "`\($0)`" }.joined(separator: ", ")
        case .version: return "a version"
        case .boolean: return "`true` or `false`"
        case .integer: return "an integer"
        case .duration: return "a duration"
        case .string: return "a string"
        }
    }
}

/// What one decision says before the notices every outcome adds.
struct Decided {
    var decision: Decision?
    var reason: Reason
    /// The message when it is not the built-in reason's (a rule's own).
    var message: String? = nil
    /// Whether `reason` is a built-in reason whose message docs/reasons.md fixes.
    var builtIn = true
    var notices: Notices = []
    var noticeDelay: TimeSpan? = nil
    var namesScope = false
    var usesPreviousMode = true
    var next: SessionState
    var unspecified: Set<String> = []
}

/// One evaluation: the state before, the event, the highest time seen and `now`.
struct Decide {
    let model: ReferenceModel
    let s: SessionState
    let e: Event
    let highest: Timestamp?
    let now: Timestamp

    var policy: Policy { model.policy }

    // MARK: The next states every transition starts from

    /// The state before with `highest_time` moved to the later of the highest time seen and the
    /// event's time: what "every transition ... moves `highest_time`" leaves.
    var moved: SessionState {
        var n = s
        n.highestTime = max(highest ?? e.time, e.time)
        return n
    }

    /// The cleared session a wipe leaves: only `highest_time`.
    /// docs/how-a-decision-is-made.md, "What each transition writes": a wipe keeps the highest time seen and the
    /// device's biometric lock.
    var wiped: SessionState {
        SessionState(state: .signedOut, highestTime: moved.highestTime, biometricLocked: moved.biometricLocked)
    }

    func wipe(_ reason: Reason, delay: TimeSpan? = nil) -> Decided {
        Decided(decision: .wipe, reason: reason, noticeDelay: delay, next: wiped)
    }

    /// An `idp_login` that writes nothing: a state with a session waits for the IdP login;
    /// signed out stays signed out.
    func idp(_ reason: Reason, delay: TimeSpan? = nil) -> Decided {
        var n = moved
        if s.state != .signedOut { n.state = .awaitingIdP }
        return Decided(decision: .idpLogin, reason: reason, noticeDelay: delay, next: n)
    }

    /// The `read_only` reaction: `active` and `suspended` go to `read_only`; a pending prompt
    /// and a session waiting for the IdP keep their state and carry the flag; signed out
    /// nothing changes.
    func markReadOnly(_ n: inout SessionState) {
        guard s.state != .signedOut else { return }
        n.readOnly = true
        if s.state == .active || s.state == .suspended { n.state = .readOnly }
    }

    func react(_ reaction: Reaction, _ reason: Reason, delay: TimeSpan? = nil) -> Decided {
        switch reaction {
        case .idpLogin: return idp(reason, delay: delay)
        case .wipe: return wipe(reason, delay: delay)
        case .readOnly:
            var n = moved
            markReadOnly(&n)
            return Decided(decision: nil, reason: reason, noticeDelay: delay, next: n)
        }
    }

    /// A signal's reaction with its notice delay ("the outcome carries `notice_delay`").
    /// AMBIGUITY: the delay is carried also when the reaction is `read_only` (no decision), and
    /// when `license_revoked: read_only` changes nothing in `signed_out`.
    func signal(_ r: Policy.SignalReaction, _ reason: Reason) -> Decided {
        react(r.then, reason, delay: r.noticeDelay)
    }

    /// docs/how-a-decision-is-made.md, "What each transition writes": an accepted IdP login or an adoption.
    func establish(from base: SessionState, mode: AuthMode?, readOnly: Bool, state: MachineState? = nil) -> SessionState {
        var n = SessionState()
        n.user = e.user ?? base.user
        n.device = e.device.id ?? base.device
        n.authMode = mode
        n.lastIdPLogin = e.time
        n.lastOnline = e.time
        n.lastActivity = e.time
        n.highestTime = e.time
        n.failures = SessionState.Failures()
        n.readOnly = readOnly
        // "Only an accepted IdP login clears it": an adopted device session keeps the device's lock.
        n.biometricLocked = e.kind == .idpLoginSucceeded ? false : s.biometricLocked
        n.state = state ?? (readOnly ? .readOnly : .active)
        return n
    }

    /// docs/how-a-decision-is-made.md, "Expected events by state": `idp_login`, `unexpected_event`; `signed_out` stays,
    /// every other state goes to `awaiting_idp`; nothing but the name and `highest_time` changes.
    func unexpected() -> Decided { idp(.unexpectedEvent) }

    static func plusOne(_ c: Int) -> Int { c == Int.max ? c : max(c, 0) + 1 }

    // MARK: The decision

    func decide() -> Decided {
        // Server signals: no device checks; they apply in every state as they are.
        switch e.kind {
        case .accountDeactivated: return signal(policy.signals.accountDeactivated, .accountDeactivated)
        case .tokensRevoked: return signal(policy.signals.tokensRevoked, .tokensRevoked)
        case .licenseRevoked: return signal(policy.signals.licenseRevoked, .licenseRevoked)
        case .biometricEnrollmentChanged: return enrollmentChanged()
        default: break
        }

        // The device checks, first, in every state: integrity, then binding (for
        // `idp_login_succeeded` the binding is a switch, below).
        if e.device.integrity == .compromised { return react(policy.device.compromised, .deviceCompromised) }
        if e.kind != .idpLoginSucceeded, policy.device.bindSession, s.state.hasSession,
            let bound = s.device, let other = e.device.id, !sameScalars(bound, other)
        {
            return wipe(.deviceMismatch)
        }

        switch e.kind {
        case .launch, .resume:
            switch s.state {
            case .signedOut: return idp(.noSession)
            case .awaitingIdP: return idp(.idpLoginRequired)
            case .active, .suspended, .awaitingBiometric, .readOnly: return loginAttempt(verified: false)
            }
        case .biometricSucceeded:
            return s.state == .awaitingBiometric ? loginAttempt(verified: true) : unexpected()
        case .background:
            var n = moved
            switch s.state {
            case .active, .readOnly:
                n.lastActivity = now
                n.state = .suspended
            case .awaitingBiometric:
                n.state = .suspended
            case .signedOut, .suspended, .awaitingIdP:
                break
            }
            return Decided(decision: nil, reason: .backgrounded, next: n)
        case .biometricFailed:
            guard s.state == .awaitingBiometric else { return unexpected() }
            return biometricFailed()
        case .offlineLoginFailed:
            guard [.active, .suspended, .awaitingBiometric, .readOnly].contains(s.state) else { return unexpected() }
            return offlineLoginFailed()
        case .idpLoginSucceeded:
            return idpLogin()
        case .idpLoginFailed:
            return idpLoginFailed()
        case .tokenRefreshed:
            guard [.active, .suspended, .awaitingBiometric, .readOnly].contains(s.state) else { return unexpected() }
            return tokenRefreshed()
        case .refreshFailed:
            if e.cause == .invalidToken { return signal(policy.signals.refreshTokenInvalid, .refreshTokenInvalid) }
            guard s.state != .signedOut else { return unexpected() }
            return Decided(decision: nil, reason: .refreshDeferred, notices: .retryLater, next: moved)
        case .logout:
            var d = signal(policy.signals.logout, .logout)
            if let items = e.unsyncedItems, items > 0 { d.notices.insert(.unsyncedData) }
            return d
        case .register:
            // The state does not change; a new account has no previous mode.
            let reason: Reason = e.network == .offline ? .registrationRequiresNetwork : .registration
            return Decided(decision: .idpLogin, reason: reason, usesPreviousMode: false, next: moved)
        case .deviceSessionDetected:
            guard s.state == .signedOut else { return Decided(decision: nil, reason: .sessionExists, next: moved) }
            return adoption()
        case .accountDeactivated, .tokensRevoked, .licenseRevoked, .biometricEnrollmentChanged:
            fatalError("handled above")
        }
    }

    /// docs/how-a-decision-is-made.md, "Events in each state", `biometric_enrollment_changed`.
    func enrollmentChanged() -> Decided {
        let r = policy.signals.biometricEnrollmentChanged
        guard s.state != .signedOut else {
            // "signed out: no decision; the device's biometric path is locked all the same".
            var n = moved
            n.biometricLocked = true
            return Decided(decision: nil, reason: .biometricEnrollmentChanged, next: n)
        }
        if s.authMode == .biometric || s.state == .awaitingBiometric {
            var d = signal(r, .biometricEnrollmentChanged)
            // "the device's biometric path stays locked until the next IdP login", also after
            // the reaction's wipe.
            d.next.biometricLocked = true
            return d
        }
        // AMBIGUITY: "What each transition writes" says both "biometric_enrollment_changed on a
        // session (unless its reaction wipes it): biometric_locked true" and, in its last row,
        // "an enrollment change on another session: nothing"; the events table says "on every
        // session the biometric path stays locked". The model locks every session.
        // AMBIGUITY: no notice delay on this no-decision outcome (the reaction is not applied).
        var n = moved
        n.biometricLocked = true
        return Decided(decision: nil, reason: .biometricEnrollmentChanged, next: n)
    }

    // MARK: Failures

    func biometricFailed() -> Decided {
        let limit = policy.retry.biometric
        let count = s.failures.biometric
        if count >= limit.max - 1 {
            var d = react(limit.then, .biometricRetriesExhausted)
            d.notices.insert(.suggestAuthModeChange)
            if limit.then != .wipe { d.next.failures.biometric = Self.plusOne(count) }
            return d
        }
        var n = moved
        n.failures.biometric = Self.plusOne(count)
        // docs/state-events-outcomes.md, "What an outcome carries": the re-prompt names the scope.
        return Decided(decision: .requireBiometric, reason: .biometricFailed, namesScope: true, next: n)
    }

    func offlineLoginFailed() -> Decided {
        let limit = policy.retry.offlineLogin
        let count = s.failures.offlineLogin
        var d: Decided
        if count >= limit.max - 1 {
            d = react(limit.then, .offlineLoginRetriesExhausted)
            if limit.then != .wipe { d.next.failures.offlineLogin = Self.plusOne(count) }
        } else if policy.fallback.onOfflineFailure == .wipe {
            d = wipe(.offlineLoginFailed)
        } else {
            // "with `idp_login` the state does not change".
            var n = moved
            n.failures.offlineLogin = Self.plusOne(count)
            d = Decided(decision: .idpLogin, reason: .offlineLoginFailed, next: n)
        }
        return d
    }

    func idpLoginFailed() -> Decided {
        let limit = policy.retry.idpLogin
        let count = s.failures.idpLogin
        var d = count >= limit.max - 1 ? react(limit.then, .idpLoginRetriesExhausted) : idp(.idpLoginFailed)
        if d.decision != .wipe { d.next.failures.idpLogin = Self.plusOne(count) }
        return d
    }

    // MARK: Rules

    /// The rules on this event, in order: the first whose condition is true decides, one whose
    /// condition is unknown fails closed (`rule_fact_missing`), one that is false is passed.
    /// Returns the index and its truth, or nil when none decides.
    func firstRule(against session: SessionState) -> (Int, Truth3)? {
        for (i, rule) in policy.rules.enumerated() where rule.on.contains(e.kind) {
            let t = model.truth(of: i, session, e, now: now)
            if t != .no { return (i, t) }
        }
        return nil
    }

    func ruleDecided(_ i: Int, next: SessionState) -> Decided {
        let then = policy.rules[i].then
        return Decided(
            decision: then.decision, reason: then.reason, message: then.message, builtIn: false, notices: then.notices,
            noticeDelay: then.noticeDelay, next: next)
    }

    // MARK: The login attempt

    /// docs/how-a-decision-is-made.md, "Order of evaluation for a login attempt", steps 3-13 (steps 1-2 are the device
    /// checks above), with the clock check where "How a decision is made" places it.
    func loginAttempt(verified: Bool) -> Decided {
        typealias Step = (decision: Decision, check: () -> Decided?)
        var steps: [Step] = []
        let d = policy.device
        if d.singleUser {
            steps.append(
                (
                    .wipe,
                    {
                        if let a = s.user, let b = e.user, !sameScalars(a, b) { return wipe(.differentUser) }
                        return nil
                    }
                ))
        }
        func exceeded(_ reference: Timestamp?, _ limit: TimeSpan) -> Bool {
            guard let reference else { return true }
            let elapsed = now.millisecondsSinceEpoch - reference.millisecondsSinceEpoch
            if model.fault == .limitInclusive { return elapsed >= limit.seconds * 1000 }  // the seeded fault
            return elapsed > limit.seconds * 1000
        }
        func decision(_ r: Reaction) -> Decision { r == .wipe ? .wipe : .idpLogin }
        if let max = policy.session.max {
            steps.append(
                (
                    decision(policy.session.onExpired),
                    {
                        exceeded(s.lastIdPLogin, max) ? react(policy.session.onExpired, .sessionMaxExceeded) : nil
                    }
                ))
        }
        if let window = policy.offline.window {
            steps.append(
                (
                    decision(policy.offline.onExpired),
                    {
                        exceeded(s.lastOnline ?? s.lastIdPLogin, window) ? react(policy.offline.onExpired, .offlineWindowExceeded) : nil
                    }
                ))
        }
        if let idle = policy.session.idle {
            steps.append(
                (
                    decision(policy.session.onExpired),
                    {
                        exceeded(s.lastActivity ?? s.lastIdPLogin, idle) ? react(policy.session.onExpired, .sessionIdleExceeded) : nil
                    }
                ))
        }
        steps.append((.idpLogin, { s.authMode == nil ? idp(.noAuthMode) : nil }))
        steps.append((.idpLogin, { s.authMode == .password || s.authMode == .pin ? idp(.authModeRequiresIdP) : nil }))
        steps.append(
            (
                .idpLogin,
                {
                    guard let mode = s.authMode, policy.authModes.offline.contains(mode) else { return idp(.authModeNotAllowedOffline) }
                    return nil
                }
            ))
        if policy.offline.credential == .signedJWT, policy.offline.keyProtection == .hardware {
            steps.append((.idpLogin, { e.device.keystore != .hardware ? idp(.keyProtectionInsufficient) : nil }))
        }
        steps.append(
            (
                .idpLogin,
                {
                    s.biometricLocked && (s.authMode == .biometric || verified) ? idp(.biometricEnrollmentChanged) : nil
                }
            ))
        // Step 12: each rule on this event is two steps, its fact-missing answer (`idp_login`)
        // and its own decision (`state: read_only` counting as `allow`).
        // AMBIGUITY: the fact-missing step is placed before the rule's own for the clock check.
        for (i, rule) in policy.rules.enumerated() where rule.on.contains(e.kind) {
            steps.append((.idpLogin, { model.truth(of: i, s, e, now: now) == .unknown ? idp(.ruleFactMissing) : nil }))
            steps.append(
                (
                    rule.then.decision ?? .allow,
                    {
                        guard model.truth(of: i, s, e, now: now) == .yes else { return nil }
                        return ruleOnAttempt(i)
                    }
                ))
        }
        // Step 13.
        let final: Decision = verified || s.authMode == .unprotected ? .allow : .requireBiometric
        steps.append((final, { finalStep(verified: verified) }))

        // The clock check sits just before the first step more permissive than its reaction.
        let reaction = d.clockRollback
        let clockDecision = decision(reaction)
        let clock: Step = (
            clockDecision,
            {
                guard let highest else { return nil }
                return e.time.millisecondsSinceEpoch < highest.millisecondsSinceEpoch - d.clockTolerance.seconds * 1000
                    ? react(reaction, .clockRollback) : nil
            }
        )
        let at = steps.firstIndex { Self.permissiveness($0.decision) > Self.permissiveness(clockDecision) } ?? steps.count
        steps.insert(clock, at: at)

        for step in steps {
            if let decided = step.check() { return decided }
        }
        fatalError("step 13 always decides")
    }

    static func permissiveness(_ d: Decision) -> Int {
        switch d {
        case .allow: 3
        case .requireBiometric: 2
        case .idpLogin: 1
        case .wipe: 0
        }
    }

    func ruleOnAttempt(_ i: Int) -> Decided {
        let then = policy.rules[i].then
        var n = moved
        var namesScope = false
        switch then.decision {
        case .wipe?: n = wiped
        case .idpLogin?: n.state = .awaitingIdP
        case .requireBiometric?:
            n.state = .awaitingBiometric
            // docs/state-events-outcomes.md, "What an outcome carries": a rule's `require_biometric` names the scope.
            namesScope = true
        case .allow?, nil:
            markReadOnly(&n)  // not allowed on a login attempt by the validator
        }
        var d = ruleDecided(i, next: n)
        d.namesScope = namesScope
        return d
    }

    func finalStep(verified: Bool) -> Decided {
        var n = moved
        if verified || s.authMode == .unprotected {
            n.lastActivity = now
            if verified { n.failures.biometric = 0 }
            n.state = n.readOnly ? .readOnly : .active
            return Decided(
                decision: .allow, reason: verified ? .biometricVerified : .withinLimits, namesScope: true, next: n)
        }
        n.state = .awaitingBiometric
        return Decided(decision: .requireBiometric, reason: .withinLimits, namesScope: true, next: n)
    }

    // MARK: The IdP login

    /// docs/how-a-decision-is-made.md, "Order of evaluation for an IdP login" and "Switching user or device".
    func idpLogin() -> Decided {
        if s.state.hasSession {
            if policy.device.bindSession, let bound = s.device, let other = e.device.id, !sameScalars(bound, other) {
                return switched(.deviceMismatch)
            }
            if policy.device.singleUser, let a = s.user, let b = e.user, !sameScalars(a, b) {
                return switched(.differentUser)
            }
        }
        // "one without `device.id` keeps the device the session had (none from `signed_out`)".
        let base = s.state == .signedOut ? SessionState() : s
        if let (i, t) = firstRule(against: s) {
            if t == .unknown { return idp(.ruleFactMissing) }
            switch policy.rules[i].then.decision {
            case .wipe?: return ruleDecided(i, next: wiped)
            case .idpLogin?, .requireBiometric?, .allow?:
                // Refused: like every other `idp_login`, it writes nothing.
                var n = moved
                if s.state != .signedOut { n.state = .awaitingIdP }
                return ruleDecided(i, next: n)
            case nil:
                // docs/state-events-outcomes.md, "What an outcome carries": accepted read-only, decision `allow`, with the
                // rule's reason, message, notices and delay.
                var d = ruleDecided(i, next: establish(from: base, mode: e.authMode, readOnly: true))
                d.decision = .allow
                return d
            }
        }
        return Decided(
            decision: .allow, reason: .idpLoginSucceeded, next: establish(from: base, mode: e.authMode, readOnly: false))
    }

    /// A switch: the previous session is wiped and the login judged as a fresh one from
    /// `signed_out`; the decision is always `wipe`.
    func switched(_ reason: Reason) -> Decided {
        let cleared = SessionState(state: .signedOut, highestTime: highest)
        let fresh = SessionState()
        if let (i, t) = Decide(model: model, s: cleared, e: e, highest: highest, now: now).firstRule(against: cleared) {
            if t == .unknown { return wipe(.ruleFactMissing) }
            let then = policy.rules[i].then
            // AMBIGUITY: "the reason, message and notice delay are those of the rule": the
            // rule's notices are kept too.
            let next = then.decision == nil ? establish(from: fresh, mode: e.authMode, readOnly: true) : wiped
            var d = ruleDecided(i, next: next)
            d.decision = .wipe
            return d
        }
        return Decided(decision: .wipe, reason: reason, next: establish(from: fresh, mode: e.authMode, readOnly: false))
    }

    // MARK: Token refresh, adoption

    func tokenRefreshed() -> Decided {
        var accepted = moved
        accepted.lastOnline = e.time
        accepted.failures.offlineLogin = 0
        if let (i, t) = firstRule(against: s) {
            if t == .unknown { return idp(.ruleFactMissing) }
            switch policy.rules[i].then.decision {
            case .wipe?: return ruleDecided(i, next: wiped)
            case .idpLogin?, .requireBiometric?, .allow?:
                var n = moved
                n.state = .awaitingIdP
                return ruleDecided(i, next: n)
            case nil:
                markReadOnly(&accepted)
                return ruleDecided(i, next: accepted)
            }
        }
        return Decided(decision: nil, reason: .tokenRefreshed, next: accepted)
    }

    /// docs/policy-language.md, "Cross-app device sessions".
    func adoption() -> Decided {
        let c = policy.crossApp
        guard c.adopt != .never, let app = e.appID, c.apps.contains(where: { sameScalars($0, app) }) else {
            return idp(.crossAppNotAllowed)
        }
        // AMBIGUITY (settled since): docs/policy-language.md gives the adopted session mode
        // `biometric` (`require_biometric`) or `none` (`allow`); machine-format's `establish`
        // took the event's `auth_mode` when it reported one. The model follows policy-language.md.
        // docs/state-events-outcomes.md, "What an outcome carries": an adoption names the scope of the mode it records.
        // "after an enrollment change, an adoption behind a prompt asks for an IdP login".
        if c.adopt == .requireBiometric && s.biometricLocked { return idp(.biometricEnrollmentChanged) }
        let fresh = SessionState()
        if c.adopt == .allow {
            return Decided(
                decision: .allow, reason: .crossAppSession,
                namesScope: true, next: establish(from: fresh, mode: .unprotected, readOnly: false, state: .active))
        }
        return Decided(
            decision: .requireBiometric, reason: .crossAppSession,
            namesScope: true, next: establish(from: fresh, mode: .biometric, readOnly: false, state: .awaitingBiometric))
    }
}
