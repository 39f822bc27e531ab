import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// Deployments that cannot take a policy away by accident: the built `policyctl-serve` on a
/// policy directory of the test's own, changed as a deploy changes it, and asked over HTTP.
@Suite("Policy deployments")
struct PolicyDeploymentTests {
    static let spendiq = Fixtures.text("policies/spendiq.yaml")
    static let kobil = Fixtures.text("policies/kobil-signed-jwt.yaml")
    static let launch = #"{"event":{"type":"launch","time":"2026-01-01T00:00:00Z","network":"online"}}"#

    @Test("a second file with a served name does not serve; it is the problem reported, and the original keeps the name")
    func duplicateName() async throws {
        let served = try ServedDirectory(["spendiq.yaml": Self.spendiq, "kobil-signed-jwt.yaml": Self.kobil])
        try await served.start()
        let before = try await served.policy("spendiq")
        // One digest: the machine document's, as the decision log and the runtimes name it.
        let machine = try PolicyFile.compile(text: Fixtures.text("policies/spendiq.yaml"), file: "spendiq.yaml").get()
        #expect(before?["digest"] as? String == machine.portable.digest)
        // `a-copy.yaml` sorts before `spendiq.yaml`: the order of the files must not decide.
        let copy = Self.spendiq.replacingOccurrences(of: "7d", with: "6d")
        try served.write("a-copy.yaml", copy)
        let health = try await served.waitForHealth("degraded")
        let problems = try #require(health.json?["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["file"] as? String == served.path("a-copy.yaml"))
        #expect(problems.first?["still_serving"] == nil)
        let diagnostic = try #require((problems.first?["diagnostics"] as? [[String: Any]])?.first)
        #expect(diagnostic["code"] as? String == "duplicate-policy-name")
        #expect((diagnostic["message"] as? String)?.contains("`\(served.path("spendiq.yaml"))`") == true, "\(diagnostic)")
        #expect(diagnostic["help"] != nil)
        #expect(diagnostic["line"] as? Int == 7)  // the `name:` line
        let after = try await served.policy("spendiq")
        #expect(after?["file"] as? String == served.path("spendiq.yaml"))
        #expect(after?["digest"] as? String == before?["digest"] as? String)
        #expect(try await served.post("/v1/policies/spendiq/evaluate", Self.launch).status == 200)
        let line = try #require(served.logLines().first { $0.contains("a-copy.yaml") && $0.contains("level=error") })
        #expect(line.contains("serving_file=\(served.path("spendiq.yaml"))"), "\(line)")

        // The original goes away: the copy, which defines the name, serves it (what a restart would serve).
        try served.remove("spendiq.yaml")
        _ = try await served.waitForHealth("ok")
        let copied = try await served.policy("spendiq")
        #expect(copied?["file"] as? String == served.path("a-copy.yaml"))
        let changed = try #require(served.logLines().first { $0.contains(#"msg="policy changed""#) }, "\(served.log())")
        #expect(changed.contains("old_digest=\(before?["digest"] as? String ?? "?")"), "\(changed)")
        #expect(changed.contains("new_digest=\(copied?["digest"] as? String ?? "?")"), "\(changed)")
        #expect(changed.contains("policy=spendiq"))
        #expect(try await served.stop() == 0)
    }

    @Test("a deleted policy file keeps its last good version serving, reported, until the file is back")
    func deletedFile() async throws {
        let served = try ServedDirectory(["spendiq.yaml": Self.spendiq, "kobil-signed-jwt.yaml": Self.kobil])
        try await served.start()
        try served.remove("spendiq.yaml")
        let health = try await served.waitForHealth("degraded")
        #expect(health.status == 200)
        #expect(health.json?["policies"] as? [String] == ["kobil-signed-jwt", "spendiq"])
        let problems = try #require(health.json?["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["file"] as? String == served.path("spendiq.yaml"))
        #expect(problems.first?["still_serving"] as? String == "spendiq")
        let diagnostic = try #require((problems.first?["diagnostics"] as? [[String: Any]])?.first)
        #expect(diagnostic["code"] as? String == "file-not-found")
        #expect((diagnostic["message"] as? String)?.contains("is gone; the last good version") == true, "\(diagnostic)")
        #expect((diagnostic["help"] as? String)?.contains("spendiq.removed") == true, "\(diagnostic)")
        let listed = try await served.get("/v1/policies")
        #expect((listed.json?["problems"] as? [[String: Any]])?.count == 1)
        #expect(try await served.policy("spendiq") != nil)
        #expect(try await served.post("/v1/policies/spendiq/evaluate", Self.launch).status == 200)
        #expect(served.logLines().contains { $0.contains("level=warning") && $0.contains(#"msg="policy file is gone"#) })

        try served.write("spendiq.yaml", Self.spendiq)
        let back = try await served.waitForHealth("ok")
        #expect((back.json?["problems"] as? [Any])?.isEmpty == true)
        #expect(try await served.post("/v1/policies/spendiq/evaluate", Self.launch).status == 200)
        #expect(served.logLines().contains { $0.contains(#"msg="policy file is back""#) })
        #expect(try await served.stop() == 0)
    }

