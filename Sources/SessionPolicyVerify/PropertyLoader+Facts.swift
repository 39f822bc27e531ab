package import SessionPolicy

// The attributes and elapsed times a step description names (docs/verify.md, "User properties"): read
// from the file, then checked against each policy's declared attributes before verify runs.
extension PropertyLoader {
    /// `attributes: { tier: business, region: [eu, absent] }`: declared attribute names, each with
    /// a value, a list of values, or `absent` (unquoted: the event does not report it).
    static func attributes(_ node: SyntaxNode, _ path: String, _ r: inout SyntaxReader) -> [AttributeMatch]? {
        guard case let .mapping(pairs) = node.kind else {
            r.error(
                .wrongType, "`\(path)` must be a mapping of attribute names to values, found \(node.shapeName)", at: node,
                help: "for example `attributes: { account_tier: business }`")
            return nil
        }
        if pairs.isEmpty {
            r.error(.missingKey, "`\(path)` names no attribute", at: node, help: "for example `attributes: { account_tier: business }`")
            return nil
        }
        var out: [AttributeMatch] = []
        var ok = true
        for (key, value) in pairs {
            guard let name = r.name(key, path) else {
                ok = false
                continue
            }
            let at = "\(path).\(name)"
            var items = [value]
            if case let .sequence(list) = value.kind {
                items = list
                if list.isEmpty {
                    r.error(.missingKey, "`\(at)` is an empty list", at: value, help: "give at least one value, or `absent`")
                    ok = false
                }
            }
            var m = AttributeMatch(name: name, values: [], absent: false, location: key.location)
            for item in items {
                guard case let .scalar(text, plain) = item.kind, !item.isNull else {
                    r.error(
                        .wrongType, "`\(at)` must be a value, a list of values or `absent`, found \(item.shapeName)", at: item,
                        help: "for example `\(name): [business, absent]` (`absent`: the event does not report it)")
                    ok = false
                    continue
                }
                if plain && text == "absent" {
                    m.absent = true
                } else {
                    m.values.append(text)
                    m.valueLocations.append(item.location)
                }
            }
            out.append(m)
        }
        return ok ? out : nil
    }

    /// `elapsed: { since_online: "> 1d", since_idp_login: [">= 1d", "< 7d"] }`: bounds on the
    /// clocks, all of which must hold (a list on one clock is a range).
    static func elapsed(_ node: SyntaxNode, _ path: String, _ r: inout SyntaxReader) -> [ElapsedBound]? {
        guard let f = r.fields(node, path: path, allowed: elapsedKeys) else { return nil }
        if f.keys.isEmpty {
            r.error(.missingKey, "`\(path)` bounds no clock", at: node, help: "for example `elapsed: { since_online: \"> 1d\" }`")
            return nil
        }
        var out: [ElapsedBound] = []
        var ok = true
        for key in f.keys {
            guard let clock = ElapsedClock(rawValue: key), let value = f[key] else { continue }
            var items = [value]
            if case let .sequence(list) = value.kind {
                items = list
                if list.isEmpty {
                    r.error(.missingKey, "`\(f.path(key))` is an empty list", at: value, help: "give a bound such as `\"> 1d\"`")
                    ok = false
                }
            }
            let bounds = items.compactMap { bound($0, clock, f.path(key), &r) }
            guard bounds.count == items.count else {
                ok = false
                continue
            }
            // The range the bounds leave, in milliseconds: none is a mistake, not a property.
            var low: Int64 = 0
            var high = Int64.max
            for b in bounds {
                let (theta, above) = b.cut
                if above { low = max(low, theta + 1) } else { high = min(high, theta) }
            }
            if low > high {
                r.error(
                    .invalidValue,
                    "the bounds on `\(f.path(key))` leave no time: `\(bounds.map(\.text).joined(separator: "` and `"))` never hold together",
                    at: value, help: "the bounds of a list must all hold, as in the range `[\"> 1d\", \"<= 2d\"]`")
                ok = false
                continue
            }
            out += bounds
        }
        return ok ? out : nil
    }

