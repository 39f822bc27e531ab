/// A fact a condition can read.
package enum Fact: Sendable, Hashable {
    case event, state, network, authMode, keystore, integrity
    case sinceIdPLogin, sinceOnline, sinceActivity
    case biometricFailures, offlineFailures, idpFailures
    case readOnly
    case attribute(String)

    /// The built-in facts by the name conditions use.
    static let builtIn: [(String, Fact, AttributeType)] = [
        ("event", .event, .words(EventKind.allCases.map(\.rawValue))),
        ("state", .state, .words(MachineState.allCases.map(\.rawValue))),
        ("network", .network, .words(Network.allCases.map(\.rawValue))),
        ("auth_mode", .authMode, .words(AuthMode.allCases.map(\.rawValue))),
        ("device.keystore", .keystore, .words(Keystore.allCases.map(\.rawValue))),
        ("device.integrity", .integrity, .words(Integrity.allCases.map(\.rawValue))),
        ("elapsed.since_idp_login", .sinceIdPLogin, .duration),
        ("elapsed.since_online", .sinceOnline, .duration),
        ("elapsed.since_activity", .sinceActivity, .duration),
        ("failures.biometric", .biometricFailures, .integer),
        ("failures.offline_login", .offlineFailures, .integer),
        ("failures.idp_login", .idpFailures, .integer),
        ("read_only", .readOnly, .boolean),
    ]

    /// The names of the built-in facts.
    package static var builtInNames: [String] { builtIn.map(\.0) }
}

/// A type-checked condition, ready to evaluate.
package indirect enum Condition: Sendable, Equatable {
    /// `fact` is (or, negated, is not) one of `values` (words, strings, or `true`/`false`).
    case oneOf(Fact, [String], negated: Bool)
    /// `fact op value` for durations (milliseconds) and integers.
    case number(Fact, Expression.Comparison, Int64)
    /// `fact op version`.
    case version(Fact, Expression.Comparison, Version)
    case and(Condition, Condition)
    case or(Condition, Condition)
    case not(Condition)
}

/// The result of evaluating a condition: true, false, or unknown because a fact it needs is missing.
package enum Truth: Sendable, Equatable {
    case yes, no
    case unknown(String)
}

