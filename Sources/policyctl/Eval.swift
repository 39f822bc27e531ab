import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyYAML

struct Eval: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Evaluate one event against a session state and print the decision as JSON.",
        discussion: """
            INPUT (a file, or `-` for standard input) is JSON or YAML with `event` and an optional \
            `state` (default: signed out), in the shapes docs/state-events-outcomes.md documents.
            Exit codes: 0 evaluated; 2 invalid input; 64 usage error.
            """)

    @Argument(help: "The policy file.")
    var policy: String

    @Argument(help: "The input file, or `-` for standard input.")
    var input: String = "-"

    @Flag(help: "Include every guard tried, with its facts and policy line.")
    var explain = false

    @Option(help: "Output format: json or human.")
    var format: OutputFormat = .json

    func run() throws {
        let (loaded, state, event) = try EvaluationInput.load(policy: policy, documents: [input], json: format == .json)
        let compiled = loaded.compiled
        let (outcome, trace) = compiled.explain(state, event)
        let report = EvaluationReport(policy: compiled, outcome: outcome, decidedBy: true, trace: explain ? trace : nil)
        if format == .json {
            print(JSONOutput.string(report))
        } else {
            print(OutcomeRenderer.summary(outcome))
            print("message: \(outcome.message)")
            print(OutcomeRenderer.state(outcome.state), terminator: "")
            if explain {
                print(OutcomeRenderer.trace(trace), terminator: "")
            } else if let d = report.decidedBy {
                print("  decided by #\(d.transition) \(d.check) [\(d.levers.joined(separator: ", "))] \(d.location ?? "")")
            }
        }
    }
}
