public import SessionPolicy

/// A property of the user's, from a property file (README, "User properties"): one of the
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

    public init() {}

    /// Whether a step matches.
    func matches(_ s: ObservedStep) -> Bool {
        if let e = events, !e.contains(s.kind) { return false }
        if let d = decisions, !d.contains(s.decision) { return false }
        if let r = reasons, !r.contains(s.reason.rawValue) { return false }
        if let n = networks, !n.contains(s.network.map(\.rawValue) ?? "unknown") { return false }
        if let f = from, !f.contains(s.from) { return false }
        if let t = to, !t.contains(s.to) { return false }
        return true
    }
}

/// What a property can see of one step.
struct ObservedStep {
    var kind: EventKind
    var network: Network?
    var decision: Decision?
    var reason: Reason
    var from: MachineState
    var to: MachineState
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
