import Foundation

/// A test helper written in Python (the OpenID Connect provider, the OTLP collector) as a
/// process: started with `SESSIONPOLICY_TEST_PYTHON` (default `python3`), its first line of
/// output read (where it says it listens). It exits when its standard input closes.
struct PythonHelper {
    let python = ProcessInfo.processInfo.environment["SESSIONPOLICY_TEST_PYTHON"] ?? "python3"
    let process = Process()
    let stdin = Pipe()
    private let errors = Pipe()
    /// The helper's first line of output, without its line break ("" if it printed none).
    private(set) var firstLine = ""

    /// Starts `python ARGUMENTS` and reads its first line (on a thread of its own, `FirstLine`).
    init(_ arguments: [String]) async throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python] + arguments
        process.standardInput = stdin
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        firstLine = await FirstLine.read(output.fileHandleForReading).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops a helper that did not start as it should; what it wrote to its standard error.
    func stopReadingErrors() -> String {
        process.terminate()
        return String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }
}
