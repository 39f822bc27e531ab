import SessionPolicy

// Exploring: the graph of abstract sessions, built breadth first. Each node is expanded
// once per timing: its zone is cut into pieces where the guards look, each piece is classified
// (`Explorer+Classes.swift`), and each ending of a class is followed to its successor node.
extension Explorer {
    func discreteID(_ d: Discrete) -> Int32 {
        if let id = discreteIDs[d] { return id }
        let id = Int32(discretes.count)
        discretes.append(d)
        discreteIDs[d] = id
        byDiscrete.append([])
        slots.append([])
        discreteSession.append(sessionID(d.session))
        return id
    }

    func sessionID(_ k: SessionKey) -> Int32 {
        if let id = sessionIDs[k] { return id }
        let id = Int32(sessionIDs.count)
        sessionIDs[k] = id
        return id
    }

    /// The node with this discrete part and zone, or one with the same discrete part whose zone includes it.
    func find(_ key: NodeKey) -> Int? {
        if var i = index[key] {
            while replacedBy[i] >= 0 { i = replacedBy[i] }
            return i
        }
        for i in byDiscrete[Int(key.discrete)] where nodes[i].zone.includes(key.zone) { return i }
        return nil
    }

    /// Adds a node, which replaces the waiting nodes of its depth and discrete part inside its zone.
    func add(_ key: NodeKey, from edge: Edge?) -> Int {
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

    /// One piece of a node's zone for one timing and list of comparisons: shared by the event
    /// kinds that cut alike, with the successors and property cuts found in it.
    struct Piece {
        var zone: Zone
        var answers: Answers
        /// The piece cut at the policy's limits (`examine`), once found.
        var parts: [(Zone, Answers)]?
        /// Successor zones by the effects of the transition taken: (zone before widening, widened).
        var successors: [(effects: UInt16, raw: Zone, key: NodeKey?, times: UInt8)] = []
        /// The nodes reached from this piece, by effects and next discrete part.
        var reached: [(effects: UInt16, discrete: Int32, node: Int)] = []
    }

    func expand(_ i: Int) {
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
                // Cut only where a guard of this (state, event) pair looks: the fewer the cuts,
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
                    let branches: [Branch]
                    if let known = slots[Int(d)][slot].classes.first(where: { $0.answers == answers }) {
                        (engine, branches) = (known.engine, known.branches)
                    } else {
                        let ekey = EngineKey(session: sid, kind: kind, timing: timing, answers: answers)
                        if let e = engineIDs[ekey] {
                            engine = e
                        } else {
                            engine = classify(session, cuts[c].pieces[p].zone, set, kind, timing, answers)
                            engineIDs[ekey] = engine
                            fresh = true
                        }
                        branches = self.branches(of: ClassKey(discrete: d, engine: engine))
                        slots[Int(d)][slot].classes.append((answers, engine, branches))
                    }
                    // `diff` reports no inconsistency (`verify` checks each version's): it checks no successor.
                    let check = selfCheck || (fresh && other == nil)
                    for g in branches.indices {
                        follow(i, node, &cuts[c].pieces[p], set, timing, branches[g], engine: engine, check: check)
                    }
                    if other != nil {
                        let piece = cuts[c].pieces[p].zone
                        for x in differing[engine] ?? [] where divergenceKinds.insert(pairKey(x.old.transition, x.new.transition)).inserted
                        {
                            let edge = Edge(
                                from: i, choice: x.choice, timing: timing, piece: piece, transition: x.old.transition,
                                decision: x.old.decision, reason: x.old.reason)
                            divergences.append(Divergence(edge: edge, old: x.old, new: x.new, before: x.before, event: x.event))
                        }
                    }
                    // `diff` checks no property.
                    if other == nil, branches.contains(where: { !$0.examined.isEmpty }) {
                        examine(i, node, &cuts[c].pieces[p], set, timing, ClassKey(discrete: d, engine: engine), branches)
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

    /// The zone and recorded times after transition `id` (-1: the event was refused) from
    /// `piece`, by the transition's effects (docs/how-a-decision-is-made.md).
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

    /// Follows one branch of a class from node `i` in `piece`: the symbolic successor (found
    /// once per piece and effects) is widened and inserted. With `check` (the class was just
    /// evaluated here, or `selfCheck`), the engine decides the branch's choice at this piece's
    /// point, which must take the class's transition to the class's next session, inside the
    /// symbolic successor.
    func follow(
        _ i: Int, _ node: Node, _ piece: inout Piece, _ set: [Zone.Clock], _ timing: Timing, _ branch: Branch,
        engine: Int32, check: Bool
    ) {
        steps += 1
        let id = branch.transition
        var outcome: Outcome?
        if check {
            let (_, state, time) = point(node.session, piece.zone, set)
            let o = policy.evaluate(state, event(branch.choice, at: time, for: state))
            evaluations += 1
            if o.transition != id || key(o.state) != branch.nextSession {
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
                from: i, choice: branch.choice, timing: timing, piece: zone, transition: id, decision: branch.decision,
                reason: branch.reason)
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
        if branch.nextSession.times != times {
            inconsistencies.append(
                "transition \(id): the engine records times \(branch.nextSession.clocks), verify \(SessionKey.clocks(times))")
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
        if let known = piece.reached.first(where: { $0.effects == effects && $0.discrete == branch.next }) {
            to = known.node
        } else {
            var nodeKey = piece.successors[s].key!
            nodeKey.discrete = branch.next
            to = find(nodeKey) ?? add(nodeKey, from: edge())
            piece.reached.append((effects, branch.next, to))
        }
        for j in branch.breaks where userViolations[j] == nil { userViolations[j] = edge() }
        targets.append(to)
    }
}
