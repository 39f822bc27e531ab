import Foundation
import FuzzShared
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyYAML

/// The scenario loader, as `policyctl check` runs it on a scenario file's bytes beside the
/// shipped policies: a refusal is located; every scenario that loads runs to a result.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let file = "fuzz-scenarios.yaml"
    let text = String(decoding: bytes, as: UTF8.self)
    let input = ReaderProbes.scenarios(bytes, file: file, policies: FuzzOracle.shipped)
    if input.diagnostics.hasErrors {
        FuzzOracle.checkRefusal(input.diagnostics.filter { $0.severity == .error }, file: nil, text: text)
    }
    for scenario in input.scenarios {
        guard let loaded = input.policies[scenario.policy] else { FuzzOracle.fail("a scenario loaded without its policy") }
        _ = ScenarioRunner.run(scenario, against: loaded.compiled)
    }
    return 0
}
