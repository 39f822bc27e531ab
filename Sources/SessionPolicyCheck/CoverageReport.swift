public import SessionPolicy

/// What coverage is counted in (`policyctl check --threshold-unit`): the levers a policy sets,
/// the distinct guards of its machine, or its transitions.
///
/// A lever is a policy key that produced transitions (`session.max`, `rules.NAME`), or `built-in`
/// for the checks every policy has; a guard is one check with one outcome, wherever the machine
/// repeats it (the integrity check on every state and device event is one guard); a transition
/// is one (state, event, guard) edge of the machine, as `policyctl compile` lists them. When the
/// reachable transitions are known (what `policyctl verify` proves some sequence and timing of
/// events takes), each unit counts only what can happen: dead transitions, and the guards and
/// levers all of whose transitions are dead, are left out and listed apart.
/// A struct rather than an enum so that a unit can be added without breaking a `switch`.
public struct CoverageUnit: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// The unit named `rawValue` (`lever`, `guard` or `transition`); nil for any other name.
    public init?(rawValue: String) {
        guard Self.all.contains(where: { $0.rawValue == rawValue }) else { return nil }
        self.rawValue = rawValue
    }

    private init(_ name: String) { rawValue = name }

    /// The levers a policy sets, and `built-in`: exercised when a transition they produced was taken.
    public static let lever = CoverageUnit("lever")
    /// The distinct guards: taken when any of their transitions was.
    public static let `guard` = CoverageUnit("guard")
    /// The transitions of the machine (the reachable ones, when known).
    public static let transition = CoverageUnit("transition")
    /// Every unit, in the order reports show them.
    public static let all: [CoverageUnit] = [.lever, .guard, .transition]

    public var description: String { rawValue }
    /// `levers`, `guards`, `transitions`.
    public var plural: String { rawValue + "s" }
}

/// A count of covered things out of a total, in one unit.
public struct CoverageFigure: Sendable, Hashable {
    public var covered: Int
    public var total: Int

    public init(covered: Int, total: Int) {
        self.covered = covered
        self.total = total
    }

    /// `covered / total` as a percentage, rounded down to a tenth (so it never shows 100 when
    /// something was missed); 100 when there is nothing to cover.
    public var percent: Double { CoverageReport.percent(covered, of: total) }

    /// Whether the exact ratio (not the rounded percentage) is below `threshold` percent.
    public func isBelow(_ threshold: Double) -> Bool {
        total > 0 && Double(covered) * 100 < threshold * Double(total)
    }

    static func + (a: Self, b: Self) -> Self { Self(covered: a.covered + b.covered, total: a.total + b.total) }
}

/// Which levers, guards and transitions of each compiled machine the scenarios took
/// (`policyctl check --coverage`), like `opa test --coverage` for rules.
///
/// Three units (`CoverageUnit`): levers, the unit a person acts on and the one `threshold`
/// applies to by default; distinct guards, where a check the machine repeats on every state and
/// event counts once; and transitions, every edge of the machine. Where a policy's reachable
/// transitions are known, the figures count only what can happen, and the dead transitions,
/// guards, levers and states are listed apart; elsewhere every transition counts. A scenario
/// that fails contributes the transitions of its steps up to and including the failing one.
/// Everything is ordered: policies by name, levers by name with `built-in` last, guards and
/// transitions by id.
public struct CoverageReport: Sendable {
    /// One entry per compiled policy, by name.
    public var policies: [PolicyCoverage]
    /// The lowest acceptable overall percentage (`--threshold`), if any.
    public var threshold: Double?
    /// The unit `threshold` applies to (`--threshold-unit`): levers unless said otherwise.
    public var thresholdUnit: CoverageUnit

    /// Computes coverage of every policy in `policies` from `results`. Scenarios whose policy is
    /// not in `policies` are ignored.
    ///
    /// `reachable` holds, per policy, the ids of its reachable transitions where they are known
    /// (`Verifier.reachableTransitions`): the figures of those policies count only them.
    /// `unexplored` names the policies whose reachability was sought and is not known (the
    /// exploration stopped at its limit): every transition counts, and the report says why.
    public init(
        results: [ScenarioResult], policies: [String: CompiledPolicy], threshold: Double? = nil,
        thresholdUnit: CoverageUnit = .lever, reachable: [String: Set<Int>] = [:], unexplored: Set<String> = []
    ) {
        var taken: [String: Set<Int>] = [:]
        var runs: [String: Int] = [:]
        for r in results {
            taken[r.scenario.policy, default: []].formUnion(r.transitions)
            runs[r.scenario.policy, default: 0] += 1
        }
        self.policies = policies.keys.sorted().map {
            PolicyCoverage(
                policies[$0]!, taken: taken[$0] ?? [], scenarios: runs[$0] ?? 0, reachable: reachable[$0],
                reachabilityUnknown: unexplored.contains($0))
        }
        self.threshold = threshold
        self.thresholdUnit = thresholdUnit
    }

