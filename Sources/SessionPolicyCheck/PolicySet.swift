import Foundation
public import SessionPolicy
public import SessionPolicyYAML

/// The policies and scenarios named on a command line, loaded, with every diagnostic.
public struct CheckInput: Sendable {
    /// Policies by name.
    public var policies: [String: PolicyFile.Loaded] = [:]
    /// Every scenario, in file then file order.
    public var scenarios: [Scenario] = []
    /// Every problem (errors make the input invalid: exit 2).
    public var diagnostics: [Diagnostic] = []
    /// File texts, for quoting lines in diagnostics.
    public var sources: [String: String] = [:]
    /// Policy files (canonical paths) that did not load, so that they are reported once.
    var refused: Set<String> = []

    /// Nothing loaded yet.
    package init() {}

    /// Loads policy files or directories `policyPaths` and scenario files or directories `scenarioPaths`.
    /// A scenario may name a policy by its `name`, or by the path of a `.yaml` file: absolute, or
    /// relative to the scenario file.
    public static func load(policies policyPaths: [String], scenarios scenarioPaths: [String]) -> CheckInput {
        var input = CheckInput()
        // A folder may hold a policy and its scenario files side by side: each file goes where
        // its content says (a top-level `scenarios:` is a scenario file, `version:` a policy).
        // Each file is read and parsed once, here.
        var parsed: [String: SourceFile.Parsed] = [:]
        func kind(_ path: String) -> FileKind {
            let p = parsed[path] ?? SourceFile.parse(path)
            parsed[path] = p
            return Self.kind(of: try? p.get().node)
        }
        // Each file once, wherever it was reached (a folder given as both the policies and the
        // scenarios is read once); files `check` does not run (a property file, a compiled
        // machine, an evaluation input) are skipped with one warning each.
        var policyFiles: [String] = [], scenarioFiles: [String] = []
        var seen: Set<String> = []
        for (paths, asPolicy) in [(policyPaths, true), (scenarioPaths, false)] {
            for path in paths.flatMap(SourceFile.expand) where seen.insert(Self.canonical(path)).inserted {
                switch kind(path) {
                case .scenarios: scenarioFiles.append(path)
                case .policy: policyFiles.append(path)
                case .unknown: if asPolicy { policyFiles.append(path) } else { scenarioFiles.append(path) }
                case let other: input.diagnostics.append(Self.skipped(path, other))
                }
            }
        }
        for path in policyFiles { input.addPolicy(path, parsed: parsed[path]) }
        let single = input.policies.count == 1 ? input.policies.keys.first : nil
        var unknown = UnknownPolicies()
        for path in scenarioFiles {
            input.addScenarios(parsed[path] ?? SourceFile.parse(path), path: path, defaultPolicy: single, unknown: &unknown)
        }
        input.diagnostics = input.diagnostics.sortedForOutput()
        return input
    }

    /// Where the first scenario naming each unknown policy put its error, and how many name it.
    package struct UnknownPolicies: Sendable {
        var first: [String: Int] = [:]
        var count: [String: Int] = [:]
        package init() {}
    }

