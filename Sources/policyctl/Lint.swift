import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyYAML

struct Lint: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Warn about legal but suspicious policies; ends with `N warnings in N policies`.",
        discussion: """
            Each POLICY is a policy file or a directory of them. The warnings (every code is in \
            docs/diagnostics.md) go to standard output; with `--format json` as `{"diagnostics": [...]}`, \
            printed even when empty. A policy accepts a warning on purpose by listing its code under \
            `lint: { allow: [...] }`; the summary counts those.
            Exit codes: 0 no warnings, or warnings without --strict; 1 warnings with --strict; \
            2 invalid input (a policy does not load); 64 usage error.
            """)

    @Argument(help: "Policy files or directories.")
    var policies: [String]

    @Option(help: "Output format: human or json.")
    var format: OutputFormat = .human

    @Flag(help: "Exit 1 when there is a warning.")
    var strict = false

    func validate() throws {
        if policies.isEmpty { throw ValidationError("give at least one policy file or directory") }
    }

    func run() throws {
        let (loaded, sources) = try PolicyFile.loadAll(policies, json: format == .json)
        var warnings: [Diagnostic] = []
        var notes: [Diagnostic] = []
        var allowed = 0
        for l in loaded {
            let findings = PolicyLinter.findings(for: l.compiled.validated)
            warnings += l.warnings + findings.warnings
            notes += PolicyLinter.notes(for: l.compiled.validated)
            allowed += findings.allowed.count
        }
        warnings = warnings.sortedForOutput()
        if format == .json {
            print(DiagnosticRenderer.json(warnings + notes))
        } else {
            let renderer = DiagnosticRenderer(sources: sources)
            for d in (warnings + notes).sortedForOutput() { print(renderer.render(d) + "\n") }
            let count = warnings.isEmpty ? "no warnings" : "\(warnings.count) warning" + (warnings.count == 1 ? "" : "s")
            let files = "\(loaded.count) polic" + (loaded.count == 1 ? "y" : "ies")
            var extras: [String] = []
            if allowed > 0 { extras.append("\(allowed) allowed by `lint.allow`") }
            if !notes.isEmpty { extras.append("\(notes.count) note" + (notes.count == 1 ? "" : "s")) }
            print("\(count) in \(files)" + (extras.isEmpty ? "" : " (\(extras.joined(separator: ", ")))"))
        }
        if strict, !warnings.isEmpty { throw Exit.failures }
    }
}
