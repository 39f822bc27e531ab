import SessionPolicy

extension CoverageReport {
    /// The JSON form, under the check report's `coverage` key. `covered`, `total` and `percent`
    /// count transitions (the reachable ones where known); `units` has every unit; each policy
    /// says whether its reachability is `known`, `unknown` (the exploration stopped) or
    /// `not_sought`, and lists what is dead.
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

            init(_ f: (CoverageUnit) -> CoverageFigure) {
                (lever, self.guard, transition) = (Figure(f(.lever)), Figure(f(.guard)), Figure(f(.transition)))
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
            var dead: Bool
            var isDefault: Bool

            enum CodingKeys: String, CodingKey {
                case lever, location, exercised, covered, total, guards, dead
                case isDefault = "default"
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
            var dead: Bool

            enum CodingKeys: String, CodingKey {
                case id, `guard`, decision, reason, levers, location, taken, transitions, dead
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
            var reachability: String
            var reachableTransitions: [Int]?
            var transitions: Int
            var deadTransitions: [Int]
            var deadStates: [String]
            var takenDead: [Int]

            enum CodingKeys: String, CodingKey {
                case policy, scenarios, covered, total, percent, units, missed, levers, guards, reachability, transitions
                case coveredTransitions = "covered_transitions"
                case unvisitedStates = "unvisited_states"
                case reachableTransitions = "reachable_transitions"
                case deadTransitions = "dead_transitions"
                case deadStates = "dead_states"
                case takenDead = "taken_dead"
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
            covered: covered, total: total, percent: percent, units: JSON.Units(figure),
            threshold: threshold,
            thresholdUnit: threshold == nil ? nil : thresholdUnit.rawValue,
            belowThreshold: threshold == nil ? nil : belowThreshold,
            policies: policies.map { p in
                JSON.Policy(
                    policy: p.policy, scenarios: p.scenarios, covered: p.covered.count, total: p.counted.count, percent: p.percent,
                    units: JSON.Units(p.figure), coveredTransitions: p.covered,
                    missed: p.missed.map { TransitionSummary($0, in: p.compiled.machine, withTarget: false) },
                    levers: p.levers.map {
                        JSON.Lever(
                            lever: $0.lever, location: $0.location?.description, exercised: $0.exercised, covered: $0.covered,
                            total: $0.total, guards: $0.guards, guardsTaken: $0.guardsTaken, dead: $0.dead,
                            isDefault: $0.isDefault)
                    },
                    guards: p.guards.map {
                        JSON.Guard(
                            id: $0.id, guard: $0.check, decision: $0.decision?.rawValue, reason: $0.reason.rawValue,
                            levers: $0.levers, location: $0.location?.description, taken: $0.taken, transitions: $0.transitions,
                            coveredTransitions: $0.covered, dead: $0.dead)
                    },
                    unvisitedStates: p.unvisitedStates.map(\.rawValue),
                    reachability: p.reachable != nil ? "known" : p.reachabilityUnknown ? "unknown" : "not_sought",
                    reachableTransitions: p.reachable.map { $0.sorted() }, transitions: p.total, deadTransitions: p.dead.map(\.id),
                    deadStates: p.deadStates.map(\.rawValue), takenDead: p.takenDead)
            })
    }
}
