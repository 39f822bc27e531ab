public import SessionPolicy

/// What coverage is counted in (`policyctl check --threshold-unit`): the levers a policy sets,
/// the distinct guards of its machine, or its transitions.
///
/// A lever is a policy key that produced transitions (`session.max`, `rules.NAME`), or `built-in`
/// for the checks every policy has; a guard is one check with one outcome, wherever the machine
/// repeats it (the integrity check on every state and device event is one guard); a transition
/// is one (state, event, guard) edge of the machine, as `policyctl compile` lists them; a
/// reachable transition is one that some sequence and timing of events takes, as `policyctl
/// verify` proves (the others are dead: no scenario can take them).
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
    /// The transitions of the machine.
    public static let transition = CoverageUnit("transition")
    /// The reachable transitions of the machine: the honest denominator, since no scenario can
    /// take a dead transition. Where reachability is unknown (the exploration stopped at its
    /// limit), every transition counts.
    public static let reachable = CoverageUnit("reachable")
    /// Every unit, in the order reports show them.
    public static let all: [CoverageUnit] = [.lever, .guard, .transition, .reachable]

    public var description: String { self == .reachable ? "reachable transition" : rawValue }
    /// `levers`, `guards`, `transitions`, `reachable transitions`.
    public var plural: String { description + "s" }
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
/// event counts once; and transitions, every edge of the machine. Every transition counts,
/// including those in states or on events a policy never makes reachable (a `read_only` state
/// when no signal leads there): they are reported, not hidden. A scenario that fails contributes
/// the transitions of its steps up to and including the failing one. Everything is ordered:
/// policies by name, levers by name with `built-in` last, guards and transitions by id.
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
    /// (`Verifier.reachableTransitions`); without it, the reachable unit counts every transition.
    public init(
        results: [ScenarioResult], policies: [String: CompiledPolicy], threshold: Double? = nil,
        thresholdUnit: CoverageUnit = .lever, reachable: [String: Set<Int>] = [:]
    ) {
        var taken: [String: Set<Int>] = [:]
        var runs: [String: Int] = [:]
        for r in results {
            taken[r.scenario.policy, default: []].formUnion(r.transitions)
            runs[r.scenario.policy, default: 0] += 1
        }
        self.policies = policies.keys.sorted().map {
            PolicyCoverage(policies[$0]!, taken: taken[$0] ?? [], scenarios: runs[$0] ?? 0, reachable: reachable[$0])
        }
        self.threshold = threshold
        self.thresholdUnit = thresholdUnit
    }

    /// The overall figure in `unit`, over all policies (a lever counts once per policy that has it).
    public func figure(_ unit: CoverageUnit) -> CoverageFigure {
        policies.reduce(CoverageFigure(covered: 0, total: 0)) { $0 + $1.figure(unit) }
    }

    /// Transitions taken, over all policies.
    public var covered: Int { policies.reduce(0) { $0 + $1.covered.count } }
    /// Transitions, over all policies.
    public var total: Int { policies.reduce(0) { $0 + $1.total } }
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

    /// `9 of 21 levers exercised (42.8%), 14 of 52 guards taken (26.9%), 19 of 364 transitions (5.2%)`,
    /// then `, 19 of 40 reachable transitions (47.5%)` when reachability is known.
    static func figures(_ f: (CoverageUnit) -> CoverageFigure, reachableKnown: Bool) -> String {
        let (l, g, t, r) = (f(.lever), f(.guard), f(.transition), f(.reachable))
        return "\(l.covered) of \(l.total) levers exercised (\(showPercent(l.percent))), "
            + "\(g.covered) of \(g.total) guards taken (\(showPercent(g.percent))), "
            + "\(t.covered) of \(t.total) transitions (\(showPercent(t.percent)))"
            + (reachableKnown ? ", \(r.covered) of \(r.total) reachable transitions (\(showPercent(r.percent)))" : "")
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
    /// such guard with where it applies; then the overall figures and, with a threshold, whether
    /// it is met. `detail` also lists the guards of levers never exercised and every transition
    /// never taken with its guard and action.
    public func human(detail: Bool) -> String {
        var out = ""
        for p in policies {
            out += "policy \(p.policy): \(Self.figures(p.figure, reachableKnown: p.reachable != nil))\n"
            if p.scenarios == 0 && !detail {
                out += "  no scenario runs against it\n"
                continue
            }
            if !p.unvisitedStates.isEmpty {
                out += "  states with no transition taken: \(p.unvisitedStates.map(\.rawValue).joined(separator: ", "))\n"
            }
            let never = p.levers.filter { !$0.exercised }
            let partly = p.levers.filter { $0.exercised && $0.guardsTaken < $0.guards.count }
            for lever in never + partly {
                out += "  \(lever.lever)\(lever.location.map { " (\($0))" } ?? ""): "
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
                let dead = p.reachable.map { r in p.missed.count { !r.contains($0.id) } }
                out += "  transitions never taken: \(p.missed.count)\(dead.map { " (\($0) of them unreachable)" } ?? "")\n"
                for t in p.missed {
                    out += "    \(p.describe(t))\(p.reachable.map { $0.contains(t.id) ? "" : " (unreachable)" } ?? "")\n"
                }
            }
        }
        let count = policies.count == 1 ? "1 policy" : "\(policies.count) policies"
        out += "coverage: \(Self.figures(figure, reachableKnown: reachableKnown)) in \(count)\n"
        if let line = thresholdLine { out += line + "\n" }
        return out
    }

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

/// Coverage of one policy's machine.
public struct PolicyCoverage: Sendable {
    /// The policy's name.
    public var policy: String
    /// Every transition of the machine.
    public var total: Int
    /// The ids of the transitions taken at least once, ascending.
    public var covered: [Int]
    /// The transitions never taken, in id order.
    package var missed: [Transition]
    /// Every lever that produced transitions, by name, `built-in` last. A transition counts for
    /// each lever it names (`session.max` and `session.on_expired` for an expired session), so
    /// the levers' transition totals may add up to more than `total`.
    public var levers: [LeverCoverage]
    /// The distinct guards of the machine, in the order of their first transition; `guards[i].id == i`.
    public var guards: [GuardCoverage]
    /// States no transition was taken from, in machine order: the scenarios never had a
    /// session there (or the policy cannot get there).
    public var unvisitedStates: [MachineState]
    /// The ids of the transitions some run of events can take, when known (`policyctl verify`).
    public var reachable: Set<Int>?
    /// How many scenarios ran against the policy.
    public var scenarios: Int
    /// The compiled policy, for describing guards.
    let compiled: CompiledPolicy

    /// Coverage of `policy` given the ids of the transitions taken by its `scenarios` scenarios,
    /// and the ids of its reachable transitions if known.
    public init(_ policy: CompiledPolicy, taken: Set<Int>, scenarios: Int, reachable: Set<Int>? = nil) {
        self.reachable = reachable
        let machine = policy.machine
        let all = machine.transitions
        self.compiled = policy
        self.scenarios = scenarios
        self.policy = policy.name
        self.total = all.count
        self.covered = all.lazy.map(\.id).filter(taken.contains)
        self.missed = all.filter { !taken.contains($0.id) }

        // Distinct guards: the same check with the same decision and reason from the same levers,
        // wherever the machine repeats it.
        var guardIndex: [GuardCoverage.Key: Int] = [:]
        var members: [[Transition]] = []
        for t in all {
            let key = GuardCoverage.Key(t)
            if let i = guardIndex[key] {
                members[i].append(t)
            } else {
                guardIndex[key] = members.count
                members.append([t])
            }
        }
        self.guards = members.enumerated().map { i, ts in
            let first = ts[0]
            return GuardCoverage(
                id: i, check: machine.describe(first.guard),
                decision: first.action.decision, reason: first.action.reason, levers: Self.levers(of: first),
                location: first.source.location, transitions: ts.map(\.id), covered: ts.lazy.map(\.id).filter(taken.contains),
                guard: first.guard, missed: ts.filter { !taken.contains($0.id) })
        }

        var byLever: [String: (transitions: [Transition], guards: [Int])] = [:]
        for g in guards {
            for lever in g.levers { byLever[lever, default: ([], [])].guards.append(g.id) }
        }
        for t in all {
            for lever in Self.levers(of: t) { byLever[lever, default: ([], [])].transitions.append(t) }
        }
        let guards = self.guards
        self.levers = byLever.keys.sorted(by: Self.leverOrder).map { name in
            let (ts, ids) = byLever[name]!
            // The lever's own line; failing that, the line of a transition that comes from it alone.
            let location =
                machine.sources[name] ?? ts.first { $0.source.levers == [name] && $0.source.location != nil }?.source.location
            return LeverCoverage(
                lever: name, location: location, covered: ts.count(where: { taken.contains($0.id) }), total: ts.count,
                guards: ids, guardsTaken: ids.count(where: { guards[$0].taken }), missed: ts.filter { !taken.contains($0.id) })
        }
        let left = Set(all.lazy.filter { taken.contains($0.id) }.map(\.from))
        self.unvisitedStates = machine.states.filter { !left.contains($0) }
    }

    /// The percentage of transitions covered, rounded down to a tenth.
    public var percent: Double { CoverageReport.percent(covered.count, of: total) }

    /// The figure in `unit`: levers exercised, guards taken or transitions taken, of all.
    public func figure(_ unit: CoverageUnit) -> CoverageFigure {
        switch unit {
        case .lever: CoverageFigure(covered: levers.count(where: \.exercised), total: levers.count)
        case .guard: CoverageFigure(covered: guards.count(where: \.taken), total: guards.count)
        case .reachable:
            reachable.map { r in CoverageFigure(covered: covered.count(where: r.contains), total: r.count) }
                ?? CoverageFigure(covered: covered.count, total: total)
        default: CoverageFigure(covered: covered.count, total: total)
        }
    }

    /// The levers a transition counts for: every lever it names, or `built-in`.
    static func levers(of t: Transition) -> [String] { t.source.levers.isEmpty ? [builtIn] : t.source.levers }
    static let builtIn = "built-in"
    static func leverOrder(_ a: String, _ b: String) -> Bool {
        (a == builtIn ? 1 : 0, a) < (b == builtIn ? 1 : 0, b)
    }

    /// `#12 signed_out on idp_login_succeeded, if ...: wipe, different_user`.
    package func describe(_ t: Transition) -> String {
        let check = t.guard == .always ? "otherwise" : "if \(compiled.machine.describe(t.guard))"
        return
            "#\(t.id) \(t.from.rawValue) on \(t.event.rawValue), \(check): \(t.action.decision?.rawValue ?? "no decision"), \(t.action.reason.rawValue)"
    }

    /// `if the device failed its integrity check: wipe, device_compromised, in signed_out on launch,
    /// resume, background; and 75 more transitions`: a guard and where it was never taken.
    func describe(_ g: GuardCoverage) -> String {
        let check = g.guard == .always ? "otherwise" : "if \(g.check)"
        return "\(check): \(g.decision?.rawValue ?? "no decision"), \(g.reason.rawValue), in \(CoverageReport.summarize(g.missed))"
    }
}

/// How far the scenarios exercised one lever: whether any transition it produced was taken, and
/// which of its distinct guards were.
public struct LeverCoverage: Sendable {
    /// The lever, for example `session.max`, or `built-in`.
    public var lever: String
    /// Where the policy file sets it, if it does.
    public var location: SourceLocation?
    /// Its transitions taken.
    public var covered: Int
    /// Its transitions.
    public var total: Int
    /// Its distinct guards, as ids into `PolicyCoverage.guards`, ascending.
    public var guards: [Int]
    /// How many of `guards` were taken.
    public var guardsTaken: Int
    /// Its transitions never taken, in id order.
    package var missed: [Transition]

    /// Whether a transition it produced was taken.
    public var exercised: Bool { covered > 0 }
}

/// One distinct guard: a check with its decision and reason, from the same levers, on every
/// (state, event) pair the machine repeats it. Taken when any of its transitions was.
public struct GuardCoverage: Sendable {
    /// Its position in `PolicyCoverage.guards`.
    public var id: Int
    /// The check in policy vocabulary, as `policyctl compile --format json` words it: `the device
    /// failed its integrity check`, or `otherwise` for the last transition of a chain.
    public var check: String
    /// The decision, or nil for events that need nothing from the user.
    public var decision: Decision?
    public var reason: Reason
    /// The levers its transitions name, or `built-in`.
    public var levers: [String]
    /// Where the policy file sets its first lever, if it does.
    public var location: SourceLocation?
    /// The ids of its transitions, ascending.
    public var transitions: [Int]
    /// The ids of its transitions taken, ascending.
    public var covered: [Int]
    package var `guard`: Guard
    /// Its transitions never taken, in id order.
    package var missed: [Transition]

    /// Whether any of its transitions was taken.
    public var taken: Bool { !covered.isEmpty }

    /// What makes two transitions the same guard.
    struct Key: Hashable {
        var check: Guard
        var decision: Decision?
        var reason: Reason
        var levers: [String]

        init(_ t: Transition) {
            (check, decision, reason, levers) = (t.guard, t.action.decision, t.action.reason, t.source.levers)
        }
    }
}

extension CoverageReport {
    /// The JSON form, under the check report's `coverage` key. `covered`, `total` and `percent`
    /// count transitions (as before levers and guards were counted); `units` has every unit.
    struct JSON: Encodable {
        struct Figure: Encodable {
            var covered: Int
            var total: Int
            var percent: Double

            init(_ f: CoverageFigure) { (covered, total, percent) = (f.covered, f.total, f.percent) }
        }
        struct Units: Encodable {
            var lever: Figure
            var `guard`: Figure
            var transition: Figure
            /// Only where reachability is known.
            var reachable: Figure?

            init(_ f: (CoverageUnit) -> CoverageFigure, reachableKnown: Bool) {
                (lever, self.guard, transition) = (Figure(f(.lever)), Figure(f(.guard)), Figure(f(.transition)))
                reachable = reachableKnown ? Figure(f(.reachable)) : nil
            }
        }
        struct Lever: Encodable {
            var lever: String
            var location: String?
            var exercised: Bool
            var covered: Int
            var total: Int
            var guards: [Int]
            var guardsTaken: Int

            enum CodingKeys: String, CodingKey {
                case lever, location, exercised, covered, total, guards
                case guardsTaken = "guards_taken"
            }
        }
        struct Guard: Encodable {
            var id: Int
            var `guard`: String
            var decision: String?
            var reason: String
            var levers: [String]
            var location: String?
            var taken: Bool
            var transitions: [Int]
            var coveredTransitions: [Int]

            enum CodingKeys: String, CodingKey {
                case id, `guard`, decision, reason, levers, location, taken, transitions
                case coveredTransitions = "covered_transitions"
            }
        }
        struct Policy: Encodable {
            var policy: String
            var scenarios: Int
            var covered: Int
            var total: Int
            var percent: Double
            var units: Units
            var coveredTransitions: [Int]
            var missed: [TransitionSummary]
            var levers: [Lever]
            var guards: [Guard]
            var unvisitedStates: [String]
            var reachableTransitions: [Int]?

            enum CodingKeys: String, CodingKey {
                case policy, scenarios, covered, total, percent, units, missed, levers, guards
                case coveredTransitions = "covered_transitions"
                case unvisitedStates = "unvisited_states"
                case reachableTransitions = "reachable_transitions"
            }
        }
        var covered: Int
        var total: Int
        var percent: Double
        var units: Units
        var threshold: Double?
        var thresholdUnit: String?
        var belowThreshold: Bool?
        var policies: [Policy]

        enum CodingKeys: String, CodingKey {
            case covered, total, percent, units, threshold, policies
            case thresholdUnit = "threshold_unit"
            case belowThreshold = "below_threshold"
        }
    }

    var json: JSON {
        JSON(
            covered: covered, total: total, percent: percent, units: JSON.Units(figure, reachableKnown: reachableKnown),
            threshold: threshold,
            thresholdUnit: threshold == nil ? nil : thresholdUnit.rawValue,
            belowThreshold: threshold == nil ? nil : belowThreshold,
            policies: policies.map { p in
                JSON.Policy(
                    policy: p.policy, scenarios: p.scenarios, covered: p.covered.count, total: p.total, percent: p.percent,
                    units: JSON.Units(p.figure, reachableKnown: p.reachable != nil), coveredTransitions: p.covered,
                    missed: p.missed.map { TransitionSummary($0, in: p.compiled.machine, withTarget: false) },
                    levers: p.levers.map {
                        JSON.Lever(
                            lever: $0.lever, location: $0.location?.description, exercised: $0.exercised, covered: $0.covered,
                            total: $0.total, guards: $0.guards, guardsTaken: $0.guardsTaken)
                    },
                    guards: p.guards.map {
                        JSON.Guard(
                            id: $0.id, guard: $0.check, decision: $0.decision?.rawValue, reason: $0.reason.rawValue,
                            levers: $0.levers, location: $0.location?.description, taken: $0.taken, transitions: $0.transitions,
                            coveredTransitions: $0.covered)
                    },
                    unvisitedStates: p.unvisitedStates.map(\.rawValue), reachableTransitions: p.reachable.map { $0.sorted() })
            })
    }
}