    /// One bound: a comparison and a duration in the policy language's syntax, `"> 1d"`.
    static func bound(_ node: SyntaxNode, _ clock: ElapsedClock, _ path: String, _ r: inout SyntaxReader) -> ElapsedBound? {
        guard let text = r.string(node, path) else { return nil }
        let help = "write a comparison and a duration in quotes: `\"> 1d\"`, `\">= 12h\"`, `\"< 7d\"` or `\"<= 30m\"`"
        let ops = ElapsedBound.Comparison.allCases.sorted { $0.rawValue.count > $1.rawValue.count }
        guard let op = ops.first(where: { text.hasPrefix($0.rawValue) }) else {
            r.error(.invalidValue, "`\(path)` must be a comparison and a duration, found `\(text)`", at: node, help: help)
            return nil
        }
        let rest = String(text.dropFirst(op.rawValue.count).drop { $0 == " " })
        switch TimeSpan.parse(rest) {
        case let .success(span):
            return ElapsedBound(clock, op, span)
        case .failure(.tooLarge):
            r.error(
                .invalidDuration, "duration `\(rest)` in `\(path)` is too large", at: node,
                help: "the largest duration is `\(TimeSpan.maximum)` (100 years)")
        case .failure:
            let what = rest.isEmpty ? "`\(path)` has no duration after `\(op.rawValue)`" : "`\(rest)` in `\(path)` is not a duration"
            r.error(
                .invalidDuration, what, at: node,
                help: "a whole number and a unit, without spaces: `30s`, `15m`, `24h`, `7d`, `2w`, as in `\"\(op.rawValue) 1d\"`")
        }
        return nil
    }

    /// The mistakes of `properties` against the attributes `policy` declares: an attribute it does
    /// not declare (`unknown-attribute`, with the closest declared name), a value outside the
    /// attribute's type (`type-mismatch`). Property files are read without a policy; each policy
    /// verify runs them on checks them, before anything is explored.
    package static func check(_ properties: [UserProperty], against policy: CompiledPolicy) -> [Diagnostic] {
        let declared = policy.machine.attributes
        let name = policy.machine.name
        var out: [Diagnostic] = []
        for p in properties {
            for m in p.steps {
                for a in m.attributes ?? [] {
                    guard let d = declared.first(where: { $0.name.isExactly(a.name) }) else {
                        let names = declared.map(\.name)
                        out.append(
                            .error(
                                .unknownAttribute, "attribute `\(a.name)` is not declared by policy `\(name)`", at: a.location,
                                help: names.isEmpty
                                    ? "policy `\(name)` declares no attributes: verify this property on a policy that declares `\(a.name)`"
                                    : Suggestion.publicHelp(for: a.name, in: names)))
                        continue
                    }
                    for (v, at) in zip(a.values, a.valueLocations) where !d.type.accepts(v) {
                        var help = "write \(d.type.name) or `absent`: policy `\(name)` declares it so"
                        if case let .words(words) = d.type { help = Suggestion.publicHelp(for: v, in: words) }
                        out.append(
                            .error(.typeMismatch, "attribute `\(a.name)` cannot be `\(v)`: it is \(d.type.name)", at: at, help: help))
                    }
                }
            }
        }
        return out
    }

    /// An attribute value as properties compare it under its declared type: integers, durations
    /// and versions by value (`7` and `07`, `1d` and `24h`, `2.4` and `2.4.0` are one value), words,
    /// strings and booleans as written. A value the type refuses stays as written.
    static func canonical(_ raw: String, _ type: AttributeType?) -> ExactName {
        switch type {
        case .integer?:
            if let n = AttributeType.integer(raw) { return ExactName("\(n)") }
        case .duration?:
            if case let .success(d) = TimeSpan.parse(raw) { return ExactName("\(d.seconds)s") }
        case .version?:
            if var parts = Version(raw)?.parts {
                while parts.last == 0 { parts.removeLast() }
                return ExactName(parts.isEmpty ? "0" : parts.map(String.init).joined(separator: "."))
            }
        default: break
        }
        return ExactName(raw)
    }
}

extension UserProperty {
    /// Every step description of the property: the pattern's, then the scope's.
    var steps: [StepMatch] {
        var out: [StepMatch] = []
        switch pattern {
        case let .absence(x), let .universality(x), let .existence(x): out.append(x)
        case let .precedence(when, first): out += [when, first]
        case let .response(when, then): out += [when, then]
        }
        return out + [scope.after, scope.before, scope.until].compactMap { $0 }
    }

    /// The property with its attribute values compared as `declarations` type them.
    func bound(to declarations: [AttributeDeclaration]) -> UserProperty {
        func bind(_ m: StepMatch) -> StepMatch {
            var m = m
            m.attributes = m.attributes?.map { a in
                var a = a
                let type = declarations.first { $0.name.isExactly(a.name) }?.type
                a.canonical = Set(a.values.map { PropertyLoader.canonical($0, type) })
                return a
            }
            return m
        }
        var p = self
        switch pattern {
        case let .absence(x): p.pattern = .absence(bind(x))
        case let .universality(x): p.pattern = .universality(bind(x))
        case let .existence(x): p.pattern = .existence(bind(x))
        case let .precedence(when, first): p.pattern = .precedence(when: bind(when), first: bind(first))
        case let .response(when, then): p.pattern = .response(when: bind(when), then: bind(then))
        }
        p.scope.after = scope.after.map(bind)
        p.scope.before = scope.before.map(bind)
        p.scope.until = scope.until.map(bind)
        return p
    }
}
