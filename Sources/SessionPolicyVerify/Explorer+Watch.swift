import SessionPolicy

// What the user properties watch beyond the engine's outcome: the attributes their steps name
// and the elapsed times they bound. Both are decided exactly: each bound is one more cut of the
// zones (`atoms`), and the choices of facts hold a value of every class of attribute values that
// the rules' comparisons and the properties' values together tell apart.
extension Explorer {
    /// What the user properties watch, per (state, event) pair.
    struct Watch {
        /// The declared attributes some step names, with their types.
        var attributes: [ExactName: AttributeType] = [:]
        /// The values the steps that can match a pair name, by attribute (as written).
        var values: [StateEvent: [String: [String]]] = [:]
        /// The bounds of the steps that can match a pair, as cuts `age > θ` of their clocks.
        var cuts: [StateEvent: [(ElapsedClock, Int64)]] = [:]

        /// A step can match only the pairs of its events and `from` states where some transition
        /// gives one of its decisions and reasons: elsewhere what it says of attributes and times
        /// is never asked, and cutting there would only split zones.
        init(_ properties: [UserProperty], _ machine: StateMachine) {
            let declarations = machine.attributes
            for m in properties.flatMap(\.steps) where m.attributes != nil || m.elapsed != nil {
                for state in m.from.map(Array.init) ?? MachineState.allCases {
                    for kind in m.events.map(Array.init) ?? EventKind.allCases {
                        let can = machine.transitions(from: state, on: kind).contains {
                            (m.decisions?.contains($0.action.decision) ?? true) && (m.reasons?.contains($0.action.reason.rawValue) ?? true)
                        }
                        guard can else { continue }
                        let pair = StateEvent(state: state, kind: kind)
                        for a in m.attributes ?? [] {
                            guard let d = declarations.first(where: { $0.name.isExactly(a.name) }) else { continue }
                            attributes[ExactName(d.name)] = d.type
                            values[pair, default: [:]][d.name, default: []] += a.values.filter { d.type.accepts($0) }
                        }
                        for b in m.elapsed ?? [] where !(cuts[pair] ?? []).contains(where: { $0 == (b.clock, b.cut.theta) }) {
                            cuts[pair, default: []].append((b.clock, b.cut.theta))
                        }
                    }
                }
            }
        }

        /// The zone clock an elapsed clock is measured from in sessions like `k` (the rules'
        /// fallback to the last IdP login), nil when the session records neither.
        static func clock(_ c: ElapsedClock, in k: SessionKey) -> Zone.Clock? {
            let own: Zone.Clock
            switch c {
            case .sinceIdPLogin: own = .lastIdPLogin
            case .sinceOnline: own = .lastOnline
            case .sinceActivity: own = .lastActivity
            }
            return k.has(own) ? own : k.has(.lastIdPLogin) ? .lastIdPLogin : nil
        }
    }

    /// The property cuts for `kind` in sessions like `k`, as (clock, θ) for `age > θ`.
    func watchedAtoms(_ k: SessionKey, _ kind: EventKind) -> [(Zone.Clock, Int64)] {
        (watch.cuts[StateEvent(state: k.state, kind: kind)] ?? []).compactMap { c, theta in Watch.clock(c, in: k).map { ($0, theta) } }
    }

    /// The elapsed times a step of a class sees, from the ages of the point it is evaluated at:
    /// the class's piece is cut at every bound, so each bound has one answer in all of it.
    func elapsedTimes(_ k: SessionKey, _ ages: Ages) -> ElapsedTimes {
        guard !watch.cuts.isEmpty else { return ElapsedTimes() }
        var e = ElapsedTimes()
        e.sinceIdPLogin = Watch.clock(.sinceIdPLogin, in: k).flatMap { ages[$0] }
        e.sinceOnline = Watch.clock(.sinceOnline, in: k).flatMap { ages[$0] }
        e.sinceActivity = Watch.clock(.sinceActivity, in: k).flatMap { ages[$0] }
        return e
    }

    /// The watched attributes a choice reports, canonical.
    func watchedAttributes(_ c: EventChoice) -> [ExactName: ExactName] {
        guard !watch.attributes.isEmpty, !c.attributes.isEmpty else { return [:] }
        var out: [ExactName: ExactName] = [:]
        for (name, value) in c.attributes {
            let n = ExactName(name)
            if let type = watch.attributes[n] { out[n] = PropertyLoader.canonical(value, type) }
        }
        return out
    }

    /// The values of attribute `name` worth trying: `existing` (absent, and the rules' boundaries)
    /// and, added only where they make a new class, every value a property names and, for each
    /// class of the rules' comparisons `rules`, a value no property names. Complete because each
    /// class of an ordered type is an interval holding an existing value, and the nearest values
    /// above and below it that no property names are inside the interval if any is.
    static func representatives(
        _ existing: [String?], named: [String], type: AttributeType, rules: [Condition]
    ) -> [String?] {
        var out = existing.contains(where: { $0 == nil }) ? existing : [nil] + existing
        let names = Set(named.map { PropertyLoader.canonical($0, type) })
        struct Signature: Hashable {
            var answers: [Bool]
            var named: ExactName?
        }
        func signature(_ x: String) -> Signature {
            let c = PropertyLoader.canonical(x, type)
            return Signature(answers: rules.map { holds($0, x) }, named: names.contains(c) ? c : nil)
        }
        var seen = Set(out.compactMap { $0 }.map(signature))
        func offer(_ x: String) {
            if type.accepts(x), seen.insert(signature(x)).inserted { out.append(x) }
        }
        for v in named { offer(v) }
        let known = out.compactMap { $0 }
        for x in known + [defaultValue(type)] {
            offer(x)
            for y in neighbours(x, type, names, known: known) { offer(y) }
        }
        return out
    }

