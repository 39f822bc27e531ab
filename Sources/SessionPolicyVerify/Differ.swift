public import SessionPolicy

/// What `policyctl diff` found between two versions of a policy.
public struct DiffReport: Sendable, Codable {
    public var old: String
    public var new: String
    /// Abstract states of the old version explored.
    public var states: Int
    /// Whether the exploration ran to its end (false: stopped at the state limit).
    public var exhaustive: Bool
    /// One entry per pair of deciding transitions (old, new) that differ, at its first class:
    /// those that let more in first, each part in the order the exploration met them (breadth
    /// first, so a shorter run to the difference comes first).
    public var differences: [PolicyDifference]

    /// Whether the two versions decide every event alike in every state the old one reaches.
    public var equivalent: Bool { exhaustive && differences.isEmpty }
}

/// A class of (state, event, timing) whose outcome differs between the two versions.
public struct PolicyDifference: Sendable, Codable {
    /// One version's outcome.
    public struct Side: Sendable, Codable {
        public var decision: Decision?
        public var reason: Reason
        public var next: MachineState
        public var transition: Int
        /// The levers of the deciding transition.
        public var levers: [String]
        /// The deciding transition's check, in words.
        public var check: String
    }

    /// A part of the outcome besides the decision and the reason that the versions give otherwise.
    public struct Change: Sendable, Codable, Equatable {
        /// The part, in policy vocabulary: `message`, `notices`, `scope`, `auth mode`, `notice
        /// delay`, or a field of the next session (`next session's last activity`).
        public var field: String
        /// The old version's, in words (a time relative to the step: `kept`, `the step's time`).
        public var old: String
        public var new: String
    }

    public var from: MachineState
    public var event: EventKind
    /// The class in words: the event's facts and the ages that matter ("offline, since the
    /// last online validation more than 14d and at most 30d").
    public var when: String
    public var old: Side
    public var new: Side
    /// Whether the new version lets more in: its decision is more permissive (`allow` over
    /// `require_biometric` over `idp_login` over `wipe`), or it makes none where the old one did.
    public var letsMoreIn: Bool
    /// The other parts of the outcome that differ, at the class's point, in outcome order.
    public var changes: [Change]
    /// The shortest run found to the difference, decided by the old version; its last step is
    /// the event the versions decide otherwise (as `old` and `new` say, when `concrete`).
    public var steps: [Counterexample.Step]
    /// Whether `steps` is one concrete run.
    public var concrete: Bool
    /// The first step of the run on which the new version decides alike every step before the
    /// last: 0 when it does from the start; past 0, the new version decides the step before
    /// otherwise, and a scenario starts from `startState`.
    public var scenarioStart: Int
    /// The session the old version leaves after the steps before `scenarioStart` (nil when 0).
    public var startState: SessionState?
}

/// The semantic difference between two versions of a policy (docs/diff.md):
/// for every session state the old version can reach, the events the new one decides
/// otherwise. Pure: no clock, no I/O.
public enum Differ {
    /// Explores `old` and evaluates `new` beside it at every class (docs/diff.md).
    public static func diff(_ old: CompiledPolicy, _ new: CompiledPolicy, stateLimit: Int = 100_000) -> DiffReport {
        let x = Explorer(old, other: new)
        let exhaustive = x.run(limit: stateLimit)
        var out: [PolicyDifference] = []
        for d in x.divergences {
            let key = x.nodes[d.edge.from].session
            let r = run(x, to: d, new: new)
            func side(_ m: StateMachine, _ o: Outcome) -> PolicyDifference.Side {
                let t = o.transition >= 0 ? m.transitions[o.transition] : nil
                return PolicyDifference.Side(
                    decision: o.decision, reason: o.reason, next: o.state.state, transition: o.transition,
                    levers: t?.source.levers ?? [], check: t.map { m.describe($0.guard) } ?? "refused")
            }
            out.append(
                PolicyDifference(
                    from: key.state, event: d.edge.choice.kind, when: words(d.edge, key), old: side(old.machine, d.old),
                    new: side(new.machine, d.new), letsMoreIn: letsMoreIn(d.old.decision, d.new.decision),
                    changes: changes(d.old, d.new, before: d.before, event: d.event), steps: r.steps, concrete: r.concrete,
                    scenarioStart: r.start, startState: r.state))
        }
        // Those that let more in first; each part keeps the exploration's order.
        let ordered = out.filter(\.letsMoreIn) + out.filter { !$0.letsMoreIn }
        return DiffReport(old: old.name, new: new.name, states: x.explored, exhaustive: exhaustive, differences: ordered)
    }

    /// How much a decision lets in: no decision (the event only changes the session, as
    /// `background` does) over `allow` over `require_biometric` over `idp_login` over `wipe`.
    static func permissiveness(_ d: Decision?) -> Int {
        switch d {
        case nil: return 4
        case .allow?: return 3
        case .requireBiometric?: return 2
        case .idpLogin?: return 1
        case .wipe?: return 0
        }
    }

