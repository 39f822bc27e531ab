public import Foundation
public import SessionPolicy

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading input files with the same bounds and diagnostics everywhere.
public enum SourceFile {
    /// Reads `path` within `YAMLSyntax.maxBytes` (see `read(_:limit:)`).
    package static func read(_ path: String) -> Result<Data, DiagnosticError> { read(path, limit: YAMLSyntax.maxBytes) }

    /// Reads `path` (or standard input for `-`), holding at most `YAMLSyntax.maxBytes + 1`
    /// bytes: a regular file over the limit is refused from its size before any of it is read;
    /// anything else (standard input, a FIFO, `/dev/zero`) is read up to the limit plus one
    /// byte, which the parser then refuses as too large. A FIFO with no writer reads as empty
    /// instead of blocking. Missing files and directories are refused with their own messages.
    /// `limit` is `YAMLSyntax.maxBytes` for policies, scenarios and evaluation inputs.
    public static func read(_ path: String, limit: Int) -> Result<Data, DiagnosticError> {
        let start = SourceLocation(file: path == "-" ? "<stdin>" : path, line: 1, column: 1)
        let fd: Int32
        if path == "-" {
            fd = 0
        } else {
            fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                let missing = errno == ENOENT || errno == ENOTDIR
                return .failure(
                    DiagnosticError([
                        .error(
                            .fileNotFound, missing ? "no such file `\(path)`" : "cannot read `\(path)`", at: nil,
                            help: missing ? "check the path; relative paths start at the current directory" : "check the file's permissions"
                        )
                    ]))
            }
        }
        defer { if fd != 0 { close(fd) } }
        var info = stat()
        if fstat(fd, &info) == 0 {
            let kind = info.st_mode & S_IFMT
            if kind == S_IFDIR {
                return .failure(DiagnosticError([.error(.fileNotFound, "`\(path)` is a directory, not a file", at: nil)]))
            }
            if kind == S_IFREG, Int64(info.st_size) > Int64(limit) {
                return .failure(
                    DiagnosticError([
                        .error(
                            .inputTooLarge, "file is \(info.st_size) bytes, more than the limit of \(limit) bytes",
                            at: start, help: "policy and scenario files are small; check that this is the right file")
                    ]))
            }
        }
        if fd != 0 {
            // Opened without blocking (a FIFO with no writer), read blocking.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        }
        let capacity = limit + 1
        var data = Data(count: capacity)
        var count = 0
        let failed = data.withUnsafeMutableBytes { buffer -> Bool in
            while count < capacity {
                let n = Foundation.read(fd, buffer.baseAddress! + count, capacity - count)
                if n == 0 { return false }
                if n < 0 {
                    if errno == EINTR { continue }
                    return true
                }
                count += n
            }
            return false
        }
        if failed {
            return .failure(
                DiagnosticError([.error(.fileNotFound, "cannot read `\(path)`", at: nil, help: "check that it is a readable file")]))
        }
        data.count = count
        return .success(data)
    }

    /// The text of `path` for quoting lines in diagnostics, or nil when it cannot be read or is
    /// over the size limit: never more than the limit plus one byte is read, so a diagnostic
    /// about a huge or endless input costs no more than one about a small one.
    package static func quotable(_ path: String) -> String? {
        guard path != "-", case let .success(data) = read(path), data.count <= YAMLSyntax.maxBytes else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A file read and parsed once: its located syntax (nil for a document with no value) and
    /// its text, or why it could not be read.
    package typealias Parsed = Result<(node: SyntaxNode?, text: String), DiagnosticError>

    /// Reads and parses `path` into located syntax, as JSON or YAML (`DocumentFormat`'s rule).
    package static func parse(_ path: String) -> Parsed {
        read(path).flatMap { data in
            DocumentFormat.parse(data, file: path).map { (node: $0, text: String(decoding: data, as: UTF8.self)) }
        }
    }

    /// `parsed` (of `path`) with an empty document made an error: `what` names the kind of file
    /// and `start` says how such a file starts, the hint.
    package static func nonEmpty(
        _ parsed: Parsed, _ path: String, what: String, start: String
    ) -> Result<(SyntaxNode, String), DiagnosticError> {
        parsed.flatMap { node, text in
            guard let node else {
                return .failure(
                    DiagnosticError([
                        .error(
                            .emptyDocument, "the \(what) is empty (no value, only comments or document markers)",
                            at: SourceLocation(file: path, line: 1, column: 1), help: start)
                    ]))
            }
            return .success((node, text))
        }
    }

    /// Reads and parses `path` into located syntax; an empty document is an error (`nonEmpty`).
    package static func syntax(_ path: String, what: String, start: String) -> Result<(SyntaxNode, String), DiagnosticError> {
        nonEmpty(parse(path), path, what: what, start: start)
    }

    /// The YAML and JSON files directly in `directory` (or `path` itself if it is a file), sorted.
    public static func expand(_ path: String) -> [String] {
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
                        .emptyDocument, "the policy is empty (no value, only comments or document markers)",
                        at: SourceLocation(file: file, line: 1, column: 1), help: PolicyLoader.start)
                ]))
        case let .success(node?):
            return PolicyPipeline.prepareForEval(node).map(\.compiled)
        }
    }

    /// Loads, validates and compiles the policy file at `path`.
    public static func load(_ path: String) -> Result<Loaded, DiagnosticError> {
        load(path, parsed: SourceFile.parse(path))
    }

    /// Validates and compiles the policy file at `path`, already read and parsed (`parsed`).
    package static func load(_ path: String, parsed: SourceFile.Parsed) -> Result<Loaded, DiagnosticError> {
        switch SourceFile.nonEmpty(parsed, path, what: "policy", start: PolicyLoader.start) {
        case let .failure(e):
            return .failure(e)
        case let .success((node, text)):
            return PolicyPipeline.prepareForEval(node).map {
                Loaded(compiled: $0.compiled, path: path, text: text, warnings: $0.warnings)
            }
        }
    }
}
