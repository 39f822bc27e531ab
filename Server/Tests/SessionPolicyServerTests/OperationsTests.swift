import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// Health, metrics, policy reloads, and `policyctl serve` itself.
@Suite("Operations")
struct OperationsTests {
    @Test("a policy that breaks keeps serving its last good version; health says so; a fix is picked up")
    func reload() async throws {
        let dir = try Fixtures.temporaryDirectory("policies")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("spendiq.yaml")
        let good = Fixtures.text("policies/spendiq.yaml")
        try good.write(to: file, atomically: true, encoding: .utf8)
        try await TestServer.run(.sqlite, policies: dir.path) { http in
            let event = #"{"event":{"type":"launch","time":"2026-01-01T00:00:00Z","network":"online"}}"#
            #expect(try await http.get("/healthz").json?["status"] as? String == "ok")
            try (good + "\nsession: { max: banana }\n").write(to: file, atomically: true, encoding: .utf8)
            var health = try await http.get("/healthz")
            for _ in 0..<50 where health.json?["status"] as? String != "degraded" {
                try await Task.sleep(for: .milliseconds(100))
                health = try await http.get("/healthz")
            }
            #expect(health.status == 200)
            #expect(health.json?["status"] as? String == "degraded")
            let problems = try #require(health.json?["problems"] as? [[String: Any]])
            #expect(problems.first?["still_serving"] as? String == "spendiq")
            let diagnostics = try #require(problems.first?["diagnostics"] as? [[String: Any]])
            #expect(diagnostics.contains { $0["line"] != nil && $0["file"] as? String == file.path })
            #expect(try await http.post("/v1/policies/spendiq/evaluate", event).status == 200)
            try good.replacingOccurrences(of: "7d", with: "6d").write(to: file, atomically: true, encoding: .utf8)
            for _ in 0..<50 where health.json?["status"] as? String != "ok" {
                try await Task.sleep(for: .milliseconds(100))
                health = try await http.get("/healthz")
            }
            #expect(health.json?["status"] as? String == "ok")
            let metrics = try await http.get("/metrics").text
            #expect(metrics.contains("sessionpolicy_policy_reloads_total{result=\"failed\"}"))
        }
    }

