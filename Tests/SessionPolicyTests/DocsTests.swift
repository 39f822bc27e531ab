import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The README's examples must stay true.
@Suite("Documentation")
struct DocsTests {
    static let readme = Fixtures.text("README.md")

    static func blocks(_ language: String) -> [String] {
        readme.components(separatedBy: "```\(language)\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
    }

    @Test("the reference policy in the README compiles without warnings")
    func referencePolicy() throws {
        let yaml = try #require(Self.blocks("yaml").first)
        let policy = try PolicyFile.compile(text: yaml, file: "README.md").get()
        #expect(policy.policy.session.max == .days(90))
        #expect(policy.policy.signals.licenseRevoked.noticeDelay == .seconds(5))
    }

    @Test("the README's scenario example passes against the SpendiQ policy")
    func scenarioExample() throws {
        let yaml = try #require(Self.blocks("yaml").first { $0.contains("scenarios:") })
        let node = try #require(try YAMLSyntax.parse(yaml, file: "README.md").get())
        let (scenarios, diagnostics) = ScenarioLoader.load(node, file: "README.md", defaultPolicy: nil)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let policy = try Fixtures.policy("spendiq")
        for s in scenarios { #expect(ScenarioRunner.run(s, against: policy).passed) }
    }

    @Test("every diagnostic code is documented")
    func codesDocumented() {
        let doc = Fixtures.text("docs/diagnostics.md")
        let codes: [DiagnosticCode] = [
            .fileNotFound, .inputTooLarge, .invalidUTF8, .yamlSyntax, .invalidJSON, .yamlAnchor, .nestingTooDeep, .tooManyNodes,
            .duplicateKey,
            .emptyDocument, .unknownKey, .missingKey, .wrongType, .invalidValue, .invalidDuration, .invalidTime, .unsupportedVersion,
            .duplicateValue, .offlineModeNeedsIdP, .windowExceedsSessionMax, .retryMaxBelowOne, .reactionNotAllowed, .unknownPolicy,
            .duplicatePolicyName, .unknownBehaviour, .noScenarios, .invalidExpression, .unknownAttribute, .typeMismatch, .ruleNotAllowed,
            .ruleNeverFires,
            .noPolicies, .unusedLintAllow,
        ]
        for code in codes + PolicyLinter.lints.map(\.code) {
            #expect(doc.contains("`\(code.rawValue)`"), "\(code) is not in docs/diagnostics.md")
        }
    }
}
