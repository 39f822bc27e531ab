package import Foundation
package import SessionPolicy

/// YAML text -> located `SyntaxNode`, with bounds that keep hostile input harmless: a size
/// limit, strict UTF-8, no anchors or aliases, keys that are words, a nesting limit and a node
/// budget. Every refusal is a located diagnostic; nothing here crashes or hangs. JSON documents
/// go through the core's strict `JSONSyntax` instead (`DocumentFormat` picks the reader), which
/// builds the same tree.
///
/// The text is read in one pass over the events of the system's libyaml (`YAMLEventReader`):
/// each node is checked against the bounds as its event arrives and added to the tree at once,
/// so a refused document costs no more than the text read up to its first problem.
package enum YAMLSyntax {
    /// Largest input accepted, in bytes (1 MiB: policies and scenarios are a few KB).
    package static let maxBytes = InputLimits.files.bytes
    /// Deepest nesting accepted.
    package static let maxDepth = InputLimits.files.depth
    /// Most nodes accepted in one document.
    package static let maxNodes = InputLimits.files.nodes

    /// Parses `bytes` from `file` within `limits`. Returns the root, nil for an empty document, or diagnostics.
    package static func parse(_ bytes: Data, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        if bytes.count > limits.bytes {
            return .failure(
                DiagnosticError([
                    .error(
                        .inputTooLarge, "input is \(bytes.count) bytes, more than the limit of \(limits.bytes) bytes",
                        at: SourceLocation(file: file, line: 1, column: 1), help: limits.hint)
                ]))
        }
        let problem = bytes.withUnsafeBytes {
            TextEncoding.wideEncodingProblem($0, file: file) ?? TextEncoding.invalidUTF8($0, file: file)
        }
        if let problem { return .failure(DiagnosticError([problem])) }
        return parse(String(decoding: bytes, as: UTF8.self), file: file, limits: limits)
    }

    /// Parses `text` from `file` within `limits`. Returns the root, nil for an empty document, or diagnostics.
    package static func parse(_ text: String, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        if text.utf8.count > limits.bytes {
            return parse(Data(text.utf8), file: file, limits: limits)
        }
        // A UTF-8 byte-order mark is legal at the start of a file: it is skipped, and columns on
        // the first line count from the character after it.
        if text.unicodeScalars.first == "\u{FEFF}" {
            return parse(String(String.UnicodeScalarView(text.unicodeScalars.dropFirst())), file: file, limits: limits)
        }
        let controls = TextEncoding.controlCharacters(text, file: file)
        if !controls.isEmpty { return .failure(DiagnosticError(controls)) }
        var text = text
        return text.withUTF8 { YAMLEventReader.read($0, file: file, limits: limits) }
    }
}