    /// Loads the scenarios of the file at `path`, already read and parsed (`parsed`), against
    /// the policies loaded so far; `defaultPolicy` is the policy of scenarios that name none.
    package mutating func addScenarios(
        _ parsed: SourceFile.Parsed, path: String, defaultPolicy: String?, unknown: inout UnknownPolicies
    ) {
        switch SourceFile.nonEmpty(parsed, path, what: "scenario file", start: ScenarioLoader.start) {
        case let .failure(e):
            diagnostics += e.diagnostics
        case let .success((node, text)):
            sources[path] = text
            let (inFile, found) = ScenarioLoader.load(node, file: path, defaultPolicy: defaultPolicy)
            diagnostics += found
            var reported: Set<String> = []
            for var s in inFile {
                if policies[s.policy] == nil, s.policy.hasSuffix(".yaml") || s.policy.hasSuffix(".yml") {
                    let dir = (path as NSString).deletingLastPathComponent
                    let resolved =
                        dir.isEmpty || s.policy.hasPrefix("/") ? s.policy : (dir as NSString).appendingPathComponent(s.policy)
                    guard FileManager.default.fileExists(atPath: resolved) else {
                        // One error per file and path, at the `policy:` line, with the path as resolved.
                        if reported.insert(s.policy).inserted {
                            diagnostics.append(
                                .error(
                                    .fileNotFound, "policy file `\(s.policy)` not found: looked for `\(resolved)`",
                                    at: s.policyLocation ?? s.location,
                                    help: "a policy path in a scenario file is relative to the scenario file's folder"
                                        + " (`\(dir.isEmpty ? "." : dir)`); or name a policy given on the command line by its `name:`"))
                        }
                        continue
                    }
                    guard let name = addPolicy(resolved) else { continue }  // its own diagnostics say why
                    s.policy = name
                }
                if let loaded = policies[s.policy] {
                    let problems =
                        Self.attributeProblems(s, loaded.compiled, reported: &reported) + Self.reasonProblems(s, loaded.compiled)
                    diagnostics += problems
                    if problems.hasErrors { continue }
                }
                if policies[s.policy] == nil {
                    // Once per policy name: the first scenario that names it carries the error.
                    if let index = unknown.first[s.policy] {
                        diagnostics[index].notes = ["\(1 + (unknown.count[s.policy] ?? 1)) scenarios name it"]
                        unknown.count[s.policy, default: 1] += 1
                        continue
                    }
                    let known = policies.keys.sorted()
                    unknown.first[s.policy] = diagnostics.count
                    diagnostics.append(
                        .error(
                            .unknownPolicy, "scenario `\(s.name)` names policy `\(s.policy)`, which is not loaded",
                            at: s.policyLocation ?? s.location,
                            help: known.isEmpty
                                ? "give the policy file on the command line" : Suggestion.publicHelp(for: s.policy, in: known)))
                    continue
                }
                scenarios.append(s)
            }
        }
    }

    /// The attributes `scenario`'s events report that `policy` does not declare, or with a value
    /// its declaration refuses: load errors, each at the place the attribute is written (once
    /// for a place shared by several steps, such as the scenario's `context`).
    static func attributeProblems(_ scenario: Scenario, _ policy: CompiledPolicy, reported: inout Set<String>) -> [Diagnostic] {
        let declared = policy.machine.attributes
        var out: [Diagnostic] = []
        for step in scenario.steps {
            guard case let .success(event) = step.event else { continue }
            for (name, value) in event.attributes.sorted(by: { $0.key < $1.key }) {
                let at = step.attributeSources[name] ?? step.location
                guard reported.insert("\(at)|\(name)").inserted else { continue }
                guard let declaration = declared.first(where: { $0.name == name }) else {
                    let names = declared.map(\.name)
                    out.append(
                        .error(
                            .unknownAttribute, "attribute `\(name)` is not declared by policy `\(policy.name)`", at: at,
                            help: names.isEmpty
                                ? "the policy declares no attributes: remove it, or declare it under `attributes:` in the policy"
                                : Suggestion.publicHelp(for: name, in: names)))
                    continue
                }
                if !declaration.type.accepts(value) {
                    out.append(
                        .error(
                            .typeMismatch, "attribute `\(name)` cannot be `\(value)`: it is \(declaration.type.name)", at: at,
                            help: "give a value of the type policy `\(policy.name)` declares"))
                }
            }
        }
        return out
    }

