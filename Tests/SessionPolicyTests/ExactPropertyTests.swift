import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

@testable import SessionPolicyVerify

/// Issue 35, section 3: properties that name attributes and bound elapsed times, decided exactly
/// (docs/verify.md, "User properties"). The cases are `Tests/Fixtures/properties/exact.yaml`.
@Suite("Properties over attributes and elapsed times")
struct ExactPropertyTests {
    static let policyFile = "Tests/Fixtures/properties/policies/business-bank.yaml"

    struct Case: Sendable, CustomTestStringConvertible {
        var id: String
        var property: String
        var status: String
        var mutated: String?
        var testDescription: String { mutated.map { "\(id) (\($0))" } ?? id }
    }

    static let cases: [Case] = {
        let file = "Tests/Fixtures/properties/exact.yaml"
        guard let root = try? JSONValue.yaml(Fixtures.text(file), file: file) else { return [] }
        return (root["cases"]?.items ?? []).map {
            Case(
                id: $0["id"]?.string ?? "", property: $0["property"]?.string ?? "", status: $0["status"]?.string ?? "",
                mutated: $0["mutated"]?.string)
        }
    }()

    static let violatedCases = cases.filter { $0.status == "violated" }

    /// Faults seeded in the policy's text, each what an edit of the policy could do.
    static let mutations: [String: (String, String)] = [
        "business-window-2d": (
            "account_tier == business and elapsed.since_online > 1d", "account_tier == business and elapsed.since_online > 2d"
        )
    ]

    static func policy(_ mutation: String? = nil) throws -> CompiledPolicy {
        var text = Fixtures.text(policyFile)
        if let mutation {
            let (from, to) = try #require(mutations[mutation])
            #expect(text.contains(from))
            text = text.replacingOccurrences(of: from, with: to)
        }
        return try PolicyFile.compile(text: text, file: policyFile).get()
    }

    static func properties(_ list: [Case]) throws -> [UserProperty] {
        let text = "properties:\n" + list.map { "  - id: \($0.id)\n    \($0.property)\n" }.joined()
        guard case let .success(root?) = YAMLSyntax.parse(text, file: "exact.yaml") else {
            Issue.record("the cases do not parse")
            return []
        }
        let (properties, diagnostics) = PropertyLoader.load(root, file: "exact.yaml")
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(PropertyLoader.check(properties, against: try policy()).isEmpty)
        return properties
    }

    @Test("the corpus holds proved and violated cases")
    func corpus() {
        #expect(Self.cases.count >= 12)
        #expect(Self.cases.contains { $0.status == "proved" } && !Self.violatedCases.isEmpty)
    }

    @Test("every property the corpus says holds is proved, by one exhaustive exploration")
    func proved() throws {
        let list = Self.cases.filter { $0.status == "proved" && $0.mutated == nil }
        let report = Verifier.verify(try Self.policy(), properties: try Self.properties(list))
        #expect(report.exhaustive && report.inconsistencies.isEmpty, "\(report.inconsistencies)")
        for c in list {
            let r = try #require(report.properties.first { $0.id == c.id })
            #expect(r.status == .proved, "\(c.id): \(r.counterexample?.detail ?? "")")
        }
    }

    @Test("a violated property has a concrete counterexample that breaks it when replayed", arguments: violatedCases)
    func violated(_ c: Case) throws {
        let policy = try Self.policy(c.mutated)
        let property = try #require(try Self.properties([c]).first)
        let report = Verifier.verify(policy, stateLimit: 300, properties: [property])
        #expect(report.inconsistencies.isEmpty, "\(report.inconsistencies)")
        let r = try #require(report.properties.first { $0.id == c.id })
        #expect(r.status == .violated)
        let example = try #require(r.counterexample)
        #expect(example.concrete)
        // The engine decides every step as shown, and the run breaks the property at its last step
        // (the elapsed times of its concrete session, the attributes of its events).
        var state = SessionState.signedOut
        for s in example.steps {
            let o = policy.evaluate(state, s.event)
            #expect(o.decision == s.decision && o.transition == s.transition, "\(s.event.kind)")
            state = o.state
        }
        let bound = property.bound(to: policy.machine.attributes)
        #expect(Verifier.breaksAtLast(bound, example.steps, policy))
        #expect(!Verifier.breaksAtLast(bound, Array(example.steps.dropLast()), policy))
    }

