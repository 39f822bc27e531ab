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
        // Compile the text under its relative name so goldens do not depend on the checkout.
        let result = PolicyFile.compile(text: Fixtures.text(file), file: file)
        guard case let .failure(error) = result else {
            Issue.record("\(file) loaded but must not")
            return
        }
        let relative = error.diagnostics
        let rendered = DiagnosticRenderer(sources: [file: Fixtures.text(file)]).render(relative) + "\n"
        let golden = String(file.dropLast(".yaml".count)) + ".expected"
        if let difference = Golden.check(rendered, against: golden) { Issue.record(Comment(rawValue: difference)) }
    }
}