    /// The expected reasons of `scenario` that `policy` can never give: not one of the engine's
    /// (`Reason.builtIn`, docs/reasons.md) nor one of the policy's rules. A typo, or a name
    /// from an older release, is a load error at the `reason:` value with the closest name.
    static func reasonProblems(_ scenario: Scenario, _ policy: CompiledPolicy) -> [Diagnostic] {
        let known = Reason.builtIn.map(\.0.rawValue) + policy.policy.rules.map(\.then.reason.rawValue)
        var out: [Diagnostic] = []
        for step in scenario.steps {
            guard let reason = step.expect.reason, !known.contains(reason.rawValue) else { continue }
            // `session_idle_expired` for `session_idle_exceeded`: the same words but the last.
            let stem = reason.rawValue.split(separator: "_").dropLast().joined(separator: "_")
            let sameStem = known.filter { !stem.isEmpty && $0.split(separator: "_").dropLast().joined(separator: "_") == stem }
            let renamed = Reason.renamed[reason.rawValue] ?? (sameStem.count == 1 ? sameStem.first : nil)
            out.append(
                .error(
                    .unknownReason, "policy `\(policy.name)` never gives reason `\(reason)`",
                    at: step.expect.reasonLocation ?? step.location,
                    help: renamed.map {
                        Reason.renamed[reason.rawValue] == nil ? "did you mean `\($0)`?" : "`\(reason)` is now called `\($0)`"
                    }
                        ?? Suggestion.publicHelp(for: reason.rawValue, in: known) + " (the reasons are listed in docs/reasons.md)"))
        }
        return out
    }

    /// What a file holds, told by its top-level keys: a policy (`version:`), a scenario file
    /// (`scenarios:`), a property file (`properties:`, for `verify`), a compiled machine or a
    /// signed envelope (`format: sessionpolicy-...`), an evaluation input (`event:`, for `eval`
    /// and `explain`); `unknown` when it is none of them or does not parse to a mapping.
    enum FileKind: Equatable { case policy, scenarios, properties, machine, input, unknown }

    static func kind(of node: SyntaxNode??) -> FileKind {
        guard case let .mapping(pairs)? = node??.kind else { return .unknown }
        let keys = Set(pairs.compactMap(\.key.scalar))
        if keys.contains("scenarios") && !keys.contains("version") { return .scenarios }
        if keys.contains("version") && !keys.contains("scenarios") { return .policy }
        if keys == ["properties"] { return .properties }
        let format = pairs.first { $0.key.scalar == "format" }?.value.scalar
        if let format, format.hasPrefix("sessionpolicy-") { return .machine }
        if keys.contains("event") && keys.isSubset(of: ["event", "state"]) { return .input }
        return .unknown
    }

    /// The warning for a file `check` does not run, saying what it is and what takes it.
    static func skipped(_ path: String, _ kind: FileKind) -> Diagnostic {
        let (what, help): (String, String) =
            switch kind {
            case .properties: ("a property file", "`policyctl verify POLICY --property \(path)` checks it")
            case .machine:
                ("a compiled machine document or signed envelope", "an app loads it; `policyctl inspect` reads an envelope")
            default: ("an evaluation input (`event:`)", "`policyctl eval POLICY \(path)` or `policyctl explain` takes it")
            }
        return .warning(
            .skippedFile, "skipped `\(path)`: \(what), not a policy or scenario file", at: SourceLocation(file: path, line: 1, column: 1),
            help: help)
    }

    static func canonical(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Loads one policy file; returns its name, or nil after recording diagnostics. A file is
    /// loaded once: asked again (by several scenarios naming its path), it answers as the first
    /// time, without repeating its diagnostics.
    @discardableResult
    mutating func addPolicy(_ path: String, parsed: SourceFile.Parsed? = nil) -> String? {
        let key = Self.canonical(path)
        if refused.contains(key) { return nil }
        if let existing = policies.values.first(where: { Self.canonical($0.path) == key }) {
            return existing.compiled.name
        }
        let parsed = parsed ?? SourceFile.parse(path)
        switch PolicyFile.load(path, parsed: parsed) {
        case let .failure(e):
            refused.insert(key)
            diagnostics += e.diagnostics
            // A file that does not parse is quoted from a second, bounded read: only on failure.
            if let text = (try? parsed.get().text) ?? SourceFile.quotable(path) { sources[path] = text }
            return nil
        case let .success(loaded):
            sources[path] = loaded.text
            diagnostics += loaded.warnings
            let name = loaded.compiled.name
            if let other = policies[name] {
                diagnostics.append(
                    .error(
                        .duplicatePolicyName, "policy name `\(name)` is used by two files",
                        at: SourceLocation(file: path, line: 1, column: 1),
                        notes: ["also used by \(other.path)"], help: "give each policy its own `name`"))
                refused.insert(key)
                return nil
            }
            policies[name] = loaded
            return name
        }
    }
}
