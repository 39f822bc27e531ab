import Foundation
import SessionPolicyTestSupport
import Testing

/// `policyctl diff` as a user runs it, on a small policy and two edits of it.
@Suite("policyctl diff")
struct DiffCLITests {
    static let dir = "Tests/Fixtures/diff"

    @Test("a policy written otherwise (comments, key order, 168h for 7d) decides alike: equivalent, exit 0")
    func equivalent() throws {
        let r = try CLI.run(["diff", "\(Self.dir)/small.yaml", "\(Self.dir)/small-reworded.yaml"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(
            r.stdout.hasPrefix("\(Self.dir)/small.yaml -> \(Self.dir)/small-reworded.yaml: equivalent, every event is decided alike"),
            "\(r.stdout)")
    }

    @Test("a shorter offline window is explained in words, with the levers and a run; its scenarios pass on the new version")
    func changedWindow() throws {
        let out = try Fixtures.temporaryDirectory("diff")
        let r = try CLI.run(["diff", "\(Self.dir)/small.yaml", "\(Self.dir)/small-5d.yaml", "--scenarios", out.path])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("\(Self.dir)/small.yaml -> \(Self.dir)/small-5d.yaml: 4 changes of outcome") == true, "\(r.stdout)")
        #expect(lines.first?.hasSuffix("; 0 of 4 changes let more in") == true, "\(r.stdout)")
        #expect(lines.contains("  1. allow (within_limits) becomes idp_login (offline_window_exceeded)"), "\(r.stdout)")
        #expect(r.stdout.contains("since the last online validation more than 5d and at most 7d"), "\(r.stdout)")
        #expect(r.stdout.contains("new: more than 5d since the last online validation [offline.window, offline.on_expired]"))
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(files.count >= 4)
        let check = try CLI.run(["check", "\(Self.dir)/small-5d.yaml", out.path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        // The same runs, pointed at the old version, fail at the step the versions decide otherwise.
        let againstOld = try Fixtures.temporaryDirectory("diff-old")
        for f in files {
            let text = try String(contentsOfFile: out.appendingPathComponent(f).path, encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.hasPrefix("policy: ") ? "policy: \(Fixtures.path("\(Self.dir)/small.yaml"))" : String($0)
            }
            try lines.joined(separator: "\n").write(to: againstOld.appendingPathComponent(f), atomically: true, encoding: .utf8)
        }
        let old = try CLI.run(["check", againstOld.path])
        #expect(old.status == 1, "\(old.stdout)\(old.stderr)")
        #expect(old.lastLine == "0 passed, \(files.count) failed", "\(old.stdout)")
    }

    @Test("a policy file with a mistake is located, exit 2")
    func badInput() throws {
        let r = try CLI.run(["diff", "\(Self.dir)/small.yaml", "Tests/Fixtures/properties/bad.yaml"])
        #expect(r.status == 2, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("Tests/Fixtures/properties/bad.yaml:1:1: error["), "\(r.stderr)")
    }

    /// A folder holding a stand-in `policyctl-sessions` that runs `body` (the real one is the
    /// server package's; `Server/Tests` runs it against SQLite and PostgreSQL).
    static func exporter(_ body: String) throws -> URL {
        let dir = try Fixtures.temporaryDirectory("exporter")
        let path = dir.appendingPathComponent("policyctl-sessions").path
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        return dir
    }

    static func path(_ dir: URL) -> [String: String] {
        ["PATH": dir.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }

    @Test("--storage counts the stored sessions whose next launch the new version decides otherwise, online and offline")
    func storageImpact() throws {
        let stored = Fixtures.path("Tests/Fixtures/diff/stored-small.jsonl")
        let dir = try Self.exporter("[ \"$1 $2 $3 $4\" = \"--storage sqlite:sessions.sqlite --policy small\" ] || exit 9\ncat '\(stored)'")
        defer { try? FileManager.default.removeItem(at: dir) }
        let args = [
            "diff", "\(Self.dir)/small.yaml", "\(Self.dir)/small-5d.yaml", "--storage", "sqlite:sessions.sqlite", "--at",
            "2026-03-07T10:00:00Z",
        ]
        let r = try CLI.run(args, environment: Self.path(dir))
        #expect(r.status == 1, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("impact on the 3 sessions of `small` stored in sqlite:sessions.sqlite") })
        #expect(
            lines[start].hasSuffix(
                "for their next launch at 2026-03-07T10:00:00Z (from a device with a hardware keystore that passes its integrity check):"))
        #expect(
            Array(lines[(start + 1)...])
                == [
                    "  online: 1 decided otherwise, 2 alike",
                    "    1  allow (within_limits) becomes idp_login (offline_window_exceeded), for example user `alice` on `d1`",
                    "  offline: 1 decided otherwise, 2 alike",
                    "    1  allow (within_limits) becomes idp_login (offline_window_exceeded), for example user `alice` on `d1`",
                ])

        // The same in JSON, under `impact`.
        let json = try CLI.run(args + ["--format", "json"], environment: Self.path(dir))
        #expect(json.status == 1, "\(json.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let impact = try #require(object["impact"] as? [String: Any])
        #expect(impact["sessions"] as? Int == 3)
        #expect(impact["unchanged"] as? [String: Int] == ["online": 2, "offline": 2])
        let changes = try #require(impact["changes"] as? [[String: Any]])
        #expect(changes.count == 2 && changes.allSatisfy { $0["sessions"] as? Int == 1 })
        #expect((changes.first?["new"] as? [String: Any])?["reason"] as? String == "offline_window_exceeded")

        // Equivalent versions: the stored sessions are all decided alike.
        let same = try CLI.run(
            ["diff", "\(Self.dir)/small.yaml", "\(Self.dir)/small-reworded.yaml", "--storage", "sqlite:sessions.sqlite"],
            environment: Self.path(dir))
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout.contains("  offline: 0 decided otherwise, 3 alike"), "\(same.stdout)")
    }

    @Test("--storage with rules that read attributes: each value the rules compare with is reported, and named on its change")
    func storageImpactWithAttributes() throws {
        let stored = Fixtures.path("Tests/Fixtures/diff/stored-tiered.jsonl")
        let dir = try Self.exporter("cat '\(stored)'")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Stored 4 days after the last online validation: the 3-day window is past, the 5-day one is not.
        let r = try CLI.run(
            [
                "diff", "\(Self.dir)/tiered.yaml", "\(Self.dir)/tiered-5d.yaml", "--storage", "sqlite:sessions.sqlite", "--at",
                "2026-03-07T10:00:00Z",
            ], environment: Self.path(dir))
        #expect(r.status == 1, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("impact on the 1 session of `tiered`") }, "\(r.stdout)")
        #expect(lines[start].hasSuffix("passes its integrity check, reporting each combination of `account_tier` basic|premium):"))
        #expect(
            Array(lines[(start + 1)...])
                == [
                    "  online: 1 decided otherwise, 0 alike",
                    "    1  idp_login (offline_window_exceeded) becomes require_biometric (basic_tier_prompt) with `account_tier` basic, for example user `alice` on `d1`",
                    "    1  idp_login (offline_window_exceeded) becomes allow (within_limits) with `account_tier` premium, for example user `alice` on `d1`",
                    "  offline: 1 decided otherwise, 0 alike",
                    "    1  idp_login (offline_window_exceeded) becomes require_biometric (basic_tier_prompt) with `account_tier` basic, for example user `alice` on `d1`",
                    "    1  idp_login (offline_window_exceeded) becomes allow (within_limits) with `account_tier` premium, for example user `alice` on `d1`",
                ], "\(r.stdout)")
    }

