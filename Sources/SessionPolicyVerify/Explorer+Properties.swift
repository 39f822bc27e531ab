import SessionPolicy

// Properties: the built-in and user properties checked on every step, and the nodes from
// which no usable session can be reached again.
extension Explorer {
    /// A property broken on an edge.
    struct Violation: Sendable {
        var property: BuiltInProperty
        var edge: Edge
        var detail: String
        /// The decision the step should have had, when the property names one.
        var expected: Decision?
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

    /// Checks the properties on the class's examined choices, in each part of `piece` cut at the
    /// policy's limits (found once per engine class, session flags and part); records the first
    /// violation of each.
    func examine(
        _ i: Int, _ node: Node, _ piece: inout Piece, _ set: [Zone.Clock], _ timing: Timing, _ key: ClassKey, _ branches: [Branch]
    ) {
        let e = engineClasses[Int(key.engine)]
        // The properties compare ages with the policy's limits only for an `allow` that does
        // not establish a session: elsewhere the piece needs no cutting.
        let parts: [(Zone, Answers)]
        if e.endings.contains(where: {
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
                for b in e.endings where b.examined {
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
            // The first failure of each property in the order of the branches and their choices.
            func rank(_ f: Failure) -> (Int, Int32) {
                (branches.firstIndex(where: { $0.examined.contains(f.choice) }) ?? branches.count, f.choice)
            }
            for f in found where violations[f.property] == nil {
                let first = found.filter { $0.property == f.property }.min { rank($0) < rank($1) }!
                let g = branches[min(rank(first).0, branches.count - 1)]
                let edge = Edge(
                    from: i, choice: e.choices[Int(first.choice)], timing: timing, piece: sub, transition: g.transition,
                    decision: g.decision, reason: g.reason)
                violations[f.property] = Violation(property: f.property, edge: edge, detail: first.detail, expected: first.expected)
            }
        }
    }

    /// The properties a step breaks (the engine decided `event` from `state` by `ending`'s
    /// transition), as (property, what went wrong, the decision it should have had).
    ///
    /// `truth`, where the clock was set back, is the decision of the same event at the highest time seen.
    func check(
        _ node: Node, _ ages: Ages, _ state: SessionState, _ kind: EventKind, _ network: Network?, _ outcome: Ending,
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
}