/// Type-checks expressions against the built-in facts and the declared attributes.
package struct ConditionChecker: Sendable {
    let attributes: [AttributeDeclaration]

    package init(attributes: [AttributeDeclaration]) { self.attributes = attributes }

    func lookup(_ name: String) -> (Fact, AttributeType)? {
        if let b = Fact.builtIn.first(where: { $0.0 == name }) { return (b.1, b.2) }
        if let a = attributes.first(where: { $0.name == name }) { return (.attribute(name), a.type) }
        return nil
    }

    var allNames: [String] { Fact.builtInNames + attributes.map(\.name) }

    /// Checks `e`, returning the condition or the first problem.
    package func check(_ e: Expression) -> Result<Condition, ExpressionError> {
        do { return .success(try condition(e)) } catch let error as ExpressionError { return .failure(error) } catch {
            return .failure(ExpressionError(code: .invalidExpression, message: "cannot check condition", offset: 0))
        }
    }

    func condition(_ e: Expression) throws -> Condition {
        switch e {
        case let .and(a, b): return .and(try condition(a), try condition(b))
        case let .or(a, b): return .or(try condition(a), try condition(b))
        case let .not(a, _): return .not(try condition(a))
        case let .name(n, o):
            let (fact, type) = try resolve(n, o)
            guard type == .boolean else {
                throw ExpressionError(
                    code: .typeMismatch, message: "`\(n)` is \(type.name), not a condition", offset: o,
                    help: "compare it: `\(n) == ...`")
            }
            return .oneOf(fact, ["true"], negated: false)
        case let .compare(l, op, r, _):
            var (left, right, op) = (l, r, op)
            if case .name = right, !isName(left) {  // `revoked == license`: put the name first
                (left, right) = (right, left)
                op = flipped(op)
            }
            guard case let .name(n, no) = left else {
                throw ExpressionError(
                    code: .typeMismatch, message: "a comparison needs a fact or an attribute on one side", offset: left.offset,
                    help: "known names: " + allNames.map { "`\($0)`" }.joined(separator: ", "))
            }
            let (fact, type) = try resolve(n, no)
            return try compare(fact, n, type, op, right)
        default:
            throw ExpressionError(
                code: .typeMismatch, message: "a condition must be a comparison", offset: e.offset,
                help: "for example `license == revoked` or `elapsed.since_online > 3d`")
        }
    }

    func isName(_ e: Expression) -> Bool { if case .name = e { return true } else { return false } }

    func flipped(_ op: Expression.Comparison) -> Expression.Comparison {
        switch op {
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return op
        }
    }

    func resolve(_ name: String, _ offset: Int) throws -> (Fact, AttributeType) {
        if let r = lookup(name) { return r }
        throw ExpressionError(
            code: .unknownAttribute, message: "unknown fact or attribute `\(name)`", offset: offset,
            help: Suggestion.help(for: name, in: allNames) + " (declare custom facts under `attributes:`)")
    }

    func describe(_ e: Expression) -> String {
        switch e {
        case let .name(n, _): return "`\(n)`"
        case let .string(s, _): return "`\"\(s)\"` (a string)"
        case let .integer(i, _): return "`\(i)` (an integer)"
        case let .duration(d, _): return "`\(d)` (a duration)"
        case let .boolean(b, _): return "`\(b)`"
        case .list: return "a list"
        default: return "a condition"
        }
    }

    func compare(_ fact: Fact, _ name: String, _ type: AttributeType, _ op: Expression.Comparison, _ r: Expression) throws -> Condition {
        func mismatch() -> ExpressionError {
            ExpressionError(
                code: .typeMismatch, message: "cannot compare `\(name)` (\(type.name)) with \(describe(r))", offset: r.offset,
                help: hint(for: type, name))
        }
        func ordered() throws {
            if ![.equal, .notEqual, .isIn].contains(op) {
                throw ExpressionError(
                    code: .typeMismatch, message: "`\(op.rawValue)` needs a duration, an integer or a version; `\(name)` is \(type.name)",
                    offset: r.offset, help: "use `==`, `!=` or `in`")
            }
        }
        switch type {
        case let .words(allowed):
            try ordered()
            let words = try literalWords(r, op, allowed: allowed, name: name)
            return .oneOf(fact, words, negated: op == .notEqual)
        case .boolean:
            try ordered()
            guard case let .boolean(b, _) = r, op != .isIn else { throw mismatch() }
            return .oneOf(fact, [b ? "true" : "false"], negated: op == .notEqual)
        case .string:
            try ordered()
            if op == .isIn {
                guard case let .list(items, _) = r else { throw mismatch() }
                return .oneOf(
                    fact,
                    try items.map { item in
                        guard case let .string(s, _) = item else { throw mismatch() }
                        return s
                    }, negated: false)
            }
            guard case let .string(s, _) = r else { throw mismatch() }
            return .oneOf(fact, [s], negated: op == .notEqual)
        case .duration:
            guard op != .isIn, case let .duration(d, _) = r else { throw mismatch() }
            return .number(fact, op, d.seconds * 1000)
        case .integer:
            guard op != .isIn, case let .integer(i, _) = r else { throw mismatch() }
            return .number(fact, op, Int64(i))
        case .version:
            guard op != .isIn, case let .string(s, o) = r else { throw mismatch() }
            guard let v = Version(s) else {
                throw ExpressionError(
                    code: .typeMismatch, message: "`\"\(s)\"` is not a version", offset: o, help: "write a version such as `\"2.4.0\"`")
            }
            return .version(fact, op, v)
        }
    }

    func hint(for type: AttributeType, _ name: String) -> String {
        switch type {
        case .words(let w): return "`\(name)` is one of " + w.map { "`\($0)`" }.joined(separator: ", ")
        case .duration: return "compare with a duration such as `7d`: `\(name) > 7d`"
        case .integer: return "compare with a whole number: `\(name) >= 3`"
        case .version: return "compare with a version in quotes: `\(name) < \"2.4.0\"`"
        case .boolean: return "compare with `true` or `false`"
        case .string: return "compare with a string in double quotes"
        }
    }

    func literalWords(_ r: Expression, _ op: Expression.Comparison, allowed: [String], name: String) throws -> [String] {
        func word(_ e: Expression) throws -> String {
            let (w, o): (String, Int)
            switch e {
            case let .name(n, off): (w, o) = (n, off)
            case let .string(s, off): (w, o) = (s, off)
            default:
                throw ExpressionError(
                    code: .typeMismatch, message: "cannot compare `\(name)` with \(describe(e))", offset: e.offset,
                    help: "`\(name)` is one of " + allowed.map { "`\($0)`" }.joined(separator: ", "))
            }
            guard allowed.contains(w) else {
                throw ExpressionError(
                    code: .invalidValue, message: "`\(w)` is not a value of `\(name)`", offset: o,
                    help: Suggestion.help(for: w, in: allowed))
            }
            return w
        }
        if op == .isIn {
            guard case let .list(items, _) = r else {
                throw ExpressionError(code: .typeMismatch, message: "`in` needs a list such as `[a, b]`", offset: r.offset)
            }
            return try items.map(word)
        }
        return [try word(r)]
    }
}
