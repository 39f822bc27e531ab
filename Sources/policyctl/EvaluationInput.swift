import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyYAML

/// Reading what `eval` and `explain` evaluate: a policy, and either one document with `state`
/// and `event`, or a state document and an event document, each JSON or YAML by
/// `DocumentFormat`'s rule (the name's extension, else JSON when it starts with `{` or `[`).
/// Problems are printed as located diagnostics and end the command with exit code 2.
enum EvaluationInput {
    static func load(policy: String, documents: [String], json: Bool) throws -> (PolicyFile.Loaded, SessionState, Event) {
        let loaded: PolicyFile.Loaded
        switch PolicyFile.load(policy) {
        case let .failure(e):
            emit(e.diagnostics, sources: [policy: SourceFile.quotable(policy) ?? ""], json: json)
            throw Exit.invalidInput
        case let .success(l): loaded = l
        }
        var sources = [policy: loaded.text]
        var nodes: [SyntaxNode] = []
        for path in documents {
            let file = path == "-" ? "<stdin>" : path
            switch SourceFile.read(path).flatMap({ DocumentFormat.parse($0, file: file) }) {
            case let .failure(e):
                emit(e.diagnostics, sources: sources, json: json)
                throw Exit.invalidInput
            case .success(nil):
                emit(
                    [
                        .error(
                            .emptyDocument, "the input is empty", at: SourceLocation(file: file, line: 1, column: 1),
                            help: documents.count == 1 ? "give a mapping with `event` and optionally `state`" : "give a mapping")
                    ],
                    sources: sources, json: json)
                throw Exit.invalidInput
            case let .success(n?):
                nodes.append(n)
            }
            if let text = SourceFile.quotable(path) { sources[file] = text }
        }
        var r = SyntaxReader()
        var state = SessionState()
        var event: Event?
        if nodes.count == 1 {
            if let input = r.evaluationInput(nodes[0], path: "") { (state, event) = input }
        } else {
            if let st = r.sessionState(nodes[0], path: "state") { state = st }
            event = r.event(nodes[1], path: "event")
        }
        if r.diagnostics.hasErrors || event == nil {
            emit(r.diagnostics, sources: sources, json: json)
            throw Exit.invalidInput
        }
        return (loaded, state, event!)
    }
}