    /// The overall figure in `unit`, over all policies (a lever counts once per policy that has it).
    public func figure(_ unit: CoverageUnit) -> CoverageFigure {
        policies.reduce(CoverageFigure(covered: 0, total: 0)) { $0 + $1.figure(unit) }
    }

    /// Counted transitions taken, over all policies.
    public var covered: Int { policies.reduce(0) { $0 + $1.covered.count } }
    /// Counted transitions (the reachable ones where known), over all policies.
    public var total: Int { policies.reduce(0) { $0 + $1.counted.count } }
    /// Transitions `covered / total` as a percentage, rounded down to a tenth.
    public var percent: Double { Self.percent(covered, of: total) }
    /// Whether the overall coverage in `thresholdUnit` is below `threshold`, compared exactly (not
    /// the rounded percentage).
    public var belowThreshold: Bool {
        guard let threshold else { return false }
        return figure(thresholdUnit).isBelow(threshold)
    }

    static func percent(_ covered: Int, of total: Int) -> Double {
        total == 0 ? 100 : Double(covered * 1000 / total) / 10
    }

    /// `12.5`, or `90` for a whole number.
    static func show(_ percent: Double) -> String {
        percent == percent.rounded() && abs(percent) < 1e15 ? String(Int(percent)) : String(percent)
    }

