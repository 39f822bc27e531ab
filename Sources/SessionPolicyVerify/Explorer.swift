import SessionPolicy

/// Explores every session state a compiled machine can reach from `signed_out`, under every
/// sequence of events, every choice of the facts they carry, and every timing (README, "What
/// verify proves"). Each abstract state is a discrete part (the session without its times,
/// users and devices reduced to "the session's" and "another", counters capped where no guard
/// can tell them apart) and a zone of the ages of the times it records. Every decision is the
/// engine's own: each class of (state, event, timing) is evaluated at one concrete point by
/// `CompiledPolicy.evaluate`, and the symbolic successor is checked against the engine's.
final class Explorer {
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
    /// The edge that first reached each node (nil for the start): shortest paths, breadth first.
    private(set) var parent: [Edge?] = []
    /// The graph of abstract states, as `from << 32 | to`, each link once.
    private(set) var links: [UInt64] = []
    /// The nodes the steps of the node being expanded lead to, with repeats.
    private var targets: [Int] = []
    /// Steps explored: (state, event facts, class of timings) triples the engine decided.
    private(set) var steps = 0
    /// Whether each transition was taken, by id.
    private var taken: [Bool]
    /// The transitions some step took.
    var takenTransitions: Set<Int> { Set(taken.indices.filter { taken[$0] }) }
    /// The first steps (breadth first: on shortest paths) that took each transition, up to
    /// `Self.takingKept`: covering runs try them in turn until one replays at concrete times.
    private(set) var taking: [Int: [Edge]] = [:]
    private var takingCount: [Int]
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

    /// Whether every step, not only the first of each class, is evaluated by the engine and
    /// checked against the class and the symbolic successor (`policyctl verify --self-check`).
    let selfCheck: Bool

