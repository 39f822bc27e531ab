import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import Testing

/// `docs/behaviours.md` is the home of the behaviour ids: the code's copy agrees with it, every
/// id is shown by a shipped scenario (or by the tests its entry names), and nothing refers to
/// the specification that is not in the repository.
@Suite("Behaviour catalogue")
struct BehaviourCatalogueTests {
    /// One `### ID` section of the document.
    struct Entry: CustomTestStringConvertible {
        var id: String
        var sentence: String
        var source: String
        var shownBy: String
        var testDescription: String { id }
    }

    static let doc = Fixtures.text("docs/behaviours.md")

    /// The `### ID` sections, in order: the paragraph after the heading, and the text of its
    /// `- Source:` and `- Shown by:` items (continuation lines joined).
    static func entries(_ text: String) -> [Entry] {
        var out: [Entry] = []
        var current: Entry?
        var item: WritableKeyPath<Entry, String>?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                if let current { out.append(current) }
                current = nil
                item = nil
                if line.hasPrefix("### ") {
                    current = Entry(id: String(line.dropFirst(4)), sentence: "", source: "", shownBy: "")
                    item = \.sentence
                }
                continue
            }
            guard current != nil else { continue }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("- Source:") {
                item = \.source
                current![keyPath: \.source] = String(trimmed.dropFirst("- Source:".count)).trimmingCharacters(in: .whitespaces)
            } else if trimmed.hasPrefix("- Shown by:") {
                item = \.shownBy
                current![keyPath: \.shownBy] = String(trimmed.dropFirst("- Shown by:".count)).trimmingCharacters(in: .whitespaces)
            } else if let item, !trimmed.isEmpty {
                let before = current![keyPath: item]
                current![keyPath: item] = before.isEmpty ? trimmed : before + " " + trimmed
            }
        }
        if let current { out.append(current) }
        return out
    }

    static let catalogue = entries(doc)

    /// The shipped policies and scenarios, and the ids covered by scenarios that pass.
    static let shipped = CheckInput.load(policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples")])
    static let coveredByPassingScenarios: Set<String> = Set(
        shipped.scenarios.filter { s in
            guard let p = shipped.policies[s.policy] else { return false }
            return ScenarioRunner.run(s, against: p.compiled).passed
        }.flatMap(\.covers))

    @Test("the code's list of ids is the document's headings, in order, each once")
    func codeAgreesWithDocument() {
        let ids = Self.catalogue.map(\.id)
        #expect(ids.count >= 25, "docs/behaviours.md has \(ids.count) `### ID` headings")
        #expect(Set(ids).count == ids.count, "an id is listed twice: \(ids)")
        #expect(ids == Behaviours.all)
        // The ids `check` names as the server's are those the document says tests show.
        #expect(Self.catalogue.filter { $0.shownBy != "scenarios" }.map(\.id) == Behaviours.shownByServerTests)
    }

    @Test("every id has its sentence, its source and what shows it", arguments: catalogue)
    func complete(_ e: Entry) {
        #expect(e.id.wholeMatch(of: /[A-Z][1-9][0-9]*/) != nil, "`\(e.id)` is not an id")
        #expect(!e.sentence.isEmpty, "\(e.id) has no sentence")
        #expect(e.source.hasPrefix("seed") || e.source.hasPrefix("none;"), "\(e.id): source `\(e.source)`")
        #expect(e.shownBy == "scenarios" || e.shownBy.hasPrefix("tests in `"), "\(e.id): shown by `\(e.shownBy)`")
    }

    /// An id is shown by a shipped scenario that covers it and passes; or, when its entry says
    /// `Shown by: tests in `FILE``, by a test in FILE whose name mentions the id.
    @Test("every id is shown: by a passing shipped scenario, or by the tests its entry names", arguments: catalogue)
    func shown(_ e: Entry) throws {
        #expect(Self.shipped.diagnostics.filter { $0.severity == .error }.isEmpty)
        if e.shownBy == "scenarios" {
            #expect(
                Self.coveredByPassingScenarios.contains(e.id),
                "no passing scenario in examples/ covers \(e.id); add one with `covers: [\(e.id)]`")
            return
        }
        let file = try #require(e.shownBy.firstMatch(of: /tests in `([^`]+)`/)?.1)
        let text = Fixtures.text(String(file))
        #expect(!text.isEmpty, "\(e.id): \(file) does not exist")
        let id = try Regex("\\b\(e.id)\\b")
        let tests = text.split(separator: "\n").filter { $0.contains("@Test(\"") && $0.contains(id) }
        #expect(!tests.isEmpty, "\(e.id): no `@Test(\"...\")` in \(file) names \(e.id)")
        // A scenario cannot show it (it drives the engine only); if one claims to, the entry is out of date.
        #expect(!Self.coveredByPassingScenarios.contains(e.id), "a scenario covers \(e.id): say `Shown by: scenarios`")
    }

    /// The text files of the repository that people and tools read: sources, tests, shipped
    /// files, schemas and documents.
    static func repositoryFiles() -> [String] {
        var out: [String] = ["README.md"]
        let fm = FileManager.default
        for top in ["Sources", "Tests", "examples", "policies", "schemas", "docs", "Benchmarks", "load"] {
            guard let walker = fm.enumerator(atPath: Fixtures.path(top)) else { continue }
            for case let rel as String in walker {
                if (rel as NSString).lastPathComponent.hasPrefix(".") {
                    walker.skipDescendants()  // .build, .swiftpm, editors' folders
                } else if [".swift", ".md", ".yaml", ".json"].contains(where: rel.hasSuffix) {
                    out.append("\(top)/\(rel)")
                }
            }
        }
        return out.sorted()
    }

    @Test("nothing refers to the specification outside the repository; behaviour references name catalogue ids")
    func references() throws {
        let files = Self.repositoryFiles()
        #expect(files.count > 50)
        let known = Set(Behaviours.all)
        for file in files where file != "Tests/SessionPolicyTests/BehaviourCatalogueTests.swift" {
            for (n, line) in Fixtures.text(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                #expect(line.firstMatch(of: /\bSPEC\b|SPEC §/) == nil, "\(file):\(n + 1): `\(line)`: refer to docs/behaviours.md")
                for m in line.matches(of: /\bbehaviours? ([A-Z][0-9]+)(?:-([A-Z][0-9]+))?/) {
                    for id in [m.1, m.2].compactMap({ $0 }) {
                        #expect(known.contains(String(id)), "\(file):\(n + 1): behaviour `\(id)` is not in docs/behaviours.md")
                    }
                }
            }
        }
    }
}
