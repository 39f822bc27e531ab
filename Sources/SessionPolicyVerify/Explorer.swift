import SessionPolicy

/// Explores every session state a compiled machine can reach from `signed_out`, under every
/// sequence of events, every choice of the facts they carry, and every timing (README, "What
/// verify proves"). Each abstract state is a discrete part (the session without its times,
/// users and devices reduced to "the session's" and "another", counters capped where no guard
/// can tell them apart) and a zone of the ages of the times it records. Every decision is the
/// engine's own: each class of (state, event, timing) is evaluated at one concrete point by
/// `CompiledPolicy.evaluate`, and the symbolic successor is checked against the engine's.
struct Explorer {
    let policy: CompiledPolicy
    var machine: StateMachine { policy.machine }

    /// One abstract session: the discrete part and the zone of its ages.
    struct Node: Hashable {
        var discrete: Discrete
        var zone: Zone

        var session: SessionKey { discrete.session }
        var cleared: Bool { discrete.cleared }
        var enrollmentChanged: Bool { discrete.enrollmentChanged }
        var monitors: [Monitor] { discrete.monitors }
    }

    /// The session without its times: what the guards read besides ages.
    struct SessionKey: Hashable {
        var state: MachineState
        var authMode: AuthMode?
        var readOnly: Bool
        var biometricLocked: Bool
        var hasUser: Bool
        var hasDevice: Bool
        /// Biometric, offline-login and IdP-login failures, capped.
        var failures: SIMD4<Int32>
        /// Which of the four times are recorded: bit `Zone.Clock.rawValue` (1...4).
        var times: UInt8

        func has(_ c: Zone.Clock) -> Bool { times & (1 << c.rawValue) != 0 }
        /// The recorded clocks, in clock order.
        var clocks: [Zone.Clock] { Self.clocks(times) }
        static func clocks(_ mask: UInt8) -> [Zone.Clock] { Zone.Clock.allCases.filter { mask & (1 << $0.rawValue) != 0 } }
    }

    /// How an event relates to the session: the same user or device, another, or none named.
    enum Relation: String, Sendable, Hashable { case none, same, other }

    /// When an event happens: at or after the highest time seen (time passes), or before it
    /// (a clock set back).
    enum Timing: Sendable, Hashable { case forward, rolledBack }

    /// The facts an event carries, relationally.
    struct EventChoice: Hashable, Sendable {
        var kind: EventKind
        var network: Network?
        var user: Relation
        var device: Relation
        var keystore: Keystore?
        var integrity: Integrity?
        var authMode: AuthMode?
        var cause: RefreshFailureCause?
        var unsyncedItems: Int?
        var appID: String?
        var attributes: [String: String]
    }

    /// One explored step: from a node, an event in a class of timings, what the engine did.
    struct Edge: Sendable {
        var from: Int
        var choice: EventChoice
        var timing: Timing
        /// The class of timings (ages at the event, with the event's own age).
        var piece: Zone
        var transition: Int
        var decision: Decision?
        var reason: Reason
    }

    /// A property broken on an edge.
    struct Violation: Sendable {
        var property: BuiltInProperty
        var edge: Edge
        var detail: String
        /// The decision the step should have had, when the property names one.
        var expected: Decision?
    }

    private(set) var nodes: [Node] = []
    private var index: [Node: Int] = [:]
    /// The edge that first reached each node (nil for the start): shortest paths, breadth first.
    private(set) var parent: [Edge?] = []
    /// The graph of abstract states, as `from << 32 | to`: each step adds its link once.
    private(set) var links: Set<UInt64> = []
    /// Steps explored: (state, event facts, class of timings) triples the engine decided.
    private(set) var steps = 0
    private(set) var taken: Set<Int> = []
    /// The first steps (breadth first: on shortest paths) that took each transition, up to
    /// `Self.takingKept`: covering runs try them in turn until one replays at concrete times.
    private(set) var taking: [Int: [Edge]] = [:]
    static let takingKept = 16
    private(set) var violations: [BuiltInProperty: Violation] = [:]
    /// Disagreements between the symbolic successor and the engine's: each one a bug in verify.
    private(set) var inconsistencies: [String] = []

    /// The largest constant a guard compares each age with, in milliseconds, by clock (`Zone.extrapolate`).
    let bounds: [Int64]
    /// The highest failure count the guards tell apart; counts above are the same.
    let failureCap: Int
    /// The event facts varied for each (state, event) group:
    /// those its guards read, those a session is established from, the network (the
    /// properties read it), and each required fact absent once.
    let choices: [MachineState: [EventKind: [EventChoice]]]

    /// The (state, event) groups where an event dated before the highest time seen can end
    /// otherwise than one at that time: a clock check reads the event's own time, or an effect
    /// records it (an IdP login, an online validation). Elsewhere the engine measures everything
    /// from the highest time seen, so a rolled-back event does what the same event does with no
    /// time passed, a step the forward timing already explores.
    let rollbackMatters: Set<StateEvent>

    /// The time every exploring evaluation takes as `now`: far enough from the epoch that any
    /// age fits (ages are at most a few times the largest constant, itself at most 36,600 days).
    static let now: Int64 = 100_000_000_000_000

