import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Runs the built `policyctl` binary, as a user would, and checks output and exit codes.
@Suite("policyctl")
struct CLITests {
    static let policies = Fixtures.files(in: "policies")

    @Test("check passes every shipped scenario and ends with the summary line")
    func checkAll() throws {
        let r = try CLI.run(["check", "policies", "examples"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let match = r.lastLine.wholeMatch(of: /(\d+) passed, 0 failed/)
        #expect(match != nil, "last line: \(r.lastLine)")
        #expect(Int(match?.1 ?? "0") ?? 0 >= 30)
        #expect(
            r.stdout.contains(
                "behaviours covered: K1 K2 K3 K4 K5 K6 K7 K8 S1 S2 S3 S4 S5 I1 I2 I3 I4 I5 A1 X1 X2 X3 X4 (A2 A3: the server's, shown by its tests, not by scenarios)\n"
            ),
            "\(r.stdout)")
    }

    @Test("a failing scenario exits 1 and shows expected, actual and the explanation")
    func checkFailure() throws {
        let dir = try Fixtures.temporaryDirectory("policyctl")
        defer { try? FileManager.default.removeItem(at: dir) }
        let scenario = dir.appendingPathComponent("wrong.yaml").path
        try """
        policy: spendiq
        scenarios:
          - name: expects the wrong thing
            covers: [S2]
            start: 2026-04-06T08:00:00Z
            context: { network: offline, user: ana }
            steps:
              - event: idp_login_succeeded
                network: online
                auth_mode: none
              - at: +8d
                event: launch
                expect: { decision: allow }
        """.write(toFile: scenario, atomically: true, encoding: .utf8)
        let r = try CLI.run(["check", "policies/spendiq.yaml", scenario])
        #expect(r.status == 1)
        #expect(r.lastLine == "0 passed, 1 failed")
        #expect(r.stdout.contains("FAIL \(scenario): expects the wrong thing [S2]"))
        #expect(r.stdout.contains("step 2 (launch at 2026-04-14T08:00:00Z)"))
        #expect(r.stdout.contains("decision: expected `allow`, got `wipe`"))
        // The same rendering as `policyctl explain` (OutcomeRenderer), indented.
        #expect(r.stdout.contains("      -> #"))
        #expect(r.stdout.contains("more than 7d since the last online validation: 8d since the last online validation\n"))
        #expect(r.stdout.contains("decides: offline.window, offline.on_expired at policies/spendiq.yaml:"))
        #expect(r.stdout.contains("got: decision: wipe, reason offline_window_exceeded, next state signed_out"))

        let json = try CLI.run(["check", "policies/spendiq.yaml", scenario, "--format", "json"])
        #expect(json.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["failed"] as? Int == 1)
    }

    @Test("a broken policy exits 2 with located errors")
    func brokenPolicy() throws {
        let r = try CLI.run(["check", "Tests/Fixtures/bad-policies/many-problems.yaml", "examples/spendiq.yaml"])
        #expect(r.status == 2)
        #expect(
            r.stderr.contains(
                "Tests/Fixtures/bad-policies/many-problems.yaml:3:1: error[unknown-key]: unknown key `sesion` at the top level"))
        #expect(r.stderr.contains("= help: did you mean `session`?"))
        let json = try CLI.run(["compile", "Tests/Fixtures/bad-policies/unknown-key.yaml", "--format", "json"])
        #expect(json.status == 2)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let first = (object?["diagnostics"] as? [[String: Any]])?.first
        #expect(first?["code"] as? String == "unknown-key")
        #expect(first?["line"] as? Int == 4)
        #expect(first?["column"] as? Int == 3)
    }

