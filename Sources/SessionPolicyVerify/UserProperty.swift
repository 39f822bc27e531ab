public import SessionPolicy

/// A property of the user's, from a property file (docs/verify.md, "User properties"): one of the
/// property specification patterns of Dwyer, Avrunin and Corbett (1999) over the steps of a
/// session, in a scope. verify checks it over every run it explores, like the built-in ones.
public struct UserProperty: Sendable {
    /// The pattern: what must (not) happen to the steps in scope.
    public enum Pattern: Sendable {
        /// No step in scope matches (`never:`).
        case absence(StepMatch)
        /// Every step in scope matches (`always:`).
        case universality(StepMatch)
        /// Some step in scope matches before the scope closes (`eventually:`).
        case existence(StepMatch)
        /// A step matching `when` comes only after a step matching `first` (`requires:`).
        case precedence(when: StepMatch, first: StepMatch)
        /// A step matching `when` is followed by a later one matching `then` before the scope
        /// closes (`responds:`). Strict: a step that matches both does not answer itself.
        case response(when: StepMatch, then: StepMatch)
    }

    /// Where the pattern applies (Dwyer's scopes): the steps after one matching `after` (all
    /// steps without it), up to one matching `before` or `until` (the closing step is not in
    /// scope). With `before`, a violation counts only once the closing step comes (Dwyer's
    /// "before" and "between"); with `until`, at once ("after-until"); without an `after`, the
    /// closing step ends the scope for good.
    public struct Scope: Sendable {
        public var after: StepMatch?
        public var before: StepMatch?
        public var until: StepMatch?
    }

    public var id: String
    /// What the property says, in the author's words (or generated from the pattern).
    public var sentence: String
    public var pattern: Pattern
    public var scope: Scope
    /// Where it was written.
    public var location: SourceLocation?

    /// The scope's closing step, whichever key wrote it.
    var closing: StepMatch? { scope.before ?? scope.until }
}

/// Which steps a pattern talks about: every field given must match (a list matches any of its
/// values); a field left out matches anything.
public struct StepMatch: Sendable, Hashable {
    public var events: Set<EventKind>?
    /// Decisions; `nil` inside the set stands for "no decision" (`none`).
    public var decisions: Set<Decision?>?
    public var reasons: Set<String>?
    /// `online`, `offline`, or `unknown` (the event does not say).
    public var networks: Set<String>?
    /// The state before the step.
    public var from: Set<MachineState>?
    /// The state after the step.
    public var to: Set<MachineState>?
    /// The attributes the event reports (`attributes:`): each named one must be one of its values.
    public var attributes: [AttributeMatch]?
    /// Bounds on the times elapsed since the session's recorded times (`elapsed:`): all must hold.
    public var elapsed: [ElapsedBound]?

    public init() {}

    /// Whether a step matches.
    func matches(_ s: ObservedStep) -> Bool {
        if let e = events, !e.contains(s.kind) { return false }
        if let d = decisions, !d.contains(s.decision) { return false }
        if let r = reasons, !r.contains(s.reason.rawValue) { return false }
        if let n = networks, !n.contains(s.network.map(\.rawValue) ?? "unknown") { return false }
        if let f = from, !f.contains(s.from) { return false }
        if let t = to, !t.contains(s.to) { return false }
        if let list = attributes {
            for a in list where !a.matches(s.attributes[ExactName(a.name)]) { return false }
        }
        if let bounds = elapsed {
            for b in bounds {
                guard let age = s.elapsed[b.clock], b.holds(age) else { return false }
            }
        }
        return true
    }
}

/// What a step description says of one attribute (`attributes: { tier: [business, absent] }`):
/// the values it matches, and whether an event that does not report it matches.
public struct AttributeMatch: Sendable, Hashable {
    /// The declared attribute's name, as written.
    public var name: String
    /// The values, as written.
    public var values: [String]
    /// Whether `absent` (unquoted) is among them: the event does not report the attribute.
    public var absent: Bool
    /// The values as the policy's declared type compares them (integers, durations and versions by
    /// value, the rest scalar by scalar), once bound to a policy (`bound(to:)`).
    var canonical: Set<ExactName>?
    /// Where the name and each value are written.
    var location: SourceLocation?
    var valueLocations: [SourceLocation] = []

    /// Whether an event reporting `value` (canonical; nil: not reported) matches.
    func matches(_ value: ExactName?) -> Bool {
        guard let value else { return absent }
        if let canonical { return canonical.contains(value) }
        return values.containsExactly(value.text)
    }
}

/// The time elapsed since one of the session's recorded times, as the rules' `elapsed.*` facts
/// measure it: from the engine's `now` (the event's time, never before the highest time seen).
public enum ElapsedClock: String, Sendable, Hashable, CaseIterable {
    /// Since the last IdP login (or adopted device session).
    case sinceIdPLogin = "since_idp_login"
    /// Since the last online validation, or the last IdP login when none was recorded.
    case sinceOnline = "since_online"
    /// Since the last activity, or the last IdP login when none was recorded.
    case sinceActivity = "since_activity"
}

/// One bound on an elapsed time (`since_online: "> 1d"`). A session that records no time for
/// the clock (no session) satisfies no bound.
public struct ElapsedBound: Sendable, Hashable {
    /// How the elapsed time compares with the limit.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }
    public var clock: ElapsedClock
    public var comparison: Comparison
    public var limit: TimeSpan