    /// The user's properties, checked by their monitors.
    let properties: [UserProperty]
    /// The first step that broke each user property, by index.
    private(set) var userViolations: [Int: Edge] = [:]

    /// With `policyctl diff`: the new version, evaluated beside `policy` at every class; the
    /// classes cut, and the facts varied, for both machines' guards.
    let other: CompiledPolicy?
    /// The outcomes where `other` first differs from `policy`, by class.
    private var differing: [ClassKey: [(choice: EventChoice, old: Outcome, new: Outcome)]] = [:]
    /// The first step of each kind of difference (by the two transitions that decided).
    private(set) var divergences: [Divergence] = []
    private var divergenceKinds: Set<[Int]> = []

    /// Whether two versions decide a step alike: the same decision, reason, message, notices,
    /// scope, auth mode and notice delay, and the same next session.
    static func same(_ a: Outcome, _ b: Outcome) -> Bool {
        a.decision == b.decision && a.reason == b.reason && a.notices == b.notices && a.scope == b.scope
            && a.authMode == b.authMode && a.noticeDelay == b.noticeDelay && a.message == b.message && a.state == b.state
    }

    /// A step whose outcome differs between the two versions: the first difference of a run.
    struct Divergence {
        var edge: Edge
        var old: Outcome
        var new: Outcome
    }

    init(_ policy: CompiledPolicy, properties: [UserProperty] = [], other: CompiledPolicy? = nil) {
        self.policy = policy
        self.properties = properties
        self.other = other
        let machines = [policy.machine] + (other.map { [$0.machine] } ?? [])
        var limits: [Zone.Clock: Set<Int64>] = [:]
        var tolerances: Set<Int64> = []
        var counts: Set<Int> = [1]
        func add(_ g: Guard) {
            switch g {
            case let .sessionMaxExceeded(l): limits[.lastIdPLogin, default: []].insert(l.seconds * 1000)
            case let .idleExceeded(l):
                limits[.lastActivity, default: []].insert(l.seconds * 1000)
                limits[.lastIdPLogin, default: []].insert(l.seconds * 1000)
            case let .offlineWindowExceeded(l):
                limits[.lastOnline, default: []].insert(l.seconds * 1000)
                limits[.lastIdPLogin, default: []].insert(l.seconds * 1000)
            case let .clockRolledBack(t): tolerances.insert(t.seconds * 1000)
            case let .failureLimitReached(_, limit): counts.insert(limit)
            case let .switched(_, inner): add(inner)
            default: break
            }
        }
        for t in machines.flatMap(\.transitions) { add(t.guard) }
        for rule in machines.flatMap(\.rules) {
            for (fact, value) in Self.numbers(rule.condition) {
                switch fact {
                case .sinceIdPLogin: limits[.lastIdPLogin, default: []].formUnion([value - 1, value])
                case .sinceOnline:
                    limits[.lastOnline, default: []].formUnion([value - 1, value])
                    limits[.lastIdPLogin, default: []].formUnion([value - 1, value])
                case .sinceActivity:
                    limits[.lastActivity, default: []].formUnion([value - 1, value])
                    limits[.lastIdPLogin, default: []].formUnion([value - 1, value])
                case .biometricFailures, .offlineFailures, .idpFailures: counts.insert(Int(clamping: value) + 1)
                default: break
                }
            }
        }
        // The properties' own limits count too: widening must keep every comparison they make.
        for p in [policy.policy] + (other.map { [$0.policy] } ?? []) {
            for limit in [p.session.max, p.session.idle, p.offline.window].compactMap({ $0 }) {
                for c in [Zone.Clock.lastIdPLogin, .lastOnline, .lastActivity] {
                    limits[c, default: []].insert(limit.seconds * 1000)
                }
            }
        }
        var t = limits.mapValues { $0.filter { $0 >= 0 }.sorted() }
        t[.eventTime] = tolerances.sorted()
        bounds = Zone.Clock.allCases.map { c in c == .reference ? 0 : (t[c]?.max() ?? 0) + 1 }
        failureCap = counts.max() ?? 1
        var matters: Set<StateEvent> = []
        for t in machines.flatMap(\.transitions) {
            var clock = false
            if case .clockRolledBack = t.guard { clock = true }
            if clock || !t.action.effects.isDisjoint(with: [.establish, .recordOnline]) {
                matters.insert(StateEvent(state: t.from, kind: t.event))
            }
        }
        rollbackMatters = matters
        var choices: [MachineState: [EventKind: [EventChoice]]] = [:]
        for state in MachineState.allCases {
            for kind in EventKind.allCases { choices[state, default: [:]][kind] = Self.eventChoices(machines, state, kind) }
        }
        self.choices = choices
    }

    /// The (fact, constant) pairs of every numeric comparison in a condition.
    static func numbers(_ c: Condition) -> [(Fact, Int64)] {
        switch c {
        case let .number(f, _, v): return [(f, v)]
        case let .and(a, b), let .or(a, b): return numbers(a) + numbers(b)
        case let .not(a): return numbers(a)
        case .oneOf, .version: return []
        }
    }

    // MARK: - Exploring

