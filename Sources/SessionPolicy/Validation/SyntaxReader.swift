import Foundation

/// Reads typed values out of located syntax and collects a diagnostic for every problem,
/// so a file's errors are all reported at once.
package struct SyntaxReader: Sendable {
    /// Everything found so far.
    package private(set) var diagnostics: [Diagnostic] = []

    /// Creates a reader with no diagnostics.
    package init() {}

    /// A mapping's entries by key, with the key nodes for locations.
    package struct Fields: Sendable {
        /// The mapping node.
        package let node: SyntaxNode
        /// Dotted path of the mapping (`offline`), empty at the top.
        package let path: String
        let entries: [(key: SyntaxNode, value: SyntaxNode)]

        /// The value for `key`.
        package subscript(_ key: String) -> SyntaxNode? { entries.first { $0.key.scalar == key }?.value }
        /// Whether `key` is present.
        package func has(_ key: String) -> Bool { self[key] != nil }
        /// `path.key`.
        package func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
        /// The keys present, in file order.
        package var keys: [String] { entries.compactMap { $0.key.scalar } }
    }

    /// Adds a diagnostic.
    package mutating func report(_ d: Diagnostic) { diagnostics.append(d) }

    /// Adds an error.
    package mutating func error(_ code: DiagnosticCode, _ message: String, at node: SyntaxNode, notes: [String] = [], help: String? = nil) {
        diagnostics.append(.error(code, message, at: node.location, notes: notes, help: help))
    }

    /// Adds a warning.
    package mutating func warning(_ code: DiagnosticCode, _ message: String, at node: SyntaxNode, notes: [String] = [], help: String? = nil)
    {
        diagnostics.append(.warning(code, message, at: node.location, notes: notes, help: help))
    }

    /// Reads a mapping whose keys must be among `allowed`; unknown keys are reported with a
    /// "did you mean" hint. Returns nil (after reporting) if `node` is not a mapping.
    /// `start` is the hint for a document that is not a mapping: how the file must start.
    package mutating func fields(_ node: SyntaxNode, path: String, allowed: [String], start: String? = nil) -> Fields? {
        guard case let .mapping(pairs) = node.kind else {
            let what = path.isEmpty ? "the document" : "`\(path)`"
            error(
                .wrongType, "\(what) must be a mapping, found \(node.shapeName)", at: node,
                help: path.isEmpty ? start : "write `\(path.split(separator: ".").last!):` followed by indented `key: value` lines")
            return nil
        }
        for (key, _) in pairs {
            guard let name = key.scalar else {
                error(.wrongType, "keys must be plain words, found \(key.shapeName)", at: key)
                continue
            }
            if !allowed.contains(name) {
                let place = path.isEmpty ? "at the top level" : "in `\(path)`"
                error(.unknownKey, "unknown key `\(name)` \(place)", at: key, help: Suggestion.help(for: name, in: allowed))
            }
        }
        return Fields(node: node, path: path, entries: pairs)
    }

    /// The value of a required key, or nil after reporting `missing-key` at the mapping.
    package mutating func require(_ f: Fields, _ key: String, help: String? = nil) -> SyntaxNode? {
        if let v = f[key] { return v }
        let place = f.path.isEmpty ? "at the top level" : "in `\(f.path)`"
        error(.missingKey, "missing key `\(key)` \(place)", at: f.node, help: help)
        return nil
    }

    // MARK: Scalars

    private mutating func scalarText(_ node: SyntaxNode, _ path: String, expected: String) -> (String, Bool)? {
        guard case let .scalar(text, plain) = node.kind, !node.isNull else {
            let key = path.split(separator: ".").last.map(String.init) ?? path
            error(
                .wrongType, "`\(path)` must be \(expected), found \(node.shapeName)", at: node,
                help: node.isNull ? "write the value after `\(key):` on the same line" : "write `\(key): ` followed by \(expected)")
            return nil
        }
        return (text, plain)
    }

    /// A string (any non-null scalar).
    package mutating func string(_ node: SyntaxNode, _ path: String) -> String? {
        scalarText(node, path, expected: "a string")?.0
    }

    /// A user, device or app id (in a session state, an event, a server request): a name
    /// written as a string. An unquoted `true`, `false` or number (JSON's literals; in YAML, the
    /// plain scalars that look like them) is a `wrong-type` with a hint to quote it, as every
    /// runtime's reader says (docs/machine-format.md).
    package mutating func identity(_ node: SyntaxNode, _ path: String) -> String? {
        if case let .scalar(text, true) = node.kind, Self.isLiteral(text) {
            error(
                .wrongType, "`\(path)` must be a string, found `\(text)`", at: node,
                help: "write it in double quotes: `\"\(text)\"`")
            return nil
        }
        return name(node, path)
    }

    /// A non-empty string without surrounding spaces.
    package mutating func name(_ node: SyntaxNode, _ path: String) -> String? {
        guard let s = string(node, path) else { return nil }
        if s.isEmpty || s.unicodeScalars.first!.isSpaceOrNewline || s.unicodeScalars.last!.isSpaceOrNewline {
            error(.invalidValue, "`\(path)` must be a non-empty name without surrounding spaces", at: node)
            return nil
        }
        return s
    }

    /// `true`, `false`, or a number in JSON's grammar (`7`, `-1.5`, `2e3`).
    static func isLiteral(_ text: String) -> Bool {
        if text == "true" || text == "false" { return true }
        var bytes = Substring(text).utf8[...]
        func digits() -> Int {
            let n = bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }.count
            bytes = bytes.dropFirst(n)
            return n
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard digits() > 0 else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() > 0 else { return false }
        }
        if let e = bytes.first, e | 0x20 == UInt8(ascii: "e") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }

    /// An integer.
    package mutating func int(_ node: SyntaxNode, _ path: String) -> Int? {
        guard let (text, plain) = scalarText(node, path, expected: "an integer") else { return nil }
        guard plain, let v = Int(text) else {
            let quoted = !plain && Int(text) != nil
            error(
                .wrongType, "`\(path)` must be an integer, found " + (plain ? "`\(text)`" : "a string, `\"\(text)\"`"), at: node,
                help: quoted ? "write the number without quotes: `\(path.split(separator: ".").last ?? ""): \(text)`" : nil)
            return nil
        }
        return v
    }

    /// `true` or `false`.
    package mutating func bool(_ node: SyntaxNode, _ path: String) -> Bool? {
        guard let (text, plain) = scalarText(node, path, expected: "`true` or `false`") else { return nil }
        if plain, text == "true" || text == "True" || text == "TRUE" { return true }
        if plain, text == "false" || text == "False" || text == "FALSE" { return false }
        error(
            .wrongType, "`\(path)` must be `true` or `false`, found " + (plain ? "`\(text)`" : "a string, `\"\(text)\"`"), at: node,
            help: "write `true` or `false`, without quotes")
        return nil
    }

    /// A duration such as `7d`.
    package mutating func duration(_ node: SyntaxNode, _ path: String) -> TimeSpan? {
        guard let (text, _) = scalarText(node, path, expected: "a duration such as `7d`") else { return nil }
        switch TimeSpan.parse(text) {
        case let .success(span):
            return span
        case let .failure(problem):
            let help = "write a whole number and a unit, without spaces: `30s`, `15m`, `24h`, `7d`, `2w`"
            switch problem {
            case .negative:
                error(.invalidDuration, "duration `\(text)` is negative", at: node, help: "durations are lengths of time: \(help)")
            case .missingUnit:
                error(.invalidDuration, "duration `\(text)` has no unit", at: node, help: "did you mean `\(text)d`? \(help)")
            case let .unknownUnit(unit):
                error(
                    .invalidDuration, "duration `\(text)` has an unknown unit `\(unit)`", at: node,
                    help: "units are `s` (seconds), `m` (minutes), `h` (hours), `d` (days) and `w` (weeks), as in `7d`")
            case .tooLarge:
                error(
                    .invalidDuration, "duration `\(text)` is too large", at: node,
                    help: "the largest duration is `\(TimeSpan.maximum)` (100 years)")
            case .empty, .malformed:
                error(.invalidDuration, "`\(text)` is not a duration", at: node, help: help)
            }
            return nil
        }
    }

    /// An RFC 3339 time, or (when `base` is given) a time relative to it: `+3d`, `-1h`.
    package mutating func time(_ node: SyntaxNode, _ path: String, relativeTo base: Timestamp? = nil) -> Timestamp? {
        guard let (text, _) = scalarText(node, path, expected: "a time such as `2026-03-01T09:00:00Z`") else { return nil }
        if let first = text.first, first == "+" || first == "-" {
            guard let base else {
                error(
                    .invalidTime, "`\(path)` must be an absolute time, found `\(text)`", at: node,
                    help: "write an RFC 3339 time such as `2026-03-01T09:00:00Z`")
                return nil
            }
            switch TimeSpan.parse(String(text.dropFirst())) {
            case let .success(span):
                let t = first == "+" ? base.adding(span) : base.subtracting(span)
                guard t.isInRange else {
                    error(.invalidTime, "`\(text)` leads to a time outside the years 0001 to 9999", at: node)
                    return nil
                }
                return t
            case .failure(.tooLarge):
                error(
                    .invalidTime, "relative time `\(text)` is too large", at: node,
                    help: "the largest duration is `\(TimeSpan.maximum)` (about 100 years)")
                return nil
            case .failure:
                error(
                    .invalidTime, "`\(text)` is not a relative time", at: node,
                    help: "write a sign, a whole number and a unit: `+30s`, `+3d`, `-1h`")
                return nil
            }
        }
        guard let t = Timestamp.parse(text) else {
            if text.count >= 4, let year = Int(text.prefix(4)), year == 0 || text.hasPrefix("-") || text.prefix(5).allSatisfy(\.isNumber) {
                error(
                    .invalidTime, "`\(text)` is outside the years 0001 to 9999", at: node,
                    help: "write an RFC 3339 time such as `2026-03-01T09:00:00Z`")
                return nil
            }
            error(
                .invalidTime, "`\(text)` is not a valid time", at: node,
                help: "write an RFC 3339 time such as `2026-03-01T09:00:00Z`" + (base != nil ? ", or a relative time such as `+3d`" : ""))
            return nil
        }
        return t
    }

    /// One of a closed set of words; unknown words get a "did you mean" hint.
    package mutating func keyword<K: PolicyKeyword>(_ node: SyntaxNode, _ path: String, _ type: K.Type, allowed: [K]? = nil) -> K? {
        let options = (allowed ?? Array(K.allCases)).map(\.rawValue).sorted()
        guard let (text, _) = scalarText(node, path, expected: "one of " + options.map { "`\($0)`" }.joined(separator: ", ")) else {
            return nil
        }
        guard let value = K(rawValue: text), allowed?.contains(value) ?? true else {
            error(.invalidValue, "`\(path)` cannot be `\(text)`", at: node, help: Suggestion.help(for: text, in: options))
            return nil
        }
        return value
    }

    /// A list; a single scalar is not accepted in place of a list.
    package mutating func list(_ node: SyntaxNode, _ path: String) -> [SyntaxNode]? {
        guard case let .sequence(items) = node.kind else {
            error(
                .wrongType, "`\(path)` must be a list, found \(node.shapeName)", at: node, help: "write `[a, b]` or one `- item` per line")
            return nil
        }
        return items
    }
}
