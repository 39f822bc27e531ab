/// What a picture of the machine (`compile --format dot|mermaid`) shows: a focus (a state, an
/// event, a lever; each optional, together they narrow) and the level of detail.
package struct PictureOptions: Sendable, Hashable {
    /// Only the transitions from or to this state.
    package var state: MachineState?
    /// Only the transitions on this event.
    package var event: EventKind?
    /// Only the transitions that name this lever (a policy key such as `offline.window`,
    /// `rules.NAME` or `built-in`; one of `StateMachine.levers`).
    package var lever: String?
    /// Every transition as its own edge, rather than the summary.
    package var full: Bool
    /// The ids of the transitions that can happen (the reachable ones `policyctl verify` finds);
    /// nil when not known, and every transition is drawn.
    package var live: Set<Int>?
    /// Draw the transitions that cannot happen too, grey and dotted, rather than leave them out.
    package var showDead: Bool
    /// Whether reachability was sought and is not known (the exploration stopped at its limit):
    /// the legend says every transition is drawn.
    package var reachabilityUnknown: Bool

    package init(
        state: MachineState? = nil, event: EventKind? = nil, lever: String? = nil, full: Bool = false, live: Set<Int>? = nil,
        showDead: Bool = false, reachabilityUnknown: Bool = false
    ) {
        self.state = state
        self.event = event
        self.lever = lever
        self.full = full
        self.live = live
        self.showDead = showDead
        self.reachabilityUnknown = reachabilityUnknown
    }

    /// Whether the picture is of a part of the machine.
    package var isFocused: Bool { state != nil || event != nil || lever != nil }

    /// Whether `t` cannot happen: reachability is known and leaves it out.
    func isDead(_ t: Transition) -> Bool { live.map { !$0.contains(t.id) } ?? false }

    /// Whether `t` of `machine` is in focus and drawn (a dead one only with `showDead`).
    func keeps(_ t: Transition, in machine: StateMachine) -> Bool {
        inFocus(t, in: machine) && (showDead || !isDead(t))
    }

    /// Whether `t` of `machine` is in focus, dead or not.
    package func inFocus(_ t: Transition, in machine: StateMachine) -> Bool {
        if let state, t.from != state, machine.target(t) != state { return false }
        if let event, t.event != event { return false }
        if let lever, !t.source.levers.contains(lever) { return false }
        return true
    }

    /// The legend's lines about what cannot happen: how many transitions in focus are left out
    /// or drawn grey, or that reachability is unknown.
    func deadNote(_ machine: StateMachine) -> [String] {
        if reachabilityUnknown { return ["reachability unknown (the exploration stopped): every transition drawn"] }
        let dead = machine.transitions.count { inFocus($0, in: machine) && isDead($0) }
        guard dead > 0 else { return [] }
        let count = "\(dead) transition\(dead == 1 ? "" : "s") that cannot happen"
        return showDead
            ? ["grey, dotted: \(count) (policyctl verify --dead)"]
            : ["\(count) left out (policyctl verify --dead; --show-dead draws them)"]
    }
}

extension StateMachine {
    /// The levers the transitions name, sorted: what a picture's `lever` focus accepts.
    package var levers: [String] { Set(transitions.flatMap(\.source.levers)).sorted() }
}

