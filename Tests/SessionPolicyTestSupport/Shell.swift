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
    /// on the `PATH` and `environment` added. The script runs in a session of its own (`setsid`),
    /// whose processes are ended when the script ends or after `timeout` seconds, so a server it
    /// left running in the background stops with it. Standard output and error are files in
    /// `directory` while it runs, so a background process that keeps them open cannot hold the
    /// test.
    public static func run(
        _ script: String, in directory: URL, binaries: [String], environment: [String: String] = [:], timeout: Double
    ) throws -> Result {
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
        let process = Process()
        // setsid forks; the new session's leader writes its id (its process id), closes every
        // descriptor but the standard three (Foundation learns that a child ended when the last
        // copy of a socket the child inherits closes, so a server left running must not hold
        // one), and becomes the script's bash: the whole session can be ended by that id.
        let leader = """
            echo $$ > "$0"
            for fd in $(ls /proc/$$/fd); do if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null; fi; done
            exec bash -e -u -o pipefail "$1"
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["--fork", "--wait", "bash", "-c", leader, groupFile.path, scriptFile.path]
        process.currentDirectoryURL = directory
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        let timedOut = process.isRunning
        let group = (try? String(contentsOf: groupFile, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if let group, group > 1 {
            kill(-group, timedOut ? SIGKILL : SIGTERM)
            process.waitUntilExit()
            usleep(200_000)
            kill(-group, SIGKILL)
        } else {
            process.terminate()
            process.waitUntilExit()
        }
        return Result(
            status: timedOut ? -1 : process.terminationStatus,
            stdout: (try? String(contentsOf: outFile, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errFile, encoding: .utf8)) ?? "", timedOut: timedOut)
    }
}