    /// A value of every type (for an attribute no rule reads).
    static func defaultValue(_ type: AttributeType) -> String {
        switch type {
        case let .words(w): return w.first ?? ""
        case .boolean: return "true"
        case .integer: return "0"
        case .duration: return "0s"
        case .version: return "1"
        case .string: return "zz-other"
        }
    }

    /// The nearest values above and below `x` that no property names (`names`, canonical); for
    /// words and booleans every value, for strings one that nothing names.
    static func neighbours(_ x: String, _ type: AttributeType, _ names: Set<ExactName>, known: [String]) -> [String] {
        func free(_ s: String) -> Bool { !names.contains(PropertyLoader.canonical(s, type)) }
        func walk(_ start: Int64, _ step: Int64, _ text: (Int64) -> String, min: Int64) -> String? {
            var v = start
            for _ in 0...names.count {
                let (next, overflow) = v.addingReportingOverflow(step)
                if overflow || next < min { return nil }
                v = next
                if free(text(v)) { return text(v) }
            }
            return nil
        }
        switch type {
        case let .words(w): return w
        case .boolean: return ["true", "false"]
        case .string:
            var i = 0
            while true {
                let s = i == 0 ? "zz-other" : "zz-other-\(i)"
                if free(s) && !known.containsExactly(s) { return [s] }
                i += 1
            }
        case .integer:
            guard let n = AttributeType.integer(x) else { return [] }
            return [walk(n, 1, { "\($0)" }, min: .min), walk(n, -1, { "\($0)" }, min: .min)].compactMap { $0 }
        case .duration:
            guard case let .success(d) = TimeSpan.parse(x) else { return [] }
            return [walk(d.seconds, 1, { "\($0)s" }, min: 0), walk(d.seconds, -1, { "\($0)s" }, min: 0)].compactMap { $0 }
                .filter { type.accepts($0) }
        case .version:
            return versionNeighbours(x, free: free, known: known + names.map(\.text))
        }
    }

    /// The nearest versions above and below `x` that no property names. Versions have at most four
    /// parts, so the next one up adds 1 to the fourth; below a fourth part of 0 there is no
    /// nearest, and one above every constant in play (`m` in each later part) stands for it.
    static func versionNeighbours(_ x: String, free: (String) -> Bool, known: [String]) -> [String] {
        guard let v = Version(x) else { return [] }
        let m = (known.compactMap { Version($0)?.parts.max() } + [v.parts.max() ?? 0]).max()! + 1
        func text(_ p: [Int]) -> String { p.map(String.init).joined(separator: ".") }
        var out: [String] = []
        var up = v.parts + Array(repeating: 0, count: 4 - v.parts.count)
        repeat { up[3] += 1 } while !free(text(up))
        out.append(text(up))
        var down = v.parts + Array(repeating: 0, count: 4 - v.parts.count)
        while true {
            if down[3] > 0 {
                down[3] -= 1
            } else if let i = down.lastIndex(where: { $0 > 0 }) {
                down[i] -= 1
                for j in (i + 1)..<4 { down[j] = m }
            } else {
                break
            }
            if free(text(down)) {
                out.append(text(down))
                break
            }
        }
        return out
    }

    /// The comparisons of attribute `name` in a condition.
    static func comparisons(_ c: Condition, on name: String) -> [Condition] {
        switch c {
        case let .and(a, b), let .or(a, b): return comparisons(a, on: name) + comparisons(b, on: name)
        case let .not(a): return comparisons(a, on: name)
        case let .oneOf(f, _, _), let .number(f, _, _), let .version(f, _, _):
            if case let .attribute(n) = f, n.isExactly(name) { return [c] }
            return []
        }
    }

    /// Whether a comparison of an attribute holds for the value `x` (as `StateMachine.truth` reads it).
    static func holds(_ c: Condition, _ x: String) -> Bool {
        func compare<T: Comparable>(_ a: T, _ op: Expression.Comparison, _ b: T) -> Bool {
            switch op {
            case .equal: a == b
            case .notEqual: a != b
            case .less: a < b
            case .lessOrEqual: a <= b
            case .greater: a > b
            case .greaterOrEqual: a >= b
            case .isIn: false
            }
        }
        switch c {
        case let .oneOf(_, values, negated): return values.containsExactly(x) != negated
        case let .number(_, op, v):
            if let i = AttributeType.integer(x) { return compare(i, op, v) }
            if case let .success(d) = TimeSpan.parse(x) { return compare(d.seconds * 1000, op, v) }
            return false
        case let .version(_, op, v):
            guard let version = Version(x) else { return false }
            return compare(version, op, v)
        default: return false
        }
    }
}
