import Foundation
import SessionPolicyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Inputs of any size, run through the built `policyctl` as an attacker would: a file of
/// 100 MB or 2 GB, `/dev/zero`, a FIFO that never ends and standard input that never ends are
/// refused (`input-too-large`, exit 2) on every path that reads input, in bounded memory and
/// time. Memory is the child's peak resident set as GNU time reports it; the bounds are generous (the
/// refusal takes a few MB and a few ms), so a pass is no timing race and a regression that
/// reads a whole file (hundreds of MB) fails.
@Suite("policyctl: inputs of any size")
struct InputBoundsTests {
    /// Peak memory a refusal may take, in KB.
    static let memoryBoundKB = 50 * 1024
    /// Time a refusal may take, in seconds: generous, for a loaded machine.
    static let timeBound = 2.0

    struct Measured {
        var status: Int32
        var seconds: Double
        var peakKB: Int
        var output: String
    }

    /// GNU time, which reports a child's own peak resident set (`%M`). `wait4` cannot be used
    /// from here: a child spawned by a large process inherits that process's high-water mark.
    static let gnuTime = "/usr/bin/time"

    /// Runs the built binary with `args` under GNU time, standard input from `stdinPath` (or
    /// `/dev/null`), and measures its peak memory and wall time; `output` is standard output
    /// and error together (`eval` prints its diagnostics as JSON on standard output).
    static func measure(_ args: [String], stdinPath: String = "/dev/null") throws -> Measured {
        let binary = try #require(CLI.binary)
        try #require(
            FileManager.default.isExecutableFile(atPath: gnuTime),
            "these tests measure memory with GNU time: `apt-get install -y time` (.ci/run installs it)")
        let dir = try Fixtures.temporaryDirectory("bounds")
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out").path, peak = dir.appendingPathComponent("peak").path
        // Paths of the repository (`policies/...`, `examples`) are made absolute.
        let absolute = args.map { $0.hasPrefix("policies") || $0.hasPrefix("examples") ? Fixtures.path($0) : $0 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gnuTime)
        process.arguments = ["-f", "%M", "-o", peak, binary] + absolute
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: stdinPath))
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let sink = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardOutput = sink
        process.standardError = sink
        let started = Date()
        try process.run()
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        try sink.close()
        // GNU time writes "Command exited with non-zero status N" before the figure.
        let report = (try? String(contentsOfFile: peak, encoding: .utf8)) ?? ""
        let kb = report.split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        return Measured(
            status: process.terminationStatus, seconds: seconds, peakKB: try #require(kb, "GNU time said: \(report)"),
            output: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "")
    }

    /// A folder with a sparse 100 MB and 2 GB file (no disk space used), and a FIFO.
    static func inputs() throws -> URL {
        let dir = try Fixtures.temporaryDirectory("bounds")
        for (name, size) in [("big.yaml", 100_000_000), ("huge.yaml", 2_147_483_648)] {
            let path = dir.appendingPathComponent(name).path
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            try #require(truncate(path, off_t(size)) == 0)
        }
        return dir
    }

    /// Every command that reads a file, with `{}` where the oversized input goes.
    static let commands: [[String]] = [
        ["compile", "{}"],
        ["lint", "{}"],
        ["check", "{}", "examples"],
        ["check", "policies", "{}"],
        ["eval", "{}", "-"],
        ["eval", "policies/spendiq.yaml", "{}"],
        ["explain", "policies/spendiq.yaml", "{}"],
        ["explain", "policies/spendiq.yaml", "{}", "{}"],
    ]

    static func check(_ m: Measured, _ what: String) {
        #expect(m.status == 2, "\(what): exit \(m.status)\n\(m.output)")
        #expect(m.output.contains("input-too-large"), "\(what): \(m.output.prefix(600))")
        #expect(m.peakKB < memoryBoundKB, "\(what): peak \(m.peakKB) KB")
        #expect(m.seconds < timeBound, "\(what): \(m.seconds) s")
    }

    @Test("a 100 MB and a 2 GB file are refused from their size on every path", arguments: commands)
    func largeFiles(_ command: [String]) throws {
        let dir = try Self.inputs()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["big.yaml", "huge.yaml"] {
            let args = command.map { $0 == "{}" ? dir.appendingPathComponent(name).path : $0 }
            Self.check(try Self.measure(args), "\(args.joined(separator: " "))")
        }
    }

    @Test("/dev/zero is read only up to the limit on every path", arguments: commands)
    func devZero(_ command: [String]) throws {
        let args = command.map { $0 == "{}" ? "/dev/zero" : $0 }
        Self.check(try Self.measure(args), args.joined(separator: " "))
    }

    @Test("standard input that never ends is refused by eval and explain")
    func endlessStandardInput() throws {
        for args in [
            ["eval", "policies/spendiq.yaml"], ["eval", "policies/spendiq.yaml", "-"], ["explain", "policies/spendiq.yaml", "-"],
        ] {
            Self.check(try Self.measure(args, stdinPath: "/dev/zero"), args.joined(separator: " ") + " < /dev/zero")
        }
    }

    @Test("a FIFO fed without end is refused; a FIFO with no writer reads as empty instead of hanging")
    func fifo() throws {
        let dir = try Fixtures.temporaryDirectory("fifo")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("endless.yaml").path
        try #require(mkfifo(path, 0o600) == 0)
        // A writer that never stops: `yes` ends with SIGPIPE once the reader has had enough.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "exec yes 'version: 1' > '\(path)'"]
        try writer.run()
        defer { if writer.isRunning { writer.terminate() } }
        Self.check(try Self.measure(["compile", path]), "compile of an endless FIFO")
        writer.waitUntilExit()

        let silent = dir.appendingPathComponent("silent.yaml").path
        try #require(mkfifo(silent, 0o600) == 0)
        let m = try Self.measure(["compile", silent])
        #expect(m.status == 2)
        #expect(m.output.contains("empty-document"), "\(m.output)")
        #expect(m.seconds < Self.timeBound)
    }

    /// Keys that are themselves collections (`? ? ? ...`), nested far past the 64 levels: the
    /// YAML library the reader once built its tree with hashed each such key whole at every
    /// level, and twenty such lines (36 KB) took about 30 s in a debug build. The reader refuses
    /// the first key that is a mapping at its own event.
    @Test("keys nested as collections 900 deep are refused at the first, in bounded time and memory")
    func deeplyNestedComplexKeys() throws {
        let dir = try Fixtures.temporaryDirectory("bounds")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("keys.yaml")
        let line = String(repeating: "? ", count: 900)
        try (0..<20).map { "\(line)k\($0)\n" }.joined().write(to: file, atomically: true, encoding: .utf8)
        let m = try Self.measure(["compile", file.path])
        #expect(m.status == 2, "exit \(m.status)\n\(m.output.prefix(600))")
        #expect(m.output.contains("keys.yaml:1:3: error[wrong-type]: keys must be plain words, found a mapping"), "\(m.output.prefix(600))")
        #expect(m.peakKB < Self.memoryBoundKB, "peak \(m.peakKB) KB")
        #expect(m.seconds < Self.timeBound, "\(m.seconds) s")
    }
}
