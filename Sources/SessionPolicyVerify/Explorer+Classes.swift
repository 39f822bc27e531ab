import SessionPolicy

// Classifying: what the engine does in a class of steps, found by evaluating the engine
// itself at one point of the class, and the endings of each class (see GLOSSARY.md).
extension Explorer {
    /// A (state, event) pair of the machine: the transitions tried for that event in that state.
    struct StateEvent: Hashable {
        var state: MachineState
        var kind: EventKind
    }

    /// The answers a piece of a zone gives to the comparisons of a (state, event) pair, in
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
    /// comparison the pair's guards make). Every step of a class takes the same transitions
    /// with the same facts, wherever the zone; the properties' monitors do not change that.
    struct EngineKey: Hashable {
        /// The session key's id (`sessionID`).
        var session: Int32
        var kind: EventKind
        var timing: Timing
        var answers: Answers
    }

    /// What the engine does in a class: its choices of facts, sorted by how they end.
    struct EngineClass {
        var kind: EventKind
        var timing: Timing
        /// The facts varied for the class's (state, event) pair.
        var choices: [EventChoice]
        /// In order of their first choice.
        var endings: [Ending]
        /// The elapsed times the user properties bound, at the point the class was evaluated at.
        var elapsed = ElapsedTimes()
    }

    /// The choices of an engine class that end alike for the engine and for the properties'
    /// monitors: one transition, one next session, one network (when user properties watch it).
    struct Ending {
        /// Indices into the class's choices, ascending.
        var choices: [Int32]
        var transition: Int
        var decision: Decision?
        var reason: Reason
        var next: SessionKey
        var network: Network?
        /// The attributes user properties name, as the choices report them (canonical).
        var attributes: [ExactName: ExactName]
        /// Whether the properties examine these choices' outcome (`allow`,
        /// `require_biometric`, or a clock set back where the clock check decided).
        var examined: Bool
    }

    /// What a discrete part's nodes do for one event kind at one timing, found once: the
    /// comparisons its pair cuts at (`atomsID`), and the classes met so far, by their answers.
    struct Slot {
        static let unknown = -1
        /// A dated-back event of this kind does what one at the highest time seen does (`rollbackMatters`).
        static let skipped = -2
        var atoms = unknown
        var classes: [(answers: Answers, engine: Int32, branches: [Branch])] = []
    }

    /// A class of steps: an engine class, from one discrete part (session and monitors).
    struct ClassKey: Hashable {
        var discrete: Int32
        var engine: Int32
    }

    /// The choices of facts of a class that end alike: one transition, one next discrete part.
    struct Branch {
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

    /// The engine class of `kind` at `timing` from sessions like `session`, in the piece with
    /// `answers`: found by evaluating every choice of facts at one point of the piece, or, when
    /// a session that the pair's guards cannot tell from this one was classified already, by
    /// evaluating one choice of each of its endings here (`Template`). Returns the class's id.
    func classify(
        _ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock], _ kind: EventKind, _ timing: Timing, _ answers: Answers
    ) -> Int32 {
        let pkey = EngineKey(session: sessionID(projected(session, kind)), kind: kind, timing: timing, answers: answers)
        if let template = templates[pkey] {
            if let derived = classify(session, piece, set, kind, timing, template) {
                if selfCheck {
                    let (full, _) = classifyAll(session, piece, set, kind, timing)
                    if !Self.same(full, derived) {
                        inconsistencies.append(
                            "`\(kind.rawValue)` in `\(session.state.rawValue)`: a class's endings differ from its template's")
                    }
                }
                engineClasses.append(derived)
                return Int32(engineClasses.count - 1)
            }
            inconsistencies.append(
                "`\(kind.rawValue)` in `\(session.state.rawValue)`: a choice takes another transition than its template's")
        }
        let (full, fine) = classifyAll(session, piece, set, kind, timing)
        if templates[pkey] == nil {
            templates[pkey] = Template(
                choices: full.choices, fine: fine.map(\.choices), transitions: fine.map(\.transition),
                otherTransitions: fine.map(\.other))
        }
        engineClasses.append(full)
        return Int32(engineClasses.count - 1)
    }

