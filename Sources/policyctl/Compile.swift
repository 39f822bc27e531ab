import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyYAML

struct Compile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compile a policy and print its state machine.",
        discussion: """
            Formats: text (a table of states, events and guards in the order they are tried), \
            json, dot (Graphviz) and mermaid. The output is deterministic.
            Exit codes: 0 compiled; 2 invalid policy; 64 usage error.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, dot, mermaid
    }

    @Argument(help: "The policy file.")
    var policy: String

    @Option(help: "Output format: text, json, dot or mermaid.")
    var format: Format = .text

    func run() throws {
        switch PolicyFile.load(policy) {
        case let .failure(e):
            let text = SourceFile.quotable(policy) ?? ""
            emit(e.diagnostics, sources: [policy: text], json: format == .json)
            throw Exit.invalidInput
        case let .success(loaded):
            emit(loaded.warnings, sources: [policy: loaded.text], json: false)
            let c = loaded.compiled
            switch format {
            case .text: print(c.machine.renderText(), terminator: "")
            case .json: print(c.machine.renderJSON(), terminator: "")
            case .dot: print(c.machine.renderDot(), terminator: "")
            case .mermaid: print(c.machine.renderMermaid(), terminator: "")
            }
        }
    }
}
