// Benchmarks of the server's batch path: FastJSON decode -> CompiledPolicy.evaluate ->
// FastJSON encode of a 1,000-item batch, each stage alone, and Foundation's JSONDecoder /
// JSONEncoder on the same bytes for comparison.
//
// One iteration is one batch of 1,000 items, so the time in µs per iteration is the time in ns
// per item, and mallocs per iteration / 1,000 are mallocs per item.
//
// Run from `Benchmarks/`:  swift package benchmark --no-progress --format markdown --target Codec
// Figures and commands: Benchmarks/README.md.

import Benchmark
import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyJSON

/// Prints a line to standard error.
func warn(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// The repository root: `$SESSION_POLICY_ROOT` if set, else the first folder holding both
/// `policies/` and `examples/` found walking up from this source file, then from the current
/// directory.
func repositoryRoot() -> URL? {
    let fm = FileManager.default
    func isRoot(_ dir: URL) -> Bool {
        fm.fileExists(atPath: dir.appendingPathComponent("policies").path)
            && fm.fileExists(atPath: dir.appendingPathComponent("examples").path)
    }
    if let env = ProcessInfo.processInfo.environment["SESSION_POLICY_ROOT"], !env.isEmpty {
        let dir = URL(fileURLWithPath: env, isDirectory: true)
        if isRoot(dir) { return dir }
        warn("warning: SESSION_POLICY_ROOT=\(env) has no policies/ and examples/; searching the usual places")
    }
    for start in [URL(fileURLWithPath: #filePath).deletingLastPathComponent(),
                  URL(fileURLWithPath: fm.currentDirectoryPath, isDirectory: true)] {
        var dir = start.standardizedFileURL
        for _ in 0..<8 {
            if isRoot(dir) { return dir }
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { break }
            dir = parent
        }
    }
    return nil
}

/// The batch every benchmark uses: the (state, event) pairs met running the shipped scenarios,
/// repeated to 1,000 items, written by JSONEncoder with sorted keys; and the policy evaluating it.
struct Batch: Sendable {
    static let size = 1000
    let policy: CompiledPolicy
    let body: [UInt8]
    let requests: [FastJSON.Request]
    let outcomes: [Outcome]
}

struct Item: Codable {
    var state: SessionState?
    var event: Event
}

struct Items: Codable {
    var items: [Item]
}

struct Results: Codable {
    var results: [Outcome]
}

func loadBatch(policy name: String) -> Batch? {
    guard let root = repositoryRoot() else {
        warn("error: no repository root with policies/ and examples/ found (set SESSION_POLICY_ROOT)")
        return nil
    }
    let input = CheckInput.load(
        policies: [root.appendingPathComponent("policies").path], scenarios: [root.appendingPathComponent("examples").path])
    guard let policy = input.policies[name]?.compiled else {
        warn("error: no policy \(name) in \(root.path)/policies")
        return nil
    }
    var corpus: [Item] = []
    for scenario in input.scenarios {
        guard let p = input.policies[scenario.policy]?.compiled else { continue }
        var state = scenario.initial
        for step in scenario.steps {
            guard case let .success(event) = step.event else { continue }
            corpus.append(Item(state: state, event: event))
            state = p.evaluate(state, event).state
        }
    }
    guard !corpus.isEmpty else { return nil }
    let items = (0..<Batch.size).map { corpus[$0 % corpus.count] }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let body = [UInt8](try! encoder.encode(Items(items: items)))
    guard let requests = readBatch(body), requests.count == Batch.size else {
        warn("error: FastJSON does not read the benchmark batch")
        return nil
    }
    let outcomes = requests.map { policy.evaluate($0.state, $0.event) }
    warn("note: codec batch: \(corpus.count) distinct requests from the shipped scenarios, \(Batch.size) items, "
         + "\(body.count) bytes (\(body.count / Batch.size) per item), policy \(name)")
    return Batch(policy: policy, body: body, requests: requests, outcomes: outcomes)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        warmupIterations: 5,
        maxDuration: .seconds(2),
        maxIterations: 10_000
    )
    guard let batch = loadBatch(policy: "kobil-offline-token") else { return }
    let policy = batch.policy
    let body = batch.body
    let data = Data(body)
    let requests = batch.requests
    let outcomes = batch.outcomes

    // The whole batch endpoint minus HTTP: bytes in, bytes out.
    Benchmark("codec/pipeline-1000/fast") { benchmark in
        for _ in benchmark.scaledIterations {
            let items = readBatch(identity(body))!
            var results: [Outcome] = []
            results.reserveCapacity(items.count)
            for item in items { results.append(policy.evaluate(item.state, item.event)) }
            blackHole(FastJSON.batchResponse(results))
        }
    }
    Benchmark("codec/pipeline-1000/foundation") { benchmark in
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for _ in benchmark.scaledIterations {
            let items = try! JSONDecoder().decode(Items.self, from: identity(data))
            let results = items.items.map { policy.evaluate($0.state ?? SessionState(), $0.event) }
            blackHole(try! encoder.encode(Results(results: results)))
        }
    }

    // The stages alone.
    Benchmark("codec/decode-1000/fast") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(readBatch(identity(body))) }
    }
    Benchmark("codec/decode-1000/foundation") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try! JSONDecoder().decode(Items.self, from: identity(data))) }
    }
    Benchmark("codec/evaluate-1000") { benchmark in
        for _ in benchmark.scaledIterations {
            var results: [Outcome] = []
            results.reserveCapacity(requests.count)
            for item in identity(requests) { results.append(policy.evaluate(item.state, item.event)) }
            blackHole(results)
        }
    }
    Benchmark("codec/encode-1000/fast") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(FastJSON.batchResponse(identity(outcomes))) }
    }
    Benchmark("codec/encode-1000/foundation") { benchmark in
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for _ in benchmark.scaledIterations { blackHole(try! encoder.encode(Results(results: identity(outcomes)))) }
    }
}

/// The fast reader on `body` within the limits the server gives a batch of this size.
@inline(__always) func readBatch(_ body: [UInt8]) -> [FastJSON.Request]? {
    body.withUnsafeBytes { FastJSON.batchRequest($0, maxBytes: 1 << 20, maxItems: Batch.size) }
}
