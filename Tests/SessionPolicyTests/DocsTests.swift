import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyVerify
import SessionPolicyYAML
import Testing

/// The examples of the README and of `docs/` must stay true.
@Suite("Documentation")
struct DocsTests {
    static let readme = Fixtures.text("README.md")

    /// The fenced blocks of `language` in `page` (a path from the repository's root), in order.
    static func blocks(_ language: String, in page: String) -> [String] {
        Fixtures.text(page).components(separatedBy: "```\(language)\n").dropFirst().map {
            $0.components(separatedBy: "```").first ?? ""
        }
    }

    /// docs/policyctl.md and the README show docs/images/kobil-offline-token.svg, drawn by
    /// Graphviz from `compile --format dot`. Without Graphviz here, the test compares what the
    /// picture says: each node's and each edge's text in the SVG against the dot the policy
    /// compiles to now.
    @Test("the documents' picture shows what `compile --format dot` draws for its policy")
    func picture() throws {
        let command = "policyctl compile policies/kobil-offline-token.yaml --format dot | dot -Tsvg > docs/images/kobil-offline-token.svg"
        let page = Fixtures.text("docs/policyctl.md")
        #expect(page.contains(command))
        #expect(page.contains("](images/kobil-offline-token.svg)"))
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

    @Test("the reference policy of docs/policy-language.md compiles without warnings")
    func referencePolicy() throws {
        let yaml = try #require(Self.blocks("yaml", in: "docs/policy-language.md").first)
        let policy = try PolicyFile.compile(text: yaml, file: "docs/policy-language.md").get()
        #expect(policy.policy.session.max == .days(90))
        #expect(policy.policy.signals.licenseRevoked.noticeDelay == .seconds(5))
    }

    @Test("the scenario example of docs/scenario-files.md passes against the SpendiQ policy")
    func scenarioExample() throws {
        let yaml = try #require(Self.blocks("yaml", in: "docs/scenario-files.md").first { $0.contains("scenarios:") })
        let node = try #require(try YAMLSyntax.parse(yaml, file: "docs/scenario-files.md").get())
        let (scenarios, diagnostics) = ScenarioLoader.load(node, file: "docs/scenario-files.md", defaultPolicy: nil)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let policy = try Fixtures.policy("spendiq")
        for s in scenarios { #expect(ScenarioRunner.run(s, against: policy).passed) }
    }

    /// The README's tour as a reader follows it: its files written as the markers above them name
    /// them, then its commands run by bash with the built `policyctl` first on the `PATH`.
    @Test("the README's five-minute tour runs as written", .enabled(if: CLI.binary != nil && Shell.has("bash")))
    func tour() async throws {
        let dir = try Fixtures.temporaryDirectory("tour")
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = Self.readme.matches(of: /<!-- tour file: ([^ ]+) -->/).map { String($0.1) }
        #expect(files == ["my-bank.yaml", "my-bank-scenarios.yaml"])
        for name in files {
            let text = try #require(Shell.block(after: "tour file: \(name)", in: Self.readme))
            try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let commands = try #require(Shell.block(after: "tour commands", in: Self.readme))
        let r = try await Shell.run(commands, in: dir, binaries: [try #require(CLI.binary)], timeout: 600)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("1 passed, 0 failed"), "\(r.stdout)")
        #expect(r.stdout.contains("proved") && !r.stdout.contains("violated"), "\(r.stdout)")
        let mermaid = (try? String(contentsOf: dir.appendingPathComponent("my-bank.mmd"), encoding: .utf8)) ?? ""
        #expect(mermaid.contains("stateDiagram-v2"), "\(mermaid.prefix(200))")
        let document = try Data(contentsOf: dir.appendingPathComponent("my-bank.machine.json"))
        #expect(try PolicyMachine(document: document, file: "my-bank.machine.json").name == "my-bank")
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
