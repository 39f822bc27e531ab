import Foundation

/// Renders diagnostics for people (`file:line:col: error[code]: message`, the line, a caret)
/// or as JSON (the same shape the CLI's `--format json` and the server's error bodies use).
public struct DiagnosticRenderer: Sendable {
    /// Source texts by file name, used to quote the offending line.
    public var sources: [String: String]

    /// Creates a renderer that quotes lines from `sources` (file name -> text).
    public init(sources: [String: String] = [:]) {
        self.sources = sources
    }

    /// Human rendering of one diagnostic, several lines, no trailing newline.
    public func render(_ d: Diagnostic) -> String {
        var out = ""
        if let loc = d.location { out += "\(loc): " }
        out += "\(d.severity.rawValue)[\(d.code.rawValue)]: \(d.message)"
        if let loc = d.location, let text = sources[loc.file], let full = Self.line(loc.line, of: text) {
            // Quote at most 120 characters around the column, with control characters made visible.
            var scalars = Array(full.unicodeScalars)
            var column = loc.column
            if scalars.count > 120 {
                let start = max(0, min(loc.column - 60, scalars.count - 120))
                scalars = Array(scalars[start..<min(scalars.count, start + 120)])
                column -= start
            }
            let line = String(
                String.UnicodeScalarView(
                    scalars.map { Self.visible($0) }))
            let loc = SourceLocation(file: loc.file, line: loc.line, column: column)
            let number = String(loc.line)
            let pad = String(repeating: " ", count: number.count)
            let caretColumn = max(0, min(loc.column - 1, line.unicodeScalars.count))
            let prefix = String(String.UnicodeScalarView(line.unicodeScalars.prefix(caretColumn)))
            let spaces = String(prefix.map { $0 == "\t" ? "\t" : " " })
            out += "\n\(pad) |\n\(number) | \(line)\n\(pad) | \(spaces)^"
        }
        for note in d.notes { out += "\n  = note: \(note)" }
        if let help = d.help { out += "\n  = help: \(help)" }
        return out
    }

    /// Human rendering of many diagnostics, separated by blank lines, with a summary line.
    public func render(_ diagnostics: [Diagnostic]) -> String {
        let sorted = diagnostics.sortedForOutput()
        var parts = sorted.map(render)
        let errors = sorted.filter { $0.severity == .error }.count
        let warnings = sorted.filter { $0.severity == .warning }.count
        var summary: [String] = []
        if errors > 0 { summary.append("\(errors) error" + (errors == 1 ? "" : "s")) }
        if warnings > 0 { summary.append("\(warnings) warning" + (warnings == 1 ? "" : "s")) }
        if !summary.isEmpty { parts.append(summary.joined(separator: ", ")) }
        return parts.joined(separator: "\n\n")
    }

    /// JSON rendering: `{"diagnostics": [...]}` with sorted keys.
    public static func json(_ diagnostics: [Diagnostic]) -> String {
        struct Envelope: Encodable { var diagnostics: [Diagnostic] }
        return JSONOutput.string(Envelope(diagnostics: diagnostics.sortedForOutput()))
    }

    /// A character as a quoted line shows it: C0 controls and DEL as their control pictures
    /// (`␀`, `␛`), other invisible ones as `�`, tab as itself.
    static func visible(_ c: Unicode.Scalar) -> Unicode.Scalar {
        if c == "\t" { return c }
        if c.value < 0x20 { return Unicode.Scalar(0x2400 + c.value)! }
        if c.value == 0x7F { return "\u{2421}" }
        return c.properties.generalCategory == .format || TextEncoding.isForbidden(c.value) ? "\u{FFFD}" : c
    }

    static func line(_ number: Int, of text: String) -> String? {
        guard number >= 1 else { return nil }
        var current = 1
        var start = text.startIndex
        var i = text.startIndex
        while i < text.endIndex {
            if text[i] == "\n" || text[i] == "\r\n" {
                if current == number { return String(text[start..<i]) }
                current += 1
                start = text.index(after: i)
            }
            i = text.index(after: i)
        }
        return current == number ? String(text[start..<text.endIndex]) : nil
    }
}

/// Stable JSON output: sorted keys, pretty-printed, no escaped slashes.
package enum JSONOutput {
    /// Encodes `value` as stable, human-readable JSON.
    package static func string(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value), let s = String(data: data, encoding: .utf8) else {
            return "{\"error\":\"encoding failed\"}"
        }
        return s
    }
}
