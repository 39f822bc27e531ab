// `policyctl diff`'s exploration (Differ.diff) of every ordered pair of policies shipped in
// `policies/`, beside `policyctl verify`'s (Verifier.verify) of each policy, in the same run: the
// bar is that a diff takes at most twice the verify of the larger policy of its pair.
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
        metrics: [.wallClock, .cpuTotal, .peakMemoryResident], timeUnits: .milliseconds, warmupIterations: 0,
        maxDuration: .seconds(60), maxIterations: 3)
    for (name, policy) in policies {
        Benchmark("verify/\(name)") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(Verifier.verify(policy)) }
        }
    }
    for (a, old) in policies {
        for (b, new) in policies where a != b {
            Benchmark("diff/\(a)/\(b)") { benchmark in
                for _ in benchmark.scaledIterations { blackHole(Differ.diff(old, new)) }
            }
        }
    }
}
