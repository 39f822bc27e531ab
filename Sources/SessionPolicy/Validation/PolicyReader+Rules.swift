/// The sections of the rule language: `attributes` (what the client reports) and `rules`.
extension PolicyReader {
    /// The attribute types written as a word; a list of words declares a `words` attribute.
    static let attributeTypes: [String: AttributeType] = [
        "version": .version, "boolean": .boolean, "integer": .integer, "duration": .duration, "string": .string,
    ]

    mutating func attributes(_ node: SyntaxNode) -> [AttributeDeclaration] {
        record("attributes", node)
        guard case let .mapping(pairs) = node.kind else {
            syntax.error(
                .wrongType, "`attributes` must be a mapping, found \(node.shapeName)", at: node,
                help: "write one attribute per line: `license: [active, revoked, none]` or `app_version: version`")
            return []
        }
        var declarations: [AttributeDeclaration] = []
        for (key, value) in pairs {
            guard let name = key.scalar else { continue }
            let path = "attributes.\(name)"
            record(path, key)
            if case let .sequence(items) = value.kind {
                declarations.append(AttributeDeclaration(name: name, type: .words(words(items, path))))
                if items.isEmpty { syntax.error(.invalidValue, "`\(path)` lists no values", at: value, help: "list the words it can take") }
                continue
            }
            guard let word = syntax.string(value, path) else { continue }
            guard let type = Self.attributeTypes[word] else {
                syntax.error(
                    .invalidValue, "`\(path)` cannot be `\(word)`", at: value,
                    help: Suggestion.help(for: word, in: Self.attributeTypes.keys.sorted())
                        + ", or a list of words such as `[active, revoked]`")
                continue
            }
            declarations.append(AttributeDeclaration(name: name, type: type))
        }
        return declarations
    }

    /// The words of a `words` attribute, each once.
    private mutating func words(_ items: [SyntaxNode], _ path: String) -> [String] {
        var words: [String] = []
        for item in items {
            guard let w = syntax.name(item, path) else { continue }
            if words.contains(w) {
                syntax.error(.duplicateValue, "`\(w)` is listed twice in `\(path)`", at: item, help: "remove the second `\(w)`")
            } else {
                words.append(w)
            }
        }
        return words
    }

    /// The rules that read. Sources are keyed by a rule's position among the rules that read
    /// (`rules[0]`), diagnostics by its position in the file.
    mutating func rules(_ node: SyntaxNode) -> [Rule] {
        guard let items = syntax.list(node, "rules") else { return [] }
        record("rules", node)
        var rules: [Rule] = []
        for (i, item) in items.enumerated() {
            if let rule = rule(item, path: "rules[\(rules.count)]", place: "rules[\(i)]") { rules.append(rule) }
        }
        return rules
    }

    private mutating func rule(_ item: SyntaxNode, path: String, place: String) -> Rule? {
        guard let f = syntax.fields(item, path: place, allowed: PolicyLoader.ruleKeys) else { return nil }
        record(path, item)
        let name = syntax.require(f, "name", help: "give the rule a name, used in explanations").flatMap { syntax.name($0, f.path("name")) }
        var on: [EventKind] = [.launch, .resume]
        if let v = f["on"], let list = syntax.list(v, f.path("on")) {
            record("\(path).on", v)
            on = []
            for (j, e) in list.enumerated() {
                guard let kind = syntax.keyword(e, f.path("on"), EventKind.self) else { continue }
                record("\(path).on[\(j)]", e)
                on.append(kind)
            }
        }
        var when: String?
        if let v = syntax.require(f, "when", help: "say when the rule applies, for example `when: license == revoked`") {
            when = syntax.string(v, f.path("when"))
            if case let .scalar(text, plain) = v.kind {
                // Point at the first character of the condition (after a quote).
                var location = v.location
                if !plain, !text.contains("\n") { location.column += 1 }
                sources["\(path).when"] = location
            }
        }
        let outcome = syntax.require(f, "then", help: "say what happens, for example `then: { decision: wipe, reason: no_license }`")
            .flatMap { ruleOutcome($0, path: path, place: f.path("then")) }
        guard let name, let when, let outcome else { return nil }
        return Rule(name: name, on: on, when: when, then: outcome)
    }

    /// A rule's `then`.
    private mutating func ruleOutcome(_ v: SyntaxNode, path: String, place: String) -> Rule.Outcome? {
        guard let tf = syntax.fields(v, path: place, allowed: PolicyLoader.ruleOutcomeKeys) else { return nil }
        record("\(path).then", v)
        var decision: Decision?
        if let d = tf["decision"] {
            record("\(path).then.decision", d)
            decision = syntax.keyword(d, tf.path("decision"), Decision.self)
        }
        var readOnly = false
        if let st = tf["state"] {
            record("\(path).then.state", st)
            readOnly = syntax.keyword(st, tf.path("state"), MachineState.self, allowed: [.readOnly]) == .readOnly
        }
        let reason = syntax.require(tf, "reason", help: "give a machine-readable reason such as `no_license`")
            .flatMap { syntax.name($0, tf.path("reason")) }
        let message = tf["message"].flatMap { syntax.string($0, tf.path("message")) }
        var notices = Notices()
        if let n = tf["notices"], let list = syntax.list(n, tf.path("notices")) {
            for item in list {
                guard let w = syntax.name(item, tf.path("notices")) else { continue }
                if let notice = Notices(name: w) {
                    notices.insert(notice)
                } else {
                    syntax.error(
                        .invalidValue, "unknown notice `\(w)`", at: item, help: Suggestion.help(for: w, in: Notices.named.map(\.0)))
                }
            }
        }
        let delay = tf["notice_delay"].flatMap { syntax.duration($0, tf.path("notice_delay")) }
        if tf["decision"] == nil, tf["state"] == nil {
            syntax.error(
                .missingKey, "`\(tf.path(""))` needs `decision` or `state`", at: v,
                help: "for example `decision: wipe`, or `state: read_only`")
        }
        guard let reason else { return nil }
        return Rule.Outcome(
            decision: decision, reason: Reason(reason), message: message, notices: notices, noticeDelay: delay, readOnly: readOnly)
    }
}
