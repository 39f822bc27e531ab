// `policyctl verify`'s exploration (Verifier.verify) of every policy shipped in `policies/`:
// wall clock per policy, the figure docs/verify.md quotes (goal: under 1 s each).
import Benchmark
import Foundation
import SessionPolicy
import SessionPolicyVerify
import SessionPolicyYAML

/// The shipped policies, from the repository root three levels above this file.
let policies: [(String, CompiledPolicy)] = {
    let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../policies").standardizedFileURL
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
    return names.compactMap { name in
        guard let loaded = try? PolicyFile.load(dir.appendingPathComponent(name).path).get() else { return nil }
        return (String(name.dropLast(5)), loaded.compiled)
    }
}()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .peakMemoryResident], timeUnits: .milliseconds, warmupIterations: 0, maxDuration: .seconds(60),
        maxIterations: 3)
    for (name, policy) in policies {
        Benchmark("verify/\(name)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(Verifier.verify(policy)) }
        }
    }
}
