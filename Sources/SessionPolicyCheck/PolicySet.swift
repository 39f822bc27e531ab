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

    /// Loads policy files or directories `policyPaths` and scenario files or directories `scenarioPaths`.
    /// A scenario may name a policy by its `name`, or by the path of a `.yaml` file: absolute, or
    /// relative to the scenario file.
    public static func load(policies policyPaths: [String], scenarios scenarioPaths: [String]) -> CheckInput {
        var input = CheckInput()
        for path in policyPaths.flatMap(SourceFile.expand) { input.addPolicy(path) }
        let single = input.policies.count == 1 ? input.policies.keys.first : nil
        for path in scenarioPaths.flatMap(SourceFile.expand) {
            switch SourceFile.syntax(path, what: "scenario file") {
            case let .failure(e):
                input.diagnostics += e.diagnostics
            case let .success((node, text)):
                input.sources[path] = text
                let (scenarios, diagnostics) = ScenarioLoader.load(node, file: path, defaultPolicy: single)
                input.diagnostics += diagnostics
                for var s in scenarios {
                    if input.policies[s.policy] == nil, s.policy.hasSuffix(".yaml") || s.policy.hasSuffix(".yml") {
                        let dir = (path as NSString).deletingLastPathComponent
                        let resolved =
                            dir.isEmpty || s.policy.hasPrefix("/") ? s.policy : (dir as NSString).appendingPathComponent(s.policy)
                        if let name = input.addPolicy(resolved) { s.policy = name }
                    }
                    if input.policies[s.policy] == nil {
                        let known = input.policies.keys.sorted()
                        input.diagnostics.append(
                            .error(
                                .unknownPolicy, "scenario `\(s.name)` names policy `\(s.policy)`, which is not loaded", at: s.location,
                                help: known.isEmpty
                                    ? "give the policy file on the command line" : Suggestion.publicHelp(for: s.policy, in: known)))
                        continue
                    }
                    input.scenarios.append(s)
                }
            }
        }
        input.diagnostics = input.diagnostics.sortedForOutput()
        return input
    }

    /// Loads one policy file; returns its name, or nil after recording diagnostics.
    @discardableResult
    mutating func addPolicy(_ path: String) -> String? {
        let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        if let existing = policies.values.first(where: {
            URL(fileURLWithPath: $0.path).standardizedFileURL.resolvingSymlinksInPath().path == key
        }) {
            return existing.compiled.name
        }
        switch PolicyFile.load(path) {
        case let .failure(e):
            diagnostics += e.diagnostics
            if let text = try? String(contentsOfFile: path, encoding: .utf8) { sources[path] = text }
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
                return nil
            }
            policies[name] = loaded
            return name
        }
    }
}
