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
        #expect(r.stdout.hasPrefix("small -> small: equivalent, every event is decided alike"), "\(r.stdout)")
    }

    @Test("a shorter offline window is explained in words, with the levers and a run; its scenarios pass on the new version")
    func changedWindow() throws {
        let out = try Fixtures.temporaryDirectory("diff")
        let r = try CLI.run(["diff", "\(Self.dir)/small.yaml", "\(Self.dir)/small-5d.yaml", "--scenarios", out.path])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("small -> small: 4 changes of outcome") == true, "\(r.stdout)")
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
}
