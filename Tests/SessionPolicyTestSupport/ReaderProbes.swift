public import Foundation
public import SessionPolicy
public import SessionPolicyCheck
public import SessionPolicyYAML

/// The root package's readers and stages, each as one call, for the fuzz targets (`Fuzz/`), the
/// benchmarks (`Benchmarks/`) and the server's tests, which are other packages and see only
/// public API: the readers stay `package`, and these few entry points are what those packages
/// reach them through. Not API: no stability promise.
public enum ReaderProbes {
    /// A policy file's bytes read (YAML, or JSON by `DocumentFormat`'s rule), validated and
    /// compiled as `policyctl check` reads a file: invalid UTF-8 and every other problem is a
    /// located diagnostic.
    public static func policy(_ bytes: Data, file: String) -> Result<PolicyFile.Loaded, DiagnosticError> {
        let parsed: SourceFile.Parsed = DocumentFormat.parse(bytes, file: file).map {
            (node: $0, text: String(decoding: bytes, as: UTF8.self))
        }
        return PolicyFile.load(file, parsed: parsed)
    }

    /// The warnings `policyctl lint` reports for `policy` (those its `lint.allow` accepts left out).
    public static func lintWarnings(_ policy: CompiledPolicy) -> [Diagnostic] {
        PolicyLinter.findings(for: policy.validated).warnings
    }

    /// A scenario file's bytes read against `policies` as `policyctl check` reads a file: the
    /// scenarios, or the problems in `diagnostics`.
    public static func scenarios(_ bytes: Data, file: String, policies: [String: PolicyFile.Loaded]) -> CheckInput {
        let parsed: SourceFile.Parsed = DocumentFormat.parse(bytes, file: file).map {
            (node: $0, text: String(decoding: bytes, as: UTF8.self))
        }
        var input = CheckInput()
        input.policies = policies
        var unknown = CheckInput.UnknownPolicies()
        input.addScenarios(parsed, path: file, defaultPolicy: nil, unknown: &unknown)
        return input
    }

    /// The event keys that carry the facts some event kinds cannot do without (`network`,
    /// `auth_mode`, `app_id`, `user`, `cause`), in the order problems are reported.
    public static var eventFactKeys: [String] { EventFact.allCases.map(\.field.key) }

    /// The keys of `eventFactKeys` an event of `kind` must carry.
    public static func requiredKeys(of kind: EventKind) -> [String] { kind.requiredFacts.facts.map(\.field.key) }

    /// A YAML document read into located syntax (the first stage of loading a policy).
    public struct Syntax: Sendable {
        let node: SyntaxNode
    }

    /// YAML text -> located syntax: nil for an empty document or a refusal.
    public static func yamlSyntax(_ text: String, file: String) -> Syntax? {
        guard case let .success(node?) = YAMLSyntax.parse(text, file: file) else { return nil }
        return Syntax(node: node)
    }

    /// Located syntax -> a validated policy (the second stage), or nil with diagnostics.
    public static func validate(_ syntax: Syntax) -> (policy: ValidatedPolicy?, diagnostics: [Diagnostic]) {
        PolicyLoader.load(syntax.node)
    }
}