    /// Explores breadth first until no new abstract state appears.
    mutating func run(limit: Int = 200_000) -> Bool {
        let start = Node(
            discrete: Discrete(
                session: key(SessionState.signedOut), cleared: true, enrollmentChanged: false, monitors: properties.map(Monitor.initial)),
            zone: Zone())
        _ = insert(start, from: nil)
        var next = 0
        while next < nodes.count {
            if nodes.count > limit {
                return false
            }
            expand(next)
            next += 1
        }
        return true
    }

    /// The nodes by discrete part and monitors: a new zone inside one already explored adds nothing.
    private var byDiscrete: [Discrete: [Int]] = [:]

    /// The discrete part of a node: the session without its times, and the properties'
    /// monitors (the session was cleared or revoked and no IdP login came since; the biometric
    /// enrollment changed and no IdP login came since; the user's properties, in their order).
    struct Discrete: Hashable {
        var session: SessionKey
        var cleared: Bool
        var enrollmentChanged: Bool
        var monitors: [Monitor]
    }

    private mutating func insert(_ node: Node, from edge: Edge?) -> Int {
        if let i = index[node] { return i }
        let d = node.discrete
        for i in byDiscrete[d] ?? [] where nodes[i].zone.includes(node.zone) { return i }
        nodes.append(node)
        parent.append(edge)
        index[node] = nodes.count - 1
        byDiscrete[d, default: []].append(nodes.count - 1)
        return nodes.count - 1
    }

    /// A class of steps: from sessions with one discrete part, an event kind at one timing, in
    /// one piece of the zone (`atoms`: the answer to each comparison the group's guards make).
    /// Every step of a class takes the same transitions with the same facts, wherever the zone.
    struct ClassKey: Hashable {
        var discrete: Discrete
        var kind: EventKind
        var timing: Timing
        var atoms: [Bool]
    }

    /// A (state, event) pair of the machine: the transitions tried for that event in that state.
    struct StateEvent: Hashable {
        var state: MachineState
        var kind: EventKind
    }

    /// The choices of facts of a class that end alike: one transition, one next discrete part.
    struct Group {
        /// The first choice that ends so: the one the step and its counterexample use.
        var choice: EventChoice
        var transition: Int
        var decision: Decision?
        var reason: Reason
        /// The next node's discrete part: session and monitors.
        var next: Discrete
        /// The choices whose outcome the properties examine (`allow`, `require_biometric`, or a
        /// clock set back).
        var examined: [EventChoice]
        /// The user properties the step breaks.
        var breaks: [Int]
    }

    /// A property broken in a class, by one of its choices.
    struct Failure {
        var property: BuiltInProperty
        var detail: String
        var expected: Decision?
        var group: Int
        var choice: EventChoice
    }

    /// What each class does, found once by evaluating every choice of facts.
    private var classes: [ClassKey: [Group]] = [:]
    /// The properties broken in each class cut further at the properties' limits.
    private var broken: [ClassKey: [Failure]] = [:]
    /// Calls of `CompiledPolicy.evaluate` made while exploring.
    private(set) var evaluations = 0

    private mutating func expand(_ i: Int) {
        let node = nodes[i]
        let discrete = node.discrete
        let set = node.session.clocks
        for timing in set.isEmpty ? [Timing.forward] : [.forward, .rolledBack] {
            var z = node.zone
            switch timing {
            case .forward:
                z.elapse()
                z.assign(.eventTime, from: .reference)
            case .rolledBack:
                z.free(.eventTime)
                z[.reference, .eventTime] = -1  // the event is at least 1 ms before the highest time seen
                z[.eventTime, .reference] = Zone.infinity
                z.close()
            }
            if z.isEmpty { continue }
            for kind in EventKind.allCases
            where timing == .forward || rollbackMatters.contains(StateEvent(state: node.session.state, kind: kind)) {
                // Cut only where a guard of this (state, event) group looks: the fewer the cuts,
                // the larger the successor zones and the fewer of them.
                let atoms = self.atoms(node.session, kind).filter { timing == .rolledBack || $0.0 != .eventTime }
                for (piece, answers) in pieces(z, atoms) {
                    let ages = piece.point(set + [.eventTime])
                    let state = concrete(node.session, ages)
                    let time = Timestamp(millisecondsSinceEpoch: Self.now - (ages[.eventTime] ?? 0))
                    let key = ClassKey(discrete: discrete, kind: kind, timing: timing, atoms: answers)
                    var late: (SessionState, Timestamp)?
                    if other != nil {
                        // A difference in the times a step records shows only where time has
                        // passed: compare the versions at the class's latest point too.
                        let a = piece.point(Array((set + [.eventTime]).reversed()), largest: 366 * 86_400_000)
                        late = (concrete(node.session, a), Timestamp(millisecondsSinceEpoch: Self.now - (a[.eventTime] ?? 0)))
                    }
                    let groups = classes[key] ?? classify(node, state, time, kind, timing, key, late: late)
                    for group in groups { follow(i, node, piece, ages, state, time, timing, group) }
                    for d in differing[key] ?? [] where divergenceKinds.insert([d.old.transition, d.new.transition]).inserted {
                        let edge = Edge(
                            from: i, choice: d.choice, timing: timing, piece: piece, transition: d.old.transition,
                            decision: d.old.decision, reason: d.old.reason)
                        divergences.append(Divergence(edge: edge, old: d.old, new: d.new))
                    }
                    if groups.contains(where: { !$0.examined.isEmpty }) { examine(i, node, piece, set, key, groups) }
                }
            }
        }
    }

