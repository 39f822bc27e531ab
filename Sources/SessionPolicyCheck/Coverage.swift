public import SessionPolicy

/// Which transitions of each compiled machine the scenarios took (`policyctl check --coverage`),
/// like `opa test --coverage` for rules.
///
/// Every transition of the machine counts, including those in states or on events a policy
/// never makes reachable (a `read_only` state when no signal leads there): they are reported,
/// not hidden. A scenario that fails contributes the transitions of its steps up to and
/// including the failing one. Everything is ordered: policies by name, transitions by id,
/// levers by name with `built-in` last.
public struct CoverageReport: Sendable {
    /// One entry per compiled policy, by name.
    public var policies: [PolicyCoverage]
    /// The lowest acceptable overall percentage (`--threshold`), if any.
    public var threshold: Double?

    /// Computes coverage of every policy in `policies` from `results`. Scenarios whose policy is
    /// not in `policies` are ignored.
    public init(results: [ScenarioResult], policies: [String: CompiledPolicy], threshold: Double? = nil) {
        var taken: [String: Set<Int>] = [:]
        var runs: [String: Int] = [:]
        for r in results {
            taken[r.scenario.policy, default: []].formUnion(r.transitions)
            runs[r.scenario.policy, default: 0] += 1
        }
        self.policies = policies.keys.sorted().map {
            PolicyCoverage(policies[$0]!, taken: taken[$0] ?? [], scenarios: runs[$0] ?? 0)
        }
        self.threshold = threshold
    }

