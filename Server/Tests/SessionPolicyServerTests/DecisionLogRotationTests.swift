import AsyncHTTPClient
import Foundation
import NIOCore
import SessionPolicyTestSupport
import Testing

/// The decision log file rotates without a restart (issue 37 §1): it is opened for appending,
/// and SIGHUP opens it again by its path. Both of logrotate's methods, with the real
/// `policyctl-serve` and, where it is installed, the real `logrotate` (CI installs it; without
/// it the test moves or copies and truncates the file as logrotate would).
@Suite("Decision log rotation")
struct DecisionLogRotationTests {
    enum Method: String, CaseIterable, Sendable {
        /// Move the file away and send SIGHUP; the server opens a new file at the path.
        case create
        /// Copy the file and truncate it in place; the server keeps its file open.
        case copytruncate
    }

    static let logrotate = ["/usr/sbin/logrotate", "/usr/bin/logrotate"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("lines before a rotation stay in the rotated file, lines after it go whole to the new one", arguments: Method.allCases)
    func rotation(_ method: Method) async throws {
        let dir = try Fixtures.temporaryDirectory("rotate-\(method.rawValue)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("decisions.jsonl").path
        let secret = dir.appendingPathComponent("user.secret")
        try Tokens.secret.write(to: secret, atomically: true, encoding: .utf8)
        let (process, port) = try await ServeProcess.start(
            [
                "--port", "0", "--policies", Fixtures.path("policies"), "--storage", "sqlite:\(dir.path)/s.sqlite",
                "--hs256-secret-file", secret.path, "--decision-log", log,
            ],
            environment: ["SESSIONPOLICY_LOG_LEVEL": "error"])
        defer { process.terminate() }
        func decide(_ count: Int) async throws {
            for _ in 0..<count {
                let user = unique("r")
                let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone/events"
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(try await Tokens.hs256(user))")
                let now = IdentityProviderTests.realClock().description
                request.body = .bytes(ByteBuffer(string: SessionTrustTests.event(SessionTrustTests.sample(.launch, time: now))))
                #expect(try await HTTPClient.shared.execute(request, timeout: .seconds(30)).status.code == 200)
            }
        }
        try await decide(3)
        let before = try String(contentsOfFile: log, encoding: .utf8)
        #expect(before.split(separator: "\n").count == 3)

        try rotate(log, method: method, server: process.processIdentifier, in: dir)
        // SIGHUP is handled on the server's own time.
        try await Task.sleep(for: .milliseconds(500))
        try await decide(2)

        let rotated = try Data(contentsOf: URL(fileURLWithPath: log + ".1"))
        let current = try Data(contentsOf: URL(fileURLWithPath: log))
        #expect(String(decoding: rotated, as: UTF8.self) == before, "the rotated file holds the lines before, whole")
        #expect(!current.contains(0), "no NUL bytes: every line is written at the end of the file")
        let lines = String(decoding: current, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2, "\(method): \(lines.count) lines after the rotation in the new file")
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)")
        }
    }

    /// Rotates `log` to `log.1` as logrotate's `create` (with a `postrotate` SIGHUP) or
    /// `copytruncate` method does: by logrotate itself when it is installed.
    func rotate(_ log: String, method: Method, server: Int32, in dir: URL) throws {
        guard let logrotate = Self.logrotate else {
            if method == .create {
                try FileManager.default.moveItem(atPath: log, toPath: log + ".1")
                kill(server, SIGHUP)
            } else {
                try FileManager.default.copyItem(atPath: log, toPath: log + ".1")
                truncate(log, 0)
            }
            return
        }
        let action = method == .create ? "create 0640\n  postrotate\n    kill -HUP \(server)\n  endscript" : "copytruncate"
        let configuration = dir.appendingPathComponent("logrotate.conf")
        try "\(log) {\n  rotate 2\n  nocompress\n  missingok\n  \(action)\n}\n".write(to: configuration, atomically: true, encoding: .utf8)
        let run = Process()
        run.executableURL = URL(fileURLWithPath: logrotate)
        run.arguments = ["--force", "--state", dir.appendingPathComponent("logrotate.state").path, configuration.path]
        let errors = Pipe()
        run.standardError = errors
        try run.run()
        run.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(run.terminationStatus == 0, "logrotate: \(message)")
    }
}
