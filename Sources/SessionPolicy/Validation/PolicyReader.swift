/// Reads the sections of a policy file from located syntax, one method per section (this file:
/// the header; `PolicyReader+Sections.swift`: the levers; `PolicyReader+Rules.swift`: attributes
/// and rules). Each method returns its section, starting from the section's defaults, and
/// records where each lever was written in `sources`, keyed by the lever's path
/// (`session.max`, `rules[0].when`): the names the explanations, coverage and diagnostics use.
/// Problems go to `syntax`'s diagnostics; a value that does not read keeps its default.
struct PolicyReader {
    /// The reader of keys and values, and the diagnostics so far.
    var syntax = SyntaxReader()
    /// Where each lever was written, by path.
    var sources: [String: SourceLocation] = [:]

    /// Records where the lever at `path` was written.
    mutating func record(_ path: String, _ node: SyntaxNode?) {
        if let node { sources[path] = node.location }
    }

    /// The fields of a section (a top-level mapping), its own place recorded; nil when it is not a mapping.
    mutating func section(_ node: SyntaxNode, _ name: String) -> SyntaxReader.Fields? {
        guard let fields = syntax.fields(node, path: name, allowed: PolicyLoader.sectionKeys[name, default: []]) else { return nil }
        record(name, node)
        return fields
    }

    /// `version`, `name` and `description`: a policy with nothing else set.
    mutating func header(_ top: SyntaxReader.Fields) -> Policy {
        var policy = Policy(name: "")
        if let v = syntax.require(top, "version", help: "add `version: 1` as the first line of the policy"),
            let n = syntax.int(v, "version")
        {
            policy.version = n
            record("version", v)
        }
        if let n = syntax.require(top, "name", help: "add `name: my-policy`; scenario files refer to policies by name"),
            let name = syntax.name(n, "name")
        {
            policy.name = name
            record("name", n)
        }
        if let d = top["description"] { policy.description = syntax.string(d, "description") }
        return policy
    }

    /// A reaction (`idp_login`, `wipe`, ...) at `path`. `allow` is refused everywhere: the engine
    /// fails closed. Any reaction word is read here; which ones a lever accepts is the validator's
    /// check, except where `allowed` is all a lever can ever take.
    mutating func reaction(_ node: SyntaxNode, _ path: String, allowed: [Reaction] = PolicyLoader.endSession) -> Reaction? {
        if case let .scalar(text, _) = node.kind, text == "allow" {
            syntax.error(
                .reactionNotAllowed, "`\(path)` cannot be `allow`", at: node,
                help: "the engine fails closed: use " + allowed.map { "`\($0.rawValue)`" }.joined(separator: " or "))
            return nil
        }
        if case let .scalar(text, _) = node.kind, Reaction(rawValue: text) != nil {
            return syntax.keyword(node, path, Reaction.self)
        }
        return syntax.keyword(node, path, Reaction.self, allowed: allowed)
    }
}