    @Test("/metrics counts decisions by policy, decision and reason, and request latency")
    func metrics() async throws {
        try await TestServer.run(.sqlite) { http in
            let event = #"{"event":{"type":"launch","time":"2026-01-01T00:00:00Z","network":"online"}}"#
            for _ in 0..<3 { _ = try await http.post("/v1/policies/spendiq/evaluate", event) }
            let reply = try await http.get("/metrics")
            #expect(reply.status == 200)
            #expect(reply.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(
                reply.text.contains(
                    #"sessionpolicy_decisions_total{policy="spendiq",decision="idp_login",reason="no_session"} 3"#))
            #expect(reply.text.contains("sessionpolicy_request_duration_seconds_bucket{route=\"/v1/policies/{policy}/evaluate\""))
            #expect(reply.text.contains("# HELP sessionpolicy_decisions_total"))
        }
    }

    @Test("/metrics and /healthz name the version and each serving policy's digest; store operations are timed")
    func versions() async throws {
        try await TestServer.run(.sqlite) { http in
            let user = unique("olga")
            let stateful = try await http.post(
                "/v1/policies/spendiq/sessions/\(user)/phone/events",
                #"{"event":{"type":"launch","time":"2026-03-02T09:00:00Z","network":"online"}}"#, token: try await Tokens.hs256(user))
            #expect(stateful.status == 200, "\(stateful.text)")
            let health = try await http.get("/healthz")
            #expect(health.json?["version"] as? String == SessionPolicyRelease.version)
            let serving = try #require(health.json?["serving"] as? [String: String])
            let listed = try #require(try await http.get("/v1/policies").json?["policies"] as? [[String: Any]])
            #expect(serving.count == listed.count)
            let spendiq = try #require(serving["spendiq"])
            #expect(listed.first { $0["name"] as? String == "spendiq" }?["digest"] as? String == spendiq)
            let metrics = try await http.get("/metrics").text
            #expect(metrics.contains(#"sessionpolicy_build_info{version="\#(SessionPolicyRelease.version)"} 1"#), "\(metrics)")
            #expect(metrics.contains(#"sessionpolicy_policy_serving{policy="spendiq",digest="\#(spendiq)"} 1"#))
            #expect(metrics.contains(#"sessionpolicy_store_duration_seconds_count{operation="update_session"} 1"#))
            #expect(metrics.contains("sessionpolicy_store_group_commit_writes_count 1"), "\(metrics)")
        }
    }

    static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Prometheus's own linter on every metric the server has: `promtool check metrics` (Debian's
    /// `prometheus` package; CI installs it and must not skip this).
    @Test("promtool check metrics passes on /metrics after every kind of request", arguments: TestStorage.available)
    func promtoolChecksMetrics(storage: TestStorage) async throws {
        guard let promtool = Self.promtool else {
            #expect(ProcessInfo.processInfo.environment["CI"] == nil, "CI must install promtool (Debian's prometheus package)")
            return
        }
        try await TestServer.run(storage, configure: { $0.signingKeyPEM = Fixtures.text("spec/conformance/keys/a.key.pem") }) { http in
            let user = unique("pat")
            let event = #"{"event":{"type":"launch","time":"2026-03-02T09:00:00Z","network":"online"}}"#
            _ = try await http.post("/v1/policies/spendiq/evaluate", event)
            _ = try await http.post("/v1/policies/spendiq/sessions/\(user)/phone/events", event, token: try await Tokens.hs256(user))
            _ = try await http.post("/v1/policies/spendiq/sessions/\(user)/revoke", "", token: try await Tokens.service())
            _ = try await http.get("/v1/policies/spendiq/machine")
            _ = try await http.get("/v1/policies/spendiq/machine?keys=none")
            _ = try await http.get("/healthz")
            let metrics = try await http.get("/metrics").text
            #expect(metrics.contains("sessionpolicy_store_group_commit_writes"), "every kind of metric is there")
            let check = try await CLI.run(["check", "metrics"], stdin: metrics, executable: promtool)
            #expect(check.status == 0, "promtool check metrics: \(check.stdout)\(check.stderr)")
        }
    }

    @Test("`admin.port`: /healthz and /metrics on a listener of their own, and not on the public port")
    func adminPort() async throws {
        let adminPort = NIOLockedValueBox(0)
        try await TestServer.run(
            .sqlite, configure: { $0.adminPort = 0 }, onAdminRunning: { port in adminPort.withLockedValue { $0 = port } }
        ) {
            http in
            #expect(try await http.get("/healthz").status == 404)
            #expect(try await http.get("/metrics").status == 404)
            #expect(try await http.get("/v1/policies").status == 200)
            var port = 0
            for _ in 0..<100 where port == 0 {
                port = adminPort.withLockedValue { $0 }
                if port == 0 { try await Task.sleep(for: .milliseconds(50)) }
            }
            func get(_ path: String) async throws -> (Int, String) {
                let response = try await TestProvider.client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(10))
                return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 22)))
            }
            let health = try await get("/healthz")
            #expect(health.0 == 200)
            #expect(health.1.contains(#""status":"ok""#))
            let metrics = try await get("/metrics")
            #expect(metrics.0 == 200)
            #expect(metrics.1.contains("sessionpolicy_build_info{version="))
            #expect(try await get("/v1/policies").0 == 404, "the admin listener serves nothing else")
        }
    }

    @Test("/metrics reports the PostgreSQL pool: connections in use, idle and its size (`store.pool.max`), operations waiting")
    func poolGauges() async throws {
        guard TestStorage.available.contains(.postgres) else { return }
        try await TestServer.run(.postgres, configure: { $0.storePoolMax = 3 }) { http in
            let user = unique("pool")
            let event = #"{"event":{"type":"launch","time":"2026-03-02T09:00:00Z","network":"online"}}"#
            let token = try await Tokens.hs256(user)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in 0..<12 {
                    group.addTask {
                        _ = try await http.post("/v1/policies/spendiq/sessions/\(user)/d\(device)/events", event, token: token)
                    }
                }
                try await group.waitForAll()
            }
            let metrics = try await http.get("/metrics").text
            func value(_ series: String) -> Double? {
                metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
            }
            #expect(value(#"sessionpolicy_store_pool_connections{state="max"}"#) == 3)
            #expect(value(#"sessionpolicy_store_pool_connections{state="in_use"}"#) == 0, "none lent between requests")
            let idle = try #require(value(#"sessionpolicy_store_pool_connections{state="idle"}"#))
            #expect(idle >= 1 && idle <= 3, "the connections the events opened stay open, at most the pool's size")
            #expect(value("sessionpolicy_store_pool_waiting_operations") == 0)
        }
    }

    @Test("/v1/policies lists what serves")
    func policies() async throws {
        try await TestServer.run(.sqlite) { http in
            let reply = try await http.get("/v1/policies")
            let names = (reply.json?["policies"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(names?.contains("kobil-signed-jwt") == true)
            #expect(names?.count == Fixtures.files(in: "policies").count)
        }
    }

    @Test("policyctl serve without a storage flag starts on an SQLite file and answers the stateful API")
    func serveCommand() async throws {
        let dir = try Fixtures.temporaryDirectory("serve")
        defer { try? FileManager.default.removeItem(at: dir) }
        let logURL = dir.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }
        let (process, port) = try await ServeProcess.start(
            ["--port", "0", "--policies", Fixtures.path("policies")],
            environment: ["SESSIONPOLICY_HS256_SECRET": Tokens.secret, "SESSIONPOLICY_LOG_LEVEL": "info"], directory: dir,
            standardError: log)
        defer {
            if process.isRunning { process.terminate() }
        }
        let client = TestClient(host: "127.0.0.1", port: port)
        client.connect()
        let token = try await Tokens.hs256("alice")
        let reply = try await client.execute(
            .init(
                "/v1/policies/spendiq/sessions/alice/d1/events", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: .init(
                    string: "{\"event\":{\"type\":\"launch\",\"time\":\"\(Timestamp(Date()))\",\"network\":\"online\"}}"
                )))
        #expect(reply.status == .ok, "\(reply.body.map { String(buffer: $0) } ?? "")")
        try await client.shutdown()
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("sessionpolicy.sqlite").path))
        // SIGTERM stops it gracefully, with exit code 0.
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // Logs: one logfmt line per record, metadata keys sorted, values quoted when needed.
        let lines = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n")
        let loaded = try #require(lines.first { $0.contains(#"msg="policies loaded""#) }, "\(lines)")
        #expect(loaded.hasPrefix("time=20"))
        #expect(loaded.contains(" level=info label=sessionpolicy msg=\"policies loaded\" directory="))
        #expect(loaded.contains(" policies=") && loaded.contains("spendiq"))
    }

    @Test("policyctl serve refuses huge and endless policy files from their size, in bounded memory, and keeps serving the rest")
    func hugePolicyFiles() async throws {
        let dir = try Fixtures.temporaryDirectory("huge-policies")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Fixtures.text("policies/spendiq.yaml").write(to: dir.appendingPathComponent("spendiq.yaml"), atomically: true, encoding: .utf8)
        let huge = dir.appendingPathComponent("huge.yaml").path
        _ = FileManager.default.createFile(atPath: huge, contents: nil)
        try #require(truncate(huge, 2_147_483_648) == 0, "a sparse 2 GB file")
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("zero.yaml").path, withDestinationPath: "/dev/zero")
        try #require(mkfifo(dir.appendingPathComponent("pipe.yaml").path, 0o600) == 0, "a FIFO no one writes")
        let started = Date()
        let (process, port) = try await ServeProcess.start(
            ["--port", "0", "--policies", dir.path, "--storage", "sqlite:\(dir.path)/s.sqlite"],
            environment: ["SESSIONPOLICY_HS256_SECRET": Tokens.secret])
        defer {
            if process.isRunning { process.terminate() }
        }
        // Not the wall time (under the whole suite on 2 cores a start can wait a minute for a
        // core): the server's own CPU time, which reading the 2 GB file would take seconds of.
        let stat = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ") ")!.upperBound...].split(separator: " ")
        let cpuSeconds = Double((Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
        #expect(cpuSeconds < 5, "the server used \(cpuSeconds) s of CPU to start, \(Date().timeIntervalSince(started)) s of wall time")
        let client = TestClient(host: "127.0.0.1", port: port)
        client.connect()
        let health = try await client.execute(.init("/healthz", method: .get))
        let body = health.body.map { String(buffer: $0) } ?? ""
        try await client.shutdown()
        let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        #expect(json?["status"] as? String == "degraded", "\(body)")
        #expect(body.contains("input-too-large") && body.contains("huge.yaml") && body.contains("zero.yaml"), "\(body)")
        #expect(body.contains("pipe.yaml"), "\(body)")
        #expect((json?["policies"] as? [String])?.contains("spendiq") ?? body.contains("spendiq"), "\(body)")
        // Peak memory of the running server, from /proc: reading the 2 GB file would take gigabytes.
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        let hwm = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        let kb = hwm.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        #expect(kb > 0 && kb < 200 * 1024, "peak \(kb) KB")
    }

    /// Enumerated from the server's sources, not typed here: the codes the server declares, and
    /// every code it answers with an HTTP status of its own (`APIError(status, .code, ...)`).
    @Test("every code the server answers with has a row in the server section of docs/diagnostics.md")
    func codesDocumented() throws {
        let all = SourceScan.diagnosticCodes()
        let raw = Dictionary(all.compactMap { c in c.name.map { ($0, c.raw) } }, uniquingKeysWith: { a, _ in a })
        let server = SourceScan.swiftFiles(under: "Server/Sources/SessionPolicyServer")
        var codes = Set(all.filter { $0.file.hasPrefix("Server/Sources/SessionPolicyServer/") }.map(\.raw))
        for (path, text) in server {
            for m in text.matches(of: /APIError\(\s*[^,()]+(?:\([^)]*\))?,\s*\.(\w+)/) {
                let name = String(m.1)
                codes.insert(try #require(raw[name], "\(path): `.\(name)` is not a declared diagnostic code"))
            }
        }
        #expect(codes.count >= 8, "the scan found \(codes.sorted())")
        let rows = Set(MarkdownTables.firstCells(Fixtures.text("docs/diagnostics.md"), under: "## Server requests"))
        for code in codes.sorted() where !rows.contains(code) {
            Issue.record("`\(code)` is not in the server requests table of docs/diagnostics.md")
        }
    }

    @Test("policyctl-serve --help prints its overview without runs of spaces")
    func helpHasNoRunsOfSpaces() async throws {
        let r = try await CLI.run(["--help"], executable: ServeProcess.binary)
        #expect(r.status == 0)
        let overview = try #require(r.stdout.components(separatedBy: "\nUSAGE:").first)
        #expect(overview.hasPrefix("OVERVIEW: "), "\(r.stdout)")
        for line in overview.split(separator: "\n") {
            #expect(line.trimmingCharacters(in: .whitespaces).firstMatch(of: /\S {2,}\S/) == nil, "`\(line)`")
        }
    }

    @Test("policyctl serve refuses a bad configuration with exit code 2")
    func badConfiguration() async throws {
        let storage = try await CLI.run(["--storage", "mysql://x", "--port", "0"], executable: ServeProcess.binary)
        #expect(storage.status == 2)
        #expect(storage.stderr.contains("unknown storage URL"))
        let dir = try Fixtures.temporaryDirectory("empty")
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = try await CLI.run(
            ["--policies", dir.path, "--port", "0", "--storage", "sqlite:\(dir.path)/s.sqlite"], executable: ServeProcess.binary)
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("no policy"))
        let secret = try await CLI.run(["--port", "0", "--pool", "vendor:short"], executable: ServeProcess.binary)
        #expect(secret.status == 2)
    }
}
