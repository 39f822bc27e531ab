import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyVerify

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run scenario files against policies; ends with `N passed, N failed`.",
        discussion: """
            POLICY is a policy file or a directory of them; each SCENARIO is a scenario file or a \
            directory of them. A directory may hold policies and scenario files side by side: a file \
            with a top-level `scenarios:` is a scenario file, one with `version:` a policy, wherever \
            it is given, each read once; a property file, a compiled machine and an evaluation \
            input are skipped with a warning. Without SCENARIO, the scenario files come from POLICY. Scenarios name their \
            policy by its `name` (or by a path relative to the scenario file); with one policy, they \
            may leave it out.
            --coverage reports, per policy, how many of its levers the scenarios exercised (a lever \
            is a policy key that produced transitions, or `built-in`), how many of its distinct \
            guards they took (a check the machine repeats on every state and event counts once) and \
            how many of its transitions; then each lever never exercised and each guard never taken. \
            It counts only what can happen: verify's exploration (under a second per shipped policy \
            in a release build) finds the reachable transitions, and the dead ones (no sequence and \
            timing of events takes them), with the guards, levers and states that have nothing \
            else, are left out of the figures and listed apart. Where the exploration stops at its \
            limit, the report says so and every transition counts. \
            A failing scenario counts up to its failing step. --threshold PERCENT fails the check \
            when the overall coverage (all policies together) is below PERCENT, counted in levers \
            unless --threshold-unit says guard or transition.
            With --format junit, standard output is JUnit XML only; the summary line and the \
            coverage text go to standard error.
            Exit codes: 0 all scenarios passed; 1 a scenario failed, or coverage is below \
            --threshold; 2 invalid input; 64 usage error.
            """)

    @Argument(help: "A policy file or a directory of policy files.")
    var policy: String

    @Argument(help: "Scenario files or directories (default: POLICY, when it holds scenario files too).")
    var scenarios: [String] = []

    @Option(help: "Output format: human, json or junit.")
    var format: CheckFormat = .human

    @Flag(name: .shortAndLong, help: "List passing scenarios too.")
    var verbose = false

    @Flag(help: "Report the levers, guards and transitions the scenarios exercised and those they never reached.")
    var coverage = false

    @Flag(
        help:
            "With coverage, also list the guards of levers never exercised and every transition never taken with its guard and action (implies --coverage)."
    )
    var coverageDetail = false

    @Option(
        help: ArgumentHelp(
            "Fail when overall coverage, in --threshold-unit, is below this percentage, 0-100 (implies --coverage).",
            valueName: "percent"))
    var threshold: Double?

    @Option(
        help: ArgumentHelp(
            "What --threshold counts: lever (the default), guard or transition (`reachable`, its old name, is transition).",
            valueName: "unit"))
    var thresholdUnit: ThresholdUnit?

    /// Kept for scripts written when reachability was optional: it now only implies --coverage.
    @Flag(help: .hidden)
    var reachable = false

    func validate() throws {
        if let threshold, !(0...100).contains(threshold) {
            throw ValidationError("`--threshold` must be a percentage from 0 to 100")
        }
        if thresholdUnit != nil && threshold == nil {
            throw ValidationError("`--threshold-unit` needs `--threshold`")
        }
    }

    func run() throws {
        let scenarios = scenarios.isEmpty ? [policy] : scenarios
        let input = CheckInput.load(policies: [policy], scenarios: scenarios)
        let json = format == .json
        emit(input.diagnostics, sources: input.sources, json: json && input.diagnostics.hasErrors)
        if input.diagnostics.hasErrors { throw Exit.invalidInput }
        if input.scenarios.isEmpty {
            emit(
                [
                    .error(
                        .noScenarios, "no scenarios found in \(scenarios.map { "`\($0)`" }.joined(separator: ", "))", at: nil,
                        help: "give scenario files, or directories that hold `.yaml` scenario files (a file with `scenarios:` at the top)")
                ],
                sources: [:], json: json)
            throw Exit.invalidInput
        }
        let results = input.scenarios.map { ScenarioRunner.run($0, against: input.policies[$0.policy]!.compiled) }
        let report = CheckReport(results: results, policies: input.policies.mapValues(\.compiled))
        let unit = (thresholdUnit ?? .lever).unit
        var measured: CoverageReport?
        if coverage || coverageDetail || threshold != nil || reachable {
            var reachableIDs: [String: Set<Int>] = [:]
            var unexplored: Set<String> = []
            for (name, loaded) in input.policies {
                if let ids = Verifier.reachableTransitions(loaded.compiled) { reachableIDs[name] = ids } else { unexplored.insert(name) }
            }
            measured = report.coverage(threshold: threshold, thresholdUnit: unit, reachable: reachableIDs, unexplored: unexplored)
        }
        let out = report.render(format.report, verbose: verbose, coverage: measured, coverageDetail: coverageDetail)
        print(out.stdout, terminator: "")
        FileHandle.standardError.write(Data(out.stderr.utf8))
        if !report.succeeded(coverage: measured) { throw Exit.failures }
    }
}

/// `check`'s output formats: those of the other commands, plus JUnit XML.
enum CheckFormat: String, ExpressibleByArgument, CaseIterable {
    case human, json, junit

    var report: CheckReport.Format {
        switch self {
        case .human: .human
        case .json: .json
        case .junit: .junit
        }
    }
}

/// `--threshold-unit`: the coverage units a threshold can count.
enum ThresholdUnit: String, ExpressibleByArgument, CaseIterable {
    case lever, `guard`, transition, reachable

    var unit: CoverageUnit {
        switch self {
        case .lever: .lever
        case .guard: .guard
        case .transition, .reachable: .transition
        }
    }
}
