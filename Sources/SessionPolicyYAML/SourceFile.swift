package import Foundation
public import SessionPolicy

/// Reading input files with the same bounds and diagnostics everywhere.
package enum SourceFile {
    /// Reads `path` (or standard input for `-`), refusing missing files, directories and files
    /// over `YAMLSyntax.maxBytes` before reading them.
    package static func read(_ path: String) -> Result<Data, DiagnosticError> {
        let start = SourceLocation(file: path, line: 1, column: 1)
        if path == "-" {
            let data = FileHandle.standardInput.readData(ofLength: YAMLSyntax.maxBytes + 1)
            return .success(data)
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            return .failure(
                DiagnosticError([
                    .error(
                        .fileNotFound, "no such file `\(path)`", at: nil,
                        help: "check the path; relative paths start at the current directory")
                ]))
        }
        if isDir.boolValue {
            return .failure(DiagnosticError([.error(.fileNotFound, "`\(path)` is a directory, not a file", at: nil)]))
        }
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber,
            size.intValue > YAMLSyntax.maxBytes
        {
            return .failure(
                DiagnosticError([
                    .error(
                        .inputTooLarge, "file is \(size.intValue) bytes, more than the limit of \(YAMLSyntax.maxBytes) bytes", at: start,
                        help: "policy and scenario files are small; check that this is the right file")
                ]))
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return .failure(
                DiagnosticError([.error(.fileNotFound, "cannot read `\(path)`", at: nil, help: "check the file's permissions")]))
        }
        defer { try? handle.close() }
        let data = handle.readData(ofLength: YAMLSyntax.maxBytes + 1)
        return .success(data)
    }

    /// Reads and parses `path` into located syntax, as JSON or YAML (`DocumentFormat`'s rule).
    /// An empty document is an error.
    package static func syntax(_ path: String, what: String) -> Result<(SyntaxNode, String), DiagnosticError> {
        let data: Data
        switch read(path) {
        case let .success(d): data = d
        case let .failure(e): return .failure(e)
        }
        switch DocumentFormat.parse(data, file: path) {
        case let .failure(e):
            return .failure(e)
        case .success(nil):
            return .failure(
                DiagnosticError([
                    .error(
                        .emptyDocument, "the \(what) is empty", at: SourceLocation(file: path, line: 1, column: 1),
                        help: "a \(what) is a YAML mapping; see the README for its keys")
                ]))
        case let .success(node?):
            return .success((node, String(decoding: data, as: UTF8.self)))
        }
    }

    /// The YAML and JSON files directly in `directory` (or `path` itself if it is a file), sorted.
    package static func expand(_ path: String) -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") || $0.hasSuffix(".json") }
            .sorted()
            .map { path.hasSuffix("/") ? path + $0 : path + "/" + $0 }
    }
}

/// Loading and compiling policy files.
public enum PolicyFile {
    /// A compiled policy with the text it came from (for quoting lines in diagnostics).
    public struct Loaded: Sendable {
        public let compiled: CompiledPolicy
        public let path: String
        public let text: String
        /// Warnings found while loading.
        public let warnings: [Diagnostic]
    }

    /// Loads, validates and compiles a policy from YAML text (or JSON text, by
    /// `DocumentFormat`'s rule: `file` ends in `.json`, or the text starts with `{`).
    public static func compile(text: String, file: String) -> Result<CompiledPolicy, DiagnosticError> {
        switch DocumentFormat.parse(text, file: file) {
        case let .failure(e):
            return .failure(e)
        case .success(nil):
            return .failure(
                DiagnosticError([
                    .error(
                        .emptyDocument, "the policy is empty", at: SourceLocation(file: file, line: 1, column: 1),
                        help: "start with `version: 1` and `name: ...`")
                ]))
        case let .success(node?):
            return PolicyPipeline.prepareForEval(node).map(\.compiled)
        }
    }

    /// Loads, validates and compiles the policy file at `path`.
    public static func load(_ path: String) -> Result<Loaded, DiagnosticError> {
        switch SourceFile.syntax(path, what: "policy") {
        case let .failure(e):
            return .failure(e)
        case let .success((node, text)):
            return PolicyPipeline.prepareForEval(node).map {
                Loaded(compiled: $0.compiled, path: path, text: text, warnings: $0.warnings)
            }
        }
    }
}
