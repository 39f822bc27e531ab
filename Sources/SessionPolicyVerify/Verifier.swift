import Foundation
public import SessionPolicy

/// What `policyctl verify` found for one policy.
public struct VerificationReport: Sendable, Codable {
    /// The policy's name.
    public var policy: String
    /// Abstract states (discrete part and zone) reached from `signed_out`.
    public var states: Int
    /// Explored steps: (state, event facts, class of timings) triples, each evaluated by the engine.
    public var steps: Int
    /// Whether the exploration ran to its end (false: stopped at the state limit; nothing is proved).
    public var exhaustive: Bool
    public var properties: [PropertyResult]
    /// Transitions no reachable state takes.
    public var deadTransitions: [DeadTransition]
    /// The machine's transitions.
    public var transitions: Int
    /// Disagreements between verify's symbolic model and the engine: a bug in verify if any.
    public var inconsistencies: [String]
    /// With `covering`: runs that together take every reachable transition (a run that is the
    /// start of a longer one is left out), each a concrete run of the engine.
    public var covering: [CoveringRun]

    /// Whether every property holds and the exploration was exhaustive and consistent.
    public var holds: Bool {
        exhaustive && inconsistencies.isEmpty && properties.allSatisfy { $0.status != .violated }
    }
}

/// One property's verdict.
public struct PropertyResult: Sendable, Codable {
    public enum Status: String, Sendable, Codable {
        case proved, violated
        /// The exploration stopped at its state limit before finding a violation: nothing is known.
        case unknown
        /// The policy sets nothing the property protects (no session max for `session-max`).
        case notApplicable = "not_applicable"
    }
    public var id: String
    public var sentence: String
    public var lever: String
    public var status: Status
    public var counterexample: Counterexample?
}

/// The shortest sequence of events that breaks a property.
public struct Counterexample: Sendable, Codable {
    public struct Step: Sendable, Codable {
        public var event: Event
        public var decision: Decision?
        public var reason: Reason
        public var state: MachineState
        /// The transition that decided.
        public var transition: Int
    }
    /// What went wrong at the last step.
    public var detail: String
    public var steps: [Step]
    /// Whether the steps are one concrete run the engine decides as shown (they then make a
    /// scenario file); false when verify found the path but no concrete times for it.
    public var concrete: Bool
    /// What the last step should have been, for the scenario's expectation.
    public var expected: Decision?
}

/// A run from `signed_out` that ends by taking `transition`.
public struct CoveringRun: Sendable, Codable {
    /// The transition the run was made for (its last step takes it).
    public var transition: Int
    public var steps: [Counterexample.Step]
}

/// A transition no reachable state takes.
public struct DeadTransition: Sendable, Codable {
    public var transition: Int
    public var from: MachineState
    public var event: EventKind
    public var check: String
    public var levers: [String]
    public var location: SourceLocation?
}

