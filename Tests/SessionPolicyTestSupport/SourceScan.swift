import Foundation

/// Reads the package's own sources, so documentation tests enumerate what the code declares
/// instead of a list typed into the test.
public enum SourceScan {
    /// The Swift files under `relative` (a directory under the package root), recursively, sorted,
    /// as (path relative to the root, text).
    public static func swiftFiles(under relative: String) -> [(path: String, text: String)] {
        guard let walker = FileManager.default.enumerator(atPath: Fixtures.path(relative)) else { return [] }
        var paths: [String] = []
        for case let rel as String in walker where rel.hasSuffix(".swift") { paths.append("\(relative)/\(rel)") }
        return paths.sorted().map { ($0, Fixtures.text($0)) }
    }

    /// A diagnostic code the sources create: its raw value, the `static let` name it is declared
    /// under (nil for a literal used in place), and the file.
    public struct Code: Hashable, Sendable {
        public var raw: String
        public var name: String?
        public var file: String
    }

    /// Every `DiagnosticCode("...")` literal in the Swift files under `relative`: the declarations
    /// `static let name = DiagnosticCode("raw")` and any literal written in place.
    public static func diagnosticCodes(under roots: [String] = ["Sources", "Server/Sources"]) -> [Code] {
        var out: [Code] = []
        for (path, text) in roots.flatMap(swiftFiles(under:)) {
            for m in text.matches(of: /(?:static let (\w+) = )?DiagnosticCode\("([^"\\]+)"\)/) {
                out.append(Code(raw: String(m.2), name: m.1.map(String.init), file: path))
            }
        }
        return out
    }
}

/// Markdown tables in the documentation.
public enum MarkdownTables {
    /// The backticked word that starts the first cell of each table row (`| `code` | ...`),
    /// in the section under `heading` (up to the next heading of the same or a higher level), or
    /// in the whole text when `heading` is nil.
    public static func firstCells(_ text: String, under heading: String? = nil) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
        if let heading {
            guard let start = lines.firstIndex(where: { $0 == heading }) else { return [] }
            let level = heading.prefix { $0 == "#" }.count
            lines = lines[(start + 1)...]
            if let end = lines.firstIndex(where: { $0.hasPrefix("#") && $0.prefix { $0 == "#" }.count <= level }) {
                lines = lines[..<end]
            }
        }
        return lines.compactMap { line in
            guard line.hasPrefix("| `") else { return nil }
            return String(line.dropFirst(3).prefix { $0 != "`" })
        }
    }
}
