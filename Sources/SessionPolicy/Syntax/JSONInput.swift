public import Foundation

/// Reading a session state or an event from JSON with the rules of every other input: strict
/// RFC 8259 syntax, the input limits, no unknown or repeated keys, names without surrounding
/// spaces, the context each event kind needs; problems are located diagnostics. This is the
/// reference reader (`JSONSyntax`, then `SyntaxReader`); the server's fast codec
/// (`SessionPolicyJSON`) reads the same values from the same bytes, faster.
///
/// The `Codable` conformances of `SessionState` and `Event` are something else: the lenient
/// storage form, for values this library wrote (see `SessionState`).
extension SessionState {
    /// Reads a session state document, `{"state": "active", "user": "alice", ...}`. `file`
    /// names the input in diagnostics.
    public init(json: Data, file: String = "") throws(DiagnosticError) {
        self = try JSONInput.read(json, file: file) { r, node in r.sessionState(node, path: "") }
    }
}

extension Event {
    /// Reads an event document, `{"type": "launch", "time": "2026-03-01T09:00:00Z", ...}`.
    /// `file` names the input in diagnostics.
    public init(json: Data, file: String = "") throws(DiagnosticError) {
        self = try JSONInput.read(json, file: file) { r, node in r.event(node, path: "") }
    }
}

package enum JSONInput {
    /// The reference path: located syntax within `limits`, then `read`; every problem as a
    /// diagnostic. An empty input is `empty-document` with `help`.
    package static func read<T>(
        _ bytes: UnsafeRawBufferPointer, file: String, limits: InputLimits = .files, help: String = "give a JSON object",
        _ read: (inout SyntaxReader, SyntaxNode) -> T?
    ) throws(DiagnosticError) -> T {
        let node: SyntaxNode
        switch JSONSyntax.parse(bytes, file: file, limits: limits) {
        case let .failure(e):
            throw e
        case .success(nil):
            throw DiagnosticError([
                .error(.emptyDocument, "the input is empty", at: SourceLocation(file: file, line: 1, column: 1), help: help)
            ])
        case let .success(n?):
            node = n
        }
        var reader = SyntaxReader()
        let value = read(&reader, node)
        guard let value, !reader.diagnostics.hasErrors else {
            var diagnostics = reader.diagnostics
            if diagnostics.isEmpty { diagnostics.append(.error(.invalidValue, "the input is not valid", at: node.location)) }
            throw DiagnosticError(diagnostics)
        }
        return value
    }

    /// `read(_:file:limits:help:_:)` over `Data`.
    package static func read<T>(_ json: Data, file: String, _ read: (inout SyntaxReader, SyntaxNode) -> T?) throws(DiagnosticError) -> T {
        try json.withUnsafeBytes { bytes in
            Result { () throws(DiagnosticError) -> T in try Self.read(bytes, file: file, read) }
        }.get()
    }
}
