import Foundation
import SessionPolicyTestSupport
import Testing

/// `policyctl serve` runs `policyctl-serve` (the server package's executable) with its arguments.
@Suite("policyctl serve")
struct ServeLauncherTests {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `policyctl ARGUMENTS` with `PATH` set to `path` only.
    static func run(_ arguments: [String], path: String) throws -> Result {
        let binary = try #require(CLI.binary)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = ["PATH": path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    @Test("serve runs policyctl-serve from the PATH with every argument, and exits with its code")
    func runsTheServer() throws {
        let dir = try Fixtures.temporaryDirectory("serve-launcher")
        defer { try? FileManager.default.removeItem(at: dir) }
        let fake = dir.appendingPathComponent("policyctl-serve")
        try "#!/bin/sh\necho \"policyctl-serve $*\"\nexit 7\n".write(to: fake, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake.path)
        let r = try Self.run(["serve", "--port", "0", "--policies", "my policies"], path: dir.path)
        #expect(r.status == 7, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout == "policyctl-serve --port 0 --policies my policies\n")
    }

    @Test("serve without policyctl-serve exits 2 and says how to run the server package")
    func withoutTheServer() throws {
        let dir = try Fixtures.temporaryDirectory("serve-launcher")
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Self.run(["serve", "--port", "0"], path: dir.path)
        #expect(r.status == 2)
        #expect(r.stderr.contains("`swift run --package-path Server policyctl-serve --port 0`"), "\(r.stderr)")
    }
}