    /// Evaluates every choice of facts of a class at one point of it, and groups them by how they end.
    private mutating func classify(
        _ node: Node, _ state: SessionState, _ time: Timestamp, _ kind: EventKind, _ timing: Timing, _ key: ClassKey,
        late: (SessionState, Timestamp)? = nil
    ) -> [Group] {
        var groups: [Group] = []
        var differ: [(choice: EventChoice, old: Outcome, new: Outcome)] = []
        var differKinds: Set<[Int]> = []
        defer { if other != nil { differing[key] = differ } }
        for choice in choices[state.state]?[kind] ?? [] {
            let e = event(choice, at: time, for: state)
            let outcome = policy.evaluate(state, e)
            evaluations += 1
            if let other {
                let o = other.evaluate(state, e)
                if !Self.same(outcome, o), differKinds.insert([outcome.transition, o.transition]).inserted {
                    differ.append((choice, outcome, o))
                }
                if let (lateState, lateTime) = late {
                    let le = event(choice, at: lateTime, for: lateState)
                    let (a, b) = (policy.evaluate(lateState, le), other.evaluate(lateState, le))
                    if !Self.same(a, b), differKinds.insert([a.transition, b.transition]).inserted { differ.append((choice, a, b)) }
                }
            }
            let id = outcome.transition
            let next = self.key(outcome.state)
            var cleared = node.cleared
            var enrollment = node.enrollmentChanged
            if id >= 0 {
                let fx = machine.transitions[id].action.effects
                if fx.contains(.establish) {
                    // A login that switches the session wipes the old one and establishes the new.
                    cleared = false
                    enrollment = false
                } else if outcome.decision == .wipe || fx.contains(.clearSession) || kind == .tokensRevoked
                    || kind == .accountDeactivated
                {
                    cleared = true
                }
                if kind == .biometricEnrollmentChanged { enrollment = true }
            }
            // `clock-rollback` needs a look only where the clock check decided: every other guard
            // measures time from the highest time seen, so the same event at that time takes the
            // same transition. And a `wipe` cannot be more permissive than anything.
            var clockDecided = false
            if id >= 0, case .clockRolledBack = machine.transitions[id].guard { clockDecided = outcome.decision != .wipe }
            let examined = outcome.decision == .allow || outcome.decision == .requireBiometric || (timing == .rolledBack && clockDecided)
            var monitors = node.monitors
            var breaks: [Int] = []
            if !properties.isEmpty, id >= 0 {
                let seen = ObservedStep(
                    kind: kind, network: choice.network, decision: outcome.decision, reason: outcome.reason, from: state.state,
                    to: outcome.state.state)
                for (j, p) in properties.enumerated() {
                    let (m, broken) = monitors[j].next(p, seen)
                    monitors[j] = m
                    if broken { breaks.append(j) }
                }
            }
            let discrete = Discrete(session: next, cleared: cleared, enrollmentChanged: enrollment, monitors: monitors)
            if let g = groups.firstIndex(where: {
                $0.transition == id && $0.next == discrete && $0.breaks == breaks
            }) {
                if examined { groups[g].examined.append(choice) }
            } else {
                groups.append(
                    Group(
                        choice: choice, transition: id, decision: outcome.decision, reason: outcome.reason, next: discrete,
                        examined: examined ? [choice] : [], breaks: breaks))
            }
        }
        classes[key] = groups
        return groups
    }

    /// The comparisons of an age with a constant that the guards of `kind` in the session's
    /// state make, as (clock, θ) for `age > θ`.
    func atoms(_ k: SessionKey, _ kind: EventKind) -> [(Zone.Clock, Int64)] {
        Self.atoms(machine, k, kind) + (other.map { Self.atoms($0.machine, k, kind) } ?? [])
    }

    static func atoms(_ machine: StateMachine, _ k: SessionKey, _ kind: EventKind) -> [(Zone.Clock, Int64)] {
        func has(_ c: Zone.Clock) -> Bool { k.has(c) }
        func since(_ c: Zone.Clock) -> Zone.Clock? { has(c) ? c : has(.lastIdPLogin) ? .lastIdPLogin : nil }
        var out: [(Zone.Clock, Int64)] = []
        func add(_ g: Guard, cleared: Bool) {
            switch g {
            case let .sessionMaxExceeded(l): if !cleared, has(.lastIdPLogin) { out.append((.lastIdPLogin, l.seconds * 1000)) }
            case let .idleExceeded(l): if !cleared, let c = since(.lastActivity) { out.append((c, l.seconds * 1000)) }
            case let .offlineWindowExceeded(l): if !cleared, let c = since(.lastOnline) { out.append((c, l.seconds * 1000)) }
            case let .clockRolledBack(t): out.append((.eventTime, t.seconds * 1000))
            case let .rule(i), let .ruleFactMissing(i):
                guard !cleared else { return }
                for (fact, v) in Self.numbers(machine.rules[i].condition) {
                    let clock: Zone.Clock?
                    switch fact {
                    case .sinceIdPLogin: clock = has(.lastIdPLogin) ? .lastIdPLogin : nil
                    case .sinceOnline: clock = since(.lastOnline)
                    case .sinceActivity: clock = since(.lastActivity)
                    default: clock = nil
                    }
                    if let c = clock { out += [(c, v - 1), (c, v)] }
                }
            case let .switched(_, inner): add(inner, cleared: true)
            default: break
            }
        }
        for i in machine.range(from: k.state, on: kind) { add(machine.transitions[i].guard, cleared: false) }
        return out
    }

