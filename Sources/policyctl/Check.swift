import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyCheck

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run scenario files against policies; ends with `N passed, N failed`.",
        discussion: """
            POLICY is a policy file or a directory of them; each SCENARIO is a scenario file or a \
            directory of them. Scenarios name their policy by its `name` (or by a path relative to \
            the scenario file); with one policy, they may leave it out.
            Exit codes: 0 all scenarios passed; 1 a scenario failed; 2 invalid input; 64 usage error.
            """)

    @Argument(help: "A policy file or a directory of policy files.")
    var policy: String

    @Argument(help: "Scenario files or directories.")
    var scenarios: [String]

    @Option(help: "Output format: human or json.")
    var format: OutputFormat = .human

    @Flag(name: .shortAndLong, help: "List passing scenarios too.")
    var verbose = false

    func validate() throws {
        if scenarios.isEmpty { throw ValidationError("give at least one scenario file or directory") }
    }

    func run() throws {
        let input = CheckInput.load(policies: [policy], scenarios: scenarios)
        emit(input.diagnostics, sources: input.sources, json: format == .json && input.diagnostics.hasErrors)
        if input.diagnostics.hasErrors { throw Exit.invalidInput }
        if input.scenarios.isEmpty {
            emit(
                [
                    .error(
                        .noScenarios, "no scenarios found in \(scenarios.map { "`\($0)`" }.joined(separator: ", "))", at: nil,
                        help: "give scenario files, or directories that hold `.yaml` scenario files")
                ],
                sources: [:], json: format == .json)
            throw Exit.invalidInput
        }
        let results = input.scenarios.map { ScenarioRunner.run($0, against: input.policies[$0.policy]!.compiled) }
        let report = CheckReport(results: results, policies: input.policies.mapValues(\.compiled))
        print(format == .json ? report.json() : report.human(verbose: verbose), terminator: "")
        if report.failed > 0 { throw Exit.failures }
    }
}
