import Foundation
import SessionPolicyTestSupport
import Testing

/// `policyctl check` on a working folder: it tells files apart by content, runs the policies
/// and scenarios, skips what it does not run with one line each, and says each problem once.
@Suite("check on a working folder")
struct CheckFolderTests {
    @Test("a folder with a policy, scenarios, a property file, a machine and an eval input checks cleanly")
    func mixedFolder() throws {
        let r = try CLI.run(["check", "Tests/Fixtures/check/mixed-folder"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.lastLine == "2 passed, 0 failed")
        let skipped = r.stderr.split(separator: "\n").filter { $0.contains("warning[skipped-file]") }
        #expect(skipped.count == 3, "\(r.stderr)")
        for (file, what) in [
            ("properties.yaml", "a property file"), ("machine.json", "a compiled machine document or signed envelope"),
            ("input.yaml", "an evaluation input (`event:`)"),
        ] {
            #expect(skipped.contains { $0.hasSuffix("mixed-folder/\(file)`: \(what), not a policy or scenario file") }, "\(file)")
        }
        #expect(!r.stderr.contains("error"), "\(r.stderr)")
        // The skipped files are what the other commands take.
        let verify = try CLI.run([
            "verify", "Tests/Fixtures/check/mixed-folder/policy.yaml", "--property", "Tests/Fixtures/check/mixed-folder/properties.yaml",
        ])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let eval = try CLI.run(["eval", "Tests/Fixtures/check/mixed-folder/policy.yaml", "Tests/Fixtures/check/mixed-folder/input.yaml"])
        #expect(eval.status == 0 && eval.stdout.contains("\"decision\" : \"require_biometric\""), "\(eval.stdout)\(eval.stderr)")
    }

    @Test("a folder given as both policies and scenarios is read once: each problem is reported once")
    func readOnce() throws {
        let dir = try Fixtures.temporaryDirectory("check-once").path
        try "version: 1\nname: x\nsession: { max: 1d, colour: red }\n".write(
            toFile: dir + "/policy.yaml", atomically: true, encoding: .utf8)
        try "neither: policy nor scenarios\n".write(toFile: dir + "/other.yaml", atomically: true, encoding: .utf8)
        let r = try CLI.run(["check", dir, dir])
        #expect(r.status == 2)
        #expect(r.stderr.components(separatedBy: "unknown key `colour`").count == 2, "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "unknown key `neither`").count == 2, "\(r.stderr)")
    }

    @Test("two policies with one name are one error, however many scenarios name the second by its path")
    func duplicateOnce() throws {
        let r = try CLI.run(["check", "Tests/Fixtures/check/duplicate-name"])
        #expect(r.status == 2)
        #expect(r.stderr.components(separatedBy: "error[duplicate-policy-name]").count == 2, "\(r.stderr)")
    }
}