    /// `12.5%` with one decimal, from the rounded-down percentage.
    static func showPercent(_ p: Double) -> String {
        let tenths = Int((p * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)%"
    }

    /// `9 of 21 levers exercised (42.8%), 14 of 52 guards taken (26.9%), 19 of 364 transitions (5.2%)`.
    static func figures(_ f: (CoverageUnit) -> CoverageFigure) -> String {
        let (l, g, t) = (f(.lever), f(.guard), f(.transition))
        return "\(l.covered) of \(l.total) levers exercised (\(showPercent(l.percent))), "
            + "\(g.covered) of \(g.total) guards taken (\(showPercent(g.percent))), "
            + "\(t.covered) of \(t.total) transitions (\(showPercent(t.percent)))"
    }

    /// Whether every policy's reachable transitions are known.
    public var reachableKnown: Bool { !policies.isEmpty && policies.allSatisfy { $0.reachable != nil } }

    /// The line that says whether the overall coverage reaches the threshold, in its unit; nil
    /// without a threshold. `lever coverage 42.8% (9 of 21 levers) is below the threshold of 50%`.
    public var thresholdLine: String? {
        guard let threshold else { return nil }
        let f = figure(thresholdUnit)
        let verdict = belowThreshold ? "is below" : "meets"
        return
            "\(thresholdUnit) coverage \(Self.showPercent(f.percent)) (\(f.covered) of \(f.total) \(thresholdUnit.plural)) \(verdict) the threshold of \(Self.show(threshold))%"
    }

    /// How many (state, event) pairs a guard line names before `and N more`.
    static let sample = 3

    /// Human text: per policy, its lever, guard and transition figures, the states never left,
    /// then the levers: first those never exercised, then those with a guard never taken, each
    /// such guard with where it applies; then what is dead and left out of the figures (or that
    /// reachability is unknown); then the overall figures and, with a threshold, whether it is
    /// met. `detail` also lists the guards of levers never exercised, every transition never
    /// taken with its guard and action, and every dead guard.
    public func human(detail: Bool) -> String {
        var out = ""
        for p in policies {
            out += "policy \(p.policy): \(Self.figures(p.figure))\n"
            if p.scenarios == 0 && !detail {
                out += "  no scenario runs against it\n" + Self.deadLines(p, detail: false)
                continue
            }
            if !p.unvisitedStates.isEmpty {
                out += "  states with no transition taken: \(p.unvisitedStates.map(\.rawValue).joined(separator: ", "))\n"
            }
            // Levers set by the policy first; those it leaves at their defaults are not counted
            // as levers: the ones never exercised share a line, the others are listed with
            // their guards like the rest.
            let live = p.levers.filter { !$0.dead }
            let defaults = live.filter { $0.isDefault && !$0.exercised }
            let never = live.filter { !$0.exercised && !$0.isDefault }
            let partly = live.filter { $0.exercised && $0.guardsTaken < $0.guards.count }.sorted { !$0.isDefault && $1.isDefault }
            if !defaults.isEmpty {
                out +=
                    "  left at their defaults and never exercised (not counted as levers): "
                    + defaults.map { "\($0.lever) (\(Self.plural($0.guards.count, "guard")))" }.joined(separator: ", ") + "\n"
            }
            for lever in never + partly {
                let at = lever.isDefault ? " (default, not counted as a lever)" : lever.location.map { " (\($0))" } ?? ""
                out += "  \(lever.lever)\(at): "
                let count = lever.guards.count
                if lever.exercised {
                    out += "\(lever.guardsTaken) of \(count) guards taken\n"
                } else {
                    out += "never exercised, \(count) guard\(count == 1 ? "" : "s")\n"
                    if !detail { continue }
                }
                for id in lever.guards where !p.guards[id].taken { out += "    \(p.describe(p.guards[id]))\n" }
            }
            if detail && !p.missed.isEmpty {
                out += "  transitions never taken: \(p.missed.count)\n"
                for t in p.missed { out += "    \(p.describe(t))\n" }
            }
            out += Self.deadLines(p, detail: detail)
        }
        let count = policies.count == 1 ? "1 policy" : "\(policies.count) policies"
        out += "coverage: \(Self.figures(figure)) in \(count)\(deadSummary)\n"
        if let line = thresholdLine { out += line + "\n" }
        return out
    }

    /// What of `p` is dead and left out of its figures, or that its reachability is unknown;
    /// empty when nothing is dead.
    static func deadLines(_ p: PolicyCoverage, detail: Bool) -> String {
        if p.reachabilityUnknown {
            return "  reachability unknown (the exploration stopped at its limit): every transition counts, "
                + "dead or not\n"
        }
        guard !p.dead.isEmpty else { return "" }
        var parts = [plural(p.dead.count, "transition")]
        let guards = p.guards.filter(\.dead)
        if !guards.isEmpty { parts.append(plural(guards.count, "guard")) }
        let levers = p.levers.filter { $0.dead && !$0.isDefault }.map(\.lever)
        if !levers.isEmpty { parts.append(plural(levers.count, "lever") + " (" + levers.joined(separator: ", ") + ")") }
        if !p.deadStates.isEmpty {
            parts.append((p.deadStates.count == 1 ? "state " : "states ") + p.deadStates.map(\.rawValue).joined(separator: ", "))
        }
        var out = "  dead, left out (no run of events takes them; `policyctl verify --dead` lists them): "
        out += parts.joined(separator: ", ") + "\n"
        if detail { for g in guards { out += "    \(p.describe(g))\n" } }
        if !p.takenDead.isEmpty {
            out +=
                "  scenarios also took \(plural(p.takenDead.count, "dead transition")) ("
                + p.takenDead.map { "#\($0)" }.joined(separator: ", ") + "): they start from a stored state no run of events reaches\n"
        }
        return out
    }

    /// `, dead left out: 4 levers, 28 guards, 756 transitions` over all policies, or `` when
    /// nothing is dead; `, reachability unknown for NAME` for policies whose exploration stopped.
    var deadSummary: String {
        var out = ""
        let transitions = policies.reduce(0) { $0 + $1.dead.count }
        if transitions > 0 {
            let levers = policies.reduce(0) { $0 + $1.levers.count { $0.dead && !$0.isDefault } }
            let guards = policies.reduce(0) { $0 + $1.guards.count(where: \.dead) }
            let parts = [(levers, "lever"), (guards, "guard"), (transitions, "transition")].filter { $0.0 > 0 }
            out += ", dead left out: " + parts.map { Self.plural($0.0, $0.1) }.joined(separator: ", ")
        }
        let unknown = policies.filter(\.reachabilityUnknown).map(\.policy)
        if !unknown.isEmpty { out += ", reachability unknown for " + unknown.joined(separator: ", ") }
        return out
    }

    /// `1 guard`, `3 guards`.
    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    /// `active on launch, resume; suspended on launch; and 3 more transitions`: the first (state, event)
    /// pairs of `transitions` (in id order), by state.
    static func summarize(_ transitions: [Transition]) -> String {
        var pairs: [(MachineState, [EventKind])] = []
        var named = 0
        var shown = 0
        for t in transitions {
            if let last = pairs.last, last.0 == t.from, last.1.contains(t.event) {
                shown += 1
                continue
            }
            if named == sample { break }
            named += 1
            shown += 1
            if let last = pairs.last, last.0 == t.from {
                pairs[pairs.count - 1].1.append(t.event)
            } else {
                pairs.append((t.from, [t.event]))
            }
        }
        var text = pairs.map { "\($0.0.rawValue) on \($0.1.map(\.rawValue).joined(separator: ", "))" }.joined(separator: "; ")
        let more = transitions.count - shown
        if more > 0 { text += "; and \(more) more transition\(more == 1 ? "" : "s")" }
        return text
    }
}
