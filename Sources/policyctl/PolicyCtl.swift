import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyYAML

/// `policyctl`: check, lint, evaluate and compile session policies.
@main
struct PolicyCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policyctl",
        abstract: "Check, lint, evaluate, compile and serve SessionPolicy files.",
        discussion: """
            Exit codes: 0 success; 1 a scenario failed (check), or a warning with --strict (lint); \
            2 invalid input (a policy, scenario, state or event does not load); 64 usage error.
            """,
        version: "0.2.0",
        subcommands: [Check.self, Lint.self, Eval.self, Explain.self, Compile.self, ServeLauncher.self])
}

/// Exit codes, a documented contract.
enum Exit {
    /// A scenario failed (`check`), or a warning with `--strict` (`lint`).
    static let failures = ExitCode(1)
    static let invalidInput = ExitCode(2)
}

/// Output formats shared by subcommands.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case human, json
}

/// Prints diagnostics: human to standard error, or JSON to standard output.
func emit(_ diagnostics: [Diagnostic], sources: [String: String], json: Bool) {
    guard !diagnostics.isEmpty else { return }
    if json {
        print(DiagnosticRenderer.json(diagnostics))
    } else {
        FileHandle.standardError.write(Data((DiagnosticRenderer(sources: sources).render(diagnostics) + "\n").utf8))
    }
}