    /// Whether `new` lets more in than `old`.
    static func letsMoreIn(_ old: Decision?, _ new: Decision?) -> Bool { permissiveness(new) > permissiveness(old) }

    /// The parts of two outcomes besides decision, reason and transition that differ, in words;
    /// the next session's times relative to the step (`before` is the session it came from).
    static func changes(_ a: Outcome, _ b: Outcome, before: SessionState, event: Event) -> [PolicyDifference.Change] {
        var out: [PolicyDifference.Change] = []
        func add(_ field: String, _ x: String, _ y: String) { if x != y { out.append(.init(field: field, old: x, new: y)) } }
        func delay(_ t: TimeSpan?) -> String { t.map { duration($0.seconds * 1000) } ?? "none" }
        add("message", "\"\(a.message)\"", "\"\(b.message)\"")
        add("notices", "[\(a.notices.names.joined(separator: ", "))]", "[\(b.notices.names.joined(separator: ", "))]")
        add("scope", a.scope?.rawValue ?? "none", b.scope?.rawValue ?? "none")
        add("auth mode", a.authMode?.rawValue ?? "none", b.authMode?.rawValue ?? "none")
        add("notice delay", delay(a.noticeDelay), delay(b.noticeDelay))
        let (s, t) = (a.state, b.state)
        func session(_ field: String, _ x: String, _ y: String) { add("next session's \(field)", x, y) }
        session("state", s.state.rawValue, t.state.rawValue)
        session("user", s.user ?? "none", t.user ?? "none")
        session("device", s.device ?? "none", t.device ?? "none")
        session("auth mode", s.authMode?.rawValue ?? "none", t.authMode?.rawValue ?? "none")
        let times: [(String, KeyPath<SessionState, Timestamp?>)] = [
            ("last IdP login", \.lastIdPLogin), ("last online validation", \.lastOnline), ("last activity", \.lastActivity),
            ("highest time", \.highestTime),
        ]
        for (name, path) in times {
            session(
                name, time(s[keyPath: path], was: before[keyPath: path], event), time(t[keyPath: path], was: before[keyPath: path], event))
        }
        session("read-only", "\(s.readOnly)", "\(t.readOnly)")
        session("biometric lock", "\(s.biometricLocked)", "\(t.biometricLocked)")
        func failures(_ f: SessionState.Failures) -> String { "\(f.biometric) biometric, \(f.offlineLogin) offline, \(f.idpLogin) IdP" }
        session("failures", failures(s.failures), failures(t.failures))
        return out
    }

    /// A time of the next session in words, relative to the step: `none`, `kept` (as the
    /// session before had it), `the step's time`, `the highest time seen`, or how long before the step.
    static func time(_ t: Timestamp?, was: Timestamp?, _ event: Event) -> String {
        guard let t else { return "none" }
        if t == was { return "kept" }
        if t == event.time { return "the step's time" }
        let delta = event.time.millisecondsSinceEpoch - t.millisecondsSinceEpoch
        return delta > 0 ? "\(duration(delta)) before the step" : "\(duration(-delta)) after the step"
    }

    /// A class in words: the facts its event carries that are not the defaults, and the ages
    /// its piece bounds.
    static func words(_ e: Explorer.Edge, _ k: Explorer.SessionKey) -> String {
        var parts: [String] = []
        let c = e.choice
        switch c.network {
        case .online?: parts.append("online")
        case .offline?: parts.append("offline")
        case nil: parts.append("network not said")
        }
        if c.user == .other { parts.append("another user") }
        if c.device == .other { parts.append("another device") }
        if c.integrity == .compromised { parts.append("integrity compromised") }
        if let m = c.authMode { parts.append("auth mode \(m.rawValue)") }
        for (name, value) in c.attributes.sorted(by: { $0.key < $1.key }) { parts.append("\(name) \(value)") }
        let names: [(Zone.Clock, String)] = [
            (.lastIdPLogin, "since the last IdP login"), (.lastOnline, "since the last online validation"),
            (.lastActivity, "since the last activity"),
        ]
        for (clock, name) in names where k.has(clock) {
            let lower = max(0, -e.piece[.reference, clock])
            let upper = e.piece[clock, .reference]
            var bound: [String] = []
            if lower > 0 { bound.append("more than \(duration(lower - 1))") }
            if upper < Zone.infinity { bound.append("at most \(duration(upper))") }
            if !bound.isEmpty { parts.append("\(name) " + bound.joined(separator: " and ")) }
        }
        if e.timing == .rolledBack {
            let back = max(0, -e.piece[.reference, .eventTime])
            parts.append("dated more than \(duration(max(back - 1, 0))) before the highest time seen")
        }
        return parts.joined(separator: ", ")
    }

    /// Milliseconds in the policy's units: `14d`, `36h`, `90s`, `1500ms`.
    static func duration(_ ms: Int64) -> String {
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1000)] where ms >= size && ms % size == 0 {
            return "\(ms / size)\(unit)"
        }
        return "\(ms)ms"
    }
}
