// Benchmarks of the SessionPolicy engine: evaluation (the hot path), evaluation with an
// explanation trace, and policy compilation, for every policy shipped in `policies/`.
//
// Run from `Benchmarks/`:  swift package benchmark --no-progress --format markdown
// Figures and commands: Benchmarks/README.md.

import Benchmark
import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML

// MARK: - Finding the shipped policies

/// Prints a line to standard error (warnings about the policies found).
func warn(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// The folder holding the shipped policies: `$SESSION_POLICY_DIR` if set, else the first
/// `policies/` folder with YAML files found walking up from this source file (the repository
/// root is three levels up: Benchmarks/Benchmarks/Evaluation/), else from the current directory.
func policiesDirectory() -> URL? {
    let fm = FileManager.default
    func hasPolicies(_ dir: URL) -> Bool {
        var isDir: ObjCBool = false
        guard fm.fileExists(atPath: dir.path, isDirectory: &isDir), isDir.boolValue else { return false }
        let names = (try? fm.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.contains { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
    }
    if let env = ProcessInfo.processInfo.environment["SESSION_POLICY_DIR"], !env.isEmpty {
        let dir = URL(fileURLWithPath: env, isDirectory: true)
        if hasPolicies(dir) { return dir }
        warn("warning: SESSION_POLICY_DIR=\(env) holds no .yaml files; searching the usual places")
    }
    let starts = [
        URL(fileURLWithPath: #filePath).deletingLastPathComponent(),
        URL(fileURLWithPath: fm.currentDirectoryPath, isDirectory: true),
    ]
    for start in starts {
        var dir = start.standardizedFileURL
        for _ in 0..<8 {
            let candidate = dir.appendingPathComponent("policies", isDirectory: true)
            if hasPolicies(candidate) { return candidate }
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { break }
            dir = parent
        }
    }
    return nil
}

struct ShippedPolicy: Sendable {
    /// The file name without extension (`kobil-offline-token`).
    let name: String
    let path: String
    let text: String
    let compiled: CompiledPolicy
}

/// Every `*.yaml` / `*.yml` in the policies folder, sorted, compiled. A file that does not
/// compile is reported and skipped rather than stopping the whole run.
func loadShippedPolicies() -> [ShippedPolicy] {
    guard let dir = policiesDirectory() else {
        warn("error: no policies/ folder found (set SESSION_POLICY_DIR)")
        return []
    }
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
        .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
        .sorted()
    var result: [ShippedPolicy] = []
    for file in names {
        let path = dir.appendingPathComponent(file).path
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            warn("warning: cannot read \(path); skipped")
            continue
        }
        switch PolicyFile.compile(text: text, file: path) {
        case let .success(compiled):
            let stem = (file as NSString).deletingPathExtension
            result.append(ShippedPolicy(name: stem, path: path, text: text, compiled: compiled))
        case let .failure(error):
            warn("warning: \(path) does not compile; skipped: \(error)")
        }
    }
    return result
}

// MARK: - Evaluation cases

struct EvaluationCase: Sendable {
    let name: String
    let state: SessionState
    let event: Event
    /// The decisions this case is meant to produce (checked once, before measuring).
    let expected: [Decision?]
}

let day: Int64 = 86_400
/// The event time of every case.
let now = Timestamp.parse("2026-03-01T09:00:00Z")!
let device = Event.DeviceFacts(id: "phone-1", keystore: .hardware, integrity: .ok)

/// The cases for one policy, derived from its limits so that "within limits" and "past the
/// limit" stay true for policies added later.
func cases(for policy: CompiledPolicy) -> [EvaluationCase] {
    let p = policy.policy
    let limits = [p.session.max, p.session.idle, p.offline.window].compactMap { $0?.seconds }
    // Well inside every limit (half the shortest; 2 days when the policy sets none).
    let within = max(4, (limits.min() ?? 4 * day) / 2)
    func resting(_ mode: AuthMode, _ state: MachineState = .suspended) -> SessionState {
        SessionState(
            state: state, user: "alice", device: "phone-1", authMode: mode,
            lastIdPLogin: now.subtracting(.seconds(within)),
            lastOnline: now.subtracting(.seconds(within / 2)),
            lastActivity: now.subtracting(.seconds(within / 4)),
            highestTime: now.subtracting(.seconds(within / 4)))
    }
    let launch = Event(.launch, at: now, network: .offline, user: "alice", device: device)

    var list: [EvaluationCase] = [
        // Suspended session within every limit, mode none: the full login-attempt chain, ends in allow.
        EvaluationCase(name: "launch-none-allow", state: resting(.unprotected), event: launch, expected: [.allow]),
        // Same with mode biometric: the full chain, ends in require_biometric.
        EvaluationCase(
            name: "launch-biometric-require", state: resting(.biometric), event: launch,
            expected: [.requireBiometric]),
        // The biometric prompt succeeded: the chain of the awaiting_biometric state, ends in allow.
        EvaluationCase(
            name: "biometric-succeeded-allow", state: resting(.biometric, .awaitingBiometric),
            event: Event(.biometricSucceeded, at: now, user: "alice", device: device),
            expected: [.allow]),
        // The shortest path: one unguarded transition (lower bound of the per-event cost).
        EvaluationCase(
            name: "background", state: resting(.biometric, .active),
            event: Event(.background, at: now, user: "alice", device: device),
            expected: [nil]),
    ]
    if let longest = limits.max() {
        // Past the longest limit (session max, idle or offline window): idp_login or wipe.
        let past = longest + day
        let expired = SessionState(
            state: .suspended, user: "alice", device: "phone-1", authMode: .biometric,
            lastIdPLogin: now.subtracting(.seconds(past)), lastOnline: now.subtracting(.seconds(past)),
            lastActivity: now.subtracting(.seconds(past)), highestTime: now.subtracting(.seconds(past)))
        list.insert(
            EvaluationCase(name: "launch-expired", state: expired, event: launch, expected: [.idpLogin, .wipe]),
            at: 2)
    } else {
        warn("note: \(p.name) sets no session max, idle limit or offline window: no launch-expired case")
    }
    return list
}

func show(_ d: Decision?) -> String { d?.rawValue ?? "none" }

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 10,
        maxDuration: .seconds(2),
        maxIterations: 1_000_000
    )

    let policies = loadShippedPolicies()
    if policies.isEmpty { warn("error: no policy to benchmark") }

    // The cost of the measuring loop itself (copy the state through identity(), black-hole a
    // value), per event: subtract it from evaluate/ figures for the evaluator's own cost.
    let loopState = SessionState(
        state: .suspended, user: "alice", device: "phone-1", authMode: .unprotected,
        lastIdPLogin: now, lastOnline: now, lastActivity: now, highestTime: now)
    handWrittenLoopBenchmark()
    Benchmark("evaluate-loop-overhead", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(identity(loopState))
        }
    }

    for shipped in policies {
        let compiled = shipped.compiled

        // 1. evaluate/<policy>/<case>: 1,000 evaluations per iteration (scaling factor kilo), so
        // the default (scaled) output is per event: time in ns per event, mallocs per event.
        for c in cases(for: compiled) {
            let outcome = compiled.evaluate(c.state, c.event)
            if !c.expected.contains(outcome.decision) {
                // The policy does not allow this case (for example no biometric offline mode):
                // measuring it under its name would mislabel the figure.
                warn(
                    "note: evaluate/\(shipped.name)/\(c.name) skipped: the policy decides \(show(outcome.decision)) "
                        + "(\(outcome.reason)), not \(c.expected.map(show).joined(separator: " or "))")
                continue
            }
            Benchmark(
                "evaluate/\(shipped.name)/\(c.name)",
                configuration: .init(scalingFactor: .kilo)
            ) { benchmark in
                let state = c.state
                let event = c.event
                for _ in benchmark.scaledIterations {
                    // identity() is opaque to the optimizer: the evaluation cannot be hoisted.
                    blackHole(compiled.evaluate(identity(state), event))
                }
            }
            // The same case through the in-place API: the caller's state is updated, the verdict
            // carries no state. Each iteration starts again from the case's state.
            Benchmark(
                "evaluate-in-place/\(shipped.name)/\(c.name)",
                configuration: .init(scalingFactor: .kilo)
            ) { benchmark in
                let state = c.state
                let event = c.event
                for _ in benchmark.scaledIterations {
                    var session = identity(state)
                    blackHole(compiled.evaluate(&session, event))
                }
            }
        }

        // 2. evaluate-explain/<policy>: the same evaluation with its trace, on the longest chain
        // (launch-none-allow). One evaluation per iteration.
        if let allow = cases(for: compiled).first {
            Benchmark("evaluate-explain/\(shipped.name)") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(compiled.explain(identity(allow.state), allow.event))
                }
            }
        }

        // 3. compile/<policy>: YAML text -> CompiledPolicy (parse, validate, compile).
        let text = shipped.text
        let path = shipped.path
        Benchmark("compile/\(shipped.name)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(PolicyFile.compile(text: identity(text), file: path))
            }
        }

        // The three stages of compile/, separately.
        // compile-yaml/: YAML text -> located syntax (one pass over libyaml's events).
        Benchmark("compile-yaml/\(shipped.name)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(ReaderProbes.yamlSyntax(identity(text), file: path))
            }
        }
        // compile-validate/: located syntax -> Policy (the validator, `PolicyLoader`).
        if let syntax = ReaderProbes.yamlSyntax(text, file: path) {
            Benchmark("compile-validate/\(shipped.name)") { benchmark in
                for _ in benchmark.scaledIterations {
                    blackHole(ReaderProbes.validate(identity(syntax)))
                }
            }
        }
        // compile-machine/: ValidatedPolicy -> CompiledPolicy (state machine build; validation is
        // `compile-validate/`, done once).
        let validated = compiled.validated
        Benchmark("compile-machine/\(shipped.name)") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(CompiledPolicy(identity(validated)))
            }
        }
    }
}
