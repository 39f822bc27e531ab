import CYAMLEvents
package import Foundation
package import SessionPolicy
import Yams

/// YAML text -> located `SyntaxNode`, with bounds that keep hostile input harmless: a size
/// limit, strict UTF-8, no anchors or aliases, a nesting limit and a node budget. Every refusal
/// is a located diagnostic; nothing here crashes or hangs. JSON documents go through the core's
/// strict `JSONSyntax` instead (`DocumentFormat` picks the reader), which builds the same tree.
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

    /// Sets libyaml's own nesting bound (1000 levels by default) to `maxDepth`, once per
    /// process, so that nesting is refused while the text is read, before any tree is built.
    /// libyaml refuses the same documents as `Walker` (those with a value more than 64 levels
    /// deep; `HostileInputTests` holds it to that at the edge), sometimes placing the error at
    /// the collection whose content passes the limit instead of at that content. The setting
    /// is a global of the C library that Yams embeds: any other use of Yams in the process is
    /// held to it too (the README says so).
    private static let libyamlNestingBound: Void = sp_yaml_set_max_nest_level(Int32(InputLimits.files.depth))

    /// Parses `text` from `file` within `limits`. Returns the root, nil for an empty document, or diagnostics.
    package static func parse(_ text: String, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        _ = libyamlNestingBound
        if text.utf8.count > limits.bytes {
            return parse(Data(text.utf8), file: file, limits: limits)
        }
        // A UTF-8 byte-order mark is legal at the start of a file; libyaml would choke on it.
        if text.unicodeScalars.first == "\u{FEFF}" {
            return parse(String(String.UnicodeScalarView(text.unicodeScalars.dropFirst())), file: file, limits: limits)
        }
        let controls = TextEncoding.controlCharacters(text, file: file)
        if !controls.isEmpty { return .failure(DiagnosticError(controls)) }
        // First libyaml's events alone, in constant memory: what would make Yams slow (keys that
        // are lists or mappings, aliases, more nodes than the budget) is refused before it builds
        // a tree. Yams hashes every mapping key whole and sorts duplicated ones: a 3.8 KB file of
        // nested list keys took 10 s, a 465-byte file of aliased keys 10 s (one more level: 100).
        if let problem = prescan(text, file: file, limits: limits) { return .failure(DiagnosticError([problem])) }
        // The parser owns the anchors (nodes hold them weakly): keep it alive while walking so
        // anchored and aliased nodes can be recognised and refused.
        let parser: Parser
        let root: Node?
        do {
            // `.basic`: no implicit typing of plain scalars (the readers give each value its
            // type), so no regular expression runs per scalar; keys are compared as text.
            parser = try Parser(yaml: text, resolver: .basic)
            root = try parser.singleRoot()
        } catch let error as YamlError {
            return .failure(DiagnosticError([diagnostic(for: error, text: text, file: file)]))
        } catch {
            return .failure(
                DiagnosticError([
                    .error(.yamlSyntax, "the text cannot be read as YAML", at: SourceLocation(file: file, line: 1, column: 1))
                ]))
        }
        return withExtendedLifetime(parser) {
            guard let root else { return .success(nil) }
            // Only document markers (`---`, `...`): no value, as for an empty file.
            if case let .scalar(s) = root, s.string.isEmpty, s.style == .plain { return .success(nil) }
            var walker = Walker(file: file, limits: limits)
            let node = walker.convert(root, depth: 1)
            if let problem = walker.problem { return .failure(DiagnosticError([problem])) }
            return .success(node)
        }
    }

    /// The first problem `sp_yaml_scan` finds in `text`, as the diagnostic `Walker` or the
    /// readers would give for it, at the same place; nil when there is none (a syntax error is
    /// left to Yams, which describes it).
    static func prescan(_ text: String, file: String, limits: InputLimits) -> Diagnostic? {
        var text = text
        let scan = text.withUTF8 { sp_yaml_scan($0.baseAddress, $0.count, limits.nodes) }
        let at = SourceLocation(file: file, line: scan.line, column: scan.column)
        switch scan.code {
        case SPYAMLScanAnchor, SPYAMLScanAlias:
            return .error(
                .yamlAnchor, "anchors and aliases (`&name`, `*name`) are not supported", at: at,
                help: "write the value out in full; expanding aliases could make a small file enormous")
        case SPYAMLScanListKey, SPYAMLScanMappingKey:
            return .error(
                .wrongType, "keys must be plain words, found \(scan.code == SPYAMLScanListKey ? "a list" : "a mapping")", at: at,
                help: "YAML allows a list or a mapping as a key (`? [a, b]`); policies and scenario files use words")
        case SPYAMLScanTooManyNodes:
            return .error(.tooManyNodes, "the document has more than \(limits.nodes) values", at: at, help: limits.hint)
        default:
            return nil
        }
    }

    // MARK: Conversion

    struct Walker {
        let file: String
        let limits: InputLimits
        var nodes = 0
        var problem: Diagnostic?

        func location(_ node: Node) -> SourceLocation {
            SourceLocation(file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1)
        }

        mutating func fail(_ d: Diagnostic) -> SyntaxNode {
            if problem == nil { problem = d }
            return SyntaxNode(.scalar("", isPlain: true), at: d.location ?? SourceLocation(file: file, line: 1, column: 1))
        }

        mutating func convert(_ node: Node, depth: Int) -> SyntaxNode {
            if problem != nil { return SyntaxNode(.scalar("", isPlain: true), at: location(node)) }
            nodes += 1
            if nodes > limits.nodes {
                return fail(
                    .error(
                        .tooManyNodes, "the document has more than \(limits.nodes) values", at: location(node),
                        help: limits.hint))
            }
            if depth > limits.depth {
                return fail(
                    .error(
                        .nestingTooDeep, "values are nested more than \(limits.depth) levels deep", at: location(node),
                        help: "policies and scenarios need only a few levels"))
            }
            if node.anchor != nil {
                return fail(
                    .error(
                        .yamlAnchor, "anchors and aliases (`&name`, `*name`) are not supported", at: location(node),
                        help: "write the value out in full; expanding aliases could make a small file enormous"))
            }
            switch node {
            case let .scalar(s):
                let plain = s.style == .plain && !s.tag.description.hasSuffix(":str")
                return SyntaxNode(.scalar(s.string, isPlain: plain), at: location(node))
            case let .sequence(seq):
                var items: [SyntaxNode] = []
                items.reserveCapacity(seq.count)
                for child in seq { items.append(convert(child, depth: depth + 1)) }
                return SyntaxNode(.sequence(items), at: location(node))
            case let .mapping(map):
                var pairs: [(key: SyntaxNode, value: SyntaxNode)] = []
                for (k, v) in map {
                    let key = convert(k, depth: depth + 1)
                    let value = convert(v, depth: depth + 1)
                    pairs.append((key, value))
                }
                return SyntaxNode(.mapping(pairs), at: location(node))
            case .alias:
                return fail(
                    .error(
                        .yamlAnchor, "anchors and aliases (`&name`, `*name`) are not supported", at: location(node),
                        help: "write the value out in full"))
            }
        }
    }

    // MARK: Errors

    static func diagnostic(for error: YamlError, text: String, file: String) -> Diagnostic {
        func at(_ mark: Mark) -> SourceLocation { SourceLocation(file: file, line: max(1, mark.line), column: max(1, mark.column)) }
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _), let .composer(context, problem, mark, _):
            var notes: [String] = []
            if let context, !context.text.isEmpty { notes.append("\(context.text) at \(context.mark.line):\(context.mark.column)") }
            if problem.contains("another document") {
                return .error(
                    .multipleDocuments, "a second YAML document starts here; a policy or scenario file holds one", at: at(mark),
                    help: "remove this `---` line and what follows it, or put each document in a file of its own")
            }
            if problem.contains("nesting level") || problem.contains("depth") {
                return .error(
                    .nestingTooDeep, "values are nested more than \(YAMLSyntax.maxDepth) levels deep", at: at(mark),
                    help: "policies and scenarios need only a few levels")
            }
            var help: String? = nil
            if problem.contains("tab") || problem.contains("cannot start any token") {
                help = "indent with spaces, not tabs; quote values that start with `@`, `` ` `` or `%`"
            } else if problem.contains("mapping values are not allowed") {
                help = "quote values that contain `: `, or check the indentation"
            } else if problem.contains("expected ':'") {
                help = "write each entry as `key: value`; a value that goes on over several lines must be quoted or indented"
            } else if problem.contains("expected ',' or ']'") {
                help = "close the list `[...]` where it is opened, with `, ` between its items"
            } else if problem.contains("expected ',' or '}'") {
                help = "close the mapping `{...}` where it is opened, with `, ` between its entries"
            } else if problem.contains("node content") {
                help = "a value is missing after `-`, `:` or `,`, or the indentation is off"
            } else if problem.contains("end of stream") {
                help = "the file ends inside a quoted string or a bracket: close it"
            } else {
                help = "check the indentation and the quoting at the place shown"
            }
            return .error(.yamlSyntax, "invalid YAML: \(problem)", at: at(mark), notes: notes, help: help)
        case let .duplicatedKeysInMapping(duplicates, context):
            let key = duplicates.first ?? ""
            let first = at(context.mark)
            let second = secondOccurrence(of: key, after: context.mark, in: text).map {
                SourceLocation(file: file, line: $0.line, column: $0.column)
            }
            return .error(
                .duplicateKey, "key `\(key)` appears twice in the same mapping", at: second ?? first,
                notes: second != nil ? ["first written at \(first)"] : [],
                help: "keep one of the two; YAML does not allow duplicate keys")
        case let .reader(problem, offset, _, _):
            // The checks before parsing catch what the YAML reader refuses; this is a backstop.
            return .error(
                .invalidUTF8, "the text cannot be read: \(problem)" + (offset.map { " at byte offset \($0)" } ?? ""),
                at: SourceLocation(file: file, line: 1, column: 1), help: "save the file as UTF-8 text without control characters")
        default:
            return .error(
                .yamlSyntax, "the text cannot be read as YAML", at: SourceLocation(file: file, line: 1, column: 1),
                help: "check the file is YAML text; `policyctl lint` on a shipped policy shows a valid one")
        }
    }

    /// The line and column of the second `key:` at the same column as the first.
    static func secondOccurrence(of key: String, after mark: Mark, in text: String) -> (line: Int, column: Int)? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard mark.line >= 1, mark.line <= lines.count else { return nil }
        for index in mark.line..<lines.count {
            let scalars = Array(lines[index].unicodeScalars)
            let col = mark.column - 1
            guard col >= 0, col < scalars.count else { continue }
            let prefixOK = scalars[..<col].allSatisfy { $0 == " " || $0 == "-" }
            guard prefixOK else { continue }
            let rest = String(String.UnicodeScalarView(scalars[col...]))
            for candidate in [key, "\"\(key)\"", "'\(key)'"] where rest.hasPrefix(candidate) {
                let after = rest.dropFirst(candidate.count).drop { $0 == " " }
                if after.hasPrefix(":") { return (index + 1, mark.column) }
            }
        }
        return nil
    }
}
