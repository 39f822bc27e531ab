import SessionPolicy

// Differences (`policyctl diff`): where the other version decides a class's step otherwise.
// A pair of transitions whose actions are alike gives the same outcome from any session for
// any event (the outcome is the action applied to them), so only the other pairs are compared,
// and each only until its first difference: a kind of difference is reported once.
extension Explorer {
    /// A pair of transitions (this version's, the other's; -1 for a refused event) as one number.
    func pairKey(_ a: Int, _ b: Int) -> Int { (a + 1) << 32 | (b + 1) }

    /// Whether the pair (this version's transition, the other's) can decide a step otherwise:
    /// its actions are not alike, and no difference of this kind was found yet.
    func mayDiffer(_ a: Int, _ b: Int) -> Bool {
        let key = pairKey(a, b)
        guard let other, !divergenceKinds.contains(key) else { return false }
        if let known = actionsAlike[key] { return !known }
        let alike: Bool
        switch (a, b) {
        case (-1, -1):
            // Refused before any guard: the message names the attribute the version does not declare.
            alike = machine.attributes == other.machine.attributes
        case (-1, _), (_, -1):
            alike = false
        case let (a, b):
            let x = machine.transitions[a].action
            alike = x == other.machine.transitions[b].action && (!x.namesScope || machine.scopes == other.machine.scopes)
        }
        actionsAlike[key] = alike
        return !alike
    }

    /// The latest point of a piece (up to a year past its lower bounds) and the session and
    /// event time there: a difference in the times a step records shows only where time has passed.
    func latePoint(_ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock]) -> (SessionState, Timestamp) {
        let a = piece.point(Array((set + [.eventTime]).reversed()), largest: 366 * 86_400_000)
        return (concrete(session, a), Timestamp(millisecondsSinceEpoch: Self.now - (a[.eventTime] ?? 0)))
    }

    /// Both versions' outcomes of `choice` at the class's earliest point (`known` when already
    /// evaluated: this version's verdict and next session, then the other's), else at its
    /// latest: the first pair that differs, or nil.
    func difference(
        _ choice: EventChoice, early: (SessionState, Timestamp), late: (SessionState, Timestamp),
        known: (Verdict, SessionState, Verdict, SessionState)? = nil
    ) -> Difference? {
        guard let other else { return nil }
        let a: Outcome
        let b: Outcome
        let e = event(choice, at: early.1, for: early.0)
        if let (v, s, w, t) = known {
            (a, b) = (Outcome(v, state: s), Outcome(w, state: t))
        } else {
            (a, b) = (policy.evaluate(early.0, e), other.evaluate(early.0, e))
            evaluations += 2
        }
        if !Self.same(a, b) { return Difference(choice: choice, old: a, new: b, before: early.0, event: e) }
        let le = event(choice, at: late.1, for: late.0)
        let (c, d) = (policy.evaluate(late.0, le), other.evaluate(late.0, le))
        evaluations += 2
        return Self.same(c, d) ? nil : Difference(choice: choice, old: c, new: d, before: late.0, event: le)
    }

    /// The differences of a class classified from `template`: for each pair of transitions that
    /// may differ, its first choice (in the class's order) that does, as `classifyAll` finds them.
    func differences(
        _ session: SessionKey, _ piece: Zone, _ set: [Zone.Clock], _ template: Template
    ) -> [Difference] {
        var pairs: [Int] = []
        var choicesOf: [[Int32]] = []
        for (f, fine) in template.fine.enumerated() {
            let (a, b) = (template.transitions[f], template.otherTransitions[f])
            guard mayDiffer(a, b) else { continue }
            let pair = pairKey(a, b)
            if let i = pairs.firstIndex(of: pair) {
                choicesOf[i] = Self.merged(choicesOf[i], fine)
            } else {
                pairs.append(pair)
                choicesOf.append(fine)
            }
        }
        guard !pairs.isEmpty else { return [] }
        let (_, state, time) = point(session, piece, set)
        let late = latePoint(session, piece, set)
        var found: [(Int32, Difference)] = []
        for list in choicesOf {
            for c in list {
                if let d = difference(template.choices[Int(c)], early: (state, time), late: late) {
                    found.append((c, d))
                    break
                }
            }
        }
        return found.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
