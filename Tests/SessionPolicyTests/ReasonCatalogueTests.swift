import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import Testing

/// `docs/reasons.md` lists every reason and notice the engine gives, with the engine's messages.
@Suite("Reason catalogue")
struct ReasonCatalogueTests {
    static let doc = Fixtures.text("docs/reasons.md")

    /// The first cell of every row of the table under `heading`.
    static func codes(under heading: String) -> [String] {
        guard let start = doc.range(of: heading) else { return [] }
        var out: [String] = []
        for line in doc[start.upperBound...].split(separator: "\n").dropFirst(2) {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("| `") else { continue }
            out.append(String(line.dropFirst(3).prefix { $0 != "`" }))
        }
        return out
    }

    @Test("every built-in reason is documented once, with its message, and nothing else is")
    func reasons() {
        let documented = Self.codes(under: "## Reasons")
        #expect(documented.count == Set(documented).count, "a reason is listed twice")
        #expect(Set(documented) == Set(Reason.builtIn.map(\.0.rawValue)))
        for (reason, message) in Reason.builtIn {
            let row = Self.doc.split(separator: "\n").first { $0.hasPrefix("| `\(reason.rawValue)` |") } ?? ""
            #expect(row.contains(message), "the row of `\(reason)` does not quote its message")
        }
    }

    @Test("every message that follows the decision is documented, and nothing else is")
    func messagesByDecision() {
        let rows = Self.doc.split(separator: "\n").drop { !$0.hasPrefix("## Messages by decision") }.dropFirst()
            .prefix { !$0.hasPrefix("## ") }.filter { $0.hasPrefix("| `") }
        let documented = rows.map { row in
            row.split(separator: "|").map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            }
        }
        let engine = Reason.byDecision.map { [$0.0.rawValue, $0.1?.rawValue ?? "none", $0.2] }
        #expect(documented == engine)
        #expect(!engine.isEmpty)
    }

    @Test("every notice is documented once, and nothing else is")
    func notices() {
        let documented = Self.codes(under: "## Notices")
        #expect(documented.sorted() == Notices.named.map(\.0).sorted())
    }

    @Test("every reason a shipped machine gives, besides its rules' own, is built in", arguments: Fixtures.files(in: "policies"))
    func shippedReasons(_ path: String) throws {
        let name = String(path.dropFirst("policies/".count).dropLast(".yaml".count))
        let p = try Fixtures.policy(name)
        let ruleReasons = Set(p.policy.rules.map(\.then.reason))
        let builtIn = Set(Reason.builtIn.map(\.0))
        for t in p.machine.transitions where !ruleReasons.contains(t.action.reason) {
            #expect(builtIn.contains(t.action.reason), "#\(t.id) gives `\(t.action.reason)`")
        }
    }
}