/// Proves the built-in properties of a compiled policy by exhaustive exploration (docs/verify.md,
/// "What verify proves").
public enum Verifier {
    /// Explores `policy` and checks every built-in property. Pure: no clock, no I/O. A
    /// violation found before the state limit is real (a run of the engine); a property is
    /// proved only when the exploration ends below the limit.
    ///
    /// With `covering`, the report also holds runs that take every reachable transition
    /// (`policyctl verify --covering`); a transition whose path verify cannot replay at concrete
    /// times is left out.
    ///
    /// `properties` are the user's (`PropertyLoader`), checked after the built-in ones. Check
    /// them against the policy first (`PropertyLoader.check`): here an attribute the policy does
    /// not declare is simply never reported, so a step that names a value of it matches nothing.
    public static func verify(
        _ policy: CompiledPolicy, stateLimit: Int = 100_000, covering: Bool = false, properties: [UserProperty] = [],
        selfCheck: Bool = false
    ) -> VerificationReport {
        let explorer = Explorer(policy, properties: properties, selfCheck: selfCheck)
        let exhaustive = explorer.run(limit: stateLimit)
        let m = policy.machine
        var results: [PropertyResult] = []
        let deadEnds = explorer.deadEnds()
        for p in BuiltInProperty.allCases {
            var r = PropertyResult(id: p.rawValue, sentence: p.sentence, lever: p.lever, status: .proved, counterexample: nil)
            if !p.applies(to: policy.policy) {
                r.status = .notApplicable
            } else if let v = explorer.violations[p] {
                r.status = .violated
                r.counterexample = counterexample(explorer, to: v.edge, detail: v.detail, expected: v.expected)
            } else if !exhaustive {
                r.status = .unknown
            } else if p == .noDeadEnd, let n = deadEnds.first {
                r.status = .violated
                let path = explorer.parent[n]
                r.counterexample =
                    path.map {
                        counterexample(
                            explorer, to: $0,
                            detail: "from here (`\(explorer.nodes[n].session.state.rawValue)`) no event leads back to a usable session",
                            expected: nil)
                    }
            } else if p == .total, let gap = totalityGap(m) {
                r.status = .violated
                r.counterexample = Counterexample(detail: gap, steps: [], concrete: false, expected: nil)
            }
            results.append(r)
        }
        var inconsistencies = explorer.inconsistencies
        for (j, p) in properties.enumerated() {
            var r = PropertyResult(
                id: p.id, sentence: p.sentence, lever: "user property" + (p.location.map { " (\($0))" } ?? ""),
                status: exhaustive ? .proved : .unknown, counterexample: nil)
            if let edge = explorer.userViolations[j] {
                r.status = .violated
                var c = counterexample(explorer, to: edge, detail: "the last step breaks `\(p.id)`: \(p.sentence)", expected: nil)
                // The scenario's last step expects another decision than the engine's, so `check` fails there.
                c.expected = c.steps.last?.decision == .wipe ? .idpLogin : .wipe
                r.counterexample = c
                // The run, observed at its concrete times and attributes, must break the property where verify says.
                if c.concrete && !breaksAtLast(explorer.properties[j], c.steps, policy) {
                    inconsistencies.append("`\(p.id)`: the counterexample does not break the property when replayed")
                }
            }
            results.append(r)
        }
        // Dead only when the exploration is complete: a stopped one has simply not been everywhere.
        let taken = explorer.takenTransitions
        let dead =
            !exhaustive
            ? []
            : m.transitions.filter { !taken.contains($0.id) }.map {
                DeadTransition(
                    transition: $0.id, from: $0.from, event: $0.event, check: m.describe($0.guard), levers: $0.source.levers,
                    location: $0.source.location)
            }
        return VerificationReport(
            policy: m.name, states: explorer.explored, steps: explorer.steps, exhaustive: exhaustive,
            properties: results, deadTransitions: dead, transitions: m.transitions.count,
            inconsistencies: Array(Set(inconsistencies)).sorted(),
            covering: covering && exhaustive ? coveringRuns(explorer) : [])
    }

    /// The ids of the transitions of `policy` that some sequence and timing of events takes, or
    /// nil when the exploration stops at `stateLimit` (then reachability is not known).
    public static func reachableTransitions(_ policy: CompiledPolicy, stateLimit: Int = 100_000) -> Set<Int>? {
        let explorer = Explorer(policy, properties: [])
        guard explorer.run(limit: stateLimit) else { return nil }
        return explorer.takenTransitions
    }

    /// One concrete run per reachable transition, the shortest found, without the runs that
    /// are the start of a longer one.
    static func coveringRuns(_ x: Explorer) -> [CoveringRun] {
        var runs: [CoveringRun] = []
        for (id, edges) in x.taking.sorted(by: { $0.key < $1.key }) {
            for edge in edges {
                let c = counterexample(x, to: edge, detail: "", expected: nil)
                guard c.concrete, c.steps.last?.transition == id else { continue }
                runs.append(CoveringRun(transition: id, steps: c.steps))
                break
            }
        }
        // Longest first, so a run can only be the start of one kept before it.
        let ordered = runs.sorted { $0.steps.count != $1.steps.count ? $0.steps.count > $1.steps.count : $0.transition < $1.transition }
        var kept: [CoveringRun] = []
        for r in ordered {
            let isPrefix = kept.contains { k in
                k.steps.count >= r.steps.count && zip(k.steps, r.steps).allSatisfy { $0.event == $1.event }
            }
            if !isPrefix { kept.append(r) }
        }
        return kept.sorted { $0.transition < $1.transition }
    }

    /// A (state, event) group that does not end in an unconditional transition, if any.
    static func totalityGap(_ m: StateMachine) -> String? {
        for s in MachineState.allCases {
            for e in EventKind.allCases {
                let r = m.range(from: s, on: e)
                if r.isEmpty { return "no transition for `\(e.rawValue)` in `\(s.rawValue)`" }
                if m.transitions[r.upperBound - 1].guard != .always {
                    return "the transitions for `\(e.rawValue)` in `\(s.rawValue)` do not end in one that always holds"
                }
            }
        }
        return nil
    }

