public import SessionPolicy

/// What `policyctl diff` found between two versions of a policy.
public struct DiffReport: Sendable, Codable {
    public var old: String
    public var new: String
    /// Abstract states of the old version explored.
    public var states: Int
    /// Whether the exploration ran to its end (false: stopped at the state limit).
    public var exhaustive: Bool
    /// One entry per pair of deciding transitions (old, new) that differ, at its first class.
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
    public var from: MachineState
    public var event: EventKind
    /// The class in words: the event's facts and the ages that matter ("offline, since the
    /// last online validation more than 14d and at most 30d").
    public var when: String
    public var old: Side
    public var new: Side
    /// The shortest run found to the difference, decided by the old version; its last step is
    /// the event the versions decide otherwise.
    public var steps: [Counterexample.Step]
    /// Whether `steps` is one concrete run.
    public var concrete: Bool
}

/// The semantic difference between two versions of a policy (README, "`policyctl diff`"):
/// for every session state the old version can reach, the events the new one decides
/// otherwise. Pure: no clock, no I/O.
public enum Differ {
    public static func diff(_ old: CompiledPolicy, _ new: CompiledPolicy, stateLimit: Int = 100_000) -> DiffReport {
        let x = Explorer(old, other: new)
        let exhaustive = x.run(limit: stateLimit)
        var out: [PolicyDifference] = []
        for d in x.divergences {
            let key = x.nodes[d.edge.from].session
            let c = Verifier.counterexample(x, to: d.edge, detail: "", expected: nil)
            func side(_ m: StateMachine, _ o: Outcome) -> PolicyDifference.Side {
                let t = o.transition >= 0 ? m.transitions[o.transition] : nil
                return PolicyDifference.Side(
                    decision: o.decision, reason: o.reason, next: o.state.state, transition: o.transition,
                    levers: t?.source.levers ?? [], check: t.map { m.describe($0.guard) } ?? "refused")
            }
            out.append(
                PolicyDifference(
                    from: key.state, event: d.edge.choice.kind, when: words(d.edge, key), old: side(old.machine, d.old),
                    new: side(new.machine, d.new), steps: c.steps, concrete: c.concrete))
        }
        return DiffReport(old: old.name, new: new.name, states: x.explored, exhaustive: exhaustive, differences: out)
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