    /// The choices of facts of a class of sessions the (state, event) pair's guards cannot tell
    /// apart, in fine endings: the choices of each take one transition and, from any session of
    /// that class, lead to one next discrete session (same transition, same next session from
    /// the first session, same network; and where the transition establishes a session, the
    /// same presence of user and device and the same auth mode, the facts it records; with
    /// `diff`, the same transition of the other version too).
    struct Template {
        var choices: [EventChoice]
        /// Each ascending; in order of their first choice.
        var fine: [[Int32]]
        /// The transition each fine ending takes.
        var transitions: [Int]
        /// With `diff`, the transition the other version takes for each fine ending (else -2).
        var otherTransitions: [Int]
    }

    /// The class from `template`: the first choice of each fine ending evaluated from `session`
    /// at one point of the piece, the fine endings that end alike merged. Nil when a choice takes
    /// another transition than its template's (then the projection missed a fact; never in a
    /// correct build, checked with `selfCheck`).
    func classify(
        _ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock], _ kind: EventKind, _ timing: Timing, _ template: Template
    ) -> EngineClass? {
        let (ages, state, time) = point(session, piece, set)
        var endings: [Ending] = []
        for (f, fine) in template.fine.enumerated() {
            let choice = template.choices[Int(fine[0])]
            var next = state
            let e = event(choice, at: time, for: state)
            let verdict = policy.evaluate(&next, e)
            evaluations += 1
            guard verdict.transition == template.transitions[f] else { return nil }
            if let other {
                var otherNext = state
                guard other.evaluate(&otherNext, e).transition == template.otherTransitions[f] else { return nil }
                evaluations += 1
            }
            let b = ending(fine, verdict, key(next), choice, timing)
            if let i = endings.firstIndex(where: { Self.alike($0, b) }) {
                endings[i].choices = Self.merged(endings[i].choices, fine)
            } else {
                endings.append(b)
            }
        }
        if other != nil { differing[Int32(engineClasses.count)] = differences(session, piece, set, template) }
        return EngineClass(
            kind: kind, timing: timing, choices: template.choices, endings: endings, elapsed: elapsedTimes(session, ages))
    }

    /// Every choice of facts evaluated at one point of the piece: the class, and its fine endings (`Template`).
    func classifyAll(
        _ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock], _ kind: EventKind, _ timing: Timing
    ) -> (EngineClass, [(choices: [Int32], transition: Int, other: Int)]) {
        let (ages, state, time) = point(session, piece, set)
        let late = other == nil ? nil : latePoint(session, piece, set)
        let list = choices[state.state]?[kind] ?? []
        var endings: [Ending] = []
        var fine: [(choices: [Int32], transition: Int, other: Int)] = []
        var fineKeys: [FineKey] = []
        var differ: [Difference] = []
        var differKinds: Set<Int> = []
        for (c, choice) in list.enumerated() {
            let e = event(choice, at: time, for: state)
            var next = state
            let verdict = policy.evaluate(&next, e)
            evaluations += 1
            var otherTransition = -2
            if let other {
                var otherNext = state
                let v = other.evaluate(&otherNext, e)
                evaluations += 1
                otherTransition = v.transition
                let pair = pairKey(verdict.transition, v.transition)
                if let late, mayDiffer(verdict.transition, v.transition), !differKinds.contains(pair),
                    let d = difference(choice, early: (state, time), late: late, known: (verdict, next, v, otherNext))
                {
                    differKinds.insert(pair)
                    differ.append(d)
                }
            }
            let b = ending([Int32(c)], verdict, key(next), choice, timing)
            if let i = endings.firstIndex(where: { Self.alike($0, b) }) {
                endings[i].choices.append(Int32(c))
            } else {
                endings.append(b)
            }
            let establishes = b.transition >= 0 && machine.transitions[b.transition].action.effects.contains(.establish)
            let f = FineKey(
                transition: b.transition, next: b.next, network: b.network, attributes: b.attributes,
                records: establishes ? .init(user: choice.user != .none, device: choice.device != .none, authMode: choice.authMode) : nil,
                other: otherTransition)
            if let i = fineKeys.firstIndex(of: f) {
                fine[i].choices.append(Int32(c))
            } else {
                fineKeys.append(f)
                fine.append(([Int32(c)], b.transition, otherTransition))
            }
        }
        if other != nil { differing[Int32(engineClasses.count)] = differ }
        let e = EngineClass(kind: kind, timing: timing, choices: list, endings: endings, elapsed: elapsedTimes(session, ages))
        return (e, fine)
    }

    /// What makes a fine ending (`Template`).
    struct FineKey: Equatable {
        var transition: Int
        var next: SessionKey
        var network: Network?
        var attributes: [ExactName: ExactName]
        /// For a transition that establishes a session: the facts it records.
        var records: Recorded?
        /// With `diff`, the other version's transition (else -2).
        var other: Int

        /// Whether the event names a user and a device, and its auth mode.
        struct Recorded: Equatable {
            var user: Bool
            var device: Bool
            var authMode: AuthMode?
        }
    }

    /// An ending of `choices`, which the engine decided as `verdict`, to the next session `next`.
    func ending(_ choices: [Int32], _ verdict: Verdict, _ next: SessionKey, _ choice: EventChoice, _ timing: Timing) -> Ending {
        let t = verdict.transition
        // `clock-rollback` needs a look only where the clock check decided: every other guard
        // measures time from the highest time seen, so the same event at that time takes the
        // same transition. And a `wipe` cannot be more permissive than anything.
        var clockDecided = false
        if t >= 0, case .clockRolledBack = machine.transitions[t].guard { clockDecided = verdict.decision != .wipe }
        let examined = verdict.decision == .allow || verdict.decision == .requireBiometric || (timing == .rolledBack && clockDecided)
        // The monitors of user properties see the network; the built-in properties do not.
        return Ending(
            choices: choices, transition: t, decision: verdict.decision, reason: verdict.reason, next: next,
            network: properties.isEmpty ? nil : choice.network, attributes: watchedAttributes(choice), examined: examined)
    }

    /// Whether two endings end alike for the engine and the user properties' monitors.
    static func alike(_ a: Ending, _ b: Ending) -> Bool {
        a.transition == b.transition && a.next == b.next && a.network == b.network && a.attributes == b.attributes
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

    /// The decision a class makes for choice `c`: its ending's.
    static func decision(of c: Int32, in e: EngineClass) -> Decision?? {
        for b in e.endings {
            var (lo, hi) = (0, b.choices.count)
            while lo < hi {
                let mid = (lo + hi) / 2
                if b.choices[mid] < c { lo = mid + 1 } else { hi = mid }
            }
            if lo < b.choices.count && b.choices[lo] == c { return .some(b.decision) }
        }
        return nil
    }

    /// Whether two classes end their choices alike.
    static func same(_ a: EngineClass, _ b: EngineClass) -> Bool {
        a.endings.count == b.endings.count
            && zip(a.endings, b.endings).allSatisfy {
                $0.choices == $1.choices && alike($0, $1) && $0.decision == $1.decision && $0.reason == $1.reason
                    && $0.examined == $1.examined
            }
    }

    /// The session fields the guards of `kind` in a state read, in either version; the others
    /// cannot change which transition decides.
    func projected(_ k: SessionKey, _ kind: EventKind) -> SessionKey {
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

    /// The branches of a class: its engine class's endings, each with the next discrete part it
    /// leads to from the class's discrete part, merged where they end alike.
    func branches(of key: ClassKey) -> [Branch] {
        let from = discretes[Int(key.discrete)]
        let e = engineClasses[Int(key.engine)]
        var branches: [Branch] = []
        for b in e.endings {
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
                        to: b.next.state, attributes: b.attributes, elapsed: e.elapsed)
                    for (j, p) in properties.enumerated() {
                        let (m, broken) = monitors[j].next(p, seen)
                        monitors[j] = m
                        if broken { breaks.append(j) }
                    }
                }
            }
            let next = discreteID(Discrete(session: b.next, cleared: cleared, enrollmentChanged: enrollment, monitors: monitors))
            if let g = branches.firstIndex(where: { $0.transition == id && $0.next == next && $0.breaks == breaks }) {
                if b.examined { branches[g].examined += b.choices }
            } else {
                branches.append(
                    Branch(
                        choice: e.choices[Int(b.choices[0])], transition: id, decision: b.decision, reason: b.reason, next: next,
                        nextSession: b.next, examined: b.examined ? b.choices : [], breaks: breaks))
            }
        }
        for g in branches.indices { branches[g].examined.sort() }
        return branches
    }
}
