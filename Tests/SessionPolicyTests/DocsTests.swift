import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyVerify
import SessionPolicyYAML
import Testing

/// The README's examples must stay true.
@Suite("Documentation")
struct DocsTests {
    static let readme = Fixtures.text("README.md")

    static func blocks(_ language: String) -> [String] {
        readme.components(separatedBy: "```\(language)\n").dropFirst().map { $0.components(separatedBy: "```").first ?? "" }
    }

    /// The README shows docs/images/kobil-offline-token.svg, drawn by Graphviz from `compile
    /// --format dot`. Without Graphviz here, the test compares what the picture says: each node's
    /// and each edge's text in the SVG against the dot the policy compiles to now.
    @Test("the README's picture shows what `compile --format dot` draws for its policy")
    func picture() throws {
        let command = "policyctl compile policies/kobil-offline-token.yaml --format dot | dot -Tsvg > docs/images/kobil-offline-token.svg"
        #expect(Self.readme.contains(command))
        #expect(Self.readme.contains("](docs/images/kobil-offline-token.svg)"))
        let svg = Fixtures.text("docs/images/kobil-offline-token.svg")
        let policy = try Fixtures.policy("kobil-offline-token")
        let dot = policy.machine.renderDot(PictureOptions(live: Verifier.reachableTransitions(policy)))
        let drawn = Self.svgItems(svg)
        #expect(drawn.count > 10)
        #expect(drawn == Self.dotItems(dot), "the picture is out of date; re-draw it with `\(command)`")
    }

    /// Each node and edge of Graphviz SVG as "title: text | text", sorted; the legend left out.
    static func svgItems(_ svg: String) -> [String] {
        func unescape(_ s: Substring) -> String {
            s.replacingOccurrences(of: "&#45;", with: "-").replacingOccurrences(of: "&gt;", with: ">")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&quot;", with: "\"")
                .replacingOccurrences(of: "&amp;", with: "&")
        }
        return svg.components(separatedBy: "<g id=\"").dropFirst().compactMap { group -> String? in
            guard group.contains("class=\"node\"") || group.contains("class=\"edge\""),
                let title = group.firstMatch(of: /<title>(.*?)<\/title>/).map({ unescape($0.1) }), title != "legend"
            else { return nil }
            let texts = group.matches(of: /<text[^>]*>(.*?)<\/text>/).map { unescape($0.1) }
            return title + ": " + texts.joined(separator: " | ")
        }.sorted()
    }

    /// The same from the dot source: a node's name and the lines written in it, an edge's label lines.
    static func dotItems(_ dot: String) -> [String] {
        func unescape(_ s: Substring) -> String {
            s.replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&lt;", with: "<")
                .replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "\\\"", with: "\"")
        }
        return dot.split(separator: "\n").compactMap { line -> String? in
            if let edge = line.firstMatch(of: /^  "([^"]+)" -> "([^"]+)" \[label="((?:[^"\\]|\\.)*)"/) {
                let texts = edge.3.split(separator: "\\l").map(unescape)
                return "\(edge.1)->\(edge.2): " + texts.joined(separator: " | ")
            }
            guard let node = line.firstMatch(of: /^  "([^"]+)"( \[.*\])?;$/) else { return nil }
            let texts = node.2.map { $0.matches(of: /<(?:td|font)[^>]*>([^<]+)<\/(?:td|font)>/).map { unescape($0.1) } } ?? []
            return "\(node.1): " + (texts.isEmpty ? String(node.1) : texts.joined(separator: " | "))
        }.sorted()
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
