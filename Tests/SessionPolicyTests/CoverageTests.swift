import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Transition coverage and JUnit output of `policyctl check`, computed from the shipped scenarios.
@Suite("Coverage")
struct CoverageTests {
    static let input = CheckInput.load(policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples")])
    static let compiled = input.policies.mapValues(\.compiled)
    static let results = input.scenarios.map { ScenarioRunner.run($0, against: compiled[$0.policy]!) }

    @Test("every shipped policy is measured, partly covered, and its counts add up")
    func counts() throws {
        let report = CoverageReport(results: Self.results, policies: Self.compiled)
        #expect(report.policies.map(\.policy) == Self.compiled.keys.sorted())
        for p in report.policies {
            let machine = try #require(Self.compiled[p.policy]).machine
            #expect(p.total == machine.transitions.count)
            #expect(p.scenarios > 0)
            #expect(p.covered.count > 0 && p.covered.count < p.total, "\(p.policy)")
            // Covered and missed split the machine, each in id order.
            #expect(p.covered == p.covered.sorted())
            #expect(p.missed.map(\.id) == p.missed.map(\.id).sorted())
            #expect(Set(p.covered).union(p.missed.map(\.id)) == Set(machine.transitions.map(\.id)))
            #expect(Set(p.covered).isDisjoint(with: p.missed.map(\.id)))
            // Every transition belongs to exactly one lever.
            #expect(p.levers.reduce(0) { $0 + $1.total } == p.total)
            #expect(p.levers.reduce(0) { $0 + $1.covered } == p.covered.count)
            #expect(p.levers.last?.lever == "built-in")
            let named = p.levers.map(\.lever).dropLast()
            #expect(Array(named) == named.sorted())
        }
        #expect(report.covered == report.policies.reduce(0) { $0 + $1.covered.count })
        #expect(report.covered < report.total)
    }

    @Test("a transition every scenario file takes is covered; one no scenario reaches is missed")
    func knownTransitions() throws {
        let report = CoverageReport(results: Self.results, policies: Self.compiled)
        let spendiq = try #require(report.policies.first { $0.policy == "spendiq" })
        let machine = try #require(Self.compiled["spendiq"]).machine
        // The first IdP login of a scenario.
        let login = try #require(
            machine.transitions(from: .signedOut, on: .idpLoginSucceeded).first { $0.action.reason == .idpLoginSucceeded })
        #expect(spendiq.covered.contains(login.id))
        // No shipped scenario revokes the license, and spendiq never enters read_only.
        let revoked = machine.transitions(from: .active, on: .licenseRevoked).map(\.id)
        #expect(!revoked.isEmpty && revoked.allSatisfy { !spendiq.covered.contains($0) })
        #expect(spendiq.unvisitedStates.contains(.readOnly))
        #expect(spendiq.levers.first { $0.lever == "signals.license_revoked" }?.covered == 0)
        #expect(
            spendiq.levers.first { $0.lever == "offline.window" }?.location?.description == Fixtures.path("policies/spendiq.yaml")
                + ":17:11")
    }

    @Test("coverage does not depend on the order of the results")
    func deterministic() {
        let a = CoverageReport(results: Self.results, policies: Self.compiled, threshold: 50)
        let b = CoverageReport(results: Self.results.reversed(), policies: Self.compiled, threshold: 50)
        #expect(a.human(detail: false) == b.human(detail: false))
        #expect(a.human(detail: true) == b.human(detail: true))
        let r1 = CheckReport(results: Self.results, policies: Self.compiled)
        #expect(r1.json(coverage: a) == r1.json(coverage: b))
    }

    @Test("a failing scenario counts the transitions of its steps up to the failing one")
    func failingScenario() throws {
        var s = try #require(
            Self.input.scenarios.first { sc in
                sc.steps.count >= 3 && sc.steps.allSatisfy { if case .success = $0.event { true } else { false } }
            })
        let policy = try #require(Self.compiled[s.policy])
        let full = ScenarioRunner.run(s, against: policy)
        try #require(full.passed && full.transitions.count == s.steps.count)
        s.steps[1].expect.reason = Reason("not_this_reason")
        let broken = ScenarioRunner.run(s, against: policy)
        #expect(!broken.passed)
        #expect(broken.transitions == Array(full.transitions.prefix(2)))
        let report = CoverageReport(results: [broken], policies: [s.policy: policy])
        #expect(report.policies.first?.covered == Set(full.transitions.prefix(2)).sorted())
    }

    @Test("the threshold compares the exact overall coverage")
    func threshold() {
        let r = CoverageReport(results: Self.results, policies: Self.compiled)
        let exact = Double(r.covered) * 100 / Double(r.total)
        #expect(!r.belowThreshold)
        #expect(r.thresholdLine == nil)
        var t = r
        t.threshold = 0
        #expect(!t.belowThreshold)
        t.threshold = exact.nextDown
        #expect(!t.belowThreshold)
        t.threshold = exact + 0.01
        #expect(t.belowThreshold)
        #expect(t.thresholdLine?.contains("is below the threshold") == true)
        t.threshold = 100
        #expect(t.belowThreshold)
        #expect(!CheckReport(results: Self.results, policies: Self.compiled).succeeded(coverage: t))
    }

    @Test("a loaded policy no scenario runs against is reported with no transition covered")
    func unusedPolicy() throws {
        let only = Self.results.filter { $0.scenario.policy == "spendiq" }
        let report = CoverageReport(results: only, policies: Self.compiled)
        let other = try #require(report.policies.first { $0.policy == "kobil-signed-jwt" })
        #expect(other.scenarios == 0 && other.covered.isEmpty && other.missed.count == other.total)
        #expect(report.human(detail: false).contains("policy kobil-signed-jwt: 0 of \(other.total) transitions covered (0.0%)\n"))
    }

    @Test("human coverage comes before the closing line; JUnit keeps the closing line off standard output")
    func rendering() {
        let report = CheckReport(results: Self.results, policies: Self.compiled)
        let coverage = report.coverage()
        let human = report.render(.human, coverage: coverage).stdout
        let lines = human.split(separator: "\n")
        #expect(lines.last.map(String.init) == report.summary)
        #expect(lines.dropLast().last?.hasPrefix("coverage: \(coverage.covered) of \(coverage.total) transitions covered") == true)
        #expect(human.contains("policy spendiq: "))
        let junit = report.render(.junit, coverage: coverage)
        #expect(!junit.stdout.contains(report.summary))
        #expect(junit.stderr.hasSuffix(report.summary + "\n"))
        #expect(report.render(.human).stdout == report.human(verbose: false))
    }

    @Test("JUnit XML escapes names and carries each failure")
    func junit() throws {
        var s = try #require(Self.input.scenarios.first { $0.policy == "spendiq" && $0.steps.count >= 2 })
        s.name = "a <tricky> \"name\" & 'quotes'\u{1}"
        s.steps[0].expect.reason = Reason("not_this_reason")
        let failing = ScenarioRunner.run(s, against: Self.compiled["spendiq"]!)
        let results = [failing] + Self.results
        let xml = JUnitReport(results: results).xml()
        #expect(xml.contains("name=\"a &lt;tricky&gt; &quot;name&quot; &amp; &apos;quotes&apos;\u{FFFD}\""))
        #expect(xml.contains("<failure message=\"step 1 ("))
        #expect(xml.contains("reason: expected `not_this_reason`"))
        #if canImport(FoundationXML) || os(macOS)
            let doc = try XMLDocument(xmlString: xml, options: [])
            let root = try #require(doc.rootElement())
            #expect(root.name == "testsuites")
            #expect(root.attribute(forName: "tests")?.stringValue == "\(results.count)")
            #expect(root.attribute(forName: "failures")?.stringValue == "1")
            let suites = root.elements(forName: "testsuite")
            #expect(suites.count == Set(results.map(\.scenario.file)).count)
            let cases = suites.flatMap { $0.elements(forName: "testcase") }
            #expect(cases.count == results.count)
            let failed = try #require(cases.first { !$0.elements(forName: "failure").isEmpty })
            #expect(failed.attribute(forName: "classname")?.stringValue == "spendiq")
            #expect(failed.attribute(forName: "name")?.stringValue == "a <tricky> \"name\" & 'quotes'\u{FFFD}")
            let failure = try #require(failed.elements(forName: "failure").first)
            #expect(failure.attribute(forName: "message")?.stringValue?.contains("\(s.steps[0].location)") == true)
            #expect(failure.stringValue?.contains("explanation:") == true)
        #endif
    }
}