    @Test("a renamed policy serves under its new name, and the old name keeps serving, reported, until removed")
    func renamedPolicy() async throws {
        let served = try ServedDirectory(["spendiq.yaml": Self.spendiq])
        try await served.start()
        try served.write("spendiq.yaml", Self.spendiq.replacingOccurrences(of: "name: spendiq", with: "name: spendiq-v2"))
        let health = try await served.waitForHealth("degraded")
        #expect(health.json?["policies"] as? [String] == ["spendiq", "spendiq-v2"])
        let problems = try #require(health.json?["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["file"] as? String == served.path("spendiq.yaml"))
        #expect(problems.first?["still_serving"] as? String == "spendiq")
        let diagnostic = try #require((problems.first?["diagnostics"] as? [[String: Any]])?.first)
        #expect((diagnostic["message"] as? String)?.contains("defines `spendiq-v2` now") == true, "\(diagnostic)")
        #expect(try await served.post("/v1/policies/spendiq/evaluate", Self.launch).status == 200)
        #expect(try await served.post("/v1/policies/spendiq-v2/evaluate", Self.launch).status == 200)
        #expect(try await served.policy("spendiq")?["file"] as? String == served.path("spendiq.yaml"))
        #expect(try await served.stop() == 0)
    }

    @Test("NAME.removed stops policy NAME from serving at the next reload, logged; a file that defines it is reported")
    func removalMarker() async throws {
        let served = try ServedDirectory(["spendiq.yaml": Self.spendiq, "kobil-signed-jwt.yaml": Self.kobil])
        try await served.start()
        // The deploy of a removal: the file goes, then the marker says it was on purpose.
        try served.remove("spendiq.yaml")
        _ = try await served.waitForHealth("degraded")
        try served.write("spendiq.removed", "")
        let health = try await served.waitForHealth("ok")
        #expect(health.json?["policies"] as? [String] == ["kobil-signed-jwt"])
        let gone = try await served.post("/v1/policies/spendiq/evaluate", Self.launch)
        #expect(gone.status == 404)
        #expect(gone.code == "unknown-policy")
        let line = try #require(served.logLines().first { $0.contains(#"msg="policy removed on purpose""#) }, "\(served.log())")
        #expect(line.contains("level=notice") && line.contains("policy=spendiq") && line.contains("marker="), "\(line)")

        // A marker wins over a file that defines the name: the file is reported, and does not serve.
        try served.write("kobil-signed-jwt.removed", "")
        let both = try await served.waitForHealth("failing")  // nothing serves now
        #expect(both.status == 503)
        let problems = try #require(both.json?["problems"] as? [[String: Any]])
        #expect(problems.map { $0["file"] as? String } == [served.path("kobil-signed-jwt.yaml")])
        #expect(try await served.post("/v1/policies/kobil-signed-jwt/evaluate", Self.launch).status == 404)
        try served.remove("kobil-signed-jwt.removed")
        _ = try await served.waitForHealth("ok")
        #expect(try await served.post("/v1/policies/kobil-signed-jwt/evaluate", Self.launch).status == 200)
        #expect(try await served.stop() == 0)
    }

