import CLibYAML
import SessionPolicy

/// The diagnostic for text libyaml cannot read: located at libyaml's `problem_mark`, with its
/// `context` and `context_mark` as a note, and a hint.
enum YAMLSyntaxError {
    /// The diagnostic for the error `parser` stopped at, reading `input`.
    static func diagnostic(_ parser: yaml_parser_t, input: UnsafeBufferPointer<UInt8>, file: String) -> Diagnostic {
        func at(_ mark: yaml_mark_t) -> (line: Int, column: Int) { (Int(mark.line) + 1, Int(mark.column) + 1) }
        switch parser.error {
        case YAML_SCANNER_ERROR, YAML_PARSER_ERROR:
            let problem = parser.problem.map { String(cString: $0) } ?? "the text cannot be read as YAML"
            var notes: [String] = []
            if let context = parser.context.map({ String(cString: $0) }), !context.isEmpty {
                let (line, column) = at(parser.context_mark)
                notes.append("\(context) at \(line):\(column)")
            }
            let (line, column) = at(parser.problem_mark)
            return .error(
                .yamlSyntax, "invalid YAML: \(problem)", at: SourceLocation(file: file, line: line, column: column), notes: notes,
                help: hints[problem] ?? "check the indentation and the quoting at the place shown")
        case YAML_READER_ERROR:
            // A backstop: the checks before reading refuse what libyaml's reader refuses.
            let problem = parser.problem.map { String(cString: $0) } ?? "unreadable text"
            let offset = min(parser.problem_offset, input.count)
            let (line, column) = position(of: offset, in: input)
            return .error(
                .invalidUTF8, "the text cannot be read: \(problem) at byte offset \(offset)",
                at: SourceLocation(file: file, line: line, column: column), help: "save the file as UTF-8 text without control characters")
        default:
            return unreadable(file: file)
        }
    }

    /// The diagnostic when libyaml fails for want of memory.
    static func unreadable(file: String) -> Diagnostic {
        .error(
            .yamlSyntax, "the text cannot be read as YAML", at: SourceLocation(file: file, line: 1, column: 1),
            help: "check the file is YAML text; `policyctl lint` on a shipped policy shows a valid one")
    }

    /// The hints, keyed on libyaml's problem texts. libyaml says which error it met only in these
    /// words (the string constants of its scanner.c and parser.c, unchanged since 0.1): there is
    /// no error number to key on. A text not listed gets the general hint.
    static let hints: [String: String] = {
        let tabs = "indent with spaces, not tabs; quote values that start with `@`, `` ` `` or `%`"
        let entry = "write each entry as `key: value`; a value that goes on over several lines must be quoted or indented"
        return [
            "found character that cannot start any token": tabs,
            "found a tab character that violates indentation": tabs,
            "found a tab character where an indentation space is expected": tabs,
            "mapping values are not allowed in this context": "quote values that contain `: `, or check the indentation",
            "could not find expected ':'": entry,
            "found unexpected ':'": entry,
            "did not find expected ',' or ']'": "close the list `[...]` where it is opened, with `, ` between its items",
            "did not find expected ',' or '}'": "close the mapping `{...}` where it is opened, with `, ` between its entries",
            "did not find expected node content": "a value is missing after `-`, `:` or `,`, or the indentation is off",
            "found unexpected end of stream": "the file ends inside a quoted string or a bracket: close it",
        ]
    }()

    /// The 1-based line and column (in Unicode scalars) of byte `offset` of `input`, lines
    /// ending at `\n`, `\r\n` or `\r`.
    static func position(of offset: Int, in input: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var i = 0
        while i < offset {
            let byte = input[i]
            if byte == 0x0A || (byte == 0x0D && !(i + 1 < input.count && input[i + 1] == 0x0A)) {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 && byte != 0x0D {
                column += 1
            }
            i += 1
        }
        return (line, column)
    }
}