    /// The ages the properties compare with the policy's limits, as (clock, θ) for `age > θ`.
    func propertyAtoms(_ k: SessionKey) -> [(Zone.Clock, Int64)] {
        let p = policy.policy
        var out: [(Zone.Clock, Int64)] = []
        for limit in [p.session.max, p.session.idle, p.offline.window].compactMap({ $0 }) {
            for c in [Zone.Clock.lastIdPLogin, .lastOnline, .lastActivity] where k.has(c) {
                out.append((c, limit.seconds * 1000))
            }
        }
        return out
    }

    /// `zone` cut at every atom: in each piece, every `age > θ` has one answer, listed in atom order.
    func pieces(_ zone: Zone, _ atoms: [(Zone.Clock, Int64)]) -> [(Zone, [Bool])] {
        var out = [(zone, [Bool]())]
        for (c, theta) in atoms {
            var next: [(Zone, [Bool])] = []
            for (z, answers) in out {
                let (above, notAbove) = z.split(c, above: theta)
                if let a = above { next.append((a, answers + [true])) }
                if let b = notAbove { next.append((b, answers + [false])) }
            }
            out = next
        }
        return out
    }

    /// The zone and recorded times after transition `id` (-1: the event was refused) from
    /// `piece`, by the transition's effects (README, "How a decision is made").
    func successor(_ node: Node, _ piece: Zone, _ id: Int) -> (Zone, UInt8) {
        var times = node.session.times
        guard id >= 0 else { return (node.zone, times) }
        let fx = machine.transitions[id].action.effects
        var zone = piece
        zone.assign(.highestTime, from: .reference)
        times |= 1 << Zone.Clock.highestTime.rawValue
        if fx.contains(.clearSession) {
            for c in [Zone.Clock.lastIdPLogin, .lastOnline, .lastActivity] {
                zone.free(c)
                times &= ~(1 << c.rawValue)
            }
        }
        if fx.contains(.establish) {
            for c in [Zone.Clock.lastIdPLogin, .lastOnline, .lastActivity, .highestTime] {
                zone.assign(c, from: .eventTime)
                times |= 1 << c.rawValue
            }
        }
        if fx.contains(.recordOnline) {
            zone.assign(.lastOnline, from: .eventTime)
            times |= 1 << Zone.Clock.lastOnline.rawValue
        }
        if fx.contains(.recordActivity) {
            zone.assign(.lastActivity, from: .reference)
            times |= 1 << Zone.Clock.lastActivity.rawValue
        }
        if fx.contains(.establish) && !fx.contains(.recordActivity) { zone = rebased(zone, on: .highestTime) }
        zone.free(.eventTime)
        return (zone, times)
    }

    /// Follows one group of a class from node `i` in `piece`: the engine decides the group's
    /// choice at this piece's point (checked to take the class's transition), the symbolic
    /// successor is checked against the engine's next state, and the next node is inserted.
    private mutating func follow(
        _ i: Int, _ node: Node, _ piece: Zone, _ ages: Ages, _ state: SessionState, _ time: Timestamp,
        _ timing: Timing, _ group: Group
    ) {
        let outcome = policy.evaluate(state, event(group.choice, at: time, for: state))
        evaluations += 1
        let id = group.transition
        if outcome.transition != id || key(outcome.state) != group.next.session {
            inconsistencies.append("transition \(id): a class ends otherwise in another zone")
        }
        let edge = Edge(
            from: i, choice: group.choice, timing: timing, piece: piece, transition: id, decision: group.decision,
            reason: group.reason)
        steps += 1
        guard id >= 0 else {
            // A refused event changes nothing: a step back to the same node.
            links.insert(UInt64(i) << 32 | UInt64(i))
            return
        }
        taken.insert(id)
        if taking[id, default: []].count < Self.takingKept { taking[id, default: []].append(edge) }
        var (zone, times) = successor(node, piece, id)
        if group.next.session.times != times {
            inconsistencies.append(
                "transition \(id): the engine records times \(group.next.session.clocks), verify \(SessionKey.clocks(times))")
        }
        if let h = Explorer.highest(outcome.state) {
            var nextAges = Ages()
            for (c, t) in Self.times(outcome.state) { nextAges[c] = h - t }
            if !zone.contains(nextAges) {
                inconsistencies.append("transition \(id): the engine's successor is outside verify's zone")
            }
        }
        zone.extrapolate(bounds)
        let to = insert(Node(discrete: group.next, zone: zone), from: edge)
        for j in group.breaks where userViolations[j] == nil { userViolations[j] = edge }
        links.insert(UInt64(i) << 32 | UInt64(to))
    }

