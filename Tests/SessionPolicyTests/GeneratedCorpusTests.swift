import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The generated corpus (`GeneratedCorpus`) through the loader: each case either loads (a cut
/// can leave a valid policy) or is refused with located errors and a hint.
@Suite("Generated bad-input corpus")
struct GeneratedCorpusTests {
    @Test("every case loads, or is refused with located errors and a hint")
    func locatedAndHinted() {
        var refused = 0
        let cases = GeneratedCorpus.corpus()
        for c in cases {
            let file = "\(c.name).yaml"
            let result = YAMLSyntax.parse(Data(c.bytes), file: file).flatMap { node -> Result<CompiledPolicy, DiagnosticError> in
                guard let node else {
                    return .failure(DiagnosticError([.error(.emptyDocument, "empty", at: nil, help: "x")]))
                }
                return PolicyPipeline.prepareForEval(node).map(\.compiled)
            }
            guard case let .failure(e) = result else { continue }
            refused += 1
            let errors = e.diagnostics.filter { $0.severity == .error }
            #expect(!errors.isEmpty, "\(c.name): refused without an error")
            if c.bytes.isEmpty { continue }
            for d in errors where d.code != .emptyDocument {
                #expect(d.location != nil, "\(c.name): \(d.code) has no location")
            }
            #expect(errors.contains { $0.help != nil }, "\(c.name): no hint in \(errors.map { "\($0.code): \($0.message)" })")
        }
        #expect(cases.count > 800)
        #expect(refused > cases.count / 2, "most cases must be refused: \(refused) of \(cases.count)")
    }
}
