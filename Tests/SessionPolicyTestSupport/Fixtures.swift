public import Foundation
public import SessionPolicy
import SessionPolicyYAML

/// Paths of the repository's fixtures, found from this file's location.
public enum Fixtures {
    /// The package root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The YAML files directly in `relative` (a directory under the root), sorted.
    public static func files(in relative: String, suffix: String = ".yaml") -> [String] {
        let dir = path(relative)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { "\(relative)/\($0)" }
    }

    /// Reads a file under the root.
    public static func text(_ relative: String) -> String {
        (try? String(contentsOfFile: path(relative), encoding: .utf8)) ?? ""
    }

    /// Compiles a shipped policy.
    public static func policy(_ name: String) throws -> CompiledPolicy {
        try PolicyFile.compile(text: text("policies/\(name).yaml"), file: "policies/\(name).yaml").get()
    }
}

/// Location markers in inline YAML: `1️⃣`, `2️⃣`, ... are removed from the text and their
/// positions returned, so tests never hard-code line numbers.
public enum Markers {
    public static let all = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣"]

    /// The text without markers, and each marker's `line:column` (column in Unicode scalars).
    public static func extract(_ marked: String, file: String = "test.yaml") -> (text: String, at: [String: SourceLocation]) {
        var text = ""
        var at: [String: SourceLocation] = [:]
        var line = 1
        var column = 1
        var rest = Substring(marked)
        outer: while let ch = rest.first {
            for m in all where rest.hasPrefix(m) {
                at[m] = SourceLocation(file: file, line: line, column: column)
                rest = rest.dropFirst(m.count)
                continue outer
            }
            text.append(ch)
            if ch == "\n" {
                line += 1
                column = 1
            } else {
                column += ch.unicodeScalars.count
            }
            rest = rest.dropFirst()
        }
        return (text, at)
    }
}

/// Golden files: compare with the stored text, or rewrite it when `RECORD_SNAPSHOTS=1`.
public enum Golden {
    /// Nil if `actual` matches the golden file at `relative` (or it was re-recorded); otherwise a description of the difference.
    public static func check(_ actual: String, against relative: String) -> String? {
        let path = Fixtures.path(relative)
        if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
            try? FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try? actual.write(toFile: path, atomically: true, encoding: .utf8)
            return nil
        }
        guard let expected = try? String(contentsOfFile: path, encoding: .utf8) else {
            return "golden file \(relative) is missing; run with RECORD_SNAPSHOTS=1 to create it"
        }
        if expected == actual { return nil }
        let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
        for i in 0..<max(a.count, e.count) {
            let x = i < e.count ? String(e[i]) : "<end>"
            let y = i < a.count ? String(a[i]) : "<end>"
            if x != y {
                return
                    "\(relative):\(i + 1) differs\n  expected: \(x)\n  actual:   \(y)\n(re-record with RECORD_SNAPSHOTS=1 if the change is intended)"
            }
        }
        return "\(relative) differs"
    }
}

/// Runs the built `policyctl` binary.
public enum CLI {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// The last non-empty line of standard output.
        public var lastLine: String { stdout.split(separator: "\n").last.map(String.init) ?? "" }
    }

    /// The binary: next to the test bundle, or in `.build/debug`.
    public static let binary: String? = executable("policyctl")

    /// The built executable `name` of this package or of the server package (`policyctl-serve`):
    /// next to the test bundle, or in `.build/debug` or `Server/.build/debug`.
    public static func executable(_ name: String) -> String? {
        var candidates: [String] = []
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(dir.appendingPathComponent(name).path)
            dir = dir.deletingLastPathComponent()
        }
        candidates.append(Fixtures.path(".build/debug/\(name)"))
        candidates.append(Fixtures.path("Server/.build/debug/\(name)"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `policyctl args` (or `args` of another built `executable`) in the package root, with
    /// `stdin` as standard input.
    /// `environment` adds to (or replaces entries of) this process's environment.
    public static func run(
        _ args: [String], stdin: String? = nil, executable: String? = binary, environment: [String: String] = [:]
    ) throws -> Result {
        guard let binary = executable else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "executable not found; run swift build"])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = args
        process.currentDirectoryURL = Fixtures.root
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }
}

extension Fixtures {
    /// A new empty directory under the system's temporary directory; remove it with `defer`.
    public static func temporaryDirectory(_ prefix: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}