    /// A bound `clock comparison limit`.
    public init(_ clock: ElapsedClock, _ comparison: Comparison, _ limit: TimeSpan) {
        self.clock = clock
        self.comparison = comparison
        self.limit = limit
    }

    /// The bound as the cut verify makes, `age > θ` (milliseconds), and whether the bound is
    /// that side of it (`>`, `>=`) or the other (`<`, `<=`).
    var cut: (theta: Int64, above: Bool) {
        let ms = limit.seconds * 1000
        switch comparison {
        case .greater: return (ms, true)
        case .greaterOrEqual: return (ms - 1, true)
        case .less: return (ms - 1, false)
        case .lessOrEqual: return (ms, false)
        }
    }

    /// Whether an elapsed time of `age` milliseconds satisfies the bound.
    func holds(_ age: Int64) -> Bool { (age > cut.theta) == cut.above }

    /// `since_online > 1d`.
    var text: String { "\(clock.rawValue) \(comparison.rawValue) \(limit)" }
}

/// The elapsed times a step sees, in milliseconds, by clock; nil where the session records none.
struct ElapsedTimes: Hashable {
    var sinceIdPLogin: Int64?
    var sinceOnline: Int64?
    var sinceActivity: Int64?

    subscript(_ c: ElapsedClock) -> Int64? {
        switch c {
        case .sinceIdPLogin: sinceIdPLogin
        case .sinceOnline: sinceOnline
        case .sinceActivity: sinceActivity
        }
    }

    /// The times as the engine measures them for an event at `time` after `state`.
    init(_ state: SessionState, at time: Timestamp) {
        let recorded = [state.highestTime, state.lastIdPLogin, state.lastOnline, state.lastActivity].compactMap { $0 }
        let now = max(time.millisecondsSinceEpoch, recorded.map(\.millisecondsSinceEpoch).max() ?? .min)
        func since(_ t: Timestamp?) -> Int64? { t.map { now - $0.millisecondsSinceEpoch } }
        sinceIdPLogin = since(state.lastIdPLogin)
        sinceOnline = since(state.lastOnline ?? state.lastIdPLogin)
        sinceActivity = since(state.lastActivity ?? state.lastIdPLogin)
    }

    init() {}
}

/// What a property can see of one step.
struct ObservedStep {
    var kind: EventKind
    var network: Network?
    var decision: Decision?
    var reason: Reason
    var from: MachineState
    var to: MachineState
    /// The values of the attributes the properties name, canonical (`AttributeMatch.canonical`).
    var attributes: [ExactName: ExactName] = [:]
    var elapsed = ElapsedTimes()
}

/// The state of one property's monitor along a run: whether its scope is open, and the flags
/// its pattern keeps. A small value, part of each abstract state verify explores.
struct Monitor: Hashable, Sendable {
    enum Phase: UInt8, Hashable, Sendable {
        /// Waiting for a step matching `after`.
        case waiting
        case open
        /// A `before` without `after` closed the scope for good; or the property was already broken.
        case done
    }
    var phase: Phase
    /// Existence: a match was seen; precedence: the `first` step was seen; response: a `when`
    /// step waits for its `then`.
    var pending = false
    /// With `before` (between): a violation seen, which counts once the scope closes.
    var deferred = false

    /// The monitor at the start of a run.
    static func initial(_ p: UserProperty) -> Monitor {
        Monitor(phase: p.scope.after == nil ? .open : .waiting)
    }

    /// The monitor after `step`, and whether the step breaks the property.
    func next(_ p: UserProperty, _ step: ObservedStep) -> (Monitor, broken: Bool) {
        var m = self
        var broken = false
        switch phase {
        case .done:
            return (m, false)
        case .open:
            if let close = p.closing, close.matches(step) {
                switch p.pattern {
                case .existence: broken = !pending
                case .response: broken = pending
                case .absence, .universality, .precedence: broken = deferred
                }
                m.pending = false
                m.deferred = false
                m.phase = p.scope.after == nil ? .done : .waiting
                // The closing step may open the next interval.
                if let open = p.scope.after, open.matches(step) { m.phase = .open }
                return (m, broken)
            }
            var bad = false
            switch p.pattern {
            case let .absence(x): bad = x.matches(step)
            case let .universality(x): bad = !x.matches(step)
            case let .existence(x): if x.matches(step) { m.pending = true }
            case let .precedence(when, first):
                // A step that is both counts as preceded (Dwyer: `!P W S`).
                if first.matches(step) { m.pending = true }
                if when.matches(step) && !m.pending { bad = true }
            case let .response(when, then):
                // Strict: a `then` step answers the `when` steps before it, never itself. A step
                // that is both answers the earlier ones and waits for a later answer of its own.
                if when.matches(step) {
                    m.pending = true
                } else if then.matches(step) {
                    m.pending = false
                }
            }
            if bad {
                // With `before`, the pattern speaks of runs where the closing step comes.
                if p.scope.before != nil { m.deferred = true } else { broken = true }
            }
        case .waiting:
            if let open = p.scope.after, open.matches(step) { m.phase = .open }
        }
        if broken { m.phase = .done }
        return (m, broken)
    }
}