    @Test("--storage: an exporter that fails, or none at all, is exit 2 with what to do; --at needs --storage")
    func storageErrors() throws {
        let failing = try Self.exporter("echo 'error: cannot open the storage `sqlite:x.sqlite`' >&2\nexit 2")
        defer { try? FileManager.default.removeItem(at: failing) }
        let args = ["diff", "\(Self.dir)/small.yaml", "\(Self.dir)/small-5d.yaml", "--storage", "sqlite:x.sqlite"]
        let r = try CLI.run(args, environment: Self.path(failing))
        #expect(r.status == 2)
        #expect(r.stderr == "error: cannot open the storage `sqlite:x.sqlite`\n", "\(r.stderr)")

        let garbage = try Self.exporter("echo 'not json'")
        defer { try? FileManager.default.removeItem(at: garbage) }
        let g = try CLI.run(args, environment: Self.path(garbage))
        #expect(g.status == 2)
        #expect(g.stderr.contains("wrote a line that is not a stored session: not json"), "\(g.stderr)")

        let none = try CLI.run(args, environment: ["PATH": "/usr/bin:/bin"])
        #expect(none.status == 2)
        #expect(none.stderr.contains("`policyctl-sessions`, which is neither next to policyctl nor on the PATH"), "\(none.stderr)")
        #expect(none.stderr.contains("= help: it is built by the server package"), "\(none.stderr)")

        let at = try CLI.run(["diff", "\(Self.dir)/small.yaml", "\(Self.dir)/small-5d.yaml", "--at", "2026-03-07T10:00:00Z"])
        #expect(at.status == 64 && at.stderr.contains("`--at` needs `--storage`"), "\(at.stderr)")
    }
}
