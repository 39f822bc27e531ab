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

    /// The codes are enumerated from the sources (every `DiagnosticCode("...")`, in every target),
    /// not from a list typed here, so a new code cannot be left out of the document or the test.
    @Test("every diagnostic code the sources create has a row in docs/diagnostics.md, and every row is a real code")
    func codesDocumented() {
        let declared = SourceScan.diagnosticCodes()
        #expect(declared.count >= 40, "the scan of Sources/ found \(declared.count) codes")
        let codes = Set(declared.map(\.raw))
        #expect(codes.isSuperset(of: PolicyLinter.lints.map(\.code.rawValue)))
        let rows = MarkdownTables.firstCells(Fixtures.text("docs/diagnostics.md"))
        for code in declared where !rows.contains(code.raw) {
            Issue.record("`\(code.raw)` (\(code.file)) has no row in docs/diagnostics.md")
        }
        for row in Set(rows) where !codes.contains(row) {
            Issue.record("docs/diagnostics.md documents `\(row)`, which no source creates")
        }
    }
}
