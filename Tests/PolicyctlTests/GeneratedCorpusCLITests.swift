import Foundation
import SessionPolicyTestSupport
import Testing

/// The generated corpus (`GeneratedCorpus`) through the built `policyctl`: exit 2, located
/// JSON diagnostics, no crash and no stack trace.
@Suite("policyctl: generated bad-input corpus")
struct GeneratedCorpusCLITests {
    @Test("the built policyctl refuses the corpus with exit 2, located JSON diagnostics, and no crash")
    func binary() throws {
        let dir = try Fixtures.temporaryDirectory("generated")
        defer { try? FileManager.default.removeItem(at: dir) }
        for c in GeneratedCorpus.corpus() { try Data(c.bytes).write(to: dir.appendingPathComponent("\(c.name).yaml")) }
        let r = try CLI.run(["lint", "--format", "json", dir.path])
        #expect(r.status == 2, "exit \(r.status): \(r.stderr.suffix(2000))")
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let diagnostics = json?["diagnostics"] as? [[String: Any]] ?? []
        #expect(diagnostics.count > 500)
        for d in diagnostics where d["severity"] as? String == "error" && d["code"] as? String != "duplicate-policy-name" {
            #expect(d["line"] as? Int ?? 0 >= 1, "\(d)")
        }
        #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Stack dump"))
    }
}
