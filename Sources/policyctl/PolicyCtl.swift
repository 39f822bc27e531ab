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
        version: SessionPolicyRelease.version,
        subcommands: [
            Check.self, Lint.self, Verify.self, Diff.self, Eval.self, Explain.self, Compile.self, Sign.self, Inspect.self, History.self,
            ServeLauncher.self, Token.self,
        ])
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

extension PolicyFile {
    /// Loads every policy file named or found in the directories named, each file once. Prints
    /// the diagnostics and throws `Exit.invalidInput` when one does not load or none is found.
    static func loadAll(_ paths: [String], json: Bool) throws -> (loaded: [Loaded], sources: [String: String]) {
        var loaded: [Loaded] = []
        var problems: [Diagnostic] = []
        var sources: [String: String] = [:]
        var seen: Set<String> = []
        for path in paths.flatMap(SourceFile.expand)
        where seen.insert(URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path).inserted {
            switch load(path) {
            case let .failure(e):
                problems += e.diagnostics
                sources[path] = SourceFile.quotable(path)
            case let .success(l):
                loaded.append(l)
                sources[path] = l.text
            }
        }
        if problems.hasErrors {
            emit(problems, sources: sources, json: json)
            throw Exit.invalidInput
        }
        if loaded.isEmpty {
            emit(
                [
                    .error(
                        .noPolicies, "no policies found in \(paths.map { "`\($0)`" }.joined(separator: ", "))", at: nil,
                        help: "give policy files, or directories that hold `.yaml` policy files")
                ], sources: [:], json: json)
            throw Exit.invalidInput
        }
        return (loaded, sources)
    }
}
