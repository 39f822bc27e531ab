import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// Every file in `Tests/Fixtures/bad-policies/` must fail to load with exactly the diagnostics
/// in its `.expected` file (the human rendering). Re-record with `RECORD_SNAPSHOTS=1`.
@Suite("Bad policy corpus")
struct BadPolicyCorpusTests {
    static let files = Fixtures.files(in: "Tests/Fixtures/bad-policies")

    @Test("the corpus is not empty")
    func notEmpty() { #expect(Self.files.count >= 10) }

    @Test("each bad policy gets its diagnostics", arguments: files)
    func corpus(_ file: String) {
        let result = PolicyFile.load(file.hasPrefix("/") ? file : Fixtures.path(file))
        guard case let .failure(error) = result else {
            Issue.record("\(file) loaded but must not")
            return
        }
        // Render with the path relative to the root so goldens do not depend on the checkout.
        let relative = error.diagnostics.map { d -> Diagnostic in
            var d = d
            d.location?.file = file
            return d
        }
        let rendered = DiagnosticRenderer(sources: [file: Fixtures.text(file)]).render(relative) + "\n"
        let golden = String(file.dropLast(".yaml".count)) + ".expected"
        if let difference = Golden.check(rendered, against: golden) { Issue.record(Comment(rawValue: difference)) }
    }
}
