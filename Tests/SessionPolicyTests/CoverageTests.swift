import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyVerify
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
    /// The shipped policies' reachable transitions, as `check --coverage` finds them.
    static let reachable = Explored.shippedReachable

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
            // Every transition belongs to exactly one guard; a guard is taken when one of its transitions was.
            #expect(p.guards.flatMap(\.transitions).sorted() == machine.transitions.map(\.id))
            #expect(p.guards.flatMap(\.covered).sorted() == p.covered)
            #expect(p.guards.map(\.id) == Array(p.guards.indices))
            #expect(p.guards.map { $0.transitions[0] } == p.guards.map { $0.transitions[0] }.sorted())
            for g in p.guards { #expect(g.taken == !g.covered.isEmpty) }
            // A transition counts for every lever it names; a lever is exercised exactly when one
            // of its guards was taken.
            #expect(p.levers.reduce(0) { $0 + $1.total } == machine.transitions.reduce(0) { $0 + $1.source.levers.count })
            for lever in p.levers {
                #expect(lever.exercised == (lever.guardsTaken > 0), "\(lever.lever)")
                #expect(lever.guardsTaken == lever.guards.count { p.guards[$0].taken })
                #expect(lever.guards.allSatisfy { p.guards[$0].levers.contains(lever.lever) })
            }
            #expect(p.levers.last?.lever == "built-in")
            let named = p.levers.map(\.lever).dropLast()
            #expect(Array(named) == named.sorted())
        }
        #expect(report.covered == report.policies.reduce(0) { $0 + $1.covered.count })
        #expect(report.covered < report.total)
    }

    /// The shipped suite's figures, per policy, as `check --coverage` prints them: levers the
    /// policy sets exercised, guards and transitions taken, of those that can happen. The docs
    /// quote the overall line; a new scenario that
    /// moves them is a reviewed change of this table and of docs/policyctl.md.
    static let shipped: [(policy: String, levers: (Int, Int), guards: (Int, Int), transitions: (Int, Int))] = [
        ("cross-app-device-sso", (6, 15), (16, 40), (19, 268)),
        ("i360-marketsharp", (12, 16), (21, 49), (26, 331)),
        ("i360-salesforce", (7, 11), (12, 32), (13, 197)),
        ("kobil-offline-token", (16, 17), (28, 37), (51, 259)),
        ("kobil-signed-jwt", (9, 17), (13, 37), (14, 259)),
        ("kobil-signed-jwt-hardware", (4, 15), (4, 38), (4, 266)),
        ("spendiq", (8, 15), (14, 38), (21, 266)),
    ]

    @Test("the shipped suite's lever, guard and transition figures", arguments: shipped.indices)
    func shippedFigures(_ i: Int) throws {
        let want = Self.shipped[i]
        let report = CoverageReport(results: Self.results, policies: Self.compiled, reachable: Self.reachable)
        let p = try #require(report.policies.first { $0.policy == want.policy })
        func pair(_ f: CoverageFigure) -> [Int] { [f.covered, f.total] }
        #expect(pair(p.figure(.lever)) == [want.levers.0, want.levers.1])
        #expect(pair(p.figure(.guard)) == [want.guards.0, want.guards.1])
        #expect(pair(p.figure(.transition)) == [want.transitions.0, want.transitions.1])
    }

    @Test("the shipped suite's overall figures, as docs/policyctl.md quotes them")
    func shippedOverall() {
        let report = CoverageReport(results: Self.results, policies: Self.compiled, reachable: Self.reachable)
        #expect(Self.shipped.map(\.policy) == report.policies.map(\.policy), "a policy was added: add its row to `shipped`")
        func total(
            _ unit: KeyPath<(policy: String, levers: (Int, Int), guards: (Int, Int), transitions: (Int, Int)), (Int, Int)>
        )
            -> CoverageFigure
        {
            CoverageFigure(
                covered: Self.shipped.reduce(0) { $0 + $1[keyPath: unit].0 }, total: Self.shipped.reduce(0) { $0 + $1[keyPath: unit].1 })
        }
        #expect(report.figure(.lever) == total(\.levers))
        #expect(report.figure(.guard) == total(\.guards))
        #expect(report.figure(.transition) == total(\.transitions))
        #expect(report.figure(.transition) == CoverageFigure(covered: report.covered, total: report.total))
        let lines = report.human(detail: false).split(separator: "\n").map(String.init)
        let line = lines.last ?? ""
        #expect(line.hasPrefix("coverage: \(report.figure(.lever).covered) of \(report.figure(.lever).total) levers exercised"))
        let quoted = Fixtures.text("docs/policyctl.md").contains(line)
        #expect(quoted, "docs/policyctl.md should quote `\(line)`")
    }

    @Test("with the covering scenarios every transition that can happen is taken, as docs/verify.md quotes")
    func coveringFigures() {
        let input = CheckInput.load(
            policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples"), Fixtures.path("examples/generated")])
        let results = input.scenarios.map { ScenarioRunner.run($0, against: Self.compiled[$0.policy]!) }
        let report = CoverageReport(results: results, policies: Self.compiled, reachable: Self.reachable)
        #expect(report.figure(.transition).covered == report.figure(.transition).total)
        let line = report.human(detail: false).split(separator: "\n").last.map(String.init) ?? ""
        let quoted = line + "\n\(results.count { $0.passed }) passed, \(results.count { !$0.passed }) failed\n"
        #expect(Fixtures.text("docs/verify.md").contains(quoted), "docs/verify.md should quote\n\(quoted)")
    }

    @Test("a guard the machine repeats on every state and event counts once")
    func repeatedGuards() throws {
        let report = CoverageReport(results: Self.results, policies: Self.compiled)
        for p in report.policies {
            let machine = try #require(Self.compiled[p.policy]).machine
            let compromised = p.guards.filter { $0.levers == ["device.compromised"] }
            #expect(compromised.count == 1, "\(p.policy)")
            #expect(compromised.first?.transitions.count == machine.transitions.count { $0.guard == .deviceCompromised })
            #expect(compromised.first?.transitions.count ?? 0 > 50)
            #expect(p.levers.first { $0.lever == "device.compromised" }?.guards.count == 1)
            // Every unexpected event, in every state, is one built-in guard.
            #expect(p.guards.count { $0.reason == .unexpectedEvent } == 1)
            // The levers in a guard's identity split nothing: the same check with the same decision
            // and reason always comes from the same levers.
            let byOutcome = Set(
                machine.transitions.map { GuardOutcome(check: $0.guard, decision: $0.action.decision, reason: $0.action.reason) })
            #expect(byOutcome.count == p.guards.count, "\(p.policy)")
        }
    }

    struct GuardOutcome: Hashable {
        var check: Guard
        var decision: Decision?
        var reason: Reason
    }

    @Test(
        "the threshold applies to levers unless another unit is named",
        arguments: [
            (CoverageUnit.lever, false), (.guard, true), (.transition, true),
        ])
    func thresholdUnit(_ unit: CoverageUnit, below: Bool) {
        // The shipped suite: 58.4% of levers, 39.8% of guards, 8.0% of transitions.
        let report = CoverageReport(
            results: Self.results, policies: Self.compiled, threshold: 50, thresholdUnit: unit, reachable: Self.reachable)
        #expect(report.belowThreshold == below)
        #expect(report.thresholdLine?.hasPrefix("\(unit) coverage ") == true)
        #expect(report.thresholdLine?.contains(below ? "is below the threshold of 50%" : "meets the threshold of 50%") == true)
        #expect(CheckReport(results: Self.results, policies: Self.compiled).succeeded(coverage: report) == !below)
        #expect(CoverageReport(results: Self.results, policies: Self.compiled, threshold: 50).thresholdUnit == .lever)
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

    @Test("the threshold compares the exact overall coverage", arguments: CoverageUnit.all)
    func threshold(_ unit: CoverageUnit) {
        let r = CoverageReport(results: Self.results, policies: Self.compiled, thresholdUnit: unit)
        let f = r.figure(unit)
        let exact = Double(f.covered) * 100 / Double(f.total)
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
        #expect(t.thresholdLine?.contains("(\(f.covered) of \(f.total) \(unit.plural))") == true)
        t.threshold = 100
        #expect(t.belowThreshold)
        #expect(!CheckReport(results: Self.results, policies: Self.compiled).succeeded(coverage: t))
    }

    @Test("a unit is one of lever, guard and transition")
    func units() {
        #expect(CoverageUnit.all.map(\.rawValue) == ["lever", "guard", "transition"])
        #expect(CoverageUnit.transition.plural == "transitions")
        #expect(CoverageUnit(rawValue: "guard") == .guard)
        #expect(CoverageUnit(rawValue: "levers") == nil)
        #expect(CoverageUnit(rawValue: "reachable") == nil)
    }

    @Test("with reachability known, every unit counts only what can happen; the dead is listed apart")
    func deadLeftOut() throws {
        // Pretend only spendiq's first three transitions can happen.
        let known = CoverageReport(results: Self.results, policies: Self.compiled, reachable: ["spendiq": [0, 1, 2]])
        let spendiq = try #require(known.policies.first { $0.policy == "spendiq" })
        let machine = try #require(Self.compiled["spendiq"]).machine
        let taken = Set(Self.results.filter { $0.scenario.policy == "spendiq" }.flatMap(\.transitions))
        #expect(spendiq.counted == [0, 1, 2])
        #expect(spendiq.figure(.transition) == CoverageFigure(covered: [0, 1, 2].count(where: taken.contains), total: 3))
        #expect(spendiq.dead.map(\.id) == Array(3..<machine.transitions.count))
        #expect(spendiq.takenDead == taken.filter { $0 >= 3 }.sorted())
        // A guard is counted when one of its transitions can happen; a lever likewise.
        let liveGuards = spendiq.guards.filter { !$0.dead }
        #expect(liveGuards.allSatisfy { !Set($0.transitions).isDisjoint(with: [0, 1, 2]) })
        #expect(spendiq.figure(.guard).total == liveGuards.count)
        #expect(spendiq.levers.filter { !$0.dead }.allSatisfy { $0.total > 0 })
        #expect(spendiq.figure(.lever).total == spendiq.levers.count { !$0.dead && !$0.isDefault })
        let human = known.human(detail: false)
        #expect(human.contains("  dead, left out (no run of events takes them; `policyctl verify --dead` lists them): "))
        #expect(human.contains("scenarios also took "))
        // Another policy without reachability: every transition counts, nothing is called dead.
        let other = try #require(known.policies.first { $0.policy != "spendiq" })
        #expect(other.counted.count == other.total && other.dead.isEmpty && !other.reachabilityUnknown)
        #expect(!known.reachableKnown)
    }

    @Test("reachability sought and unknown: every transition counts, and the report says so")
    func unknownReachability() throws {
        let report = CoverageReport(results: Self.results, policies: Self.compiled, unexplored: ["spendiq"])
        let spendiq = try #require(report.policies.first { $0.policy == "spendiq" })
        #expect(spendiq.reachabilityUnknown && spendiq.counted.count == spendiq.total)
        let human = report.human(detail: false)
        #expect(human.contains("  reachability unknown (the exploration stopped at its limit): every transition counts"))
        #expect(human.split(separator: "\n").contains { $0.hasPrefix("coverage: ") && $0.hasSuffix(", reachability unknown for spendiq") })
    }

    @Test("a lever the policy file leaves at its default is not counted as a lever")
    func defaultsNotLevers() throws {
        let report = CoverageReport(results: Self.results, policies: Self.compiled)
        let spendiq = try #require(report.policies.first { $0.policy == "spendiq" })
        let adopt = try #require(spendiq.levers.first { $0.lever == "cross_app.adopt" })
        #expect(adopt.isDefault && adopt.location == nil)
        let window = try #require(spendiq.levers.first { $0.lever == "offline.window" })
        #expect(!window.isDefault && window.location != nil)
        #expect(!(try #require(spendiq.levers.last)).isDefault)
        #expect(spendiq.figure(.lever).total == spendiq.levers.count { !$0.isDefault })
        #expect(
            report.human(detail: false).contains(
                "  left at their defaults and never exercised (not counted as levers): cross_app.adopt (1 guard), "))
    }

    @Test("a loaded policy no scenario runs against is reported with no transition covered")
    func unusedPolicy() throws {
        let only = Self.results.filter { $0.scenario.policy == "spendiq" }
        let report = CoverageReport(results: only, policies: Self.compiled)
        let other = try #require(report.policies.first { $0.policy == "kobil-signed-jwt" })
        #expect(other.scenarios == 0 && other.covered.isEmpty && other.missed.count == other.total)
        #expect(other.figure(.lever).covered == 0 && other.figure(.guard).covered == 0)
        #expect(
            report.human(detail: false).contains(
                "policy kobil-signed-jwt: 0 of \(other.figure(.lever).total) levers exercised (0.0%), 0 of \(other.guards.count) guards taken (0.0%), 0 of \(other.total) transitions (0.0%)\n  no scenario runs against it\n"
            ))
    }

    @Test("human coverage comes before the closing line; JUnit keeps the closing line off standard output")
    func rendering() {
        let report = CheckReport(results: Self.results, policies: Self.compiled)
        let coverage = report.coverage()
        let human = report.render(.human, coverage: coverage).stdout
        let lines = human.split(separator: "\n")
        #expect(lines.last.map(String.init) == report.summary)
        let levers = coverage.figure(.lever)
        #expect(lines.dropLast().last?.hasPrefix("coverage: \(levers.covered) of \(levers.total) levers exercised") == true)
        #expect(lines.dropLast().last?.contains(", \(coverage.covered) of \(coverage.total) transitions (") == true)
        #expect(human.contains("policy spendiq: "))
        let junit = report.render(.junit, coverage: coverage)
        #expect(!junit.stdout.contains(report.summary))
        #expect(junit.stderr.hasSuffix(report.summary + "\n"))
        #expect(report.render(.human).stdout == report.human(verbose: false))
    }

    /// Tests/Fixtures/coverage: a small policy and three scenarios whose levers, guards and
    /// transitions are known by reading them (the scenario file says which).
    enum Small {
        static let input = CheckInput.load(
            policies: [Fixtures.path("Tests/Fixtures/coverage/policy.yaml")],
            scenarios: [Fixtures.path("Tests/Fixtures/coverage/scenarios.yaml")])
        static let compiled = input.policies.mapValues(\.compiled)
        static let results = input.scenarios.map { ScenarioRunner.run($0, against: compiled[$0.policy]!) }
        /// Its reachable transitions, as `check --coverage` finds them.
        static let reachable = compiled.compactMapValues { Verifier.reachableTransitions($0) }
        static func report(threshold: Double? = nil, unit: CoverageUnit = .lever) -> CoverageReport {
            CoverageReport(results: results, policies: compiled, threshold: threshold, thresholdUnit: unit, reachable: reachable)
        }
        /// The report's text with the fixture paths relative to the package root.
        static func relative(_ text: String) -> String { text.replacingOccurrences(of: Fixtures.root.path + "/", with: "") }
    }

    @Test("a small policy: exactly the levers its scenarios reach are exercised")
    func smallPolicyLevers() throws {
        #expect(Small.input.diagnostics.isEmpty, "\(Small.input.diagnostics)")
        #expect(Small.results.count == 3 && Small.results.allSatisfy(\.passed))
        let p = try #require(Small.report().policies.first)
        #expect(p.policy == "coverage-small")
        #expect(
            p.levers.filter(\.exercised).map(\.lever) == [
                "auth_modes.offline", "offline.on_expired", "offline.window", "signals.logout", "built-in",
            ])
        // What the policy sets and no scenario reaches, and what it leaves to the defaults.
        for lever in ["session.max", "session.on_expired", "device.compromised", "signals.tokens_revoked", "retry.biometric.max"] {
            #expect(p.levers.first { $0.lever == lever }?.exercised == false, "\(lever)")
        }
        // Six levers the policy sets, and built-in; the others are left at their defaults.
        #expect(p.figure(.lever) == CoverageFigure(covered: 5, total: 7))
        #expect(p.levers.filter { !$0.isDefault }.count == 7)
        // One guard per transition taken, in the order of the guards' first transitions (signed
        // out first): the launch with no session left, the login, the logout (its guard also
        // holds signed out), the launch past the window, the launch allowed offline.
        let taken = p.guards.filter(\.taken)
        #expect(
            taken.map(\.reason.rawValue) == ["no_session", "idp_login_succeeded", "logout", "offline_window_exceeded", "within_limits"])
        #expect(
            taken.map(\.levers) == [
                ["built-in"], ["built-in"], ["signals.logout"], ["offline.window", "offline.on_expired"], ["auth_modes.offline"],
            ])
        #expect(taken.allSatisfy { $0.covered.count == 1 })
        // Of 41 guards and 363 transitions, 7 and 158 are dead: with offline mode `none` alone
        // no session ever waits for a biometric prompt, and no signal makes one read-only.
        #expect(p.guards.count == 41 && p.total == 363)
        #expect(p.figure(.guard) == CoverageFigure(covered: 5, total: 34))
        #expect(p.figure(.transition) == CoverageFigure(covered: 5, total: 205))
        #expect(p.dead.count == 158 && p.deadStates == [.awaitingBiometric, .readOnly])
        let window = try #require(p.levers.first { $0.lever == "offline.window" })
        #expect(window.guards.count == 1 && window.guardsTaken == 1)
        #expect(window.location?.description == Fixtures.path("Tests/Fixtures/coverage/policy.yaml") + ":11:11")
        let logout = try #require(p.levers.first { $0.lever == "signals.logout" })
        #expect(logout.guardsTaken == 1 && logout.guards.count == 2)
        // With levers at 71.4%: 71 passes, 72 does not; in transitions (2.4%) 71 fails.
        #expect(!Small.report(threshold: 71).belowThreshold)
        #expect(Small.report(threshold: 72).belowThreshold)
        #expect(Small.report(threshold: 71, unit: .transition).belowThreshold)
    }

    @Test("a small policy's coverage report, human and with detail", arguments: [false, true])
    func smallPolicyGolden(_ detail: Bool) {
        let text = Small.relative(Small.report(threshold: 71).human(detail: detail))
        let golden = "Tests/Fixtures/golden/coverage/coverage-small\(detail ? "-detail" : "").txt"
        if let difference = Golden.check(text, against: golden) { Issue.record("\(difference)") }
    }

    @Test("the JSON form has every unit, overall and per policy, and each guard with its transitions")
    func smallPolicyJSON() throws {
        let report = CheckReport(results: Small.results, policies: Small.compiled)
        let text = report.json(coverage: Small.report(threshold: 71))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let coverage = try #require(object["coverage"] as? [String: Any])
        // The transition figures count what can happen.
        #expect(coverage["covered"] as? Int == 5 && coverage["total"] as? Int == 205)
        #expect(coverage["threshold_unit"] as? String == "lever")
        #expect(coverage["below_threshold"] as? Bool == false)
        let units = try #require(coverage["units"] as? [String: [String: Any]])
        #expect(units.keys.sorted() == ["guard", "lever", "transition"])
        #expect(units["lever"]?["covered"] as? Int == 5 && units["lever"]?["total"] as? Int == 7)
        #expect(units["lever"]?["percent"] as? Double == 71.4)
        let policy = try #require((coverage["policies"] as? [[String: Any]])?.first)
        #expect((policy["units"] as? [String: Any])?.keys.sorted() == ["guard", "lever", "transition"])
        #expect(policy["reachability"] as? String == "known" && policy["transitions"] as? Int == 363)
        #expect((policy["dead_transitions"] as? [Int])?.count == 158)
        #expect(policy["dead_states"] as? [String] == ["awaiting_biometric", "read_only"])
        let guards = try #require(policy["guards"] as? [[String: Any]])
        #expect(guards.count == 41 && guards.count { $0["dead"] as? Bool == true } == 7)
        let compromised = try #require(guards.first { $0["reason"] as? String == "device_compromised" })
        #expect(compromised["guard"] as? String == "the device failed its integrity check")
        #expect(compromised["taken"] as? Bool == false)
        #expect((compromised["transitions"] as? [Int])?.count == 78)
        let levers = try #require(policy["levers"] as? [[String: Any]])
        let window = try #require(levers.first { $0["lever"] as? String == "offline.window" })
        #expect(window["exercised"] as? Bool == true && window["guards_taken"] as? Int == 1)
        #expect(window["default"] as? Bool == false && window["dead"] as? Bool == false)
        #expect(levers.first { $0["lever"] as? String == "device.compromised" }?["default"] as? Bool == true)
        let ids = try #require(window["guards"] as? [Int])
        #expect(ids.map { guards[$0]["reason"] as? String } == ["offline_window_exceeded"])
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