    @Test("the values tried for an attribute: every value a property names, and one of each class of the rules' that it does not")
    func representatives() throws {
        let rule = Condition.number(.attribute("risk"), .greater, 5)
        let ints = Explorer.representatives([nil, "4", "5", "6"], named: ["6"], type: .integer, rules: [rule])
        #expect(ints == [nil, "4", "5", "6", "7"])
        let named = Explorer.representatives([nil], named: ["100"], type: .integer, rules: [])
        #expect(named == [nil, "100", "101"])
        let strings = Explorer.representatives([nil], named: ["zz-other"], type: .string, rules: [])
        #expect(strings == [nil, "zz-other", "zz-other-1"])
        let words = Explorer.representatives([nil], named: ["business"], type: .words(["personal", "business", "private"]), rules: [])
        #expect(words == [nil, "business", "personal"])
        // `2.4` and `2.4.0` are one version; below `2.4` nothing is nearest: one past every constant stands for it.
        let below = Condition.version(.attribute("app"), .less, try #require(Version("2.4")))
        let versions = Explorer.representatives([nil, "2.4", "2.4.1", "2.3"], named: ["2.4.0", "2.3"], type: .version, rules: [below])
        #expect(versions == [nil, "2.4", "2.4.1", "2.3", "2.3.5.5"])
    }

    static let files = [
        "examples/properties/licences.yaml", "Tests/Fixtures/properties/business.yaml", "Tests/Fixtures/properties/business-at-a-day.yaml",
    ]

    @Test(
        "a property file that names attributes and times loads, checks against its policy and validates against the schema",
        arguments: files)
    func shipped(_ file: String) throws {
        let text = Fixtures.text(file)
        let root = try #require(try YAMLSyntax.parse(text, file: file).get())
        let (properties, diagnostics) = PropertyLoader.load(root, file: file)
        #expect(diagnostics.isEmpty && !properties.isEmpty, "\(diagnostics)")
        let policy = file.hasPrefix("examples") ? try Fixtures.policy("i360-marketsharp") : try Self.policy()
        #expect(PropertyLoader.check(properties, against: policy).isEmpty)
        let schema = try JSONSchema(contentsOfFile: Fixtures.path("schemas/property.schema.json"))
        #expect(schema.validate(try #require(try JSONValue.yaml(text, file: file))).isEmpty)
    }

    static let badFiles = Fixtures.files(in: "Tests/Fixtures/properties/bad-facts")

    @Test("a mistake in an attribute or a bound is located, with its hint", arguments: badFiles)
    func mistakes(_ file: String) throws {
        let text = Fixtures.text(file)
        guard case let .success(root?) = YAMLSyntax.parse(text, file: file) else {
            Issue.record("\(file) does not parse")
            return
        }
        var (properties, diagnostics) = PropertyLoader.load(root, file: file)
        if diagnostics.isEmpty { diagnostics = PropertyLoader.check(properties, against: try Self.policy()) }
        if file.hasSuffix("no-attributes.yaml") { diagnostics = PropertyLoader.check(properties, against: try Fixtures.policy("spendiq")) }
        #expect(diagnostics.count == 1 && diagnostics.allSatisfy { $0.severity == .error && $0.help != nil }, "\(diagnostics)")
        let rendered = DiagnosticRenderer(sources: [file: text]).render(diagnostics) + "\n"
        if let difference = Golden.check(rendered, against: String(file.dropLast(".yaml".count)) + ".expected") {
            Issue.record(Comment(rawValue: difference))
        }
    }
}
