import Foundation
import FuzzShared
import SessionPolicy
import SessionPolicyYAML

/// The policy loader, as `policyctl compile` and `check` run it on a file's bytes (YAML, or JSON
/// when the text starts with `{`): a refusal is located; a policy that loads is linted, and one
/// input in eight (chosen by the sum of its bytes, so a replay takes the same path) is written as
/// a machine document that must read back to its own text and decide a launch alike from the
/// compiled policy and from the document. Writing and reading the document back takes about
/// three quarters of an execution; the sample keeps the loader, the target's subject, fast.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let file = "fuzz.yaml"
    let parsed: SourceFile.Parsed = DocumentFormat.parse(bytes, file: file).map {
        (node: $0, text: String(decoding: bytes, as: UTF8.self))
    }
    switch PolicyFile.load(file, parsed: parsed) {
    case let .failure(error):
        FuzzOracle.checkRefusal(error.diagnostics, file: file, text: String(decoding: bytes, as: UTF8.self))
    case let .success(loaded):
        let compiled = loaded.compiled
        _ = PolicyLinter.findings(for: compiled.validated)
        guard bytes.reduce(0, { $0 &+ Int($1) }) % 8 == 0 else { return 0 }
        let document = compiled.machineDocument
        let machine: PolicyMachine
        do {
            machine = try PolicyMachine(document: Data(document.utf8))
        } catch {
            FuzzOracle.fail("the machine document of a compiled policy is refused: \(error.diagnostics)")
        }
        if machine.document != document { FuzzOracle.fail("the machine document does not read back to its own text") }
        let t = Timestamp(millisecondsSinceEpoch: 1_772_355_600_000)
        for event in [
            Event(.launch, at: t, network: .offline, user: "alice"),
            Event(.launch, at: t, network: .online, user: "alice"),
        ] {
            if compiled.machine.evaluate(SessionState(), event) != machine.evaluate(SessionState(), event) {
                FuzzOracle.fail("the compiled policy and its machine document decide \(event) differently")
            }
        }
    }
    return 0
}
