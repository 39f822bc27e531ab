public import SessionPolicy

/// Coverage of one policy's machine, counted against the transitions that can happen.
///
/// When the reachable transitions are known (`reachable`, from `policyctl verify`'s exploration),
/// the figures count only them: a dead transition (one no sequence and timing of events takes),
/// a guard all of whose transitions are dead and a lever all of whose transitions are dead are
/// left out of the figures and listed apart (`dead`, `GuardCoverage.dead`, `LeverCoverage.dead`,
/// `deadStates`). Without them (not computed, or the exploration stopped at its limit,
/// `reachabilityUnknown`), every transition counts.
public struct PolicyCoverage: Sendable {
    /// The policy's name.
    public var policy: String
    /// Every transition of the machine, dead or not.
    public var total: Int
    /// The ids of the transitions counted (taken or not), ascending: the reachable ones when
    /// known, else every one.
    public var counted: [Int]
    /// The ids of the counted transitions taken at least once, ascending.
    public var covered: [Int]
    /// The ids of dead transitions some scenario took anyway (it starts from a stored state no
    /// run of events reaches), ascending; not in the figures.
    public var takenDead: [Int]
    /// The counted transitions never taken, in id order.
    package var missed: [Transition]
    /// The dead transitions, in id order (empty unless reachability is known).
    package var dead: [Transition]
    /// Every lever that produced transitions, by name, `built-in` last. A transition counts for
    /// each lever it names (`session.max` and `session.on_expired` for an expired session), so
    /// the levers' transition totals may add up to more than the transitions counted.
    public var levers: [LeverCoverage]
    /// The distinct guards of the machine, in the order of their first transition; `guards[i].id == i`.
    public var guards: [GuardCoverage]
    /// States with a counted transition, none of them taken: the scenarios never had a session
    /// there.
    public var unvisitedStates: [MachineState]
    /// States with no transition that can happen (no run of events leads there), when
    /// reachability is known.
    public var deadStates: [MachineState]
    /// The ids of the transitions some run of events can take, when known (`policyctl verify`).
    public var reachable: Set<Int>?
    /// Whether reachability was sought and is not known: the exploration stopped at its limit.
    public var reachabilityUnknown: Bool
    /// How many scenarios ran against the policy.
    public var scenarios: Int
    /// The compiled policy, for describing guards.
    let compiled: CompiledPolicy

    /// Coverage of `policy` given the ids of the transitions taken by its `scenarios` scenarios,
    /// and the ids of its reachable transitions if known; `reachabilityUnknown` when they were
    /// sought and the exploration stopped.
    public init(
        _ policy: CompiledPolicy, taken: Set<Int>, scenarios: Int, reachable: Set<Int>? = nil, reachabilityUnknown: Bool = false
    ) {
        self.reachable = reachable
        self.reachabilityUnknown = reachable == nil && reachabilityUnknown
        let machine = policy.machine
        let all = machine.transitions
        let isLive = { (t: Transition) in reachable?.contains(t.id) ?? true }
        self.compiled = policy
        self.scenarios = scenarios
        self.policy = policy.name
        self.total = all.count
        self.counted = all.lazy.filter(isLive).map(\.id)
        self.covered = all.lazy.filter { isLive($0) && taken.contains($0.id) }.map(\.id)
        self.takenDead = all.lazy.filter { !isLive($0) && taken.contains($0.id) }.map(\.id)
        self.missed = all.filter { isLive($0) && !taken.contains($0.id) }
        self.dead = all.filter { !isLive($0) }
        self.guards = Self.guards(of: all, in: machine, taken: taken, isLive: isLive)
        self.levers = Self.levers(of: all, guards: guards, in: machine, taken: taken, isLive: isLive)
        let live = all.filter(isLive)
        let left = Set(live.lazy.filter { taken.contains($0.id) }.map(\.from))
        let liveStates = Set(live.map(\.from))
        self.unvisitedStates = machine.states.filter { liveStates.contains($0) && !left.contains($0) }
        self.deadStates = reachable == nil ? [] : machine.states.filter { !liveStates.contains($0) }
    }

    /// Distinct guards: the same check with the same decision and reason from the same levers,
    /// wherever the machine repeats it.
    static func guards(
        of all: [Transition], in machine: StateMachine, taken: Set<Int>, isLive: (Transition) -> Bool
    ) -> [GuardCoverage] {
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
        return members.enumerated().map { i, ts in
            let first = ts[0]
            let live = ts.filter(isLive)
            return GuardCoverage(
                id: i, check: machine.describe(first.guard), decision: first.action.decision, reason: first.action.reason,
                levers: Self.levers(of: first), location: first.source.location, transitions: ts.map(\.id),
                covered: live.lazy.map(\.id).filter(taken.contains), dead: live.isEmpty, guard: first.guard,
                missed: live.filter { !taken.contains($0.id) })
        }
    }

