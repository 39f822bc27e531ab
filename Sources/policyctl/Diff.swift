import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyVerify
import SessionPolicyYAML

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a new version of a policy decides otherwise, and where.",
        discussion: """
            Explores every session state the old version can reach, under every event, choice of \
            facts and timing, and evaluates both versions there (README, "policyctl diff"). Each \
            difference is printed once per pair of deciding transitions, at its first class, in \
            words, with the shortest run that reaches it; with `--scenarios DIR` each run is also \
            written as a scenario file against the new version.
            With `--storage URL` (the server's `sqlite:PATH` or `postgres://...`), it also reads every \
            stored session of the old version's policy, read-only, and evaluates both versions for \
            each session's next launch, online and offline, at --at (default: now), from a device \
            with a hardware keystore that passes its integrity check; the sessions decided \
            otherwise are counted by change. The store is read by `policyctl-sessions`, built by \
            the server package (next to policyctl, or on the PATH).
            Exit codes: 0 the versions decide alike; 1 they differ (or the exploration did not \
            finish); 2 invalid input, or the storage cannot be read; 64 usage error.
            """)

    @Argument(help: "The old version's policy file.")
    var old: String

    @Argument(help: "The new version's policy file.")
    var new: String

    @Option(help: "Output format: human or json.")
    var format: OutputFormat = .human

    @Option(help: "Write each difference as a scenario file (against the new version) into this directory.")
    var scenarios: String?

    @Option(help: "Stop exploring after this many abstract states (nothing is then proved).")
    var stateLimit = 100_000

    @Option(help: "The server's storage, to count the stored sessions whose next launch the new version decides otherwise.")
    var storage: String?

    @Option(help: "With --storage: the time of those launches, RFC 3339 (default: now).")
    var at: String?

    func validate() throws {
        if at != nil && storage == nil { throw ValidationError("`--at` needs `--storage`") }
        if let at, Timestamp.parse(at) == nil {
            throw ValidationError("`--at` must be a time like `2026-03-01T09:00:00Z`, not `\(at)`")
        }
    }

    func run() throws {
        let (oldLoaded, _) = try PolicyFile.loadAll([old], json: format == .json)
        let (newLoaded, _) = try PolicyFile.loadAll([new], json: format == .json)
        guard let a = oldLoaded.first, let b = newLoaded.first else { throw Exit.invalidInput }
        // The store first: a storage that cannot be read fails before seconds of exploring.
        var impact: StorageImpact?
        if let storage {
            let time = at.flatMap(Timestamp.parse) ?? Timestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000))
            do {
                impact = try StorageImpact.measure(old: a.compiled, new: b.compiled, storage: storage, at: time)
            } catch let failure as StorageImpact.Failure {
                var text = failure.message.hasPrefix("error: ") ? failure.message : "error: \(failure.message)"
                if let help = failure.help { text += "\n  = help: \(help)" }
                FileHandle.standardError.write(Data((text + "\n").utf8))
                throw Exit.invalidInput
            }
        }
        let report = Differ.diff(a.compiled, b.compiled, stateLimit: stateLimit)
        if let dir = scenarios {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for (i, d) in report.differences.enumerated() where d.concrete {
                let path = (dir as NSString).appendingPathComponent("\(report.new)-difference-\(i + 1).yaml")
                let text = Self.scenario(d, number: i + 1, new: b.compiled, policy: Verify.relativePath(of: b.path, from: dir))
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
        if format == .json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var data = try encoder.encode(report)
            if let impact, var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
                object["impact"] = try JSONSerialization.jsonObject(with: encoder.encode(impact))
                data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            }
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(Self.render(report))
            if let impact { print(impact.human) }
        }
        if !report.equivalent { throw Exit.failures }
    }

    static func render(_ r: DiffReport) -> String {
        let explored = "\(r.states) states of the old version explored"
        guard r.exhaustive || !r.differences.isEmpty else {
            return "\(r.old) -> \(r.new): the exploration stopped at its state limit (\(explored)): nothing is known"
        }
        if r.differences.isEmpty { return "\(r.old) -> \(r.new): equivalent, every event is decided alike (\(explored))" }
        // One entry per change of outcome; the (state, event) pairs it happens in listed together.
        func show(_ s: PolicyDifference.Side) -> String { "\(s.decision?.rawValue ?? "no decision") (\(s.reason))" }
        var order: [String] = []
        var groups: [String: [PolicyDifference]] = [:]
        for d in r.differences {
            let key = "\(show(d.old)) becomes \(show(d.new))"
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(d)
        }
        var lines = [
            "\(r.old) -> \(r.new): \(order.count) change\(order.count == 1 ? "" : "s") of outcome, in \(r.differences.count) (state, event) classes"
                + " (\(explored)" + (r.exhaustive ? ")" : "; stopped at the state limit: there may be more)")
        ]
        for (i, key) in order.enumerated() {
            let list = groups[key] ?? []
            let d = list[0]
            var pairs: [String] = []
            for x in list where !pairs.contains("`\(x.event.rawValue)` in `\(x.from.rawValue)`") {
                pairs.append("`\(x.event.rawValue)` in `\(x.from.rawValue)`")
            }
            lines.append("  \(i + 1). \(key)")
            lines.append("     for \(pairs.prefix(6).joined(separator: ", "))\(pairs.count > 6 ? " and \(pairs.count - 6) more" : "")")
            lines.append("     first: `\(d.event.rawValue)` in `\(d.from.rawValue)`, \(d.when)")
            lines.append("     old: \(d.old.check) [\(d.old.levers.joined(separator: ", "))]")
            lines.append("     new: \(d.new.check) [\(d.new.levers.joined(separator: ", "))]")
            if d.steps.count > 1 {
                lines.append("     reached by:" + (d.concrete ? "" : " (approximate times)"))
                for (j, s) in d.steps.dropLast().enumerated() {
                    lines.append("       \(j + 1). \(s.event.time)  \(Verify.describe(s.event)) -> \(s.decision?.rawValue ?? "none")")
                }
            }
            if let last = d.steps.last { lines.append("     the step: \(last.event.time)  \(Verify.describe(last.event))") }
        }
        return lines.joined(separator: "\n")
    }

    /// A difference as a scenario file against the new version: every step expects what the
    /// new version decides; the last says what the old one decided.
    static func scenario(_ d: PolicyDifference, number: Int, new: CompiledPolicy, policy: String) -> String {
        var lines = [
            "# Difference \(number), written by `policyctl diff`: `\(d.event.rawValue)` in `\(d.from.rawValue)`, \(d.when).",
            "# The old version decides \(d.old.decision?.rawValue ?? "none") (\(d.old.reason)); this file expects the new one.",
            "policy: \(policy)",
            "scenarios:",
            "  - name: \"difference \(number): \(d.event.rawValue) in \(d.from.rawValue)\"",
            "    start: \(d.steps[0].event.time)",
            "    steps:",
        ]
        var state = SessionState.signedOut
        for s in d.steps {
            let o = new.evaluate(state, s.event)
            lines += Verify.stepLines(s.event)
            lines.append(
                "        expect: { decision: \(o.decision?.rawValue ?? "none"), reason: \(o.reason), state: \(o.state.state.rawValue) }")
            state = o.state
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