    @Test("a restart serves only the directory's policies; stopping is logged with the signal")
    func restart() async throws {
        let served = try ServedDirectory(["spendiq.yaml": Self.spendiq, "kobil-signed-jwt.yaml": Self.kobil])
        try await served.start()
        try served.remove("spendiq.yaml")
        _ = try await served.waitForHealth("degraded")
        #expect(try await served.post("/v1/policies/spendiq/evaluate", Self.launch).status == 200)
        #expect(try await served.stop() == 0)
        let stopping = try #require(served.logLines().first { $0.contains(#"msg=stopping"#) }, "\(served.log())")
        #expect(stopping.contains("level=notice") && stopping.contains("reason=SIGTERM"), "\(stopping)")
        let stopped = try #require(served.logLines().first { $0.contains(#"msg=stopped"#) }, "\(served.log())")
        #expect(stopped.contains("reason=SIGTERM"), "\(stopped)")

        try await served.start()
        let health = try await served.get("/healthz")
        #expect(health.json?["status"] as? String == "ok")
        #expect(health.json?["policies"] as? [String] == ["kobil-signed-jwt"])
        #expect(try await served.post("/v1/policies/spendiq/evaluate", Self.launch).status == 404)
        #expect(try await served.stop() == 0)
    }
}

/// `policyctl-serve` on a policy directory of a test's own (`ROOT/policies`), with its SQLite
/// file and its log (standard error) in `ROOT`; HTTP to it, one connection a request.
final class ServedDirectory {
    let root: URL
    var policies: URL { root.appendingPathComponent("policies") }
    var logURL: URL { root.appendingPathComponent("serve.log") }
    private var process: Process?
    private var port = 0

    init(_ files: [String: String]) throws {
        root = try Fixtures.temporaryDirectory("deploy")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("policies"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root.appendingPathComponent("serve.log").path, contents: nil)
        for (name, text) in files { try write(name, text) }
    }

    deinit {
        if let process, process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// The path of a file of the policy directory, as the server names it.
    func path(_ name: String) -> String { policies.path + "/" + name }

    func write(_ name: String, _ text: String) throws {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
    }

    func remove(_ name: String) throws { try FileManager.default.removeItem(atPath: path(name)) }

    /// Starts the server (again), reloading every 0.1 s, and waits until it answers.
    func start() async throws {
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }
        try log.seekToEnd()
        let (process, port) = try await ServeProcess.start(
            [
                "--port", "0", "--policies", policies.path, "--storage", "sqlite:\(root.path)/s.sqlite",
                "--reload-interval", "0.1",
            ],
            environment: ["SESSIONPOLICY_HS256_SECRET": Tokens.secret, "SESSIONPOLICY_LOG_LEVEL": "info"], directory: root,
            standardError: log)
        self.process = process
        self.port = port
    }

    /// Stops the server with SIGTERM; its exit status.
    func stop() async throws -> Int32 {
        guard let process else { return -1 }
        process.terminate()
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        self.process = nil
        return process.terminationStatus
    }

    func send(_ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil) async throws -> HTTP.Reply {
        let request = TestClient.Request(
            uri, method: method, headers: [.contentType: "application/json"], body: body.map { ByteBuffer(string: $0) })
        let response: TestClient.Response?
        do {
            response = try await TestClient.withClient(host: "127.0.0.1", port: port) { try await $0.execute(request) }
        } catch {
            let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? "?"
            // Say what the server was doing: a failure here has been seen only with the whole suite
            // running beside a fuzzer, never alone.
            let state = process.map { $0.isRunning ? "running" : "exited \($0.terminationStatus)" } ?? "not started"
            print(
                "policy deployment test: \(method) \(uri) on port \(port) failed (\(error)); the server: \(state); its log ends:\n\(log.suffix(1500))"
            )
            throw error
        }
        return HTTP.Reply(
            status: Int(response!.status.code), headers: response!.headers, text: response!.body.map { String(buffer: $0) } ?? "")
    }

    func get(_ uri: String) async throws -> HTTP.Reply { try await send(.get, uri) }

    func post(_ uri: String, _ body: String) async throws -> HTTP.Reply { try await send(.post, uri, body) }

    /// The entry of `GET /v1/policies` for policy `name`, if it serves.
    func policy(_ name: String) async throws -> [String: Any]? {
        let listed = try await get("/v1/policies").json?["policies"] as? [[String: Any]]
        return listed?.first { $0["name"] as? String == name }
    }

    /// Polls `/healthz` (up to 10 s) until its `status` is `status`; the last answer.
    func waitForHealth(_ status: String) async throws -> HTTP.Reply {
        var health = try await get("/healthz")
        for _ in 0..<100 where health.json?["status"] as? String != status {
            try await Task.sleep(for: .milliseconds(100))
            health = try await get("/healthz")
        }
        #expect(health.json?["status"] as? String == status, "\(health.text)")
        return health
    }

    /// Everything the server logged, every run.
    func log() -> String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    func logLines() -> [Substring] { log().split(separator: "\n") }
}