    /// Checks the properties on the class's examined choices, in each part of `piece` cut at the
    /// policy's limits (found once per class and part); records the first violation of each.
    private mutating func examine(
        _ i: Int, _ node: Node, _ piece: Zone, _ set: [Zone.Clock], _ key: ClassKey, _ groups: [Group]
    ) {
        for (sub, answers) in pieces(piece, propertyAtoms(node.session)) {
            var k = key
            k.atoms += answers
            let found: [Failure]
            if let known = broken[k] {
                found = known
            } else {
                let ages = sub.point(set + [.eventTime])
                let state = concrete(node.session, ages)
                let time = Timestamp(millisecondsSinceEpoch: Self.now - (ages[.eventTime] ?? 0))
                var list: [Failure] = []
                for (gi, other) in groups.enumerated() {
                    for choice in other.examined {
                        let e = event(choice, at: time, for: state)
                        let o = policy.evaluate(state, e)
                        evaluations += 1
                        if o.transition != other.transition {
                            inconsistencies.append("transition \(other.transition): another transition decides inside its class")
                        }
                        let establishes = o.transition >= 0 && machine.transitions[o.transition].action.effects.contains(.establish)
                        for f in check(node, ages, state, e, o, establishes: establishes, timing: key.timing) {
                            list.append(Failure(property: f.0, detail: f.1, expected: f.2, group: gi, choice: choice))
                        }
                    }
                }
                broken[k] = list
                found = list
            }
            for f in found where violations[f.property] == nil {
                let group = groups[f.group]
                let edge = Edge(
                    from: i, choice: f.choice, timing: key.timing, piece: sub, transition: group.transition,
                    decision: group.decision, reason: group.reason)
                violations[f.property] = Violation(property: f.property, edge: edge, detail: f.detail, expected: f.expected)
            }
        }
    }

    /// The zone with `clock` as its reference (every age less that clock's).
    func rebased(_ z: Zone, on clock: Zone.Clock) -> Zone {
        var r = z
        for c in Zone.Clock.allCases where c != .reference && c != clock {
            r[c, .reference] = z[c, clock]
            r[.reference, c] = z[clock, c]
        }
        r.free(clock)
        r.assign(clock, from: .reference)
        r.close()
        return r
    }

    // MARK: - Properties

    /// The properties `outcome` breaks, as (property, what went wrong, the decision it should have had).
    private func check(
        _ node: Node, _ ages: Ages, _ state: SessionState, _ event: Event, _ outcome: Outcome,
        establishes: Bool, timing: Timing
    ) -> [(BuiltInProperty, String, Decision?)] {
        var out: [(BuiltInProperty, String, Decision?)] = []
        func fail(_ p: BuiltInProperty, _ detail: String, expected: Decision? = .idpLogin) { out.append((p, detail, expected)) }
        let p = policy.policy
        let offline = event.network != .online
        let age: (Zone.Clock) -> Int64? = { node.session.has($0) ? ages[$0] : nil }
        if outcome.decision == .allow && !establishes {
            if let max = p.session.max, (age(.lastIdPLogin) ?? .max) > max.seconds * 1000 {
                fail(.sessionMax, "`allow` more than \(max) after the last IdP login")
            }
            if let idle = p.session.idle, (age(.lastActivity) ?? age(.lastIdPLogin) ?? .max) > idle.seconds * 1000 {
                fail(.sessionIdle, "`allow` more than \(idle) after the last activity")
            }
            if offline, let window = p.offline.window,
                (age(.lastOnline) ?? age(.lastIdPLogin) ?? .max) > window.seconds * 1000
            {
                fail(.offlineWindow, "`allow` while offline, more than \(window) after the last online validation")
            }
            if offline, !p.authModes.offline.contains(state.authMode ?? .password) {
                fail(
                    .offlineAuthMode,
                    "offline `allow` for a session signed in with `\(state.authMode?.rawValue ?? "no auth mode")`, not an offline mode")
            }
            if node.enrollmentChanged && event.kind == .biometricSucceeded {
                fail(.enrollmentChange, "`allow` by a biometric prompt after the enrollment changed")
            }
        }
        if (outcome.decision == .allow || outcome.decision == .requireBiometric) && node.cleared && !establishes {
            fail(.clearedUntilLogin, "`\(outcome.decision!.rawValue)` after the session was cleared or revoked, before an IdP login")
        }
        if outcome.transition < 0 && outcome.reason != .invalidEvent {
            fail(.total, "no transition decided `\(event.kind.rawValue)` in `\(state.state.rawValue)`", expected: nil)
        }
        if timing == .rolledBack, let d = outcome.decision {
            var atNow = event
            atNow.time = Timestamp(millisecondsSinceEpoch: Self.now)
            if let truth = policy.evaluate(state, atNow).decision, d.permissiveness > truth.permissiveness {
                fail(
                    .clockRollback,
                    "an event dated before the highest time seen gets `\(d.rawValue)`, the same event at that time `\(truth.rawValue)`",
                    expected: truth)
            }
        }
        return out
    }

