import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// What the scenario loader accepts in `covers:`, and the scenarios it warns about.
@Suite("Scenario loader")
struct ScenarioLoaderTests {
    /// Loads marked scenario YAML against the SpendiQ policy; the markers' places.
    static func load(_ marked: String) throws -> ([Scenario], [Diagnostic], [String: SessionPolicy.SourceLocation]) {
        let (text, at) = Markers.extract(marked, file: "s.yaml")
        let node = try #require(try YAMLSyntax.parse(text, file: "s.yaml").get())
        let (scenarios, diagnostics) = ScenarioLoader.load(node, file: "s.yaml", defaultPolicy: "spendiq")
        return (scenarios, diagnostics, at)
    }

    static func scenario(covers: String, expect: String = "\n        expect: { decision: wipe }") -> String {
        """
        scenarios:
          - name: covers \(covers)
            covers: \(covers)
            start: 2026-04-06T08:00:00Z
            context: { network: offline, user: ana }
            steps:
              - event: idp_login_succeeded
                network: online
                auth_mode: none
              - at: +8d
                event: launch\(expect)
        """
    }

    @Test(
        "any id is accepted in `covers:`: the catalogue's, and a user's own without comment",
        arguments: ["[K3, S2]", "[REQ-12, login-3, PCI-DSS 8.2.8, K3]", "[A, K, KX1, K-3, K 3, X1a, 12]"])
    func anyIDAccepted(_ covers: String) throws {
        let (scenarios, diagnostics, _) = try Self.load(Self.scenario(covers: covers))
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let s = try #require(scenarios.first)
        let listed = covers.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(s.covers == listed)
    }

    @Test(
        "an id written like a catalogue id that is not one is a warning, and the scenario still loads",
        arguments: [
            (
                "K9",
                "the catalogue's K ids are K1-K8 (docs/behaviours.md); give a requirement of your own an id that does not look like one, such as `REQ-9`"
            ),
            (
                "X0",
                "the catalogue's X ids are X1-X4 (docs/behaviours.md); give a requirement of your own an id that does not look like one, such as `REQ-0`"
            ),
            ("k3", "did you mean `K3`?"),
            ("S05", "did you mean `S5`?"),
            ("a2", "did you mean `A2`?"),
        ])
    func lookalike(_ id: String, _ help: String) throws {
        let (scenarios, diagnostics, at) = try Self.load(Self.scenario(covers: "[S2, 1️⃣\(id)]"))
        #expect(diagnostics.count == 1, "\(diagnostics)")
        let d = try #require(diagnostics.first)
        #expect(d.severity == .warning)
        #expect(d.code == .unknownBehaviour)
        #expect(d.message == "`\(id)` looks like a behaviour id but is not in the catalogue")
        #expect(d.help == help)
        #expect(d.location == at["1️⃣"])
        #expect(try #require(scenarios.first).covers == ["S2", id])
    }

    @Test(
        "a scenario that expects nothing is a warning at the scenario; any expectation silences it",
        arguments: [
            ("", true), ("\n        expect: {}", true), ("\n        note: nothing checked", true),
            ("\n        expect: { decision: wipe }", false), ("\n        expect: { notices: [] }", false),
            ("\n        expect: { scope: none }", false), ("\n        expect: { auth_mode: null }", false),
            ("\n        expect: { user: ana }", false),
        ])
    func noExpectations(_ expect: String, _ warns: Bool) throws {
        let marked = Self.scenario(covers: "[S2]", expect: expect).replacingOccurrences(of: "  - name:", with: "  1️⃣- name:")
        // The marker sits before the dash; the scenario's mapping starts after "- ".
        let (scenarios, diagnostics, at) = try Self.load(marked)
        #expect(scenarios.count == 1, "the scenario still loads and runs")
        if warns {
            let d = try #require(diagnostics.first, "no warning for `\(expect)`")
            #expect(diagnostics.count == 1)
            #expect(d.severity == .warning)
            #expect(d.code == .noExpectations)
            #expect(d.message == "scenario `covers [S2]` expects nothing, so it passes whatever the policy decides")
            let start = try #require(at["1️⃣"])
            #expect(d.location?.line == start.line && d.location?.column == start.column + 2)
        } else {
            #expect(diagnostics.isEmpty, "\(diagnostics)")
        }
    }

    @Test("a step that expects an error is an expectation")
    func errorIsAnExpectation() throws {
        let (scenarios, diagnostics, _) = try Self.load(
            """
            scenarios:
              - name: rejected
                start: 2026-04-06T08:00:00Z
                steps:
                  - event: launch
                    expect: { error: missing-key }
            """)
        #expect(scenarios.count == 1)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
    }

    @Test("the report lists the catalogue's ids and the user's own apart, from passing scenarios only")
    func reportSeparatesIDs() throws {
        let (passing, d1, _) = try Self.load(Self.scenario(covers: "[S2, REQ-2, K3, REQ-10]"))
        let (failing, d2, _) = try Self.load(
            Self.scenario(covers: "[S1, REQ-99]", expect: "\n        expect: { decision: allow }"))
        #expect(d1.isEmpty && d2.isEmpty)
        let policy = try Fixtures.policy("spendiq")
        let results = (passing + failing).map { ScenarioRunner.run($0, against: policy) }
        #expect(results.map(\.passed) == [true, false])
        let report = CheckReport(results: results, policies: ["spendiq": policy])
        #expect(report.covered == ["K3", "S2"])
        #expect(report.requirementsCovered == ["REQ-10", "REQ-2"])
        let human = report.human(verbose: false)
        #expect(
            human.hasSuffix(
                "\nbehaviours covered: K3 S2 (A2 A3: the server's, shown by its tests, not by scenarios)\nrequirements covered: REQ-10 REQ-2\n1 passed, 1 failed\n"
            ), "\(human)")
        let json = try #require(JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        #expect(json["covered"] as? [String] == ["K3", "S2"])
        #expect(json["requirements_covered"] as? [String] == ["REQ-10", "REQ-2"])
        // Only the user's own ids: no catalogue line.
        let own = CheckReport(
            results: [results[0]].map {
                var r = $0; r.scenario.covers = ["REQ-2"]; return r
            }, policies: [:])
        #expect(!own.human(verbose: false).contains("behaviours covered"))
        #expect(own.human(verbose: false).contains("requirements covered: REQ-2\n"))
    }
}
