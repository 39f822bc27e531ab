import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `check --coverage`, `--threshold` and `--format junit`, through the binary.
@Suite("policyctl check coverage and JUnit")
struct CheckCoverageCLITests {
    /// A scenario file with one failing and one passing scenario, in a fresh directory.
    static func failingScenario() throws -> (dir: URL, path: String) {
        let dir = try Fixtures.temporaryDirectory("cov")
        let path = dir.appendingPathComponent("wrong.yaml").path
        try """
        policy: spendiq
        scenarios:
          - name: expects <the> "wrong" & thing
            start: 2026-04-06T08:00:00Z
            context: { network: offline, user: ana }
            steps:
              - event: idp_login_succeeded
                network: online
                auth_mode: none
              - at: +8d
                event: launch
                expect: { decision: allow }
          - name: registration needs the network
            start: 2026-04-06T08:00:00Z
            steps:
              - event: register
                network: offline
                expect: { decision: idp_login }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return (dir, path)
    }

    @Test("--coverage reports levers, guards and transitions of every policy before the closing line and exits 0")
    func coverage() throws {
        let r = try CLI.run(["check", "policies", "examples", "--coverage"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.lastLine.wholeMatch(of: /\d+ passed, 0 failed/) != nil, "last line: \(r.lastLine)")
        for name in ["kobil-offline-token", "kobil-signed-jwt", "kobil-signed-jwt-hardware", "spendiq"] {
            let figures =
                "\\d+ of \\d+ levers exercised \\(\\d+\\.\\d%\\), \\d+ of \\d+ guards taken \\(\\d+\\.\\d%\\), \\d+ of \\d+ transitions \\(\\d+\\.\\d%\\)"
            #expect(r.stdout.contains(try Regex("\\npolicy \(name): \(figures)\\n")), "\(name)")
        }
        #expect(r.stdout.contains("  device.compromised (policies/spendiq.yaml:40:16): never exercised, 1 guard\n"))
        #expect(r.stdout.contains(#/\n  built-in: \d+ of \d+ guards taken\n    otherwise: idp_login, unexpected_event, in /#))
        let lines = r.stdout.split(separator: "\n")
        #expect(
            lines.dropLast().last?.wholeMatch(
                of:
                    /coverage: \d+ of \d+ levers exercised \(\d+\.\d%\), \d+ of \d+ guards taken \(\d+\.\d%\), \d+ of \d+ transitions \(\d+\.\d%\) in \d+ policies, dead left out: \d+ guards, \d+ transitions/
            ) != nil)
        // Without --coverage the output is unchanged.
        let plain = try CLI.run(["check", "policies", "examples"])
        #expect(!plain.stdout.contains("levers exercised"))
        // The detail lists missed transitions by id, with their guards.
        let detail = try CLI.run(["check", "policies/spendiq.yaml", "examples/spendiq.yaml", "--coverage-detail"])
        #expect(detail.status == 0)
        #expect(detail.stdout.contains(/\n    #\d+ active on launch, if the device failed its integrity check: wipe, device_compromised\n/))
    }

    /// The small coverage fixture (Tests/Fixtures/coverage): 5 of 7 levers (71.4%), 5 of 34
    /// guards (14.7%), 5 of 205 transitions (2.4%). The options are plumbing: they run on it,
    /// since every `--coverage` run explores each policy (a minute for the shipped suite in a
    /// debug build); the shipped suite's figures are `coverage()` above and `CoverageTests`.
    static let small = ["Tests/Fixtures/coverage/policy.yaml", "Tests/Fixtures/coverage/scenarios.yaml"]

    @Test("--threshold fails the check when overall lever coverage is below it, and keeps the closing line last")
    func threshold() throws {
        let below = try CLI.run(["check"] + Self.small + ["--threshold", "100"])
        #expect(below.status == 1)
        #expect(
            below.stdout.contains(/\nlever coverage \d+\.\d% \(\d+ of \d+ levers\) is below the threshold of 100%\n/), "\(below.stdout)")
        #expect(below.lastLine.wholeMatch(of: /\d+ passed, 0 failed/) != nil)
        let met = try CLI.run(["check"] + Self.small + ["--threshold", "0"])
        #expect(met.status == 0)
        #expect(met.stdout.contains("meets the threshold of 0%"))
        let json = try CLI.run(["check"] + Self.small + ["--format", "json", "--threshold", "99.5"])
        #expect(json.status == 1)
        #expect(json.stderr.contains("is below the threshold of 99.5%"))
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let coverage = try #require(object?["coverage"] as? [String: Any])
        #expect(coverage["below_threshold"] as? Bool == true)
        #expect(coverage["threshold"] as? Double == 99.5)
        #expect(coverage["threshold_unit"] as? String == "lever")
    }

    /// The small fixture covers 71.4% of its levers, 14.7% of its guards and 2.4% of its transitions.
    @Test(
        "--threshold-unit picks what --threshold counts; levers by default",
        arguments: [
            ([String](), Int32(0)), (["--threshold-unit", "lever"], 0), (["--threshold-unit", "guard"], 1),
            (["--threshold-unit=transition"], 1),
        ] as [([String], Int32)])
    func thresholdUnit(_ unit: [String], status: Int32) throws {
        let r = try CLI.run(["check"] + Self.small + ["--threshold", "50"] + unit)
        #expect(r.status == status, "\(r.stderr)")
        let name = unit.last.map { $0.replacingOccurrences(of: "--threshold-unit=", with: "") } ?? "lever"
        let verdict = status == 0 ? "meets" : "is below"
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.dropLast().last?.hasPrefix("\(name) coverage ") == true, "\(r.stdout)")
        #expect(lines.dropLast().last?.hasSuffix(" \(name)s) \(verdict) the threshold of 50%") == true, "\(r.stdout)")
        #expect(r.lastLine.wholeMatch(of: /\d+ passed, 0 failed/) != nil)
    }

    @Test(
        "--threshold outside 0-100, an unknown unit or a unit without a threshold is a usage error",
        arguments: [
            ["--threshold=101"], ["--threshold=-1"], ["--threshold=abc"], ["--threshold=nan"],
            ["--threshold", "50", "--threshold-unit", "rule"], ["--threshold-unit", "guard"],
        ])
    func badThreshold(_ options: [String]) throws {
        let r = try CLI.run(["check"] + Self.small + options)
        #expect(r.status == 64, "\(r.stderr)")
    }

    @Test("--format json --coverage adds a coverage object with every unit, overall and per policy")
    func json() throws {
        let r = try CLI.run(
            ["check", "policies/spendiq.yaml", "examples/spendiq.yaml"] + Self.small + ["--format", "json", "--coverage"])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let coverage = try #require(object["coverage"] as? [String: Any])
        #expect(coverage["threshold"] == nil && coverage["threshold_unit"] == nil)
        let units = try #require(coverage["units"] as? [String: [String: Any]])
        #expect(units.keys.sorted() == ["guard", "lever", "transition"])
        #expect(units["transition"]?["covered"] as? Int == coverage["covered"] as? Int)
        let policies = try #require(coverage["policies"] as? [[String: Any]])
        #expect(policies.compactMap { $0["policy"] as? String } == ["coverage-small", "spendiq"])
        var covered = 0
        for p in policies {
            let total = try #require(p["total"] as? Int)
            let count = try #require(p["covered"] as? Int)
            let missed = try #require(p["missed"] as? [[String: Any]])
            #expect(count + missed.count == total)
            #expect((p["covered_transitions"] as? [Int])?.count == count)
            #expect(p["percent"] is Double)
            let first = try #require(missed.first)
            for key in ["id", "from", "event", "guard", "reason", "levers"] { #expect(first[key] != nil, "\(key)") }
            // Guards split every transition of the machine, dead or not (`total` counts those
            // that can happen, `transitions` all); a lever lists its guards by id.
            let guards = try #require(p["guards"] as? [[String: Any]])
            let all = try #require(p["transitions"] as? Int)
            #expect(guards.reduce(0) { $0 + (($1["transitions"] as? [Int])?.count ?? 0) } == all)
            #expect(total + ((p["dead_transitions"] as? [Int])?.count ?? -1) == all)
            #expect(p["reachability"] as? String == "known")
            #expect(guards.count { $0["taken"] as? Bool == true } == (p["units"] as? [String: [String: Any]])?["guard"]?["covered"] as? Int)
            let levers = try #require(p["levers"] as? [[String: Any]])
            for lever in levers {
                for key in ["lever", "exercised", "covered", "total", "guards", "guards_taken"] { #expect(lever[key] != nil, "\(key)") }
                #expect((lever["guards"] as? [Int])?.allSatisfy { $0 >= 0 && $0 < guards.count } == true)
            }
            covered += count
        }
        #expect(coverage["covered"] as? Int == covered)
        #expect(object["passed"] is Int)
    }

    @Test("--format junit prints JUnit XML only; the closing line goes to standard error")
    func junit() throws {
        let r = try CLI.run(["check", "policies", "examples", "--format", "junit"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "))
        #expect(!r.stdout.contains("passed,"))
        #expect(r.stderr.split(separator: "\n").last?.wholeMatch(of: /\d+ passed, 0 failed/) != nil, "\(r.stderr)")
        #expect(r.stdout.contains("<testsuite name=\"examples/spendiq.yaml\" "))
        #expect(r.stdout.contains("<testcase classname=\"spendiq\" name=\"offline biometric login within seven days\" time=\"0\"/>"))
        #expect(!r.stdout.contains("<failure"))
        #if canImport(FoundationXML) || os(macOS)
            let doc = try XMLDocument(xmlString: r.stdout, options: [])
            let suites = doc.rootElement()?.elements(forName: "testsuite") ?? []
            #expect(suites.count == Fixtures.files(in: "examples").count)
            let tests = suites.reduce(0) { $0 + (Int($1.attribute(forName: "tests")?.stringValue ?? "") ?? 0) }
            #expect("\(tests)" == doc.rootElement()?.attribute(forName: "tests")?.stringValue)
        #endif
    }

    @Test("a failing scenario is a JUnit failure with its mismatches and step, and exits 1")
    func junitFailure() throws {
        let (dir, path) = try Self.failingScenario()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["check", "policies/spendiq.yaml", path, "--format", "junit", "--coverage"])
        #expect(r.status == 1)
        #expect(r.stderr.hasSuffix("1 passed, 1 failed\n"), "\(r.stderr)")
        #expect(r.stderr.contains("policy spendiq: "))
        #expect(r.stdout.contains("name=\"expects &lt;the&gt; &quot;wrong&quot; &amp; thing\""))
        #if canImport(FoundationXML) || os(macOS)
            let doc = try XMLDocument(xmlString: r.stdout, options: [])
            let root = try #require(doc.rootElement())
            #expect(root.attribute(forName: "failures")?.stringValue == "1")
            let cases = root.elements(forName: "testsuite").flatMap { $0.elements(forName: "testcase") }
            #expect(cases.count == 2)
            let failure = try #require(cases.first?.elements(forName: "failure").first)
            let message = failure.attribute(forName: "message")?.stringValue ?? ""
            #expect(message.hasPrefix("step 2 (launch at 2026-04-14T08:00:00Z) at \(path):10:"), "\(message)")
            #expect(message.contains("decision: expected `allow`, got `wipe`"))
            #expect(cases.last?.elements(forName: "failure").isEmpty == true)
        #else
            #expect(r.stdout.contains("<failure message=\"step 2 (launch at 2026-04-14T08:00:00Z) at \(path):10:"))
        #endif
        // The coverage counts the failing step's transition.
        let human = try CLI.run(["check", "policies/spendiq.yaml", path, "--coverage"])
        #expect(human.status == 1)
        #expect(
            human.stdout.contains(
                #/\npolicy spendiq: \d+ of \d+ levers exercised \([\d.]+%\), \d+ of \d+ guards taken \([\d.]+%\), 3 of /#),
            "\(human.stdout)")
        #expect(human.lastLine == "1 passed, 1 failed")
    }
}