    /// `no-dead-end`: the nodes from which no path leads to a usable session (`active` or `read_only`).
    func deadEnds() -> [Int] {
        var reaches = nodes.map { $0.session.state == .active || $0.session.state == .readOnly }
        var incoming = [[Int]](repeating: [], count: nodes.count)
        for l in links { incoming[Int(l & 0xFFFF_FFFF)].append(Int(l >> 32)) }
        var work = reaches.indices.filter { reaches[$0] }
        while let n = work.popLast() {
            for m in incoming[n] where !reaches[m] {
                reaches[m] = true
                work.append(m)
            }
        }
        return reaches.indices.filter { !reaches[$0] }
    }

    // MARK: - Concrete states and events

    /// The discrete part of a session.
    func key(_ s: SessionState) -> SessionKey {
        SessionKey(
            state: s.state, authMode: s.authMode, readOnly: s.readOnly, biometricLocked: s.biometricLocked,
            hasUser: s.user != nil, hasDevice: s.device != nil,
            failures: SIMD4(
                Int32(min(s.failures.biometric, failureCap)), Int32(min(s.failures.offlineLogin, failureCap)),
                Int32(min(s.failures.idpLogin, failureCap)), 0),
            times: (s.lastIdPLogin == nil ? 0 : 1 << 1) | (s.lastOnline == nil ? 0 : 1 << 2) | (s.lastActivity == nil ? 0 : 1 << 3)
                | (s.highestTime == nil ? 0 : 1 << 4))
    }

    static func times(_ s: SessionState) -> [(Zone.Clock, Int64)] {
        var out: [(Zone.Clock, Int64)] = []
        if let t = s.lastIdPLogin { out.append((.lastIdPLogin, t.millisecondsSinceEpoch)) }
        if let t = s.lastOnline { out.append((.lastOnline, t.millisecondsSinceEpoch)) }
        if let t = s.lastActivity { out.append((.lastActivity, t.millisecondsSinceEpoch)) }
        if let t = s.highestTime { out.append((.highestTime, t.millisecondsSinceEpoch)) }
        return out
    }

    static func highest(_ s: SessionState) -> Int64? { times(s).map(\.1).max() }

    static let sessionUser = "alice"
    static let otherUser = "mallory"
    static let sessionDevice = "device-1"
    static let otherDevice = "device-2"

    /// A session with the key's discrete part and the ages as its times (relative to `now`).
    func concrete(_ k: SessionKey, _ ages: Ages) -> SessionState {
        var s = SessionState()
        s.state = k.state
        s.authMode = k.authMode
        s.readOnly = k.readOnly
        s.biometricLocked = k.biometricLocked
        s.user = k.hasUser ? Self.sessionUser : nil
        s.device = k.hasDevice ? Self.sessionDevice : nil
        s.failures = .init(biometric: Int(k.failures[0]), offlineLogin: Int(k.failures[1]), idpLogin: Int(k.failures[2]))
        func at(_ c: Zone.Clock) -> Timestamp? {
            k.has(c) ? Timestamp(millisecondsSinceEpoch: Self.now - (ages[c] ?? 0)) : nil
        }
        s.lastIdPLogin = at(.lastIdPLogin)
        s.lastOnline = at(.lastOnline)
        s.lastActivity = at(.lastActivity)
        s.highestTime = at(.highestTime)
        return s
    }

    /// The concrete event of a choice, for a session (users and devices named relative to it).
    func event(_ c: EventChoice, at time: Timestamp, for s: SessionState) -> Event {
        func name(_ r: Relation, _ current: String?, _ first: String, _ second: String) -> String? {
            switch r {
            case .none: return nil
            case .same: return current ?? first
            case .other: return current == first ? second : (current == nil ? second : first)
            }
        }
        var e = Event(
            c.kind, at: time, network: c.network, user: name(c.user, s.user, Self.sessionUser, Self.otherUser),
            device: .init(
                id: name(c.device, s.device, Self.sessionDevice, Self.otherDevice), keystore: c.keystore,
                integrity: c.integrity),
            authMode: c.authMode, cause: c.cause, unsyncedItems: c.unsyncedItems, attributes: c.attributes)
        e.appID = c.appID
        return e
    }

