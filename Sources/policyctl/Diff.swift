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
            facts and timing, and evaluates both versions there (docs/diff.md). The \
            changes of outcome are listed with those that let more in first (a more permissive \
            decision, or none where there was one), each with its first class in words and the \
            run that reaches it; with `--scenarios DIR` each run is also written as a scenario \
            file against the new version, whose last step is the one the versions decide otherwise.
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
                let text = Self.scenario(
                    d, number: i + 1, old: a.compiled, new: b.compiled, policy: Verify.relativePath(of: b.path, from: dir))
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
            print(Self.render(report, old: old, new: new))
            if let impact { print(impact.human) }
        }
        if !report.equivalent { throw Exit.failures }
    }

    /// The report for people: the header names the two files as given; the changes of outcome
    /// that let more in come first (`DiffReport.differences`).
    static func render(_ r: DiffReport, old: String, new: String) -> String {
        let explored = "\(r.states) states of the old version explored"
        guard r.exhaustive || !r.differences.isEmpty else {
            return "\(old) -> \(new): the exploration stopped at its state limit (\(explored)): nothing is known"
        }
        if r.differences.isEmpty { return "\(old) -> \(new): equivalent, every event is decided alike (\(explored))" }
        // One entry per change of outcome; the (state, event) pairs it happens in listed together.
        var order: [String] = []
        var groups: [String: [PolicyDifference]] = [:]
        for d in r.differences {
            let key = change(d)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(d)
        }
        let more = order.filter { groups[$0]?.first?.letsMoreIn == true }.count
        var lines = [
            "\(old) -> \(new): \(order.count) change\(order.count == 1 ? "" : "s") of outcome, in \(r.differences.count) (state, event) classes"
                + " (\(explored)" + (r.exhaustive ? ")" : "; stopped at the state limit: there may be more)")
                + (order.count == 1
                    ? (more == 1 ? "; it lets more in" : "; it does not let more in") : "; \(more) of \(order.count) changes let more in")
        ]
        for (i, key) in order.enumerated() {
            lines += entry(i + 1, key, groups[key] ?? [])
        }
        return lines.joined(separator: "\n")
    }

    /// A change of outcome in words: `allow (within_limits) becomes wipe (offline_window_exceeded)`;
    /// when the decision and the reason stay, what changes instead (`wipe (refresh_token_invalid),
    /// notice delay 5s becomes 4s`).
    static func change(_ d: PolicyDifference) -> String {
        func show(_ s: PolicyDifference.Side) -> String { "\(s.decision?.rawValue ?? "no decision") (\(s.reason))" }
        if d.old.decision != d.new.decision || d.old.reason != d.new.reason { return "\(show(d.old)) becomes \(show(d.new))" }
        let parts = d.changes.map { "\($0.field) \($0.old) becomes \($0.new)" }
        return ([show(d.old)] + (parts.isEmpty ? ["alike but for the next session's times"] : parts)).joined(separator: ", ")
    }

    /// One change of outcome: its (state, event) pairs, its first class in words, both deciding
    /// transitions, and the run to it.
    static func entry(_ number: Int, _ key: String, _ list: [PolicyDifference]) -> [String] {
        let d = list[0]
        var pairs: [String] = []
        for x in list where !pairs.contains("`\(x.event.rawValue)` in `\(x.from.rawValue)`") {
            pairs.append("`\(x.event.rawValue)` in `\(x.from.rawValue)`")
        }
        var lines = [
            "  \(number). \(d.letsMoreIn ? "lets more in: " : "")\(key)",
            "     for \(pairs.prefix(6).joined(separator: ", "))\(pairs.count > 6 ? " and \(pairs.count - 6) more" : "")",
            "     first: `\(d.event.rawValue)` in `\(d.from.rawValue)`, \(d.when)",
            "     old: \(d.old.check) [\(d.old.levers.joined(separator: ", "))]",
            "     new: \(d.new.check) [\(d.new.levers.joined(separator: ", "))]",
        ]
        if d.steps.count > 1 {
            lines.append("     reached by:" + (d.concrete ? "" : " (approximate times)"))
            for (j, s) in d.steps.dropLast().enumerated() {
                let otherwise = j == d.scenarioStart - 1 ? "   (the new version decides this step otherwise)" : ""
                lines.append(
                    "       \(j + 1). \(s.event.time)  \(Verify.describe(s.event)) -> \(s.decision?.rawValue ?? "none")\(otherwise)")
            }
        }
        if let last = d.steps.last { lines.append("     the step: \(last.event.time)  \(Verify.describe(last.event))") }
        return lines
    }

    /// A difference as a scenario file against the new version: every step expects what the
    /// new version decides, the last also each other part of the outcome the old one gives
    /// otherwise, so the file passes on the new version and fails on the old one at its last
    /// step. When the new version decides an earlier step of the run otherwise, the file starts
    /// from the session the old version leaves after that step.
    static func scenario(_ d: PolicyDifference, number: Int, old: CompiledPolicy, new: CompiledPolicy, policy: String) -> String {
        let steps = d.steps[d.scenarioStart...]
        var lines = [
            "# Difference \(number), written by `policyctl diff`: `\(d.event.rawValue)` in `\(d.from.rawValue)`, \(d.when).",
            "# The old version decides \(d.old.decision?.rawValue ?? "none") (\(d.old.reason)); this file expects the new one.",
        ]
        if d.scenarioStart > 0 {
            lines.append(
                "# It starts from the session the old version leaves after \(d.scenarioStart) step\(d.scenarioStart == 1 ? "" : "s"),"
                    + " the last of which the new version decides otherwise.")
        }
        lines += [
            "policy: \(policy)",
            "scenarios:",
            "  - name: \"difference \(number): \(d.event.rawValue) in \(d.from.rawValue)\"",
            "    start: \(steps.first!.event.time)",
        ]
        var state = SessionState.signedOut
        if let s = d.startState {
            lines.append("    state: \(stateLine(s))")
            state = s
        }
        lines.append("    steps:")
        for (i, s) in zip(steps.indices, steps) {
            let o = new.evaluate(state, s.event)
            lines += Verify.stepLines(s.event)
            var expect = "decision: \(o.decision?.rawValue ?? "none"), reason: \(o.reason), state: \(o.state.state.rawValue)"
            if i == d.steps.count - 1 { expect += otherwise(o, old.evaluate(state, s.event)) }
            lines.append("        expect: { \(expect) }")
            state = o.state
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A session as a scenario's `state:` mapping: its machine state and every field it has.
    static func stateLine(_ s: SessionState) -> String {
        var fields = ["state: \(s.state.rawValue)"]
        if let u = s.user { fields.append("user: \(u)") }
        if let d = s.device { fields.append("device: \(d)") }
        if let m = s.authMode { fields.append("auth_mode: \(m.rawValue)") }
        let times: [(String, Timestamp?)] = [
            ("last_idp_login", s.lastIdPLogin), ("last_online", s.lastOnline), ("last_activity", s.lastActivity),
            ("highest_time", s.highestTime),
        ]
        for case let (key, t?) in times { fields.append("\(key): \(t)") }
        if s.readOnly { fields.append("read_only: true") }
        if s.biometricLocked { fields.append("biometric_locked: true") }
        let f = s.failures
        if f != .init() {
            fields.append("failures: { biometric: \(f.biometric), offline_login: \(f.offlineLogin), idp_login: \(f.idpLogin) }")
        }
        return "{ " + fields.joined(separator: ", ") + " }"
    }

    /// The expectations, past decision, reason and state, of each part of `new` that `old` gives otherwise.
    static func otherwise(_ new: Outcome, _ old: Outcome) -> String {
        var out = ""
        if new.message != old.message {
            out += ", message: \"\(new.message.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
        }
        if new.notices != old.notices { out += ", notices: [\(new.notices.names.joined(separator: ", "))]" }
        if new.scope != old.scope { out += ", scope: \(new.scope?.rawValue ?? "none")" }
        if new.authMode != old.authMode { out += ", auth_mode: \(new.authMode?.rawValue ?? "null")" }
        if new.noticeDelay != old.noticeDelay, let t = new.noticeDelay { out += ", notice_delay: \(t.seconds)s" }
        if new.state != old.state { out += ", session: \(Verify.sessionLine(new.state))" }
        return out
    }
}
