import Foundation
import FuzzShared
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML

/// The policy loader, as `policyctl compile` and `check` run it on a file's bytes (YAML, or JSON
/// when the text starts with `{`): a refusal is located; a policy that loads is compiled and
/// linted. The machine document of a compiled policy is not written here: writing, hashing and
/// reading it back took three quarters of an execution under the sanitizers, and the inputs that
/// took that path gathered in the corpus (they reach more code); its round trip is a property
/// test over random policies (`MachineDocumentTests`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let file = "fuzz.yaml"
    switch ReaderProbes.policy(bytes, file: file) {
    case let .failure(error):
        FuzzOracle.checkRefusal(error.diagnostics, file: file, text: String(decoding: bytes, as: UTF8.self))
    case let .success(loaded):
        _ = ReaderProbes.lintWarnings(loaded.compiled)
    }
    return 0
}