    /// The facts varied for `kind` in `state`: those a guard of that group reads, those a session
    /// is established from, and those the kind requires (each also absent, which the engine refuses).
    /// A fact no guard of the group reads cannot change which transition decides.
    static func eventChoices(_ machines: [StateMachine], _ state: MachineState, _ kind: EventKind) -> [EventChoice] {
        do {
            let m = machines[0]
            var reads: Set<String> = ["network"]
            var attributes: [String: [String?]] = [:]
            for machine in machines {
                for t in machine.transitions(from: state, on: kind) {
                    reads.formUnion(Self.reads(t.guard, machine, &attributes))
                    if t.action.effects.contains(.establish) { reads.formUnion(["user", "device", "authMode"]) }
                }
            }
            let required = Set(kind.requiredFacts.facts.map { "\($0)" })
            reads.formUnion(required)
            func values<T>(_ fact: String, _ all: [T]) -> [T?] { reads.contains(fact) ? [nil] + all.map { $0 } : [nil] }
            let networks: [Network?] = [.online, .offline, nil]
            let users: [Relation] = reads.contains("user") ? [.none, .same, .other] : [.none]
            let devices: [Relation] = reads.contains("device") ? [.none, .same, .other] : [.same]
            let keystores: [Keystore?] = reads.contains("keystore") ? [.hardware, .software, nil] : [.hardware]
            let integrities: [Integrity?] = reads.contains("integrity") ? [.ok, .compromised, nil] : [.ok]
            let modes = values("authMode", AuthMode.allCases)
            let causes = values("cause", RefreshFailureCause.allCases)
            let unsynced: [Int?] = reads.contains("unsyncedItems") ? [nil, 0, 1] : [nil]
            let apps: [String?] = reads.contains("appID") ? [nil, m.trustedApps.first ?? "trusted.app", "untrusted.app"] : [nil]
            var attributeSets: [[String: String]] = [[:]]
            for (name, candidates) in attributes.sorted(by: { $0.key < $1.key }) {
                attributeSets = attributeSets.flatMap { base in
                    candidates.map { v -> [String: String] in
                        var b = base
                        b[name] = v
                        return b
                    }
                }
            }
            var list: [EventChoice] = []
            for n in networks {
                for u in users {
                    for d in devices {
                        for k in keystores {
                            for i in integrities {
                                for a in modes {
                                    for c in causes {
                                        for x in unsynced {
                                            for app in apps {
                                                for attrs in attributeSets {
                                                    list.append(
                                                        EventChoice(
                                                            kind: kind, network: n, user: u, device: d, keystore: k,
                                                            integrity: i, authMode: a, cause: c, unsyncedItems: x, appID: app,
                                                            attributes: attrs))
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            // An event missing a fact its kind requires is refused before any guard, whatever
            // else it carries: one such event per missing fact is enough.
            func missing(_ c: EventChoice) -> String? {
                if required.contains("network") && c.network == nil { return "network" }
                if required.contains("user") && c.user == .none { return "user" }
                if required.contains("authMode") && c.authMode == nil { return "authMode" }
                if required.contains("cause") && c.cause == nil { return "cause" }
                if required.contains("appID") && c.appID == nil { return "appID" }
                return nil
            }
            var refused: Set<String> = []
            return list.filter { c in missing(c).map { refused.insert($0).inserted } ?? true }
        }
    }

    /// The event facts a guard reads; attribute candidates (the boundaries of the rules'
    /// comparisons, and absent) go into `attributes`.
    static func reads(_ g: Guard, _ m: StateMachine, _ attributes: inout [String: [String?]]) -> Set<String> {
        switch g {
        case .deviceCompromised: return ["integrity"]
        case .differentDevice: return ["device"]
        case .differentUser: return ["user"]
        case .keystoreNotHardware: return ["keystore"]
        case .networkOffline: return ["network"]
        case .refreshCause: return ["cause"]
        case .unsyncedItems: return ["unsyncedItems"]
        case .appNotTrusted: return ["appID"]
        case let .rule(i), let .ruleFactMissing(i):
            return conditionReads(m.rules[i].condition, m, &attributes)
        case let .switched(kind, inner):
            return reads(kind.trigger, m, &attributes).union(reads(inner, m, &attributes))
        default: return []
        }
    }

    static func conditionReads(_ c: Condition, _ m: StateMachine, _ attributes: inout [String: [String?]]) -> Set<String> {
        func fact(_ f: Fact, _ candidates: [String]) -> Set<String> {
            switch f {
            case .network: return ["network"]
            case .keystore: return ["keystore"]
            case .integrity: return ["integrity"]
            case let .attribute(name):
                var list = attributes[name] ?? [nil]
                var values = candidates
                switch m.attributes.first(where: { $0.name == name })?.type {
                case let .words(words)?: values = words  // any other word is refused as the wrong type
                case .boolean?: values = ["true", "false"]
                default: break
                }
                for v in values where !list.contains(v) { list.append(v) }
                attributes[name] = list
                return []
            default: return []
            }
        }
        switch c {
        case let .oneOf(f, values, _): return fact(f, values + ["zz-other"])
        case let .number(f, _, v):
            if case let .attribute(name) = f, case .duration = m.attributes.first(where: { $0.name == name })?.type {
                let s = v / 1000
                return fact(f, [max(s - 1, 0), s, s + 1].map { "\($0)s" })
            }
            return fact(f, [v - 1, v, v + 1].map { "\($0)" })
        case let .version(f, _, v):
            let text = v.parts.map(String.init).joined(separator: ".")
            var lower = v.parts
            if let i = lower.lastIndex(where: { $0 > 0 }) { lower[i] -= 1 }
            return fact(f, [text, text + ".1", lower.map(String.init).joined(separator: ".")])
        case let .and(a, b), let .or(a, b): return conditionReads(a, m, &attributes).union(conditionReads(b, m, &attributes))
        case let .not(a): return conditionReads(a, m, &attributes)
        }
    }
}
