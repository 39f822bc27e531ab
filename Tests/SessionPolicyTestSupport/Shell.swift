public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the shell commands the documents quote, as a reader would paste them: the fenced block
/// after an HTML comment marker, run by bash in a folder of its own with the built binaries first
/// on the `PATH`.
public enum Shell {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// Whether the script was still running at the timeout (it was then killed).
        public var timedOut: Bool
    }

    /// The text of the fenced code block that follows the line `<!-- MARKER -->` in `markdown`,
    /// without its fences; nil when there is no such line or no block after it.
    public static func block(after marker: String, in markdown: String) -> String? {
        let lines = markdown.components(separatedBy: "\n")
        guard let at = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "<!-- \(marker) -->" }),
            let open = lines[(at + 1)...].firstIndex(where: { $0.hasPrefix("```") }),
            let close = lines[(open + 1)...].firstIndex(where: { $0.hasPrefix("```") })
        else { return nil }
        return lines[(open + 1)..<close].joined(separator: "\n") + "\n"
    }

    /// Whether `name` is an executable on this process's `PATH`.
    public static func has(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// Runs `script` with `bash -e -u -o pipefail` in `directory`, the folders of `binaries` first
    /// on the `PATH` and `environment` added. The script runs in a session of its own (`setsid`)
    /// whose leader, once the script ends, stops what it left running (a server in the
    /// background) before it exits itself; after `timeout` seconds the whole session is killed.
    /// Standard output and error are files in `directory` while it runs, so a background process
    /// that keeps them open cannot hold the test. It waits without holding a thread: a test that
    /// blocked one of the few threads of Swift's cooperative pool for the script's duration
    /// would stall the other tests' tasks.
    public static func run(
        _ script: String, in directory: URL, binaries: [String], environment: [String: String] = [:], timeout: Double
    ) async throws -> Result {
        let id = UUID().uuidString
        let scriptFile = directory.appendingPathComponent(".script-\(id).sh")
        let groupFile = directory.appendingPathComponent(".group-\(id)")
        let outFile = directory.appendingPathComponent(".stdout-\(id)")
        let errFile = directory.appendingPathComponent(".stderr-\(id)")
        try script.write(to: scriptFile, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
        let out = try FileHandle(forWritingTo: outFile), err = try FileHandle(forWritingTo: errFile)
        defer {
            try? out.close()
            try? err.close()
        }
        var env = ProcessInfo.processInfo.environment
        let folders = binaries.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        env["PATH"] = (folders + [env["PATH"] ?? "/usr/bin:/bin"]).joined(separator: ":")
        env.merge(environment) { $1 }
        // setsid forks a new session's leader, which writes its id (its process id, the session's
        // process group), closes every descriptor but the standard three (Foundation learns that
        // a child ended when the last copy of a socket the child inherits closes, so a server
        // left running must not hold one) and runs the script. When the script ends, the leader,
        // still alive so that its group's id cannot be reused, sends SIGTERM to its group and
        // waits up to 10 s for the rest of it to stop (`pgrep -c` counts the leader alone then).
        let leader = """
            echo $$ > "$0"
            for fd in $(ls /proc/$$/fd); do if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null; fi; done
            status=0
            bash -e -u -o pipefail "$1" || status=$?
            trap '' TERM
            kill -TERM 0 2>/dev/null
            for i in $(seq 100); do
              if [ "$(pgrep -c -g $$)" -le 1 ]; then break; fi
              sleep 0.1
            done
            exit $status
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["--fork", "--wait", "bash", "-c", leader, groupFile.path, scriptFile.path]
        process.currentDirectoryURL = directory
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        let timedOut = process.isRunning
        if timedOut {
            // The leader is still waiting for the script, so its group is still the script's.
            let group = (try? String(contentsOf: groupFile, encoding: .utf8)).flatMap {
                Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if let group, group > 1 { kill(-group, SIGKILL) } else { process.terminate() }
        }
        while process.isRunning { try await Task.sleep(nanoseconds: 50_000_000) }
        return Result(
            status: timedOut ? -1 : process.terminationStatus,
            stdout: (try? String(contentsOf: outFile, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errFile, encoding: .utf8)) ?? "", timedOut: timedOut)
    }
}
