import Foundation
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The request body readers' contract, which the fuzz target `FuzzRequestBody` checks on
/// random bytes (`RequestBodyCheck`): the fast reader reads what the located reader reads or
/// falls back, and every refusal is a 400 with placed diagnostics. Here on the conformance
/// suite's states and events as every route's body, cut at every byte, and on the inputs the
/// fuzzer once found wrong.
@Suite("Request body readers")
struct RequestBodyCheckTests {
    /// `{"state", "event"}` and `{"event"}` bodies from every policy's conformance vectors.
    static let bodies: [String] = {
        var out: [String] = []
        for file in Fixtures.files(in: "spec/conformance/vectors", suffix: ".jsonl") {
            let lines = Fixtures.text(file).split(separator: "\n")
            for line in stride(from: 0, to: lines.count, by: 211).map({ lines[$0] }) {
                guard let v = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let state = v["state"], let event = v["event"],
                    let both = try? JSONSerialization.data(withJSONObject: ["state": state, "event": event], options: .sortedKeys),
                    let one = try? JSONSerialization.data(withJSONObject: ["event": event], options: .sortedKeys)
                else { continue }
                out += [String(decoding: both, as: UTF8.self), String(decoding: one, as: UTF8.self)]
            }
        }
        return out
    }()

    @Test("every conformance state and event, as each route's body, whole and cut at every byte")
    func conformance() {
        #expect(Self.bodies.count > 200)
        var problems: [String] = []
        for body in Self.bodies {
            let bytes = Array(body.utf8)
            problems += RequestBodyCheck.problems(bytes)
            for cut in stride(from: 0, to: bytes.count, by: 7) { problems += RequestBodyCheck.problems(Array(bytes[..<cut])) }
        }
        let batch = "{\"items\":[" + Self.bodies.prefix(40).joined(separator: ",") + ",{\"event\":{}}]}"
        problems += RequestBodyCheck.problems(Array(batch.utf8))
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }
}