    /// The path to `edge`, replayed as one concrete run when verify finds times for it.
    static func counterexample(_ x: Explorer, to edge: Explorer.Edge, detail: String, expected: Decision?) -> Counterexample {
        var path = [edge]
        while let p = x.parent[path[0].from] { path.insert(p, at: 0) }
        var budget = 4096
        if let steps = replay(x, path[...], from: .signedOut, clock: start, budget: &budget) {
            return Counterexample(detail: detail, steps: steps, concrete: true, expected: expected)
        }
        // No concrete times found: show the path at the earliest times, marked approximate.
        var state = SessionState.signedOut
        var clock = start
        var steps: [Counterexample.Step] = []
        for e in path {
            let time = self.time(of: e, after: state, clock: clock, latest: false) ?? Timestamp(millisecondsSinceEpoch: clock)
            let event = x.event(e.choice, at: time, for: state)
            let outcome = x.policy.evaluate(state, event)
            steps.append(
                .init(
                    event: event, decision: outcome.decision, reason: outcome.reason, state: outcome.state.state,
                    transition: outcome.transition))
            state = outcome.state
            clock = max(clock, time.millisecondsSinceEpoch)
        }
        return Counterexample(detail: detail, steps: steps, concrete: false, expected: expected)
    }

    /// The path from `state` at concrete times, each step taking its edge's transition: each
    /// event as early or as late as its class allows, searched depth first (an early step may
    /// leave a later one no time that fits). Nil when no choice fits within `budget` tries.
    static func replay(
        _ x: Explorer, _ path: ArraySlice<Explorer.Edge>, from state: SessionState, clock: Int64, budget: inout Int
    ) -> [Counterexample.Step]? {
        guard let e = path.first else { return [] }
        var tried: Set<Int64> = []
        for latest in [false, true] {
            budget -= 1
            guard budget > 0, let time = self.time(of: e, after: state, clock: clock, latest: latest) else { return nil }
            guard tried.insert(time.millisecondsSinceEpoch).inserted else { continue }
            let event = x.event(e.choice, at: time, for: state)
            let outcome = x.policy.evaluate(state, event)
            guard outcome.transition == e.transition else { continue }
            let step = Counterexample.Step(
                event: event, decision: outcome.decision, reason: outcome.reason, state: outcome.state.state,
                transition: outcome.transition)
            let later = max(clock, time.millisecondsSinceEpoch)
            if let rest = replay(x, path.dropFirst(), from: outcome.state, clock: later, budget: &budget) { return [step] + rest }
        }
        return nil
    }

    /// A concrete time for the step `e` from `state`: a point of its class consistent with the
    /// times the state records, at the class's earliest (or latest, within a bound) event time.
    static func time(of e: Explorer.Edge, after state: SessionState, clock: Int64, latest: Bool) -> Timestamp? {
        let times = Explorer.times(state)
        guard let h = times.map(\.1).max() else { return Timestamp(millisecondsSinceEpoch: clock) }
        var z = e.piece
        var clocks: [Zone.Clock] = [.eventTime]
        for (c, t) in times {
            clocks.append(c)
            for (d, u) in times where d != c {
                z[c, d] = min(z[c, d], (h - t) - (h - u))
            }
        }
        z.close()
        guard !z.isEmpty else { return nil }
        // Latest: the history as old as the class allows (up to a year past its lower bound).
        let ages = latest ? z.point(clocks.reversed(), largest: 366 * 86_400_000) : z.point(clocks)
        let shift = times.first.map { (ages[$0.0] ?? 0) - (h - $0.1) } ?? 0
        let now = e.timing == .forward ? h + shift : h
        return Timestamp(millisecondsSinceEpoch: now - (ages[.eventTime] ?? 0))
    }

    /// Whether the run `steps` from `signed_out` breaks `p` at its last step and not before, each
    /// step observed as the engine decides it, with the event's own attributes and the elapsed
    /// times of its concrete session.
    static func breaksAtLast(_ p: UserProperty, _ steps: [Counterexample.Step], _ policy: CompiledPolicy) -> Bool {
        var types: [ExactName: AttributeType] = [:]
        for a in policy.machine.attributes { types[ExactName(a.name)] = types[ExactName(a.name)] ?? a.type }
        var state = SessionState.signedOut
        var monitor = Monitor.initial(p)
        for (i, s) in steps.enumerated() {
            let outcome = policy.evaluate(state, s.event)
            if outcome.transition >= 0 {
                var attributes: [ExactName: ExactName] = [:]
                for (k, v) in s.event.attributes { attributes[ExactName(k)] = PropertyLoader.canonical(v, types[ExactName(k)]) }
                let seen = ObservedStep(
                    kind: s.event.kind, network: s.event.network, decision: outcome.decision, reason: outcome.reason, from: state.state,
                    to: outcome.state.state, attributes: attributes, elapsed: ElapsedTimes(state, at: s.event.time))
                let (next, broken) = monitor.next(p, seen)
                if broken { return i == steps.count - 1 }
                monitor = next
            }
            state = outcome.state
        }
        return false
    }

    /// Where counterexample runs start: 2026-01-01T00:00:00Z.
    static let start: Int64 = 1_767_225_600_000
}
