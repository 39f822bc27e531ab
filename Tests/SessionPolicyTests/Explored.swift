import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyVerify
import SessionPolicyYAML

/// The shipped policies and the biometric-only rendering fixture, each compiled and explored
/// once for the whole test process, two at a time: an exploration takes seconds in a debug
/// build, and the coverage, picture and rendering suites all need the reachable transitions.
enum Explored {
    /// A policy file as `policyctl compile` and `check --coverage` see it.
    struct Policy: Sendable {
        let policy: CompiledPolicy
        /// The transitions some run of events takes; nil when the exploration stopped at its limit.
        let live: Set<Int>?
    }

    static let paths = Fixtures.files(in: "policies") + ["Tests/Fixtures/render/biometric-only.yaml"]

    /// Each path's policy, explored; a path that does not load is missing.
    static let byPath: [String: Policy] = {
        final class Results: @unchecked Sendable {
            let lock = NSLock()
            var values: [String: Policy] = [:]
        }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: paths.count) { i in
            guard case let .success(loaded) = PolicyFile.load(Fixtures.path(paths[i])) else { return }
            let explored = Policy(policy: loaded.compiled, live: Verifier.reachableTransitions(loaded.compiled))
            results.lock.withLock { results.values[paths[i]] = explored }
        }
        return results.values
    }()

    /// The shipped policies' reachable transitions by policy name, as `check --coverage` finds them.
    static var shippedReachable: [String: Set<Int>] {
        Dictionary(
            uniqueKeysWithValues: byPath.compactMap { path, p in
                path.hasPrefix("policies/") ? p.live.map { (p.policy.machine.name, $0) } : nil
            })
    }
}
