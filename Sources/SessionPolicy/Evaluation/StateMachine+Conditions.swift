extension StateMachine {
    /// Evaluates a rule condition. A fact the event or state does not have makes it `unknown`
    /// (the rule then fails closed), unless the rest of the condition decides without it.
    func truth(_ c: Condition, _ s: SessionState, _ e: Event, now: Int64) -> Truth {
        switch c {
        case let .and(a, b):
            let x = truth(a, s, e, now: now)
            if x == .no { return .no }
            let y = truth(b, s, e, now: now)
            if y == .no { return .no }
            if case .unknown = x { return x }
            return y
        case let .or(a, b):
            let x = truth(a, s, e, now: now)
            if x == .yes { return .yes }
            let y = truth(b, s, e, now: now)
            if y == .yes { return .yes }
            if case .unknown = x { return x }
            return y
        case let .not(a):
            switch truth(a, s, e, now: now) {
            case .yes: return .no
            case .no: return .yes
            case let u: return u
            }
        case let .oneOf(fact, values, negated):
            guard let v = text(fact, s, e) else { return .unknown(name(fact)) }
            return values.containsExactly(v) != negated ? .yes : .no
        case let .number(fact, op, value):
            guard let v = number(fact, s, e, now: now) else { return .unknown(name(fact)) }
            return Self.compare(v, op, value) ? .yes : .no
        case let .version(fact, op, value):
            guard let raw = text(fact, s, e) else { return .unknown(name(fact)) }
            guard let v = Version(raw) else { return .unknown(name(fact)) }
            let result: Bool
            switch op {
            case .equal: result = v == value
            case .notEqual: result = v != value
            case .less: result = v < value
            case .lessOrEqual: result = v <= value
            case .greater: result = v > value
            case .greaterOrEqual: result = v >= value
            case .isIn: result = false
            }
            return result ? .yes : .no
        }
    }

    static func compare(_ a: Int64, _ op: Expression.Comparison, _ b: Int64) -> Bool {
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        case .less: return a < b
        case .lessOrEqual: return a <= b
        case .greater: return a > b
        case .greaterOrEqual: return a >= b
        case .isIn: return false
        }
    }

    func name(_ fact: Fact) -> String {
        if case let .attribute(n) = fact { return n }
        return Fact.builtIn.first { $0.1 == fact }?.0 ?? "fact"
    }

    func text(_ fact: Fact, _ s: SessionState, _ e: Event) -> String? {
        switch fact {
        case .event: return e.kind.rawValue
        case .state: return s.state.rawValue
        case .network: return e.network?.rawValue
        case .authMode: return s.authMode?.rawValue
        case .keystore: return e.device.keystore?.rawValue
        case .integrity: return e.device.integrity?.rawValue
        case .readOnly: return s.readOnly ? "true" : "false"
        case let .attribute(n): return e.attribute(n)
        default: return nil
        }
    }

    func number(_ fact: Fact, _ s: SessionState, _ e: Event, now: Int64) -> Int64? {
        func since(_ t: Timestamp?) -> Int64? { t.map { now - $0.millisecondsSinceEpoch } }
        switch fact {
        case .sinceIdPLogin: return since(s.lastIdPLogin)
        case .sinceOnline: return since(s.lastOnline ?? s.lastIdPLogin)
        case .sinceActivity: return since(s.lastActivity ?? s.lastIdPLogin)
        case .biometricFailures: return Int64(s.failures.biometric)
        case .offlineFailures: return Int64(s.failures.offlineLogin)
        case .idpFailures: return Int64(s.failures.idpLogin)
        case let .attribute(n):
            guard let raw = e.attribute(n) else { return nil }
            if let i = AttributeType.integer(raw) { return i }
            if case let .success(d) = TimeSpan.parse(raw) { return d.seconds * 1000 }
            return nil
        default: return nil
        }
    }
}
