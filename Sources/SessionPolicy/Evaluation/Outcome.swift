/// The result of evaluating one event: the decision, why, what to tell the user, and the
/// session's new state.
///
/// JSON shape: `{"decision": "idp_login", "reason": "session_max_exceeded", "message": "...",
/// "notices": ["network_required"], "scope": null, "auth_mode": "biometric",
/// "notice_delay": null, "transition": 42, "state": {...}}`.
public struct Outcome: Sendable, Codable, Equatable {
    /// The decision; nil for events that need nothing from the user (`background`, `token_refreshed`).
    public var decision: Decision?
    /// Why (machine-readable).
    public var reason: Reason
    /// Why (for people).
    public var message: String
    /// Notices for the user interface.
    public var notices: Notices
    /// The OAuth scope for an offline login (`allow`/`require_biometric` on the offline path).
    public var scope: Scope?
    /// For `idp_login`: the auth mode to use (the one used last time).
    public var authMode: AuthMode?
    /// How long the user sees the message before the client acts.
    public var noticeDelay: TimeSpan?
    /// The session's new state.
    public var state: SessionState
    /// The id of the transition that decided (see `CompiledPolicy.explanation(of:)`).
    public var transition: Int

    /// The keys of an outcome: the one place they are spelled (`JSONField`).
    package enum Field: UInt8, JSONField {

        case decision, reason, message, notices, scope, authMode, noticeDelay, state, transition

        package var name: StaticString {
            switch self {
            case .decision: "decision"
            case .reason: "reason"
            case .message: "message"
            case .notices: "notices"
            case .scope: "scope"
            case .authMode: "auth_mode"
            case .noticeDelay: "notice_delay"
            case .state: "state"
            case .transition: "transition"
            }
        }

        /// Outcomes are written, not read, by the fast codec.
        package init?(_ key: UnsafeRawBufferPointer) {
            guard let field = Self.allCases.first(where: { key.equals($0.name) }) else { return nil }
            self = field
        }

    }

    public init(
        decision: Decision?, reason: Reason, message: String, notices: Notices, scope: Scope?,
        authMode: AuthMode?, noticeDelay: TimeSpan?, state: SessionState, transition: Int
    ) {
        self.decision = decision
        self.reason = reason
        self.message = message
        self.notices = notices
        self.scope = scope
        self.authMode = authMode
        self.noticeDelay = noticeDelay
        self.state = state
        self.transition = transition
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        decision = try c.decodeIfPresent(Decision.self, forKey: .decision)
        reason = try c.decode(Reason.self, forKey: .reason)
        message = try c.decode(String.self, forKey: .message)
        notices = try c.decode(Notices.self, forKey: .notices)
        scope = try c.decodeIfPresent(Scope.self, forKey: .scope)
        authMode = try c.decodeIfPresent(AuthMode.self, forKey: .authMode)
        noticeDelay = try c.decodeIfPresent(TimeSpan.self, forKey: .noticeDelay)
        state = try c.decode(SessionState.self, forKey: .state)
        transition = try c.decode(Int.self, forKey: .transition)
    }

    /// Every key is written, absent values as `null`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encode(decision, forKey: .decision)
        try c.encode(reason, forKey: .reason)
        try c.encode(message, forKey: .message)
        try c.encode(notices, forKey: .notices)
        try c.encode(scope, forKey: .scope)
        try c.encode(authMode, forKey: .authMode)
        try c.encode(noticeDelay, forKey: .noticeDelay)
        try c.encode(state, forKey: .state)
        try c.encode(transition, forKey: .transition)
    }
}

extension Outcome {
    /// The outcome of `verdict` with the session's new state.
    @inline(__always) public init(_ verdict: Verdict, state: SessionState) {
        self.init(
            decision: verdict.decision, reason: verdict.reason, message: verdict.message, notices: verdict.notices,
            scope: verdict.scope, authMode: verdict.authMode, noticeDelay: verdict.noticeDelay, state: state,
            transition: verdict.transition)
    }

    /// The outcome without its state: what `evaluate(_:_:)` with an `inout` state returns.
    public var verdict: Verdict {
        Verdict(
            decision: decision, reason: reason, message: message, notices: notices, scope: scope, authMode: authMode,
            noticeDelay: noticeDelay, transition: transition)
    }
}

/// The decision of one evaluation without the new state, which the in-place
/// `evaluate(_:_:)` writes into the caller's state: an `Outcome` less its `state`.
public struct Verdict: Sendable, Equatable {
    /// The decision; nil for events that need nothing from the user (`background`, `token_refreshed`).
    public var decision: Decision?
    /// Why (machine-readable).
    public var reason: Reason
    /// Why (for people).
    public var message: String
    /// Notices for the user interface.
    public var notices: Notices
    /// The OAuth scope for an offline login (`allow`/`require_biometric` on the offline path).
    public var scope: Scope?
    /// For `idp_login`: the auth mode to use (the one used last time).
    public var authMode: AuthMode?
    /// How long the user sees the message before the client acts.
    public var noticeDelay: TimeSpan?
    /// The transition taken (its id in the compiled machine); -1 for an event refused before any guard.
    public var transition: Int

    public init(
        decision: Decision?, reason: Reason, message: String, notices: Notices, scope: Scope?,
        authMode: AuthMode?, noticeDelay: TimeSpan?, transition: Int
    ) {
        self.decision = decision
        self.reason = reason
        self.message = message
        self.notices = notices
        self.scope = scope
        self.authMode = authMode
        self.noticeDelay = noticeDelay
        self.transition = transition
    }
}

/// One guard tried while evaluating an event, for explanations.
public struct TraceStep: Sendable, Codable, Equatable {
    /// The transition's id.
    public var transition: Int
    /// The guard, in policy vocabulary (`more than 90d since the last IdP login`).
    public var check: String
    /// The facts it looked at (`8d since the last IdP login`).
    public var facts: String
    /// Whether it held.
    public var matched: Bool
    /// The levers the transition came from.
    public var levers: [String]
    /// Where the first of those levers is written, if the file sets it.
    public var location: SourceLocation?
}