    /// The levers, by name with `built-in` last: each with its counted transitions and the
    /// guards that are not dead.
    static func levers(
        of all: [Transition], guards: [GuardCoverage], in machine: StateMachine, taken: Set<Int>, isLive: (Transition) -> Bool
    ) -> [LeverCoverage] {
        var byLever: [String: (transitions: [Transition], guards: [Int])] = [:]
        for g in guards {
            for lever in g.levers {
                byLever[lever, default: ([], [])].guards.append(g.id)
            }
        }
        for t in all {
            for lever in Self.levers(of: t) { byLever[lever, default: ([], [])].transitions.append(t) }
        }
        return byLever.keys.sorted(by: Self.leverOrder).map { name in
            let (ts, ids) = byLever[name]!
            // The lever's own line; failing that, the line of a transition that comes from it alone.
            let location =
                machine.sources[name] ?? ts.first { $0.source.levers == [name] && $0.source.location != nil }?.source.location
            let live = ts.filter(isLive)
            let liveGuards = ids.filter { !guards[$0].dead }
            // A policy read from a file locates the levers it sets; a machine without sources
            // (a compiled document) cannot tell, and counts every lever as set.
            let isDefault = name != builtIn && location == nil && !machine.sources.isEmpty
            return LeverCoverage(
                lever: name, location: location, covered: live.count(where: { taken.contains($0.id) }), total: live.count,
                guards: liveGuards, guardsTaken: liveGuards.count(where: { guards[$0].taken }), dead: live.isEmpty,
                isDefault: isDefault, missed: live.filter { !taken.contains($0.id) })
        }
    }

    /// The percentage of counted transitions covered, rounded down to a tenth.
    public var percent: Double { CoverageReport.percent(covered.count, of: counted.count) }

    /// The figure in `unit`, of what is counted: levers exercised (those the policy sets, and
    /// `built-in`), guards taken or transitions taken, the dead ones left out when reachability
    /// is known.
    public func figure(_ unit: CoverageUnit) -> CoverageFigure {
        switch unit {
        case .lever:
            CoverageFigure(
                covered: levers.count { $0.exercised && !$0.isDefault }, total: levers.count { !$0.dead && !$0.isDefault })
        case .guard: CoverageFigure(covered: guards.count(where: \.taken), total: guards.count { !$0.dead })
        default: CoverageFigure(covered: covered.count, total: counted.count)
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
    /// resume, background; and 75 more transitions`: a guard and where it was never taken (a
    /// dead guard: where the machine has it).
    func describe(_ g: GuardCoverage) -> String {
        let check = g.guard == .always ? "otherwise" : "if \(g.check)"
        let ids = Set(g.transitions)
        let places = g.dead ? compiled.machine.transitions.filter { ids.contains($0.id) } : g.missed
        return "\(check): \(g.decision?.rawValue ?? "no decision"), \(g.reason.rawValue), in \(CoverageReport.summarize(places))"
    }
}

/// How far the scenarios exercised one lever: whether any transition it produced was taken, and
/// which of its distinct guards were; dead transitions and guards left out.
public struct LeverCoverage: Sendable {
    /// The lever, for example `session.max`, or `built-in`.
    public var lever: String
    /// Where the policy file sets it, if it does.
    public var location: SourceLocation?
    /// Its counted transitions taken.
    public var covered: Int
    /// Its counted transitions (dead ones left out when reachability is known).
    public var total: Int
    /// Its distinct guards that are not dead, as ids into `PolicyCoverage.guards`, ascending.
    public var guards: [Int]
    /// How many of `guards` were taken.
    public var guardsTaken: Int
    /// Whether every transition it produced is dead: no scenario can exercise it.
    public var dead: Bool
    /// Whether the policy file leaves it at its default (it does not set the key): not counted
    /// in the lever figure, though its guards and transitions are.
    public var isDefault: Bool
    /// Its counted transitions never taken, in id order.
    package var missed: [Transition]

    /// Whether a counted transition it produced was taken.
    public var exercised: Bool { covered > 0 }
}

/// One distinct guard: a check with its decision and reason, from the same levers, on every
/// (state, event) pair the machine repeats it. Taken when any of its counted transitions was;
/// dead when none of its transitions can happen.
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
    /// The ids of its transitions, dead or not, ascending.
    public var transitions: [Int]
    /// The ids of its counted transitions taken, ascending.
    public var covered: [Int]
    /// Whether none of its transitions can happen (reachability known).
    public var dead: Bool
    package var `guard`: Guard
    /// Its counted transitions never taken, in id order.
    package var missed: [Transition]

    /// Whether any of its counted transitions was taken.
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
