import SessionPolicy

// The run to a difference: the old version's path to the class, replayed at concrete times so
// that its last step is in the class (each version takes its transition there, and the outcomes
// differ), with the new version deciding every step before alike where times allow it.
extension Differ {
    /// A run to `d`: its steps, whether they are concrete, and the first step from which the new
    /// version decides alike every step before the last (with the session the old one leaves there).
    static func run(
        _ x: Explorer, to d: Explorer.Divergence, new: CompiledPolicy
    ) -> (steps: [Counterexample.Step], concrete: Bool, start: Int, state: SessionState?) {
        var path = [d.edge]
        while let p = x.parent[path[0].from] { path.insert(p, at: 0) }
        // The last step as the class says: the new version's transition, and another outcome.
        let last: (SessionState, Event, Outcome) -> Bool = { state, event, old in
            let o = new.evaluate(state, event)
            return o.transition == d.new.transition && !Explorer.same(old, o)
        }
        for agreeing in [true, false] {
            var budget = 4096
            let earlier: (SessionState, Event, Outcome) -> Bool = { state, event, old in
                !agreeing || Explorer.same(old, new.evaluate(state, event))
            }
            guard
                let steps = replay(
                    x, path[...], from: .signedOut, clock: Verifier.start, budget: &budget, last: last, earlier: earlier)
            else { continue }
            // Where the new version last decides otherwise before the last step, the scenario starts after it.
            var state = SessionState.signedOut
            var start = 0
            var startState: SessionState?
            for (i, s) in steps.enumerated().dropLast() {
                let o = x.policy.evaluate(state, s.event)
                if !Explorer.same(o, new.evaluate(state, s.event)) {
                    start = i + 1
                    startState = o.state
                }
                state = o.state
            }
            return (steps, true, start, startState)
        }
        let c = Verifier.counterexample(x, to: d.edge, detail: "", expected: nil)
        return (c.steps, false, 0, nil)
    }

    /// The path from `state` at concrete times, each step taking its edge's transition of the old
    /// version and accepted by `earlier` (the last by `last`), given the session, the event and
    /// the old version's outcome: as `Verifier.replay`, each event as early or as late as its
    /// class allows, depth first. Nil when no choice fits within `budget` tries.
    static func replay(
        _ x: Explorer, _ path: ArraySlice<Explorer.Edge>, from state: SessionState, clock: Int64, budget: inout Int,
        last: (SessionState, Event, Outcome) -> Bool, earlier: (SessionState, Event, Outcome) -> Bool
    ) -> [Counterexample.Step]? {
        guard let e = path.first else { return [] }
        var tried: Set<Int64> = []
        for latest in [false, true] {
            budget -= 1
            guard budget > 0, let time = Verifier.time(of: e, after: state, clock: clock, latest: latest) else { return nil }
            guard tried.insert(time.millisecondsSinceEpoch).inserted else { continue }
            let event = x.event(e.choice, at: time, for: state)
            let outcome = x.policy.evaluate(state, event)
            guard outcome.transition == e.transition, (path.count == 1 ? last : earlier)(state, event, outcome) else { continue }
            let step = Counterexample.Step(
                event: event, decision: outcome.decision, reason: outcome.reason, state: outcome.state.state,
                transition: outcome.transition)
            let later = max(clock, time.millisecondsSinceEpoch)
            if let rest = replay(x, path.dropFirst(), from: outcome.state, clock: later, budget: &budget, last: last, earlier: earlier) {
                return [step] + rest
            }
        }
        return nil
    }
}