    /// Transitions taken, over all policies.
    public var covered: Int { policies.reduce(0) { $0 + $1.covered.count } }
    /// Transitions, over all policies.
    public var total: Int { policies.reduce(0) { $0 + $1.total } }
    /// `covered / total` as a percentage, rounded down to a tenth (so it never shows 100 when something was missed).
    public var percent: Double { Self.percent(covered, of: total) }
    /// Whether the overall coverage is below `threshold`, compared exactly (not the rounded percentage).
    public var belowThreshold: Bool {
        guard let threshold, total > 0 else { return false }
        return Double(covered) * 100 < threshold * Double(total)
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

    /// The line that says whether the overall coverage reaches the threshold; nil without a threshold.
    public var thresholdLine: String? {
        guard let threshold else { return nil }
        let verdict = belowThreshold ? "is below" : "meets"
        return "coverage \(Self.showPercent(percent)) \(verdict) the threshold of \(Self.show(threshold))%"
    }

    /// How many (state, event) pairs a lever line names before `and N more`.
    static let sample = 6

    /// Human text: per policy, the covered count, the states never left and the levers: first
    /// those never exercised, then those partly covered with the (state, event) pairs they missed
    /// (with `detail`, every missed transition with its guard and action); then the overall
    /// figure and, with a threshold, whether it is met.
    public func human(detail: Bool) -> String {
        var out = ""
        for p in policies {
            out += "policy \(p.policy): \(p.covered.count) of \(p.total) transitions covered (\(Self.showPercent(p.percent)))\n"
            if p.scenarios == 0 && !detail {
                out += "  no scenario runs against it\n"
                continue
            }
            if !p.unvisitedStates.isEmpty {
                out += "  states with no transition taken: \(p.unvisitedStates.map(\.rawValue).joined(separator: ", "))\n"
            }
            let never = p.levers.filter { $0.covered == 0 }
            let partly = p.levers.filter { $0.covered > 0 && !$0.missed.isEmpty }
            out += "  levers exercised: \(p.levers.count - never.count) of \(p.levers.count)"
            out += never.isEmpty ? "\n" : ", \(never.count) never\n"
            for lever in never + partly {
                out += "  \(lever.lever)\(lever.location.map { " (\($0))" } ?? "")"
                if lever.covered == 0 {
                    out += ": never exercised, \(lever.total) transition\(lever.total == 1 ? "" : "s")"
                } else {
                    out += ": \(lever.missed.count) of \(lever.total) transitions never taken"
                }
                if detail {
                    out += "\n"
                    for t in lever.missed { out += "    \(p.describe(t))\n" }
                } else {
                    out += lever.covered == 0 ? "\n" : ": \(Self.summarize(lever.missed))\n"
                }
            }
        }
        let count = policies.count == 1 ? "1 policy" : "\(policies.count) policies"
        out += "coverage: \(covered) of \(total) transitions covered (\(Self.showPercent(percent))) in \(count)\n"
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
    /// Per lever that decides transitions (the first of a transition's levers), how many were
    /// taken; by name, `built-in` last. The levers' totals add up to `total`.
    public var levers: [LeverCoverage]
    /// States no transition was taken from, in machine order: the scenarios never had a
    /// session there (or the policy cannot get there).
    public var unvisitedStates: [MachineState]
    /// How many scenarios ran against the policy.
    public var scenarios: Int
    /// The compiled policy, for describing guards.
    let compiled: CompiledPolicy

    /// Coverage of `policy` given the ids of the transitions taken by its `scenarios` scenarios.
    public init(_ policy: CompiledPolicy, taken: Set<Int>, scenarios: Int) {
        let all = policy.machine.transitions
        self.compiled = policy
        self.scenarios = scenarios
        self.policy = policy.name
        self.total = all.count
        self.covered = all.lazy.map(\.id).filter(taken.contains)
        self.missed = all.filter { !taken.contains($0.id) }
        var groups: [String: [Transition]] = [:]
        for t in all { groups[Self.lever(of: t), default: []].append(t) }
        self.levers = groups.keys.sorted(by: Self.leverOrder).map { name in
            let ts = groups[name]!
            // The lever's own line; failing that, the line of a transition that comes from it alone.
            let location =
                policy.machine.sources[name] ?? ts.first { $0.source.levers == [name] && $0.source.location != nil }?.source.location
            return LeverCoverage(
                lever: name, location: location, covered: ts.count(where: { taken.contains($0.id) }), total: ts.count,
                missed: ts.filter { !taken.contains($0.id) })
        }
        let left = Set(all.lazy.filter { taken.contains($0.id) }.map(\.from))
        self.unvisitedStates = policy.machine.states.filter { !left.contains($0) }
    }

    /// The percentage covered, rounded down to a tenth.
    public var percent: Double { CoverageReport.percent(covered.count, of: total) }

    /// The lever a transition is grouped under: the first it names.
    static func lever(of t: Transition) -> String { t.source.levers.first ?? builtIn }
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
}

/// How many of the transitions a lever decides were taken.
public struct LeverCoverage: Sendable {
    /// The lever, for example `session.max`, or `built-in`.
    public var lever: String
    /// Where the policy file sets it, if it does.
    public var location: SourceLocation?
    public var covered: Int
    public var total: Int
    /// Its transitions never taken, in id order.
    package var missed: [Transition]
}

extension CoverageReport {
    /// The JSON form, under the check report's `coverage` key.
    struct JSON: Encodable {
        struct Lever: Encodable {
            var lever: String
            var location: String?
            var covered: Int
            var total: Int
        }
        struct Policy: Encodable {
            var policy: String
            var scenarios: Int
            var covered: Int
            var total: Int
            var percent: Double
            var coveredTransitions: [Int]
            var missed: [TransitionSummary]
            var levers: [Lever]
            var unvisitedStates: [String]

            enum CodingKeys: String, CodingKey {
                case policy, scenarios, covered, total, percent, missed, levers
                case coveredTransitions = "covered_transitions"
                case unvisitedStates = "unvisited_states"
            }
        }
        var covered: Int
        var total: Int
        var percent: Double
        var threshold: Double?
        var belowThreshold: Bool?
        var policies: [Policy]

        enum CodingKeys: String, CodingKey {
            case covered, total, percent, threshold, policies
            case belowThreshold = "below_threshold"
        }
    }

    var json: JSON {
        JSON(
            covered: covered, total: total, percent: percent, threshold: threshold,
            belowThreshold: threshold == nil ? nil : belowThreshold,
            policies: policies.map { p in
                JSON.Policy(
                    policy: p.policy, scenarios: p.scenarios, covered: p.covered.count, total: p.total, percent: p.percent,
                    coveredTransitions: p.covered,
                    missed: p.missed.map { TransitionSummary($0, in: p.compiled.machine, withTarget: false) },
                    levers: p.levers.map {
                        JSON.Lever(lever: $0.lever, location: $0.location?.description, covered: $0.covered, total: $0.total)
                    },
                    unvisitedStates: p.unvisitedStates.map(\.rawValue))
            })
    }
}