/// The summary picture of a machine, what `compile --format dot|mermaid` draws by default: one
/// edge per pair of states and decision, the events that stay in a state written in it; what
/// every state does alike (the
/// device checks, the fail-closed answers, reactions that are the same in every state) once,
/// from a node `any state`. Labels list the events, with the guards that pick the edge.
package struct MachinePicture: Sendable, Hashable {
    /// A node: a state, or `any state`.
    package enum Node: Sendable, Hashable, Comparable {
        case any
        case state(MachineState)

        /// The node's name in pictures.
        package var name: String {
            switch self {
            case .any: return "any state"
            case let .state(s): return s.rawValue
            }
        }
    }

    /// One edge: every transition it stands for leads from `from` to `to` with `decision` (nil:
    /// no decision). A loop (`from == to`) is drawn as lines in its node: the events that stay.
    package struct Edge: Sendable, Hashable {
        package var from: Node
        package var to: Node
        package var decision: Decision?
        /// The label, one line per check or group of events.
        package var lines: [String]
        /// The ids of the transitions it stands for.
        package var transitions: [Int]
        /// Whether none of them can happen (drawn only with `PictureOptions.showDead`).
        package var dead: Bool

        /// Whether it stays in its state.
        package var isLoop: Bool { from == to }
    }

    /// The nodes drawn: every state (and `any state` when an edge starts there), or with a
    /// focus those the edges touch and the focused state.
    package var nodes: [Node]
    /// The edges, loops included, by source, target and decision (no decision first).
    package var edges: [Edge]
    /// Whether an edge to `awaiting_idp` from `any state` also stands for the `idp_login`
    /// answers that stay in `signed_out` (the state to come back to when already signed out).
    package var signedOutStays: Bool
    /// The nodes only dead edges touch (drawn grey), with `PictureOptions.showDead`.
    package var deadNodes: Set<Node>
    /// The legend's lines about transitions that cannot happen (`PictureOptions.deadNote`).
    package var deadNote: [String]

    /// The edges between two nodes: what is drawn as arrows.
    package var arrows: [Edge] { edges.filter { !$0.isLoop } }

    /// The loops of `node`, by decision: what is written in it.
    package func loops(at node: Node) -> [Edge] { edges.filter { $0.isLoop && $0.from == node } }

    /// The summary of `machine`'s transitions that `options` keeps.
    package init(_ machine: StateMachine, options: PictureOptions = .init()) {
        let drawn = Self.anyStateTargets(machine)
        var byKey: [EdgeKey: [Transition]] = [:]
        var stays = false
        for t in machine.transitions where options.keeps(t, in: machine) {
            let from: Node
            var to: Node
            if let target = drawn[t.id], t.from != options.state {
                from = .any
                to = target
                if target == .state(.awaitingIdP), t.from == .signedOut { stays = true }
            } else {
                from = .state(t.from)
                to = .state(machine.target(t))
            }
            if to == .any { to = from }
            let key = EdgeKey(from: from, to: to, decision: Self.rank(t.action.decision), dead: options.isDead(t))
            byKey[key, default: []].append(t)
        }
        edges = byKey.keys.sorted().map { key in
            let ts = byKey[key]!
            return Edge(
                from: key.from, to: key.to, decision: ts[0].action.decision,
                lines: Self.lines(ts, in: machine, counting: { options.isDead($0) == key.dead }), transitions: ts.map(\.id),
                dead: key.dead)
        }
        var touched = Set(edges.flatMap { [$0.from, $0.to] })
        let live = Set(edges.filter { !$0.dead }.flatMap { [$0.from, $0.to] })
        if options.isFocused {
            if let s = options.state { touched.insert(.state(s)) }
            nodes = touched.sorted()
        } else if options.live != nil && !options.showDead {
            // Only the states something can happen in, and signed_out, where every session starts.
            nodes =
                (touched.contains(.any) ? [.any] : [])
                + MachineState.allCases.map(Node.state).filter {
                    touched.contains($0) || $0 == .state(.signedOut)
                }
        } else {
            nodes = (touched.contains(.any) ? [.any] : []) + MachineState.allCases.map(Node.state)
        }
        deadNodes = options.live == nil ? [] : Set(nodes.filter { !live.contains($0) && $0 != .state(.signedOut) })
        deadNote = options.deadNote(machine)
        signedOutStays = stays && edges.contains { $0.from == .any && $0.to == .state(.awaitingIdP) && !$0.dead }
    }

    struct EdgeKey: Hashable, Comparable {
        var from: Node
        var to: Node
        /// The decision's rank.
        var decision: Int
        /// Whether its transitions cannot happen: they are drawn apart.
        var dead: Bool

        static func < (a: Self, b: Self) -> Bool {
            (a.from, a.to, a.dead ? 1 : 0, a.decision) < (b.from, b.to, b.dead ? 1 : 0, b.decision)
        }
    }

    /// Decisions from the mildest to the strongest, no decision first.
    static func rank(_ d: Decision?) -> Int {
        switch d {
        case nil: 0
        case .allow?: 1
        case .requireBiometric?: 2
        case .idpLogin?: 3
        case .wipe?: 4
        }
    }

    // MARK: What is drawn once

    /// Checks every policy makes on many events in many states: the device checks (integrity,
    /// binding, single user, clock) and the fail-closed answers (no auth mode, a rule's missing
    /// fact, an event the state does not expect). Drawn once, by name, when they lead to the
    /// same place from every state they apply in.
    static func isCheck(_ t: Transition) -> Bool {
        switch t.guard {
        case .deviceCompromised, .differentDevice, .differentUser, .clockRolledBack, .authModeMissing, .ruleFactMissing: true
        case .always: t.action.reason == .unexpectedEvent
        default: false
        }
    }

    /// The transitions drawn from `any state`, with where they lead (`.any`: they stay where they
    /// are). A check (and a session switch on `idp_login_succeeded`) is drawn there when it
    /// leads to the same place from every state it applies in, and so is an event's guarded
    /// answer that is the same in every state. "The same place" counts an `idp_login` from
    /// `signed_out`, which stays there, as going to `awaiting_idp` like the others.
    static func anyStateTargets(_ m: StateMachine) -> [Int: Node] {
        struct GroupKey: Hashable {
            var event: EventKind?
            var `guard`: Guard
            var decision: Decision?
            var reason: Reason
        }
        var groups: [GroupKey: [Transition]] = [:]
        var order: [GroupKey] = []
        for t in m.transitions {
            let key = GroupKey(event: isCheck(t) ? nil : t.event, guard: t.guard, decision: t.action.decision, reason: t.action.reason)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(t)
        }
        var out: [Int: Node] = [:]
        for key in order {
            let ts = groups[key]!
            let states = Set(ts.map(\.from))
            let switched: Bool
            if case .switched = key.guard { switched = true } else { switched = false }
            if key.event == nil || switched {
                guard states.count >= 2 else { continue }
            } else {
                guard states.count == MachineState.allCases.count else { continue }
            }
            guard let target = commonTarget(ts, in: m) else { continue }
            for t in ts { out[t.id] = target }
        }
        return out
    }

    /// Where every transition of `ts` leads: a state, or `.any` when each stays where it is; nil
    /// when they lead to different places. A transition that stays in the state the others lead
    /// to leads there too, and so does an `idp_login` that stays in `signed_out` when the others
    /// lead to `awaiting_idp`.
    static func commonTarget(_ ts: [Transition], in m: StateMachine) -> Node? {
        let moving = Set(ts.lazy.filter { m.target($0) != $0.from }.map { m.target($0) })
        guard let to = moving.first else { return .any }
        guard moving.count == 1 else { return nil }
        let fits = ts.allSatisfy { t in
            m.target(t) != t.from || t.from == to || (to == .awaitingIdP && t.from == .signedOut && t.action.decision == .idpLogin)
        }
        return fits ? .state(to) : nil
    }

    // MARK: Labels

    /// The label of an edge standing for `ts`: first the checks by name, then the events, those
    /// with the same guards on one line (`launch, resume [since idp login > 90d, mode pin]`). An
    /// event is shown without guards when the edge holds every one of its transitions from its
    /// states (checks aside) or only the last one, `otherwise`. A login that switches the session
    /// and is then judged as from `signed_out` by a check or rule reads as one guard, `different
    /// user, then as from signed_out`: the checks themselves are drawn from `signed_out`.
    /// Only the transitions `counting` keeps are weighed when deciding whether an edge holds
    /// every transition of an event (the live ones for a live edge, the dead ones for a dead one).
    static func lines(_ ts: [Transition], in m: StateMachine, counting: (Transition) -> Bool = { _ in true }) -> [String] {
        var out: [String] = []
        var events: [EventKind: [Transition]] = [:]
        for t in ts {
            if isCheck(t) {
                let name = t.guard == .always ? "unexpected event" : m.label(t.guard)
                if !out.contains(name) { out.append(name) }
            } else {
                events[t.event, default: []].append(t)
            }
        }
        var suffixes: [(events: [EventKind], suffix: String)] = []
        for e in EventKind.allCases {
            guard let mine = events[e] else { continue }
            let ids = Set(mine.map(\.id))
            let whole = Set(mine.map(\.from)).allSatisfy { s in
                m.transitions(from: s, on: e).allSatisfy { isCheck($0) || ids.contains($0.id) || !counting($0) }
            }
            var guards: [String] = []
            var switches: [SessionSwitch] = []
            for t in mine {
                var g = m.label(t.guard)
                if case let .switched(kind, inner) = t.guard, inner != .always {
                    // One entry for every check of the fresh login after a switch: those are drawn from `signed_out`.
                    g = "\u{0}"
                    if !switches.contains(kind) { switches.append(kind) }
                }
                if !guards.contains(g) { guards.append(g) }
            }
            if let i = guards.firstIndex(of: "\u{0}") {
                let kinds = switches.sorted { $0.rawValue < $1.rawValue }.map { $0 == .device ? "device" : "user" }
                guards[i] = "different \(kinds.joined(separator: " or ")), then as from signed_out"
            }
            let suffix = whole || guards == ["otherwise"] ? "" : " [" + guards.joined(separator: ", ") + "]"
            if let i = suffixes.firstIndex(where: { $0.suffix == suffix }) {
                suffixes[i].events.append(e)
            } else {
                suffixes.append(([e], suffix))
            }
        }
        for (es, suffix) in suffixes { out.append(es.map(\.rawValue).joined(separator: ", ") + suffix) }
        return out
    }
}
