import SessionPolicy

/// Explores every session state a compiled machine can reach from `signed_out`, under every
/// sequence of events, every choice of the facts they carry, and every timing (docs/verify.md,
/// "What verify proves"). Each abstract state is a discrete part (the session without its times,
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

    var nodes: [Node] = []

    /// The edge that first reached each node (nil for the start): shortest paths, breadth first.
    var parent: [Edge?] = []

    /// The graph of abstract states, as `from << 32 | to`, each link once.
    var links: [UInt64] = []

    /// The nodes the steps of the node being expanded lead to, with repeats.
    var targets: [Int] = []

    /// Steps explored: (state, event facts, class of timings) triples the engine decided.
    var steps = 0

    /// Whether each transition was taken, by id.
    var taken: [Bool]

    /// The transitions some step took.
    var takenTransitions: Set<Int> { Set(taken.indices.filter { taken[$0] }) }

    /// The first steps (breadth first: on shortest paths) that took each transition, up to
    /// `Self.takingKept`: covering runs try them in turn until one replays at concrete times.
    var taking: [Int: [Edge]] = [:]

    var takingCount: [Int]

    static let takingKept = 16

    var violations: [BuiltInProperty: Violation] = [:]

    /// Disagreements between the symbolic successor and the engine's: each one a bug in verify.
    var inconsistencies: [String] = []

    /// The largest constant a guard compares each age with, in milliseconds, by clock (`Zone.extrapolate`).
    let bounds: [Int64]

    /// The highest failure count the guards tell apart; counts above are the same.
    let failureCap: Int

    /// The event facts varied for each (state, event) pair:
    /// those its guards read, those a session is established from, the network (the
    /// properties read it), and each required fact absent once.
    let choices: [MachineState: [EventKind: [EventChoice]]]

    /// The (state, event) pairs where an event dated before the highest time seen can end
    /// otherwise than one at that time: a clock check reads the event's own time, or an effect
    /// records it (an IdP login, an online validation). Elsewhere the engine measures everything
    /// from the highest time seen, so a rolled-back event does what the same event does with no
    /// time passed, a step the forward timing already explores.
    let rollbackMatters: Set<StateEvent>

    /// The time every exploring evaluation takes as `now`: far enough from the epoch that any
    /// age fits (ages are at most a few times the largest constant, itself at most 36,600 days).
    static let now: Int64 = 100_000_000_000_000

    /// The user's properties, checked by their monitors (their attribute values bound to the policy's types).
    let properties: [UserProperty]

    /// The attributes and elapsed times the user's properties watch (`Explorer+Watch.swift`).
    let watch: Watch

    /// The first step that broke each user property, by index.
    var userViolations: [Int: Edge] = [:]

    /// With `policyctl diff`: the new version, evaluated beside `policy` at every class; the
    /// classes cut, and the facts varied, for both machines' guards.
    let other: CompiledPolicy?

    /// The outcomes where `other` first differs from `policy`, by class.
    /// The first step of each kind of difference (by the two transitions that decided).
    var divergences: [Divergence] = []

    /// The kinds of difference found, by `pairKey`.
    var divergenceKinds: Set<Int> = []

    /// Whether the actions of a pair of transitions (this version's, the other's) are alike, by `pairKey` (`mayDiffer`).
    var actionsAlike: [Int: Bool] = [:]

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
        /// The session and the event the outcomes were found at (a point of the edge's class).
        var before: SessionState
        var event: Event
    }

    /// A choice of a class that the versions decide otherwise, at one point of the class.
    struct Difference {
        var choice: EventChoice
        var old: Outcome
        var new: Outcome
        var before: SessionState
        var event: Event
    }

    /// Whether every step, not only the first of each class, is evaluated by the engine and
    /// checked against the class and the symbolic successor (`policyctl verify --self-check`).
    let selfCheck: Bool

    init(_ policy: CompiledPolicy, properties: [UserProperty] = [], other: CompiledPolicy? = nil, selfCheck: Bool = false) {
        self.policy = policy
        self.selfCheck = selfCheck
        taken = Array(repeating: false, count: policy.machine.transitions.count)
        takingCount = Array(repeating: 0, count: policy.machine.transitions.count)
        self.properties = properties.map { $0.bound(to: policy.machine.attributes) }
        let watch = Watch(properties, policy.machine)
        self.watch = watch
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
        // And the user properties' bounds: each is a cut, on its clock or the last IdP login it falls back to.
        for (_, cuts) in watch.cuts {
            for (clock, theta) in cuts {
                let own: Zone.Clock = clock == .sinceIdPLogin ? .lastIdPLogin : clock == .sinceOnline ? .lastOnline : .lastActivity
                limits[own, default: []].insert(theta)
                limits[.lastIdPLogin, default: []].insert(theta)
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
            for kind in EventKind.allCases {
                choices[state, default: [:]][kind] = Self.eventChoices(machines, state, kind, watch: watch)
            }
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

    /// The discrete parts met so far, by id: nodes, classes and branches name theirs by id.
    var discretes: [Discrete] = []

    var discreteIDs: [Discrete: Int32] = [:]

    /// The nodes of each discrete part, by id: a new zone inside one of theirs adds nothing.
    var byDiscrete: [[Int]] = []

    /// Each node's discrete part, by id.
    var nodeDiscrete: [Int32] = []

    var index: [NodeKey: Int] = [:]

    /// Each node's depth: the steps of its shortest path from `signed_out`.
    var depth: [Int] = []

    /// For a node replaced before it was expanded, the node that replaced it (else -1): a node
    /// of the same depth and discrete part whose zone includes its zone, so it has every future
    /// the replaced one has (UPPAAL's waiting list does the same).
    var replacedBy: [Int] = []

    /// The first node not expanded yet.
    var waiting = 0

    /// Nodes expanded.
    var explored = 0

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

    /// The session keys met so far, by id; each discrete part's, by the part's id.
    var sessionIDs: [SessionKey: Int32] = [:]

    var discreteSession: [Int32] = []

    var engineIDs: [EngineKey: Int32] = [:]

    var engineClasses: [EngineClass] = []

    /// By discrete part's id, then event kind and timing.
    var slots: [[Slot]] = []

    /// The properties broken in each class cut further at the properties' limits.
    var broken: [BrokenKey: [Failure]] = [:]

    /// The differences between the versions (`policyctl diff`) in each engine class.
    var differing: [Int32: [Difference]] = [:]

    /// Calls of `CompiledPolicy.evaluate` made while exploring.
    var evaluations = 0

    /// The comparisons each (state, event, recorded times, timing) makes, as ids of `atomLists`.
    var atomIDs: [AtomsKey: Int] = [:]

    var atomLists: [[(Zone.Clock, Int64)]] = []

    var templates: [EngineKey: Template] = [:]

    var sessionReads: [StateEvent: SessionFields] = [:]
}
