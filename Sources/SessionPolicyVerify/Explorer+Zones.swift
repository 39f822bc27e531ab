import SessionPolicy

// Zones: the comparisons of ages with constants that the guards make, and a zone cut into
// pieces where each comparison has one answer.
extension Explorer {
    struct AtomsKey: Hashable {
        var state: MachineState
        var kind: EventKind
        var times: UInt8
        var timing: Timing
    }

    /// The id of the comparisons cut for `kind` in sessions like `k` at `timing` (the event's
    /// own age only for an event dated back).
    func atomsID(_ k: SessionKey, _ kind: EventKind, _ timing: Timing) -> Int {
        let key = AtomsKey(state: k.state, kind: kind, times: k.times, timing: timing)
        if let id = atomIDs[key] { return id }
        let list = atoms(k, kind).filter { timing == .rolledBack || $0.0 != .eventTime }
        let id = atomLists.firstIndex(where: { $0.elementsEqual(list, by: { $0.0 == $1.0 && $0.1 == $1.1 }) }) ?? atomLists.count
        if id == atomLists.count { atomLists.append(list) }
        atomIDs[key] = id
        return id
    }

    /// The comparisons of an age with a constant that the guards of `kind` in the session's
    /// state make, as (clock, θ) for `age > θ`.
    /// The user properties' bounds on elapsed times are cut too (`watchedAtoms`).
    func atoms(_ k: SessionKey, _ kind: EventKind) -> [(Zone.Clock, Int64)] {
        var out = Self.atoms(machine, k, kind) + (other.map { Self.atoms($0.machine, k, kind) } ?? [])
        for a in watchedAtoms(k, kind) where !out.contains(where: { $0 == a }) { out.append(a) }
        return out
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
}
