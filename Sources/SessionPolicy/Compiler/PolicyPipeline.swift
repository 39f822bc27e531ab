/// The pipeline's one front door, as OPA's `PrepareForEval`: located syntax in, a compiled
/// machine (with the warnings found on the way) or every diagnostic out. Parse (a front end
/// such as the YAML reader yields a `SyntaxNode`) -> read and validate (`PolicyLoader`, once)
/// -> compile (`Compiler`). No stage re-parses or re-validates what an earlier one produced.
package enum PolicyPipeline {
    /// A policy ready to evaluate.
    package struct Prepared: Sendable {
        /// The compiled policy.
        package let compiled: CompiledPolicy
        /// The warnings found while reading and validating it, sorted.
        package let warnings: [Diagnostic]
    }

    /// Reads, validates and compiles the policy in `root`.
    package static func prepareForEval(_ root: SyntaxNode) -> Result<Prepared, DiagnosticError> {
        let (validated, diagnostics) = PolicyLoader.load(root)
        guard let validated else { return .failure(DiagnosticError(diagnostics)) }
        return .success(Prepared(compiled: CompiledPolicy(validated), warnings: diagnostics))
    }
}