    init(_ policy: CompiledPolicy, properties: [UserProperty] = [], other: CompiledPolicy? = nil, selfCheck: Bool = false) {
        self.policy = policy
        self.selfCheck = selfCheck
        taken = Array(repeating: false, count: policy.machine.transitions.count)
        takingCount = Array(repeating: 0, count: policy.machine.transitions.count)
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
    func run(limit: Int = 200_000) -> Bool {
        let start = Discrete(
            session: key(SessionState.signedOut), cleared: true, enrollmentChanged: false, monitors: properties.map(Monitor.initial))
        _ = add(NodeKey(discreteID(start), Zone()), from: nil)
        var next = 0
        while next < nodes.count {
            if explored >= limit {
                return false
            }
            waiting = next + 1
            if replacedBy[next] < 0 {
                expand(next)
                explored += 1
            }
            next += 1
        }
        return true
    }

    /// The discrete part of a node: the session without its times, and the properties'
    /// monitors (the session was cleared or revoked and no IdP login came since; the biometric
    /// enrollment changed and no IdP login came since; the user's properties, in their order).
    struct Discrete: Hashable {
        var session: SessionKey
        var cleared: Bool
        var enrollmentChanged: Bool
        var monitors: [Monitor]
    }

    /// The discrete parts met so far, by id: nodes, classes and groups name theirs by id.
    private var discretes: [Discrete] = []
    private var discreteIDs: [Discrete: Int32] = [:]
    /// The nodes of each discrete part, by id: a new zone inside one of theirs adds nothing.
    private var byDiscrete: [[Int]] = []
    /// Each node's discrete part, by id.
    private var nodeDiscrete: [Int32] = []
    private var index: [NodeKey: Int] = [:]
    /// Each node's depth: the steps of its shortest path from `signed_out`.
    private var depth: [Int] = []
    /// For a node replaced before it was expanded, the node that replaced it (else -1): a node
    /// of the same depth and discrete part whose zone includes its zone, so it has every future
    /// the replaced one has (UPPAAL's waiting list does the same).
    private var replacedBy: [Int] = []
    /// The first node not expanded yet.
    private var waiting = 0
    /// Nodes expanded.
    private(set) var explored = 0

    /// A node's identity: its discrete part's id and its zone, hashed once.
    struct NodeKey: Hashable {
        var discrete: Int32
        var zone: Zone
        var zoneHash: Int

        init(_ discrete: Int32, _ zone: Zone) {
            self.discrete = discrete
            self.zone = zone
            zoneHash = zone.hashValue
        }

        func hash(into h: inout Hasher) {
            h.combine(discrete)
            h.combine(zoneHash)
        }

        static func == (a: NodeKey, b: NodeKey) -> Bool {
            a.discrete == b.discrete && a.zoneHash == b.zoneHash && a.zone == b.zone
        }
    }

    private func discreteID(_ d: Discrete) -> Int32 {
        if let id = discreteIDs[d] { return id }
        let id = Int32(discretes.count)
        discretes.append(d)
        discreteIDs[d] = id
        byDiscrete.append([])
        slots.append([])
        discreteSession.append(sessionID(d.session))
        return id
    }

    /// The session keys met so far, by id; each discrete part's, by the part's id.
    private var sessionIDs: [SessionKey: Int32] = [:]
    private var discreteSession: [Int32] = []

    private func sessionID(_ k: SessionKey) -> Int32 {
        if let id = sessionIDs[k] { return id }
        let id = Int32(sessionIDs.count)
        sessionIDs[k] = id
        return id
    }

    /// The node with this discrete part and zone, or one with the same discrete part whose zone includes it.
    private func find(_ key: NodeKey) -> Int? {
        if var i = index[key] {
            while replacedBy[i] >= 0 { i = replacedBy[i] }
            return i
        }
        for i in byDiscrete[Int(key.discrete)] where nodes[i].zone.includes(key.zone) { return i }
        return nil
    }

    /// Adds a node, which replaces the waiting nodes of its depth and discrete part inside its zone.
    private func add(_ key: NodeKey, from edge: Edge?) -> Int {
        let i = nodes.count
        let d = edge.map { depth[$0.from] + 1 } ?? 0
        let same = Int(key.discrete)
        byDiscrete[same].removeAll { j in
            guard j >= waiting, depth[j] == d, key.zone.includes(nodes[j].zone) else { return false }
            replacedBy[j] = i
            // Its future is the new node's: so is its way back to a usable session (`deadEnds`).
            links.append(UInt64(j) << 32 | UInt64(i))
            return true
        }
        nodes.append(Node(discrete: discretes[same], zone: key.zone))
        parent.append(edge)
        nodeDiscrete.append(key.discrete)
        depth.append(d)
        replacedBy.append(-1)
        index[key] = i
        byDiscrete[same].append(i)
        return i
    }

    /// A (state, event) pair of the machine: the transitions tried for that event in that state.
    struct StateEvent: Hashable {
        var state: MachineState
        var kind: EventKind
    }

    /// The answers a piece of a zone gives to the comparisons of a (state, event) group, in
    /// order: bit `k` is whether `age > θ` holds for atom `k`.
    struct Answers: Hashable {
        var bits: UInt64 = 0
        /// Atoms past the 64th, 64 to a word (none in the shipped policies).
        var more: [UInt64] = []
        var count = 0

        mutating func append(_ answer: Bool) {
            if count < 64 {
                if answer { bits |= 1 << UInt64(count) }
            } else {
                let k = count - 64
                if k % 64 == 0 { more.append(0) }
                if answer { more[k / 64] |= 1 << UInt64(k % 64) }
            }
            count += 1
        }
    }

    /// A class of steps as the engine sees it: from sessions with one discrete session part, an
    /// event kind at one timing, in one piece of the zone (`answers`: the answer to each
    /// comparison the group's guards make). Every step of a class takes the same transitions
    /// with the same facts, wherever the zone; the properties' monitors do not change that.
    struct EngineKey: Hashable {
        /// The session key's id (`sessionID`).
        var session: Int32
        var kind: EventKind
        var timing: Timing
        var answers: Answers
    }

    /// What the engine does in a class: its choices of facts, bunched by how they end.
    struct EngineClass {
        var kind: EventKind
        var timing: Timing
        /// The facts varied for the class's (state, event) group.
        var choices: [EventChoice]
        /// In order of their first choice.
        var bunches: [Bunch]
    }

    /// The choices of an engine class that end alike for the engine and for the properties'
    /// monitors: one transition, one next session, one network (when user properties watch it).
    struct Bunch {
        /// Indices into the class's choices, ascending.
        var choices: [Int32]
        var transition: Int
        var decision: Decision?
        var reason: Reason
        var next: SessionKey
        var network: Network?
        /// Whether the properties examine these choices' outcome (`allow`,
        /// `require_biometric`, or a clock set back where the clock check decided).
        var examined: Bool
    }

    private var engineIDs: [EngineKey: Int32] = [:]
    private var engineClasses: [EngineClass] = []

    /// What a discrete part's nodes do for one event kind at one timing, found once: the
    /// comparisons its group cuts at (`atomsID`), and the classes met so far, by their answers.
    struct Slot {
        static let unknown = -1
        /// A dated-back event of this kind does what one at the highest time seen does (`rollbackMatters`).
        static let skipped = -2
        var atoms = unknown
        var classes: [(answers: Answers, engine: Int32, groups: [Group])] = []
    }

    /// By discrete part's id, then event kind and timing.
    private var slots: [[Slot]] = []

    /// A class of steps: an engine class, from one discrete part (session and monitors).
    struct ClassKey: Hashable {
        var discrete: Int32
        var engine: Int32
    }

    /// The choices of facts of a class that end alike: one transition, one next discrete part.
    struct Group {
        /// The first choice that ends so: the one the step and its counterexample use.
        var choice: EventChoice
        var transition: Int
        var decision: Decision?
        var reason: Reason
        /// The next node's discrete part (session and monitors), by id.
        var next: Int32
        var nextSession: SessionKey
        /// The choices whose outcome the properties examine, as indices into the engine class's choices, ascending.
        var examined: [Int32]
        /// The user properties the step breaks.
        var breaks: [Int]
    }

    /// A property broken in a class, by one of its choices.
    struct Failure {
        var property: BuiltInProperty
        var detail: String
        var expected: Decision?
        /// The choice, as an index into the engine class's choices.
        var choice: Int32
    }

    /// The properties' key for a class cut further at the policy's limits: what `check` reads.
    struct BrokenKey: Hashable {
        var engine: Int32
        var cleared: Bool
        var enrollmentChanged: Bool
        var answers: Answers
    }

    /// The properties broken in each class cut further at the properties' limits.
    private var broken: [BrokenKey: [Failure]] = [:]
    /// The differences between the versions (`policyctl diff`) in each engine class.
    private var differing: [Int32: [(choice: EventChoice, old: Outcome, new: Outcome)]] = [:]
    /// Calls of `CompiledPolicy.evaluate` made while exploring.
    private(set) var evaluations = 0
    /// The comparisons each (state, event, recorded times, timing) group makes, as ids of `atomLists`.
    private var atomIDs: [AtomsKey: Int] = [:]
    private var atomLists: [[(Zone.Clock, Int64)]] = []

    struct AtomsKey: Hashable {
        var state: MachineState
        var kind: EventKind
        var times: UInt8
        var timing: Timing
    }

    /// The id of the comparisons cut for `kind` in sessions like `k` at `timing` (the event's
    /// own age only for an event dated back).
    private func atomsID(_ k: SessionKey, _ kind: EventKind, _ timing: Timing) -> Int {
        let key = AtomsKey(state: k.state, kind: kind, times: k.times, timing: timing)
        if let id = atomIDs[key] { return id }
        let list = atoms(k, kind).filter { timing == .rolledBack || $0.0 != .eventTime }
        let id = atomLists.firstIndex(where: { $0.elementsEqual(list, by: { $0.0 == $1.0 && $0.1 == $1.1 }) }) ?? atomLists.count
        if id == atomLists.count { atomLists.append(list) }
        atomIDs[key] = id
        return id
    }

    /// One piece of a node's zone for one timing and list of comparisons: shared by the event
    /// kinds that cut alike, with the successors and property cuts found in it.
    private struct Piece {
        var zone: Zone
        var answers: Answers
        /// The piece cut at the policy's limits (`examine`), once found.
        var parts: [(Zone, Answers)]?
        /// Successor zones by the effects of the transition taken: (zone before widening, widened).
        var successors: [(effects: UInt16, raw: Zone, key: NodeKey?, times: UInt8)] = []
        /// The nodes reached from this piece, by effects and next discrete part.
        var reached: [(effects: UInt16, discrete: Int32, node: Int)] = []
    }

    private func expand(_ i: Int) {
        let node = nodes[i]
        let d = nodeDiscrete[i]
        let sid = discreteSession[Int(d)]
        defer {
            targets.sort()
            var last = -1
            for t in targets where t != last {
                links.append(UInt64(i) << 32 | UInt64(t))
                last = t
            }
            targets.removeAll(keepingCapacity: true)
        }
        let session = node.session
        let set = session.clocks
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
            // The pieces of `z` for each list of comparisons: event kinds that cut alike share them.
            var cuts: [(atoms: Int, pieces: [Piece])] = []
            if slots[Int(d)].isEmpty { slots[Int(d)] = Array(repeating: Slot(), count: EventKind.allCases.count * 2) }
            for (k, kind) in EventKind.allCases.enumerated() {
                let slot = k * 2 + (timing == .forward ? 0 : 1)
                if slots[Int(d)][slot].atoms == Slot.unknown {
                    slots[Int(d)][slot].atoms =
                        timing == .forward || rollbackMatters.contains(StateEvent(state: session.state, kind: kind))
                        ? atomsID(session, kind, timing) : Slot.skipped
                }
                // Cut only where a guard of this (state, event) group looks: the fewer the cuts,
                // the larger the successor zones and the fewer of them.
                let atoms = slots[Int(d)][slot].atoms
                if atoms == Slot.skipped { continue }
                let c: Int
                if let known = cuts.firstIndex(where: { $0.atoms == atoms }) {
                    c = known
                } else {
                    cuts.append((atoms, pieces(z, atomLists[atoms]).map { Piece(zone: $0.0, answers: $0.1) }))
                    c = cuts.count - 1
                }
                for p in cuts[c].pieces.indices {
                    let answers = cuts[c].pieces[p].answers
                    var fresh = false
                    let engine: Int32
                    let groups: [Group]
                    if let known = slots[Int(d)][slot].classes.first(where: { $0.answers == answers }) {
                        (engine, groups) = (known.engine, known.groups)
                    } else {
                        let ekey = EngineKey(session: sid, kind: kind, timing: timing, answers: answers)
                        if let e = engineIDs[ekey] {
                            engine = e
                        } else {
                            engine = classify(session, cuts[c].pieces[p].zone, set, kind, timing, answers)
                            engineIDs[ekey] = engine
                            fresh = true
                        }
                        groups = group(ClassKey(discrete: d, engine: engine))
                        slots[Int(d)][slot].classes.append((answers, engine, groups))
                    }
                    for g in groups.indices {
                        follow(i, node, &cuts[c].pieces[p], set, timing, groups[g], engine: engine, check: selfCheck || fresh)
                    }
                    if other != nil {
                        let piece = cuts[c].pieces[p].zone
                        for x in differing[engine] ?? [] where divergenceKinds.insert([x.old.transition, x.new.transition]).inserted {
                            let edge = Edge(
                                from: i, choice: x.choice, timing: timing, piece: piece, transition: x.old.transition,
                                decision: x.old.decision, reason: x.old.reason)
                            divergences.append(Divergence(edge: edge, old: x.old, new: x.new))
                        }
                    }
                    if groups.contains(where: { !$0.examined.isEmpty }) {
                        examine(i, node, &cuts[c].pieces[p], set, timing, ClassKey(discrete: d, engine: engine), groups)
                    }
                }
            }
        }
    }

