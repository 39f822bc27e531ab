package import Foundation
package import SessionPolicy

/// Which reader a document goes through: JSON documents through the strict JSON reader
/// (`JSONSyntax`), everything else through the YAML front end (`YAMLSyntax`). Both build the
/// same located syntax, so what follows (policies, scenarios, states, events) does not care.
///
/// The rule, the same for every file the tools read: a name ending in `.json` is JSON; a name
/// ending in `.yaml` or `.yml` is YAML; any other name, and standard input, is JSON when its
/// first character other than whitespace (after an optional byte-order mark) is `{` or `[`,
/// and YAML otherwise. (YAML's flow style, `{event: {type: launch}}`, is therefore read as
/// JSON unless the file is named `.yaml`.)
package enum DocumentFormat: String, Sendable, Hashable, CaseIterable {
    case json
    case yaml

    /// The format of `bytes` read from `file` (`<stdin>` or `-` for standard input).
    package static func of(file: String, bytes: Data) -> DocumentFormat {
        bytes.withUnsafeBytes { of(file: file, bytes: $0) }
    }

    /// The format of `bytes` read from `file`.
    package static func of(file: String, bytes: UnsafeRawBufferPointer) -> DocumentFormat {
        let name = file.lowercased()
        if name.hasSuffix(".json") { return .json }
        if name.hasSuffix(".yaml") || name.hasSuffix(".yml") { return .yaml }
        var i = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        return i < bytes.count && (bytes[i] == UInt8(ascii: "{") || bytes[i] == UInt8(ascii: "[")) ? .json : .yaml
    }

    /// Parses `bytes` from `file` with the reader of this format. Nil for a document with no
    /// value (empty, or only whitespace or comments).
    package func parse(_ bytes: Data, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        switch self {
        case .json: JSONSyntax.parse(bytes, file: file, limits: limits)
        case .yaml: YAMLSyntax.parse(bytes, file: file, limits: limits)
        }
    }

    /// Parses `bytes` from `file` with the reader its name and content call for.
    package static func parse(_ bytes: Data, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        of(file: file, bytes: bytes).parse(bytes, file: file, limits: limits)
    }

    /// Parses `text` from `file` with the reader its name and content call for.
    package static func parse(_ text: String, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        let bytes = Data(text.utf8)
        return of(file: file, bytes: bytes).parse(bytes, file: file, limits: limits)
    }
}
