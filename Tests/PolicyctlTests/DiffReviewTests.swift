import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// `policyctl diff` read by a reviewer (issue 35 §2): the changes that let more in first, each
/// change named even when the decision and the reason stay, the files named as given, and every
/// written run ending in the class it was written for.
@Suite("policyctl diff, for a reviewer")
struct DiffReviewTests {
    static let dir = "Tests/Fixtures/diff"

    /// Pairs of versions (old, new), each with a change of its own.
    static let pairs: [(String, String)] = [
        ("\(dir)/small.yaml", "\(dir)/small-5d.yaml"),
        ("policies/spendiq.yaml", "\(dir)/spendiq-5d.yaml"),
        ("policies/spendiq.yaml", "\(dir)/spendiq-9d.yaml"),
        ("\(dir)/delay.yaml", "\(dir)/delay-4s.yaml"),
        ("policies/kobil-offline-token.yaml", "policies/kobil-signed-jwt.yaml"),
    ]

    /// The report in JSON, and the scenario files it wrote into `out`.
    static func diff(_ old: String, _ new: String, scenarios out: URL) throws -> [[String: Any]] {
        let r = try CLI.run(["diff", old, new, "--format", "json", "--scenarios", out.path])
        #expect(r.status == 1, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        return try #require(object["differences"] as? [[String: Any]])
    }

    static func load(_ path: String) throws -> CompiledPolicy {
        try ReaderProbes.policy(Data(contentsOf: URL(fileURLWithPath: Fixtures.path(path))), file: Fixtures.path(path)).get().compiled
    }

    /// Two outcomes alike but for the transition that decided (the versions number theirs apart).
    static func alike(_ a: Outcome, _ b: Outcome) -> Bool {
        var x = a
        x.transition = b.transition
        return x == b
    }

    @Test(
        "every written run ends in its class: the versions decide each step before the last alike, the last as the difference says",
        arguments: pairs.indices)
    func runsEndInTheirClass(_ pair: Int) throws {
        let (oldPath, newPath) = Self.pairs[pair]
        let out = try Fixtures.temporaryDirectory("diff-runs")
        defer { try? FileManager.default.removeItem(at: out) }
        let differences = try Self.diff(oldPath, newPath, scenarios: out)
        let (old, new) = (try Self.load(oldPath), try Self.load(newPath))
        var written = 0
        for (i, d) in differences.enumerated() where d["concrete"] as? Bool == true {
            let file = out.appendingPathComponent("\(new.name)-difference-\(i + 1).yaml").path
            let input = ReaderProbes.scenarios(try Data(contentsOf: URL(fileURLWithPath: file)), file: file, policies: [:])
            #expect(input.diagnostics.isEmpty, "\(file): \(input.diagnostics)")
            let scenario = try #require(input.scenarios.first)
            let oldTransition = try #require((d["old"] as? [String: Any])?["transition"] as? Int)
            let newTransition = try #require((d["new"] as? [String: Any])?["transition"] as? Int)
            var (a, b) = (scenario.initial, scenario.initial)
            for (j, step) in scenario.steps.enumerated() {
                let event = try step.event.get()
                let (o, n) = (old.evaluate(a, event), new.evaluate(b, event))
                if j < scenario.steps.count - 1 {
                    #expect(Self.alike(o, n), "\(file): step \(j + 1) is decided otherwise before the last")
                } else {
                    #expect(o.transition == oldTransition, "\(file): the old version leaves the class at the last step")
                    #expect(n.transition == newTransition, "\(file): the new version leaves the class at the last step")
                    #expect(!Self.alike(o, n), "\(file): the last step is decided alike")
                }
                (a, b) = (o.state, n.state)
            }
            written += 1
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        #expect(written > 0 && files.count == written)
        // Against the new version every file passes; against the old one every file fails.
        let check = try CLI.run(["check", newPath, out.path])
        #expect(check.lastLine == "\(written) passed, 0 failed", "\(check.stdout)\(check.stderr)")
    }

    @Test("the changes that let more in come first, counted in the header; each part keeps the exploration's order")
    func moreInFirst() throws {
        let out = try Fixtures.temporaryDirectory("diff-order")
        defer { try? FileManager.default.removeItem(at: out) }
        // offline.window 7d -> 9d: sessions wiped at 8 days are let in.
        let differences = try Self.diff("policies/spendiq.yaml", "\(Self.dir)/spendiq-9d.yaml", scenarios: out)
        let rank: [String?: Int] = ["wipe": 0, "idp_login": 1, "require_biometric": 2, "allow": 3, nil: 4]
        let more = differences.map { d -> Bool in
            let (o, n) = ((d["old"] as? [String: Any])?["decision"] as? String, (d["new"] as? [String: Any])?["decision"] as? String)
            #expect(d["letsMoreIn"] as? Bool == (rank[n]! > rank[o]!), "\(d)")
            return d["letsMoreIn"] as? Bool == true
        }
        #expect(more.contains(true) && more.contains(false))
        #expect(more == more.sorted { $0 && !$1 }, "\(more)")

        let r = try CLI.run(["diff", "policies/spendiq.yaml", "\(Self.dir)/spendiq-9d.yaml"])
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first)
        #expect(header.hasPrefix("policies/spendiq.yaml -> \(Self.dir)/spendiq-9d.yaml: 6 changes of outcome"), "\(header)")
        #expect(header.hasSuffix("; 5 of 6 changes let more in"), "\(header)")
        let entries = lines.filter { $0.hasPrefix("  ") && $0.dropFirst(2).first?.isNumber == true }
        #expect(entries.count == 6)
        #expect(entries.prefix(5).allSatisfy { $0.contains(". lets more in: ") }, "\(entries)")
        #expect(entries.dropFirst(5).allSatisfy { !$0.contains("lets more in") }, "\(entries)")
        #expect(entries[0] == "  1. lets more in: wipe (offline_window_exceeded) becomes allow (within_limits)", "\(entries)")
    }

    @Test("a change that keeps the decision and the reason names what changes instead")
    func sameDecisionNamed() throws {
        let r = try CLI.run(["diff", "\(Self.dir)/delay.yaml", "\(Self.dir)/delay-4s.yaml"])
        #expect(r.status == 1, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "\(Self.dir)/delay.yaml -> \(Self.dir)/delay-4s.yaml: 1 change of outcome, in 4 (state, event) classes"
                + " (3131 states of the old version explored); it does not let more in", "\(r.stdout)")
        #expect(lines.contains("  1. wipe (refresh_token_invalid), notice delay 5s becomes 4s"), "\(r.stdout)")
    }
}
