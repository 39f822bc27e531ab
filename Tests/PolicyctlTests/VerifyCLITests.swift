import Foundation
import SessionPolicyTestSupport
import Testing

/// `policyctl verify` as a user runs it.
@Suite("policyctl verify")
struct VerifyCLITests {
    @Test("a broken user property is a concrete run, written as a scenario that check runs and fails at its last step")
    func userCounterexample() throws {
        let dir = try Fixtures.temporaryDirectory("verify")
        let r = try CLI.run([
            "verify", "policies/spendiq.yaml", "--property", "Tests/Fixtures/properties/never-offline.yaml", "--state-limit", "300",
            "--counterexamples", dir.path,
        ])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("violated never-offline"), "\(r.stdout)")
        let file = dir.appendingPathComponent("spendiq-never-offline.yaml").path
        let check = try CLI.run(["check", file])
        #expect(check.status == 1, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("step 2 (launch"), "\(check.stdout)")
        #expect(check.stdout.contains("decision: expected `wipe`, got `allow`"), "\(check.stdout)")
        // The file names its policy relative to itself, so it can be committed and run elsewhere.
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let policyLine = text.split(separator: "\n").first { $0.hasPrefix("policy: ") }.map(String.init) ?? ""
        #expect(!policyLine.contains("policy: /"), "\(policyLine)")
        #expect(policyLine.hasSuffix("policies/spendiq.yaml"), "\(policyLine)")
    }

    @Test("a mistake in a property file is located, and exits 2 before anything is explored")
    func badPropertyFile() throws {
        let r = try CLI.run(["verify", "policies/spendiq.yaml", "--property", "Tests/Fixtures/properties/bad.yaml"])
        #expect(r.status == 2, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("Tests/Fixtures/properties/bad.yaml:3:24: error[invalid-value]"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("a property over attributes and elapsed times: its counterexample carries them, and check fails at its last step")
    func attributeCounterexample() throws {
        let dir = try Fixtures.temporaryDirectory("verify-facts")
        let policy = "Tests/Fixtures/properties/policies/business-bank.yaml"
        let r = try CLI.run([
            "verify", policy, "--property", "Tests/Fixtures/properties/business-at-a-day.yaml", "--state-limit", "300",
            "--counterexamples", dir.path,
        ])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("violated business-at-a-day"), "\(r.stdout)")
        #expect(!r.stdout.contains("internal:"), "\(r.stdout)")
        let file = dir.appendingPathComponent("business-bank-business-at-a-day.yaml").path
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(text.contains("account_tier: \"business\""), "\(text)")
        // The launch comes exactly one day after the login, the last online validation.
        #expect(text.contains("at: 2026-01-01T00:00:00Z") && text.contains("at: 2026-01-02T00:00:00Z"), "\(text)")
        let check = try CLI.run(["check", file])
        #expect(check.status == 1, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("step 2 (launch"), "\(check.stdout)")
        #expect(check.stdout.contains("decision: expected `wipe`, got `allow`"), "\(check.stdout)")
        // The bank's own property holds: a business launch past a day is sent to the IdP.
        let proved = try CLI.run(["verify", policy, "--property", "Tests/Fixtures/properties/business.yaml"])
        #expect(proved.status == 0, "\(proved.stdout)\(proved.stderr)")
    }

    @Test("a property naming an attribute a policy does not declare is located, and exits 2 before anything is explored")
    func undeclaredAttribute() throws {
        let r = try CLI.run(["verify", "policies/spendiq.yaml", "--property", "Tests/Fixtures/properties/business.yaml"])
        #expect(r.status == 2, "\(r.stdout)\(r.stderr)")
        #expect(
            r.stderr.contains(
                "Tests/Fixtures/properties/business.yaml:6:70: error[unknown-attribute]: attribute `account_tier` is not declared by policy `spendiq`"
            ),
            "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("an exploration stopped at its state limit proves nothing, says so, and exits 1")
    func stateLimit() throws {
        let r = try CLI.run(["verify", "policies/i360-salesforce.yaml", "--state-limit", "50"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("the exploration stopped at its state limit: nothing is proved"), "\(r.stdout)")
        #expect(!r.stdout.contains("proved "), "\(r.stdout)")
    }
}

/// The covering scenarios shipped in `examples/generated/` (docs/verify.md, "Covering scenarios").
@Suite("Covering scenarios")
struct CoveringScenarioTests {
    static let regenerate = "swift run -c release policyctl verify policies --covering examples/generated"
    static let shipped = Fixtures.files(in: "policies").map { (($0 as NSString).lastPathComponent as NSString).deletingPathExtension }

    /// The header line `# key: value` of a generated file.
    static func header(_ text: String, _ key: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix("# \(key): ") }.map { String($0.dropFirst(key.count + 4)) }
    }

    @Test("each shipped policy has covering scenarios made for the machine it compiles to now", arguments: shipped)
    func fresh(_ name: String) throws {
        let text = Fixtures.text("examples/generated/\(name).yaml")
        let machine = try Fixtures.policy(name).machine
        #expect(Self.header(text, "machine") == machine.fingerprint, "stale: the machine changed; regenerate with `\(Self.regenerate)`")
    }

    @Test("the covering scenarios pass and take every transition verify finds reachable, and only those", arguments: shipped)
    func complete(_ name: String) throws {
        let file = "examples/generated/\(name).yaml"
        let text = Fixtures.text(file)
        let reachable = try #require(Self.header(text, "reachable transitions").flatMap { Int($0.split(separator: " ")[0]) })
        let r = try CLI.run(["check", "policies/\(name).yaml", file, "--format", "json", "--coverage"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let coverage = try #require(json["coverage"] as? [String: Any])
        #expect(coverage["covered"] as? Int == reachable, "regenerate with `\(Self.regenerate)`")
    }

    @Test("check --coverage counts what can happen: the covering scenarios reach 100% of every unit, the hand-written ones less")
    func reachableCoverage() throws {
        let full = try CLI.run([
            "check", "policies/i360-salesforce.yaml", "examples/generated/i360-salesforce.yaml", "--threshold", "100",
            "--threshold-unit", "guard",
        ])
        #expect(full.status == 0, "\(full.stdout)\(full.stderr)")
        #expect(
            full.stdout.contains(
                "policy i360-salesforce: 11 of 11 levers exercised (100.0%), 32 of 32 guards taken (100.0%), 197 of 197 transitions (100.0%)\n"
                    + "  dead, left out (no run of events takes them; `policyctl verify --dead` lists them): 148 transitions, 7 guards"),
            "\(full.stdout)")
        #expect(full.stdout.contains("guard coverage 100.0% (32 of 32 guards) meets the threshold of 100%"))

        // `--reachable` and `--threshold-unit reachable`, from when reachability was optional,
        // still work: the first implies --coverage, the second is `transition`.
        let partial = try CLI.run([
            "check", "policies/i360-salesforce.yaml", "examples/i360-salesforce.yaml", "--reachable", "--format", "json",
            "--threshold", "100", "--threshold-unit", "reachable",
        ])
        #expect(partial.status == 1, "\(partial.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(partial.stdout.utf8)) as? [String: Any])
        let coverage = try #require(json["coverage"] as? [String: Any])
        #expect(coverage["threshold_unit"] as? String == "transition")
        let units = try #require(coverage["units"] as? [String: Any])
        let transitions = try #require(units["transition"] as? [String: Any])
        #expect(transitions["total"] as? Int == 197)
        let covered = try #require(transitions["covered"] as? Int)
        #expect(covered > 0 && covered < 197)
        #expect(coverage["below_threshold"] as? Bool == true)
        let policy = try #require((coverage["policies"] as? [[String: Any]])?.first)
        #expect((policy["reachable_transitions"] as? [Int])?.count == 197)
        #expect((policy["dead_transitions"] as? [Int])?.count == 345 - 197)
    }

    @Test("--covering writes what is shipped (the smallest shipped policy, explored again)")
    func regenerated() throws {
        let dir = try Fixtures.temporaryDirectory("covering")
        let r = try CLI.run(["verify", "policies/i360-salesforce.yaml", "--covering", dir.path])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let written = try String(contentsOfFile: dir.appendingPathComponent("i360-salesforce.yaml").path, encoding: .utf8)
        let shipped = Fixtures.text("examples/generated/i360-salesforce.yaml")
        // The same runs; only the policy path differs (relative to where the file is written).
        func runs(_ t: String) -> [Substring] { t.split(separator: "\n").filter { !$0.hasPrefix("policy: ") } }
        #expect(runs(written) == runs(shipped), "regenerate with `\(Self.regenerate)`")
    }
}
