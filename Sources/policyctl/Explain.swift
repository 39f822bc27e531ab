import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyYAML

struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the path through the policy that produced a decision.",
        discussion: """
            `explain POLICY INPUT` reads one document with `event` and an optional `state`; \
            `explain POLICY STATE EVENT` reads them from two documents (`-` is standard input). \
            Every guard tried is listed in order with the facts it looked at and the policy line it \
            comes from; the one that decided is marked.
            Exit codes: 0 explained; 2 invalid input; 64 usage error.
            """)

    @Argument(help: "The policy file.")
    var policy: String

    @Argument(help: "INPUT, or STATE and EVENT.")
    var documents: [String] = ["-"]

    @Option(help: "Output format: human or json.")
    var format: OutputFormat = .human

    func validate() throws {
        if documents.count > 2 { throw ValidationError("give INPUT, or STATE and EVENT") }
    }

    func run() throws {
        let (loaded, state, event) = try EvaluationInput.load(policy: policy, documents: documents, json: format == .json)
        let compiled = loaded.compiled
        let (outcome, trace) = compiled.explain(state, event)
        if format == .json {
            struct Report: Encodable {
                var policy: String
                var outcome: Outcome
                var trace: [TraceStep]
            }
            print(JSONOutput.string(Report(policy: compiled.name, outcome: outcome, trace: trace)))
            return
        }
        print("\(event.kind.rawValue) at \(event.time) in state \(state.state.rawValue), policy \(compiled.name):")
        print(OutcomeRenderer.trace(trace), terminator: "")
        print(OutcomeRenderer.summary(outcome))
        print("message: \(outcome.message)")
        print(OutcomeRenderer.state(outcome.state), terminator: "")
    }
}
