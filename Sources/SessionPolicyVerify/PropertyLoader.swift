package import SessionPolicy

/// Reads property files (docs/verify.md, "User properties") into `UserProperty` values, with located
/// diagnostics like every other file the product reads.
public enum PropertyLoader {
    // The keys each mapping accepts; a test checks that `schemas/property.schema.json` lists the same.
    package static let fileKeys = ["properties"]
    package static let propertyKeys = ["id", "says", "never", "always", "eventually", "requires", "responds", "after", "before", "until"]
    package static let patternKeys = ["never", "always", "eventually", "requires", "responds"]
    package static let stepKeys = ["event", "decision", "reason", "network", "from", "to", "attributes", "elapsed"]
    package static let elapsedKeys = ElapsedClock.allCases.map(\.rawValue)
    package static let precedenceKeys = ["when", "first"]
    package static let responseKeys = ["when", "then"]

    /// How a property file starts: the hint for an empty file or one that is not a mapping.
    package static let start = "a property file is a mapping that starts `properties:`, a list of properties"

    /// Loads the properties of one parsed file.
    package static func load(_ root: SyntaxNode, file: String) -> ([UserProperty], [Diagnostic]) {
        var r = SyntaxReader()
        guard let top = r.fields(root, path: "", allowed: fileKeys, start: Self.start),
            let list = r.require(top, "properties", help: "add `properties:` with a list of properties").flatMap({
                r.list($0, "properties")
            })
        else { return ([], r.diagnostics) }
        if list.isEmpty { r.error(.missingKey, "`properties` is empty", at: top.node, help: "add at least one property") }
        var out: [UserProperty] = []
        var ids: [String: SourceLocation] = [:]
        let builtIn = Set(BuiltInProperty.allCases.map(\.rawValue))
        for (index, node) in list.enumerated() {
            let path = "properties[\(index)]"
            guard let f = r.fields(node, path: path, allowed: propertyKeys) else { continue }
            let before = r.diagnostics.count
            let id = r.require(f, "id", help: "add `id: no-offline-after-revocation`").flatMap { r.name($0, f.path("id")) }
            if let id, let n = f["id"] {
                if let first = ids[id] {
                    r.error(
                        .duplicateValue, "two properties have the id `\(id)`", at: n, notes: ["the first is at \(first)"],
                        help: "give each property its own id")
                } else if builtIn.contains(id) {
                    r.error(.duplicateValue, "`\(id)` is the id of a built-in property", at: n, help: "choose another id")
                } else if id.contains(where: { !($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                    r.error(
                        .invalidValue, "`\(f.path("id"))` must be letters, digits, `-` and `_`", at: n,
                        help: "for example `no-offline-after-revocation`")
                }
                ids[id] = n.location
            }
            let given = patternKeys.filter { f.has($0) }
            var pattern: UserProperty.Pattern?
            if given.isEmpty {
                r.error(
                    .missingKey, "`\(path)` has no pattern", at: node,
                    help: "add one of " + patternKeys.map { "`\($0):`" }.joined(separator: ", "))
            } else if given.count > 1, let second = f[given[1]] {
                r.error(
                    .conflictingKeys, "`\(path)` has two patterns, `\(given[0])` and `\(given[1])`", at: second,
                    help: "write one pattern per property")
            } else if let key = given.first, let value = f[key] {
                pattern = readPattern(key, value, f.path(key), &r)
            }
            var scope = UserProperty.Scope()
            scope.after = f["after"].flatMap { step($0, f.path("after"), &r) }
            scope.before = f["before"].flatMap { step($0, f.path("before"), &r) }
            scope.until = f["until"].flatMap { step($0, f.path("until"), &r) }
            if f.has("before"), let u = f["until"] {
                r.error(
                    .conflictingKeys, "`\(path)` has both `before` and `until`", at: u,
                    help: "`before`: the pattern speaks of runs where that step comes; `until`: also of runs where it never does")
            }
            if let pattern, !f.has("before"), !f.has("until") {
                switch pattern {
                case .existence, .response:
                    r.error(
                        .propertyNeedsEnd, "`\(given[0])` needs a step that ends its scope", at: f[given[0]] ?? node,
                        help: "add `before:` or `until:` (a run can always be continued: only an end makes \"not yet\" a violation)")
                default: break
                }
            }
            let says = f["says"].flatMap { r.string($0, f.path("says")) }
            guard r.diagnostics.count == before, let id, let pattern else { continue }
            let p = UserProperty(
                id: id, sentence: says ?? Self.sentence(pattern, scope), pattern: pattern, scope: scope, location: node.location)
            out.append(p)
        }
        return (out, r.diagnostics)
    }

    private static func readPattern(_ key: String, _ node: SyntaxNode, _ path: String, _ r: inout SyntaxReader) -> UserProperty.Pattern? {
        switch key {
        case "never": return step(node, path, &r).map { .absence($0) }
        case "always": return step(node, path, &r).map { .universality($0) }
        case "eventually": return step(node, path, &r).map { .existence($0) }
        case "requires":
            guard let f = r.fields(node, path: path, allowed: precedenceKeys) else { return nil }
            let when = r.require(f, "when", help: "add `when:` with the step that needs another first").flatMap {
                step($0, f.path("when"), &r)
            }
            let first = r.require(f, "first", help: "add `first:` with the step that must come before").flatMap {
                step($0, f.path("first"), &r)
            }
            guard let when, let first else { return nil }
            return .precedence(when: when, first: first)
        default:
            guard let f = r.fields(node, path: path, allowed: responseKeys) else { return nil }
            let when = r.require(f, "when", help: "add `when:` with the step that needs an answer").flatMap { step($0, f.path("when"), &r) }
            let then = r.require(f, "then", help: "add `then:` with the step that must follow").flatMap { step($0, f.path("then"), &r) }
            guard let when, let then else { return nil }
            return .response(when: when, then: then)
        }
    }

    /// A step description: a mapping of `stepKeys`, each a value or a list of values.
    private static func step(_ node: SyntaxNode, _ path: String, _ r: inout SyntaxReader) -> StepMatch? {
        guard let f = r.fields(node, path: path, allowed: stepKeys) else { return nil }
        if f.keys.isEmpty {
            r.error(.missingKey, "`\(path)` describes no step", at: node, help: "add `event:`, `decision:`, `network:` ...")
            return nil
        }
        var m = StepMatch()
        func values(_ key: String) -> [SyntaxNode]? {
            guard let v = f[key] else { return nil }
            if case .sequence = v.kind { return r.list(v, f.path(key)) }
            return [v]
        }
        var ok = true
        func keywords<K: PolicyKeyword>(_ key: String, _ type: K.Type) -> Set<K>? {
            guard let nodes = values(key) else { return nil }
            let parsed = nodes.map { r.keyword($0, f.path(key), type) }
            if parsed.contains(where: { $0 == nil }) { ok = false }
            return Set(parsed.compactMap { $0 })
        }
        m.events = keywords("event", EventKind.self)
        m.from = keywords("from", MachineState.self)
        m.to = keywords("to", MachineState.self)
        if let nodes = values("decision") {
            var set: Set<Decision?> = []
            for n in nodes {
                if case let .scalar(text, _) = n.kind, text == "none" {
                    set.insert(nil)
                } else if let d = r.keyword(n, f.path("decision"), Decision.self) {
                    set.insert(d)
                } else {
                    ok = false
                }
            }
            m.decisions = set
        }
        if let nodes = values("network") {
            let allowed = ["online", "offline", "unknown"]
            var set: Set<String> = []
            for n in nodes {
                guard let text = r.string(n, f.path("network")) else {
                    ok = false
                    continue
                }
                if allowed.contains(text) {
                    set.insert(text)
                } else {
                    r.error(
                        .invalidValue, "`\(f.path("network"))` cannot be `\(text)`", at: n, help: "use `online`, `offline` or `unknown`")
                    ok = false
                }
            }
            m.networks = set
        }
        if let nodes = values("reason") {
            var set: Set<String> = []
            for n in nodes {
                guard let text = r.name(n, f.path("reason")) else {
                    ok = false
                    continue
                }
                set.insert(text)
            }
            m.reasons = set
        }
        if let node = f["attributes"] {
            m.attributes = attributes(node, f.path("attributes"), &r)
            if m.attributes == nil { ok = false }
        }
        if let node = f["elapsed"] {
            m.elapsed = elapsed(node, f.path("elapsed"), &r)
            if m.elapsed == nil { ok = false }
        }
        return ok ? m : nil
    }

    /// The sentence of a property written without `says:`.
    static func sentence(_ p: UserProperty.Pattern, _ s: UserProperty.Scope) -> String {
        func show(_ m: StepMatch) -> String {
            var parts: [String] = []
            if let e = m.events { parts.append(e.map(\.rawValue).sorted().joined(separator: " or ")) }
            if let d = m.decisions { parts.append("decided " + d.map { $0?.rawValue ?? "none" }.sorted().joined(separator: " or ")) }
            if let r = m.reasons { parts.append("for " + r.sorted().joined(separator: " or ")) }
            if let n = m.networks { parts.append(n.sorted().joined(separator: " or ")) }
            if let f = m.from { parts.append("from " + f.map(\.rawValue).sorted().joined(separator: " or ")) }
            if let t = m.to { parts.append("to " + t.map(\.rawValue).sorted().joined(separator: " or ")) }
            for a in m.attributes ?? [] {
                let values = a.values + (a.absent ? ["absent"] : [])
                parts.append("with \(a.name) " + values.joined(separator: " or "))
            }
            if let e = m.elapsed { parts.append(e.map(\.text).joined(separator: " and ")) }
            return "a step " + parts.joined(separator: ", ")
        }
        var text: String
        switch p {
        case let .absence(x): text = "never \(show(x))"
        case let .universality(x): text = "always \(show(x))"
        case let .existence(x): text = "eventually \(show(x))"
        case let .precedence(when, first): text = "\(show(when)) only after \(show(first))"
        case let .response(when, then): text = "\(show(when)) is followed by \(show(then))"
        }
        if let a = s.after { text += ", after \(show(a))" }
        if let b = s.before { text += ", before \(show(b))" }
        if let u = s.until { text += ", until \(show(u))" }
        return text
    }
}