    /// A point of `piece` and the session and event time there: where a class is evaluated.
    func point(_ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock]) -> (Ages, SessionState, Timestamp) {
        let ages = piece.point(set + [.eventTime])
        return (ages, concrete(session, ages), Timestamp(millisecondsSinceEpoch: Self.now - (ages[.eventTime] ?? 0)))
    }

    /// The engine class of `kind` at `timing` from sessions like `session`, in the piece with
    /// `answers`: found by evaluating every choice of facts at one point of the piece, or, when
    /// a session that the group's guards cannot tell from this one was classified already, by
    /// evaluating one choice of each of its bunches here (`Template`). Returns the class's id.
    private func classify(
        _ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock], _ kind: EventKind, _ timing: Timing, _ answers: Answers
    ) -> Int32 {
        let pkey = EngineKey(session: sessionID(projected(session, kind)), kind: kind, timing: timing, answers: answers)
        if other == nil, let template = templates[pkey] {
            if let derived = classify(session, piece, set, kind, timing, template) {
                if selfCheck {
                    let (full, _) = classifyAll(session, piece, set, kind, timing)
                    if !Self.same(full, derived) {
                        inconsistencies.append(
                            "`\(kind.rawValue)` in `\(session.state.rawValue)`: a class's bunches differ from its template's")
                    }
                }
                engineClasses.append(derived)
                return Int32(engineClasses.count - 1)
            }
            inconsistencies.append(
                "`\(kind.rawValue)` in `\(session.state.rawValue)`: a choice takes another transition than its template's")
        }
        let (full, fine) = classifyAll(session, piece, set, kind, timing)
        if other == nil && templates[pkey] == nil {
            templates[pkey] = Template(choices: full.choices, fine: fine.map(\.choices), transitions: fine.map(\.transition))
        }
        engineClasses.append(full)
        return Int32(engineClasses.count - 1)
    }

    /// The choices of facts of a class of sessions the (state, event) group's guards cannot tell
    /// apart, in fine bunches: the choices of each take one transition and, from any session of
    /// that class, lead to one next discrete session (same transition, same next session from
    /// the first session, same network; and where the transition establishes a session, the
    /// same presence of user and device and the same auth mode, the facts it records).
    struct Template {
        var choices: [EventChoice]
        /// Each ascending; in order of their first choice.
        var fine: [[Int32]]
        /// The transition each fine bunch takes.
        var transitions: [Int]
    }

    private var templates: [EngineKey: Template] = [:]

    /// The class from `template`: the first choice of each fine bunch evaluated from `session`
    /// at one point of the piece, the fine bunches that end alike merged. Nil when a choice takes
    /// another transition than its template's (then the projection missed a fact; never in a
    /// correct build, checked with `selfCheck`).
    private func classify(
        _ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock], _ kind: EventKind, _ timing: Timing, _ template: Template
    ) -> EngineClass? {
        let (_, state, time) = point(session, piece, set)
        var bunches: [Bunch] = []
        for (f, fine) in template.fine.enumerated() {
            let choice = template.choices[Int(fine[0])]
            var next = state
            let verdict = policy.evaluate(&next, event(choice, at: time, for: state))
            evaluations += 1
            guard verdict.transition == template.transitions[f] else { return nil }
            let b = bunch(fine, verdict, key(next), choice, timing)
            if let i = bunches.firstIndex(where: { $0.transition == b.transition && $0.next == b.next && $0.network == b.network }) {
                bunches[i].choices = Self.merged(bunches[i].choices, fine)
            } else {
                bunches.append(b)
            }
        }
        return EngineClass(kind: kind, timing: timing, choices: template.choices, bunches: bunches)
    }

    /// Every choice of facts evaluated at one point of the piece: the class, and its fine bunches (`Template`).
    private func classifyAll(
        _ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock], _ kind: EventKind, _ timing: Timing
    ) -> (EngineClass, [(choices: [Int32], transition: Int)]) {
        let (_, state, time) = point(session, piece, set)
        var late: (SessionState, Timestamp)?
        if other != nil {
            // A difference in the times a step records shows only where time has passed:
            // compare the versions at the class's latest point too.
            let a = piece.point(Array((set + [.eventTime]).reversed()), largest: 366 * 86_400_000)
            late = (concrete(session, a), Timestamp(millisecondsSinceEpoch: Self.now - (a[.eventTime] ?? 0)))
        }
        let list = choices[state.state]?[kind] ?? []
        var bunches: [Bunch] = []
        var fine: [(choices: [Int32], transition: Int)] = []
        var fineKeys: [FineKey] = []
        var differ: [(choice: EventChoice, old: Outcome, new: Outcome)] = []
        var differKinds: Set<[Int]> = []
        for (c, choice) in list.enumerated() {
            let e = event(choice, at: time, for: state)
            var next = state
            let verdict = policy.evaluate(&next, e)
            evaluations += 1
            if let other {
                let outcome = Outcome(verdict, state: next)
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
            let b = bunch([Int32(c)], verdict, key(next), choice, timing)
            if let i = bunches.firstIndex(where: { $0.transition == b.transition && $0.next == b.next && $0.network == b.network }) {
                bunches[i].choices.append(Int32(c))
            } else {
                bunches.append(b)
            }
            let establishes = b.transition >= 0 && machine.transitions[b.transition].action.effects.contains(.establish)
            let f = FineKey(
                transition: b.transition, next: b.next, network: b.network,
                records: establishes ? .init(user: choice.user != .none, device: choice.device != .none, authMode: choice.authMode) : nil)
            if let i = fineKeys.firstIndex(of: f) {
                fine[i].choices.append(Int32(c))
            } else {
                fineKeys.append(f)
                fine.append(([Int32(c)], b.transition))
            }
        }
        if other != nil { differing[Int32(engineClasses.count)] = differ }
        return (EngineClass(kind: kind, timing: timing, choices: list, bunches: bunches), fine)
    }

    /// What makes a fine bunch (`Template`).
    struct FineKey: Equatable {
        var transition: Int
        var next: SessionKey
        var network: Network?
        /// For a transition that establishes a session: the facts it records.
        var records: Recorded?

        /// Whether the event names a user and a device, and its auth mode.
        struct Recorded: Equatable {
            var user: Bool
            var device: Bool
            var authMode: AuthMode?
        }
    }

    /// A bunch of `choices`, which the engine decided as `verdict`, to the next session `next`.
    private func bunch(_ choices: [Int32], _ verdict: Verdict, _ next: SessionKey, _ choice: EventChoice, _ timing: Timing) -> Bunch {
        let t = verdict.transition
        // `clock-rollback` needs a look only where the clock check decided: every other guard
        // measures time from the highest time seen, so the same event at that time takes the
        // same transition. And a `wipe` cannot be more permissive than anything.
        var clockDecided = false
        if t >= 0, case .clockRolledBack = machine.transitions[t].guard { clockDecided = verdict.decision != .wipe }
        let examined = verdict.decision == .allow || verdict.decision == .requireBiometric || (timing == .rolledBack && clockDecided)
        // The monitors of user properties see the network; the built-in properties do not.
        return Bunch(
            choices: choices, transition: t, decision: verdict.decision, reason: verdict.reason, next: next,
            network: properties.isEmpty ? nil : choice.network, examined: examined)
    }

    /// Two ascending lists merged into one.
    static func merged(_ a: [Int32], _ b: [Int32]) -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(a.count + b.count)
        var (i, j) = (0, 0)
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] < b[j]) {
                out.append(a[i])
                i += 1
            } else {
                out.append(b[j])
                j += 1
            }
        }
        return out
    }

    /// The decision a class makes for choice `c`: its bunch's.
    static func decision(of c: Int32, in e: EngineClass) -> Decision?? {
        for b in e.bunches {
            var (lo, hi) = (0, b.choices.count)
            while lo < hi {
                let mid = (lo + hi) / 2
                if b.choices[mid] < c { lo = mid + 1 } else { hi = mid }
            }
            if lo < b.choices.count && b.choices[lo] == c { return .some(b.decision) }
        }
        return nil
    }

    /// Whether two classes bunch their choices alike.
    static func same(_ a: EngineClass, _ b: EngineClass) -> Bool {
        a.bunches.count == b.bunches.count
            && zip(a.bunches, b.bunches).allSatisfy {
                $0.choices == $1.choices && $0.transition == $1.transition && $0.next == $1.next && $0.network == $1.network
                    && $0.decision == $1.decision && $0.reason == $1.reason && $0.examined == $1.examined
            }
    }

    /// The session fields the guards of `kind` in a state read, in either version; the others
    /// cannot change which transition decides.
    private func projected(_ k: SessionKey, _ kind: EventKind) -> SessionKey {
        let key = StateEvent(state: k.state, kind: kind)
        let reads: SessionFields
        if let known = sessionReads[key] {
            reads = known
        } else {
            var r: SessionFields = []
            for m in [machine] + (other.map { [$0.machine] } ?? []) {
                for t in m.transitions(from: k.state, on: kind) { r.formUnion(Self.sessionReads(t.guard, m)) }
            }
            sessionReads[key] = r
            reads = r
        }
        var p = k
        if !reads.contains(.authMode) { p.authMode = nil }
        if !reads.contains(.readOnly) { p.readOnly = false }
        if !reads.contains(.biometricLocked) { p.biometricLocked = false }
        if !reads.contains(.user) { p.hasUser = false }
        if !reads.contains(.device) { p.hasDevice = false }
        if !reads.contains(.biometricFailures) { p.failures[0] = 0 }
        if !reads.contains(.offlineFailures) { p.failures[1] = 0 }
        if !reads.contains(.idpFailures) { p.failures[2] = 0 }
        return p
    }

    private var sessionReads: [StateEvent: SessionFields] = [:]

    /// Fields of a session besides its state and times (`SessionKey`).
    struct SessionFields: OptionSet, Hashable {
        var rawValue: UInt8
        static let authMode = SessionFields(rawValue: 1 << 0)
        static let readOnly = SessionFields(rawValue: 1 << 1)
        static let biometricLocked = SessionFields(rawValue: 1 << 2)
        static let user = SessionFields(rawValue: 1 << 3)
        static let device = SessionFields(rawValue: 1 << 4)
        static let biometricFailures = SessionFields(rawValue: 1 << 5)
        static let offlineFailures = SessionFields(rawValue: 1 << 6)
        static let idpFailures = SessionFields(rawValue: 1 << 7)
    }

    /// The session fields a guard reads (`StateMachine.holds`). Times are compared through the
    /// piece's answers; a switched guard judges its inner guard against a cleared session.
    static func sessionReads(_ g: Guard, _ m: StateMachine) -> SessionFields {
        switch g {
        case .authModeMissing, .authModeNeedsIdP, .authModeNotOffline, .authModeIs: return .authMode
        case .biometricLocked: return [.biometricLocked, .authMode]
        case let .failureLimitReached(path, _):
            switch path {
            case .biometric: return .biometricFailures
            case .offlineLogin: return .offlineFailures
            case .idpLogin: return .idpFailures
            }
        case .differentUser: return .user
        case .differentDevice: return .device
        case let .rule(i), let .ruleFactMissing(i): return conditionSessionReads(m.rules[i].condition)
        case let .switched(kind, _): return sessionReads(kind.trigger, m)
        case .always, .deviceCompromised, .clockRolledBack, .sessionMaxExceeded, .idleExceeded, .offlineWindowExceeded,
            .keystoreNotHardware, .networkOffline, .refreshCause, .unsyncedItems, .appNotTrusted:
            return []
        }
    }

    static func conditionSessionReads(_ c: Condition) -> SessionFields {
        switch c {
        case let .and(a, b), let .or(a, b): return conditionSessionReads(a).union(conditionSessionReads(b))
        case let .not(a): return conditionSessionReads(a)
        case let .number(f, _, _), let .oneOf(f, _, _), let .version(f, _, _):
            switch f {
            case .authMode: return .authMode
            case .readOnly: return .readOnly
            case .biometricFailures: return .biometricFailures
            case .offlineFailures: return .offlineFailures
            case .idpFailures: return .idpFailures
            case .event, .state, .network, .keystore, .integrity, .sinceIdPLogin, .sinceOnline, .sinceActivity, .attribute:
                return []
            }
        }
    }

    /// The groups of a class: its engine class's bunches, each with the next discrete part it
    /// leads to from the class's discrete part, merged where they end alike.
    private func group(_ key: ClassKey) -> [Group] {
        let from = discretes[Int(key.discrete)]
        let e = engineClasses[Int(key.engine)]
        var groups: [Group] = []
        for b in e.bunches {
            let id = b.transition
            var cleared = from.cleared
            var enrollment = from.enrollmentChanged
            var monitors = from.monitors
            var breaks: [Int] = []
            if id >= 0 {
                let fx = machine.transitions[id].action.effects
                if fx.contains(.establish) {
                    // A login that switches the session wipes the old one and establishes the new.
                    // Only an IdP login ends `enrollment-change`'s watch: an adopted device
                    // session is no IdP login, and neither a wipe nor a sign-out ends it.
                    cleared = false
                    if e.kind == .idpLoginSucceeded { enrollment = false }
                } else if b.decision == .wipe || fx.contains(.clearSession) || e.kind == .tokensRevoked
                    || e.kind == .accountDeactivated
                {
                    cleared = true
                }
                if e.kind == .biometricEnrollmentChanged { enrollment = true }
                if !properties.isEmpty {
                    let seen = ObservedStep(
                        kind: e.kind, network: b.network, decision: b.decision, reason: b.reason, from: from.session.state,
                        to: b.next.state)
                    for (j, p) in properties.enumerated() {
                        let (m, broken) = monitors[j].next(p, seen)
                        monitors[j] = m
                        if broken { breaks.append(j) }
                    }
                }
            }
            let next = discreteID(Discrete(session: b.next, cleared: cleared, enrollmentChanged: enrollment, monitors: monitors))
            if let g = groups.firstIndex(where: { $0.transition == id && $0.next == next && $0.breaks == breaks }) {
                if b.examined { groups[g].examined += b.choices }
            } else {
                groups.append(
                    Group(
                        choice: e.choices[Int(b.choices[0])], transition: id, decision: b.decision, reason: b.reason, next: next,
                        nextSession: b.next, examined: b.examined ? b.choices : [], breaks: breaks))
            }
        }
        for g in groups.indices { groups[g].examined.sort() }
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
    func pieces(_ zone: Zone, _ atoms: [(Zone.Clock, Int64)]) -> [(Zone, Answers)] {
        var out = [(zone, Answers())]
        for (c, theta) in atoms {
            var next: [(Zone, Answers)] = []
            for (z, answers) in out {
                let (above, notAbove) = z.split(c, above: theta)
                if let a = above {
                    var yes = answers
                    yes.append(true)
                    next.append((a, yes))
                }
                if let b = notAbove {
                    var no = answers
                    no.append(false)
                    next.append((b, no))
                }
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

    /// Follows one group of a class from node `i` in `piece`: the symbolic successor (found
    /// once per piece and effects) is widened and inserted. With `check` (the class was just
    /// evaluated here, or `selfCheck`), the engine decides the group's choice at this piece's
    /// point, which must take the class's transition to the class's next session, inside the
    /// symbolic successor.
    private func follow(
        _ i: Int, _ node: Node, _ piece: inout Piece, _ set: [Zone.Clock], _ timing: Timing, _ group: Group,
        engine: Int32, check: Bool
    ) {
        steps += 1
        let id = group.transition
        var outcome: Outcome?
        if check {
            let (_, state, time) = point(node.session, piece.zone, set)
            let o = policy.evaluate(state, event(group.choice, at: time, for: state))
            evaluations += 1
            if o.transition != id || key(o.state) != group.nextSession {
                inconsistencies.append("transition \(id): a class ends otherwise in another zone")
            }
            outcome = o
        }
        guard id >= 0 else {
            // A refused event changes nothing: a step back to the same node.
            targets.append(i)
            return
        }
        let zone = piece.zone
        let edge = {
            Edge(
                from: i, choice: group.choice, timing: timing, piece: zone, transition: id, decision: group.decision,
                reason: group.reason)
        }
        taken[id] = true
        if takingCount[id] < Self.takingKept {
            takingCount[id] += 1
            taking[id, default: []].append(edge())
        }
        let effects = machine.transitions[id].action.effects.rawValue
        let s: Int
        if let known = piece.successors.firstIndex(where: { $0.effects == effects }) {
            s = known
        } else {
            let (zone, times) = successor(node, piece.zone, id)
            piece.successors.append((effects, zone, nil, times))
            s = piece.successors.count - 1
        }
        let times = piece.successors[s].times
        if group.nextSession.times != times {
            inconsistencies.append(
                "transition \(id): the engine records times \(group.nextSession.clocks), verify \(SessionKey.clocks(times))")
        }
        if let o = outcome, let h = Explorer.highest(o.state) {
            var nextAges = Ages()
            for (c, t) in Self.times(o.state) { nextAges[c] = h - t }
            if !piece.successors[s].raw.contains(nextAges) {
                inconsistencies.append("transition \(id): the engine's successor is outside verify's zone")
            }
        }
        if piece.successors[s].key == nil {
            var wide = piece.successors[s].raw
            wide.extrapolate(bounds)
            piece.successors[s].key = NodeKey(0, wide)
        }
        let to: Int
        if let known = piece.reached.first(where: { $0.effects == effects && $0.discrete == group.next }) {
            to = known.node
        } else {
            var nodeKey = piece.successors[s].key!
            nodeKey.discrete = group.next
            to = find(nodeKey) ?? add(nodeKey, from: edge())
            piece.reached.append((effects, group.next, to))
        }
        for j in group.breaks where userViolations[j] == nil { userViolations[j] = edge() }
        targets.append(to)
    }

    /// Checks the properties on the class's examined choices, in each part of `piece` cut at the
    /// policy's limits (found once per engine class, session flags and part); records the first
    /// violation of each.
    private func examine(
        _ i: Int, _ node: Node, _ piece: inout Piece, _ set: [Zone.Clock], _ timing: Timing, _ key: ClassKey, _ groups: [Group]
    ) {
        let e = engineClasses[Int(key.engine)]
        // The properties compare ages with the policy's limits only for an `allow` that does
        // not establish a session: elsewhere the piece needs no cutting.
        let parts: [(Zone, Answers)]
        if e.bunches.contains(where: {
            $0.examined && $0.decision == .allow && $0.transition >= 0
                && !machine.transitions[$0.transition].action.effects.contains(.establish)
        }) {
            if piece.parts == nil { piece.parts = pieces(piece.zone, propertyAtoms(node.session)) }
            parts = piece.parts!
        } else {
            parts = [(piece.zone, Answers())]
        }
        for (sub, answers) in parts {
            let k = BrokenKey(engine: key.engine, cleared: node.cleared, enrollmentChanged: node.enrollmentChanged, answers: answers)
            let found: [Failure]
            if let known = broken[k] {
                found = known
            } else {
                let (ages, state, time) = point(node.session, sub, set)
                // Where the clock was set back: the class of the same event at the highest time
                // seen (the forward class of this point's ages, if explored), which tells each
                // choice's decision there.
                var atNow: Int32?
                if timing == .rolledBack {
                    var forward = Answers()
                    for (c, theta) in atomLists[atomsID(node.session, e.kind, .forward)] { forward.append((ages[c] ?? 0) > theta) }
                    let sid = discreteSession[Int(key.discrete)]
                    atNow = engineIDs[EngineKey(session: sid, kind: e.kind, timing: .forward, answers: forward)]
                }
                var list: [Failure] = []
                for b in e.bunches where b.examined {
                    // The properties read a choice only through its network and, where the clock
                    // was set back, its decision at the highest time seen.
                    var seen: [(Network?, Decision?)] = []
                    for c in b.choices {
                        let choice = e.choices[Int(c)]
                        var truth: Decision?
                        if timing == .rolledBack {
                            let known = atNow.flatMap { Self.decision(of: c, in: engineClasses[Int($0)]) }
                            if let known, !selfCheck {
                                truth = known
                            } else {
                                var now = state
                                truth =
                                    policy.evaluate(&now, event(choice, at: Timestamp(millisecondsSinceEpoch: Self.now), for: state))
                                    .decision
                                evaluations += 1
                                if let known, known != truth {
                                    inconsistencies.append(
                                        "`\(e.kind.rawValue)`: a choice decides otherwise at the highest time seen than its class")
                                }
                            }
                        }
                        if !selfCheck {
                            if seen.contains(where: { $0.0 == choice.network && $0.1 == truth }) { continue }
                            seen.append((choice.network, truth))
                        } else {
                            evaluations += 1
                            var next = state
                            if policy.evaluate(&next, event(choice, at: time, for: state)).transition != b.transition {
                                inconsistencies.append("transition \(b.transition): another transition decides inside its class")
                            }
                        }
                        for f in check(node, ages, state, e.kind, choice.network, b, timing: timing, truth: truth) {
                            list.append(Failure(property: f.0, detail: f.1, expected: f.2, choice: c))
                        }
                    }
                }
                broken[k] = list
                found = list
            }
            if found.isEmpty { continue }
            // The first failure of each property in the order of the groups and their choices.
            func rank(_ f: Failure) -> (Int, Int32) {
                (groups.firstIndex(where: { $0.examined.contains(f.choice) }) ?? groups.count, f.choice)
            }
            for f in found where violations[f.property] == nil {
                let first = found.filter { $0.property == f.property }.min { rank($0) < rank($1) }!
                let g = groups[min(rank(first).0, groups.count - 1)]
                let edge = Edge(
                    from: i, choice: e.choices[Int(first.choice)], timing: timing, piece: sub, transition: g.transition,
                    decision: g.decision, reason: g.reason)
                violations[f.property] = Violation(property: f.property, edge: edge, detail: first.detail, expected: first.expected)
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

    /// The properties a step breaks (the engine decided `event` from `state` by `bunch`'s
    /// transition), as (property, what went wrong, the decision it should have had).
    ///
    /// `truth`, where the clock was set back, is the decision of the same event at the highest time seen.
    private func check(
        _ node: Node, _ ages: Ages, _ state: SessionState, _ kind: EventKind, _ network: Network?, _ outcome: Bunch,
        timing: Timing, truth: Decision?
    ) -> [(BuiltInProperty, String, Decision?)] {
        let establishes = outcome.transition >= 0 && machine.transitions[outcome.transition].action.effects.contains(.establish)
        var out: [(BuiltInProperty, String, Decision?)] = []
        func fail(_ p: BuiltInProperty, _ detail: String, expected: Decision? = .idpLogin) { out.append((p, detail, expected)) }
        let p = policy.policy
        let offline = network != .online
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
            if node.enrollmentChanged && kind == .biometricSucceeded {
                fail(.enrollmentChange, "`allow` by a biometric prompt after the enrollment changed")
            }
        }
        if (outcome.decision == .allow || outcome.decision == .requireBiometric) && node.cleared && !establishes {
            fail(.clearedUntilLogin, "`\(outcome.decision!.rawValue)` after the session was cleared or revoked, before an IdP login")
        }
        if outcome.transition < 0 && outcome.reason != .invalidEvent {
            fail(.total, "no transition decided `\(kind.rawValue)` in `\(state.state.rawValue)`", expected: nil)
        }
        if timing == .rolledBack, let d = outcome.decision, let truth, d.permissiveness > truth.permissiveness {
            fail(
                .clockRollback,
                "an event dated before the highest time seen gets `\(d.rawValue)`, the same event at that time `\(truth.rawValue)`",
                expected: truth)
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