    @Test(
        "a broken scenario file exits 2",
        arguments: [
            ("scenarios:\n  - name: x\n    start: yesterday\n    steps: [{event: launch, network: offline}]\n", "invalid-time"),
            (
                "policy: nosuch\nscenarios:\n  - name: x\n    start: 2026-01-01T00:00:00Z\n    steps: [{event: launch, network: offline}]\n",
                "unknown-policy"
            ),
            (
                "policy: spendiq\nscenarios:\n  - name: x\n    start: 2026-01-01T00:00:00Z\n    steps: [{event: launch, netwrk: offline}]\n",
                "unknown-key"
            ),
            (
                "policy: spendiq\nscenarios:\n  - name: x\n    start: 2026-01-01T00:00:00Z\n    steps: [{event: launch, network: offline, expect: {decison: allow}}]\n",
                "unknown-key"
            ),
        ])
    func brokenScenario(text: String, code: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("s-\(UUID().uuidString).yaml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try CLI.run(["check", "policies", path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("error[\(code)]"), "\(r.stderr)")
        #expect(r.stderr.contains("\(path):"))
    }

    @Test("expect: { session: ... } checks the next session's fields, each mismatch on its own line; a bad key is located")
    func sessionExpectations() throws {
        let r = try CLI.run(["check", "Tests/Fixtures/check/session-expectations.yaml"])
        #expect(r.status == 1, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("step 2 (token_refreshed at 2026-03-01T10:00:00Z), Tests/Fixtures/check/session-expectations.yaml:11:9"))
        let mismatches = lines.filter { $0.hasPrefix("session.") }
        #expect(
            mismatches == [
                "session.user: expected `bob`, got `alice`",
                "session.auth_mode: expected `none`, got `biometric`",
                "session.last_online: expected `2026-03-01T09:00:00Z`, got `2026-03-01T10:00:00Z`",
                "session.last_activity: expected none, got `2026-03-01T09:00:00Z`",
                "session.read_only: expected `true`, got `false`",
                "session.failures: expected `0/0/2`, got `0/0/0` (biometric/offline_login/idp_login)",
            ], "\(r.stdout)")

        let dir = try Fixtures.temporaryDirectory("session-expect")
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.yaml").path
        try """
        policy: \(Fixtures.path("policies/spendiq.yaml"))
        scenarios:
          - name: bad
            start: 2026-03-01T09:00:00Z
            steps:
              - event: launch
                network: online
                expect: { session: { last_onlin: +0s } }

        """.write(toFile: bad, atomically: true, encoding: .utf8)
        let b = try CLI.run(["check", bad])
        #expect(b.status == 2)
        #expect(
            b.stderr.contains("bad.yaml:8:30: error[unknown-key]: unknown key `last_onlin` in `scenarios[0].steps[0].expect.session`"),
            "\(b.stderr)")
        #expect(b.stderr.contains("= help: did you mean `last_online`?"))
    }

    /// Standard output and standard error of `policyctl check` on Tests/Fixtures/check/warnings.yaml
    /// are in warnings.expected (re-record with RECORD_SNAPSHOTS=1).
    @Test("check accepts ids of one's own, warns about a look-alike id and a scenario that expects nothing, and exits 0")
    func checkWarnings() throws {
        let scenarios = "Tests/Fixtures/check/warnings.yaml"
        let r = try CLI.run(["check", "policies/spendiq.yaml", scenarios, "-v"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lastLine == "3 passed, 0 failed")
        #expect(
            r.stdout.contains(
                "\nbehaviours covered: S2 (A2 A3: the server's, shown by its tests, not by scenarios)\nrequirements covered: K9 REQ-7 s1\n"),
            "\(r.stdout)")
        #expect(r.stderr.contains("\(scenarios):20:14: warning[unknown-behaviour]: `s1` looks like a behaviour id"), "\(r.stderr)")
        #expect(r.stderr.contains("= help: did you mean `S1`?"))
        #expect(r.stderr.contains("\(scenarios):20:18: warning[unknown-behaviour]: `K9` looks like a behaviour id"))
        #expect(r.stderr.contains("\(scenarios):31:5: warning[no-expectations]: scenario `expects nothing` expects nothing"))
        if let diff = Golden.check(
            "$ policyctl check policies/spendiq.yaml \(scenarios) -v\n--- standard output\n\(r.stdout)--- standard error\n\(r.stderr)",
            against: "Tests/Fixtures/check/warnings.expected")
        {
            Issue.record(Comment(rawValue: diff))
        }
        let json = try CLI.run(["check", "policies/spendiq.yaml", scenarios, "--format", "json"])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["covered"] as? [String] == ["S2"])
        #expect(object["requirements_covered"] as? [String] == ["K9", "REQ-7", "s1"])
        #expect(json.stderr.contains("warning[no-expectations]"))
    }

    @Test(
        "usage errors exit 64",
        arguments: [["check"], ["compile", "policies/spendiq.yaml", "--format", "png"], ["frobnicate"]])
    func usage(_ args: [String]) throws {
        #expect(try CLI.run(args).status == 64)
    }

    @Test("a check that finds no scenarios is an error, not a pass")
    func noScenarios() throws {
        let dir = try Fixtures.temporaryDirectory("empty")
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["check", "policies", dir.path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("error[no-scenarios]"))
        // A folder of policies alone: its scenario files would come from it, and there are none.
        let alone = try CLI.run(["check", "policies"])
        #expect(alone.status == 2)
        #expect(alone.stderr.contains("error[no-scenarios]: no scenarios found in `policies`"))
    }

    @Test("a scenario may name its policy by a relative path that is also loaded from a directory")
    func policyByPath() throws {
        let dir = try Fixtures.temporaryDirectory("rel")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("ex"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("policies"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Fixtures.text("policies/spendiq.yaml").write(
            to: dir.appendingPathComponent("policies/spendiq.yaml"), atomically: true, encoding: .utf8)
        try """
        policy: ../policies/spendiq.yaml
        scenarios:
          - name: by path
            start: 2026-04-06T08:00:00Z
            steps:
              - event: register
                network: offline
                expect: { decision: idp_login }
        """.write(to: dir.appendingPathComponent("ex/s.yaml"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["check", dir.appendingPathComponent("policies").path, dir.appendingPathComponent("ex").path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lastLine == "1 passed, 0 failed")
    }

    @Test("a folder holding a policy and its scenario files side by side loads both, by content", arguments: [false, true])
    func mixedFolder(_ twice: Bool) throws {
        let dir = try Fixtures.temporaryDirectory("mixed")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Fixtures.text("policies/spendiq.yaml").write(to: dir.appendingPathComponent("spendiq.yaml"), atomically: true, encoding: .utf8)
        try Fixtures.text("examples/spendiq.yaml").write(
            to: dir.appendingPathComponent("spendiq-scenarios.yaml"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["check", dir.path] + (twice ? [dir.path] : []))
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.lastLine.hasSuffix("passed, 0 failed") && !r.lastLine.hasPrefix("0 "), "\(r.lastLine)")
        #expect(!r.stderr.contains("missing key"))
    }

    @Test("a scenario may name its policy by an absolute path, which is read as it is")
    func policyByAbsolutePath() throws {
        let dir = try Fixtures.temporaryDirectory("abs")
        defer { try? FileManager.default.removeItem(at: dir) }
        let policy = dir.appendingPathComponent("elsewhere/spendiq-copy.yaml")
        try FileManager.default.createDirectory(at: policy.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Fixtures.text("policies/spendiq.yaml").replacingOccurrences(of: "name: spendiq", with: "name: spendiq-copy")
            .write(to: policy, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("ex"), withIntermediateDirectories: true)
        try """
        policy: \(policy.path)
        scenarios:
          - name: by absolute path
            start: 2026-04-06T08:00:00Z
            steps:
              - event: register
                network: offline
                expect: { decision: idp_login, reason: registration_requires_network }
        """.write(to: dir.appendingPathComponent("ex/s.yaml"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["check", "policies", dir.appendingPathComponent("ex").path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lastLine == "1 passed, 0 failed")
    }

    @Test("a missing file exits 2")
    func missingFile() throws {
        let r = try CLI.run(["compile", "policies/nope.yaml"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("error[file-not-found]"))
    }

    /// The rendering fixtures (Tests/Fixtures/render/README.md): small policies whose renderings
    /// are reviewable golden files. JSON only for `minimal`: every machine is total, so even a
    /// small policy's JSON runs to thousands of lines.
    static let renderFixtures = ["minimal", "rules", "cross-app", "biometric-only"]
    static let renderFormats = ["text": "txt", "json": "json", "dot": "dot", "mermaid": "mmd"]

    @Test("compile renderings of the rendering fixtures match their golden files", arguments: renderFixtures)
    func renderGoldens(_ name: String) throws {
        for format in name == "minimal" ? ["text", "json", "dot", "mermaid"] : ["text", "dot", "mermaid"] {
            let r = try CLI.run(["compile", "Tests/Fixtures/render/\(name).yaml", "--format", format])
            #expect(r.status == 0, "\(r.stderr)")
            if let diff = Golden.check(r.stdout, against: "Tests/Fixtures/golden/render/\(name).\(Self.renderFormats[format]!)") {
                Issue.record(Comment(rawValue: diff))
            }
        }
    }

    @Test("compile --format machine writes a document the core reads back, the same on every run", arguments: policies)
    func compileMachine(_ policy: String) throws {
        let r = try CLI.run(["compile", policy, "--format", "machine"])
        #expect(r.status == 0 && r.stderr.isEmpty)
        #expect(r.stdout.hasSuffix("}\n") && !r.stdout.dropLast().contains("\n"), "one line, canonical")
        let machine = try PolicyMachine(document: Data(r.stdout.utf8), file: "m.json")
        #expect(machine.document + "\n" == r.stdout)
        #expect(machine.digest.hasPrefix("sha256:") && machine.digest.count == 71)
        #expect(try CLI.run(["compile", policy, "--format", "machine"]).stdout == r.stdout)
    }

    @Test("eval reads YAML or JSON from standard input and prints the decision as JSON")
    func eval() throws {
        let input = """
            {"state": {"state": "suspended", "user": "alice", "auth_mode": "biometric",
                       "last_idp_login": "2026-03-01T09:00:00Z", "last_online": "2026-03-01T09:00:00Z"},
             "event": {"type": "launch", "time": "2026-03-05T09:00:00Z", "network": "offline",
                       "user": "alice", "device": {"keystore": "hardware"}}}
            """
        let r = try CLI.run(["eval", "policies/kobil-signed-jwt.yaml", "-"], stdin: input)
        #expect(r.status == 0, "\(r.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let outcome = object?["outcome"] as? [String: Any]
        #expect(outcome?["decision"] as? String == "require_biometric")
        #expect(outcome?["scope"] as? String == "bio_auth_grant_SE")
        #expect((outcome?["state"] as? [String: Any])?["state"] as? String == "awaiting_biometric")
        #expect((object?["decided_by"] as? [String: Any])?["levers"] as? [String] == ["auth_modes.offline"])

        let yaml = "event:\n  type: launch\n  time: 2026-03-05T09:00:00Z\n  network: offline\n"
        let explained = try CLI.run(["eval", "policies/spendiq.yaml", "--explain"], stdin: yaml)
        #expect(explained.status == 0)
        #expect(explained.stdout.contains("\"reason\" : \"no_session\""))
        #expect(explained.stdout.contains("\"trace\""))
    }

    @Test(
        "eval rejects bad input with a located error and exit 2",
        arguments: [
            ("event:\n  type: launch\n  time: 2026-03-05T09:00:00Z\n  network: wifi\n", "4:12", "invalid-value"),
            ("event:\n  type: launch\n  time: 2026-03-05T09:00:00Z\n", "2:3", "missing-key"),
            ("state:\n  state: bogus\nevent:\n  type: launch\n  time: 2026-03-05T09:00:00Z\n  network: online\n", "2:10", "invalid-value"),
            ("evnt: {}\n", "1:1", "unknown-key"),
            // Standard input starting with `{` is JSON, read strictly.
            ("{\"event\": {\"type\": \"launch\",}}", "1:28", "invalid-json"),
            ("{event: {type: launch}}", "1:2", "invalid-json"),
            ("{\"event\": {\"type\": \"launch\", \"time\": \"2026-03-05T09:00:00Z\",\n  \"type\": \"resume\"}}", "2:3", "duplicate-key"),
        ])
    func evalErrors(input: String, location: String, code: String) throws {
        let r = try CLI.run(["eval", "policies/spendiq.yaml", "-", "--format", "json"], stdin: input)
        #expect(r.status == 2)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let d = (object?["diagnostics"] as? [[String: Any]])?.first { $0["code"] as? String == code }
        #expect(d != nil, "\(r.stdout)")
        #expect("\(d?["line"] as? Int ?? 0):\(d?["column"] as? Int ?? 0)" == location)
        #expect(d?["file"] as? String == "<stdin>")
    }

    @Test("eval reads a file as JSON or YAML by its name, and by its first character when the name does not say")
    func inputFormat() throws {
        let dir = try Fixtures.temporaryDirectory("format")
        defer { try? FileManager.default.removeItem(at: dir) }
        let json = #"{"event": {"type": "launch", "time": "2026-03-05T09:00:00Z", "network": "offline"}}"#
        let yaml = "event: {type: launch, time: 2026-03-05T09:00:00Z, network: offline}\n"
        let flow = "{event: {type: launch, time: 2026-03-05T09:00:00Z, network: offline}}\n"
        // (file name, content, exit status)
        let cases: [(String, String, Int32)] = [
            ("a.json", json, 0), ("a.yaml", json, 0), ("a.yml", yaml, 0), ("a.yaml", flow, 0), ("a.txt", json, 0),
            ("a.txt", yaml, 0), ("a", flow, 2), ("a.json", yaml, 2), ("a.JSON", flow, 2),
        ]
        for (name, content, status) in cases {
            let path = dir.appendingPathComponent(name).path
            try content.write(toFile: path, atomically: true, encoding: .utf8)
            let r = try CLI.run(["eval", "policies/spendiq.yaml", path, "--format", "json"])
            #expect(r.status == status, "\(name): \(content) \(r.stdout)")
            if status == 2 { #expect(r.stdout.contains("invalid-json"), "\(name): \(r.stdout)") }
            try FileManager.default.removeItem(atPath: path)
        }
    }

    @Test("explain shows every guard tried with its facts and policy line, from one document or two")
    func explain() throws {
        let dir = try Fixtures.temporaryDirectory("explain")
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("state.yaml").path
        let event = dir.appendingPathComponent("event.yaml").path
        try "state: suspended\nuser: alice\nauth_mode: none\nlast_idp_login: 2026-03-01T09:00:00Z\n".write(
            toFile: state, atomically: true, encoding: .utf8)
        try "type: launch\ntime: 2026-06-01T09:00:00Z\nnetwork: offline\n".write(toFile: event, atomically: true, encoding: .utf8)
        let r = try CLI.run(["explain", "policies/kobil-offline-token.yaml", state, event])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("-> #"))
        #expect(r.stdout.contains("more than 90d since the last IdP login: 92d since the last IdP login"))
        #expect(r.stdout.contains("decides: session.max, session.on_expired at policies/kobil-offline-token.yaml:13:8"))
        #expect(r.stdout.contains("\nmessage: "))
        // The next state with its times, so the times the next decision reads are in view.
        #expect(r.stdout.contains("next state: awaiting_idp\n  user: alice, device: -, auth_mode: none\n"), "\(r.stdout)")
        #expect(r.stdout.contains("  last_idp_login: 2026-03-01T09:00:00Z, last_online: -\n"), "\(r.stdout)")
        #expect(r.lastLine.hasPrefix("  failures: biometric 0, offline_login 0, idp_login 0; read_only: false"))
        let bad = try CLI.run(["explain", "policies/kobil-offline-token.yaml", state, state])
        #expect(bad.status == 2)
    }

    /// argument-parser wraps the overview itself: a run of spaces inside a line of it is text
    /// that lost its line breaks (a multi-line string literal joined without `\\`).
    @Test(
        "--help prints the overview without runs of spaces",
        arguments: [[], ["check"], ["lint"], ["eval"], ["explain"], ["compile"]])
    func helpHasNoRunsOfSpaces(_ command: [String]) throws {
        let r = try CLI.run(command + ["--help"])
        #expect(r.status == 0)
        let overview = try #require(r.stdout.components(separatedBy: "\nUSAGE:").first)
        #expect(overview.hasPrefix("OVERVIEW: "), "\(r.stdout)")
        for line in overview.split(separator: "\n") {
            #expect(line.trimmingCharacters(in: .whitespaces).firstMatch(of: /\S {2,}\S/) == nil, "`\(line)`")
        }
    }

    @Test("--help documents the exit codes")
    func help() throws {
        let r = try CLI.run(["check", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("1 a scenario failed"))
        #expect(r.stdout.contains("2 invalid input"))
    }

    static let lintFixtures = Fixtures.files(in: "Tests/Fixtures/lint")

    @Test("lint output matches its golden file; warnings exit 0, and 1 with --strict", arguments: lintFixtures)
    func lintGoldens(_ policy: String) throws {
        let r = try CLI.run(["lint", policy])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty)
        #expect(r.lastLine.wholeMatch(of: /\d+ warnings? in 1 policy( \(\d+ notes?\))?/) != nil, "last line: \(r.lastLine)")
        if let diff = Golden.check(r.stdout, against: String(policy.dropLast(".yaml".count)) + ".expected") {
            Issue.record(Comment(rawValue: diff))
        }
        let strict = try CLI.run(["lint", "--strict", policy])
        #expect(strict.status == 1)
        #expect(strict.stdout == r.stdout)
    }

    @Test("lint --format json prints the warnings as diagnostics")
    func lintJSON() throws {
        let r = try CLI.run(["lint", "Tests/Fixtures/lint/weak.yaml", "--format", "json", "--strict"])
        #expect(r.status == 1)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let diagnostics = try #require(object?["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.count == 11)
        #expect(diagnostics.allSatisfy { $0["severity"] as? String == "warning" && $0["help"] is String })
        #expect(diagnostics.first?["code"] as? String == "no-session-max")
        #expect(diagnostics.first?["line"] as? Int == 1)
        #expect(Set(diagnostics.compactMap { $0["code"] as? String }).contains("long-offline-without-biometric"))
    }

    @Test("the shipped policies are lint-clean, even with --strict: they accept their seed's design in `lint.allow`")
    func lintShipped() throws {
        let r = try CLI.run(["lint", "--strict", "policies"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.lastLine.hasPrefix("no warnings in \(Self.policies.count) policies ("), "\(r.lastLine)")
        #expect(r.lastLine.hasSuffix(" allowed by `lint.allow`, 3 notes)"), "\(r.lastLine)")
        let json = try CLI.run(["lint", "policies", "--format", "json"])
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let diagnostics = object?["diagnostics"] as? [[String: Any]] ?? []
        #expect(diagnostics.count == 3 && diagnostics.allSatisfy { $0["severity"] as? String == "note" }, "only notes: \(diagnostics)")
    }

    @Test("lint notes each rule that reads an attribute, with the events that must carry it, without failing --strict")
    func attributeNotes() throws {
        let r = try CLI.run(["lint", "--strict", "policies/i360-marketsharp.yaml"])
        #expect(r.status == 0, "notes never fail --strict: \(r.stdout)")
        #expect(
            r.stdout.contains(
                "policies/i360-marketsharp.yaml:58:11: note[attribute-required]: rule `revoked-license-signs-out` reads attribute `license`: `idp_login_succeeded`, `token_refreshed` must carry it"
            ), "\(r.stdout)")
        #expect(r.lastLine.hasSuffix("3 notes)"), "\(r.lastLine)")
        let none = try CLI.run(["lint", "policies/spendiq.yaml"])
        #expect(!none.stdout.contains("note["))
    }

    @Test("lint exits 2 on a policy that does not load, or when it finds no policies")
    func lintInvalid() throws {
        let r = try CLI.run(["lint", "policies", "Tests/Fixtures/bad-policies/unknown-key.yaml"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("Tests/Fixtures/bad-policies/unknown-key.yaml:4:3: error[unknown-key]"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
        let dir = try Fixtures.temporaryDirectory("lint")
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = try CLI.run(["lint", dir.path, "--format", "json"])
        #expect(empty.status == 2)
        #expect(empty.stdout.contains("\"no-policies\""))
        #expect(try CLI.run(["lint"]).status == 64)
        #expect(try CLI.run(["lint", "policies", "--format", "sarif"]).status == 64)
    }
}
