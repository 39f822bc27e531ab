import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyVerify
import SessionPolicyYAML

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prove what a policy can never do, over every sequence and timing of events.",
        discussion: """
            Explores every session state each policy's compiled machine can reach from `signed_out`, \
            under every event, every choice of facts and every timing, and checks the built-in \
            properties (docs/verify.md, "What verify proves"). A broken property prints its shortest \
            counterexample; with `--counterexamples DIR` each is also written as a scenario file \
            that `policyctl check` runs and that fails at the violating step. Transitions no \
            reachable state takes are reported as dead, with their levers.
            Exit codes: 0 every property holds; 1 a property is broken (or the exploration did \
            not finish); 2 invalid input; 64 usage error.
            """)

    @Argument(help: "Policy files or directories.")
    var policies: [String]

    @Option(help: "Output format: human or json.")
    var format: OutputFormat = .human

    @Option(name: .customLong("property"), help: "A property file (docs/verify.md, \"User properties\"); may be repeated.")
    var propertyFiles: [String] = []

    @Option(help: "Write each counterexample as a scenario file into this directory.")
    var counterexamples: String?

    @Option(
        help: "Write into this directory, for each policy, a scenario file whose scenarios together take every reachable transition.")
    var covering: String?

    @Option(help: "Stop exploring a policy after this many abstract states (nothing is then proved).")
    var stateLimit = 100_000

    @Flag(help: "List every dead transition (the human output counts them by lever).")
    var dead = false

    @Flag(
        help:
            "Evaluate every step and every choice of facts with the engine, not one per class, and check each against verify's model (slower; CI runs it)."
    )
    var selfCheck = false

    func validate() throws {
        if policies.isEmpty { throw ValidationError("give at least one policy file or directory") }
    }

    func run() throws {
        let (loaded, _) = try PolicyFile.loadAll(policies, json: format == .json)
        let properties = try loadProperties(for: loaded.map(\.compiled))
        var reports: [(VerificationReport, Double, String)] = []
        for l in loaded {
            let started = DispatchTime.now().uptimeNanoseconds
            let report = Verifier.verify(
                l.compiled, stateLimit: stateLimit, covering: covering != nil, properties: properties, selfCheck: selfCheck)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            reports.append((report, seconds, l.path))
        }
        if let dir = counterexamples {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for (r, _, file) in reports {
                for p in r.properties {
                    guard let c = p.counterexample, c.concrete, !c.steps.isEmpty else { continue }
                    let path = (dir as NSString).appendingPathComponent("\(r.policy)-\(p.id).yaml")
                    // Relative to the directory, as covering scenarios and `diff --scenarios` write
                    // it: the files can be committed and run from another checkout.
                    let policyPath = Self.relativePath(of: file, from: dir)
                    try Self.scenario(c, property: p, policy: policyPath).write(toFile: path, atomically: true, encoding: .utf8)
                }
            }
        }
        if let dir = covering {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            for ((r, _, file), l) in zip(reports, loaded) where r.exhaustive {
                let path = (dir as NSString).appendingPathComponent("\(r.policy).yaml")
                let text = Self.coveringScenarios(r, machine: l.compiled, policy: Self.relativePath(of: file, from: dir))
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
        if format == .json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            struct Entry: Encodable {
                var report: VerificationReport
                var seconds: Double
            }
            let data = try encoder.encode(["policies": reports.map { Entry(report: $0.0, seconds: $0.1) }])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for (r, seconds, _) in reports { print(render(r, seconds: seconds)) }
        }
        if !reports.allSatisfy({ $0.0.holds }) { throw Exit.failures }
    }

    /// The properties of every `--property` file, checked against the attributes each policy
    /// declares; their diagnostics, exit 2 on an error.
    func loadProperties(for policies: [CompiledPolicy]) throws -> [UserProperty] {
        var out: [UserProperty] = []
        var problems: [Diagnostic] = []
        var sources: [String: String] = [:]
        for path in propertyFiles {
            switch SourceFile.syntax(path, what: "property file", start: PropertyLoader.start) {
            case let .failure(e):
                problems += e.diagnostics
                sources[path] = SourceFile.quotable(path)
            case let .success((root, text)):
                sources[path] = text
                let (properties, diagnostics) = PropertyLoader.load(root, file: path)
                problems += diagnostics
                out += properties
            }
        }
        var ids: Set<String> = []
        for p in out where !ids.insert(p.id).inserted {
            problems.append(
                .error(
                    .duplicateValue, "two property files have a property `\(p.id)`", at: p.location,
                    help: "give each property its own id"))
        }
        if !problems.hasErrors {
            for policy in policies { problems += PropertyLoader.check(out, against: policy) }
        }
        if !problems.isEmpty { emit(problems, sources: sources, json: format == .json) }
        if problems.hasErrors { throw Exit.invalidInput }
        return out
    }

    func render(_ r: VerificationReport, seconds: Double) -> String {
        var lines: [String] = []
        let verdict =
            !r.exhaustive
            ? "the exploration stopped at its state limit: nothing is proved"
            : r.holds ? "every property holds" : "\(r.properties.filter { $0.status == .violated }.count) broken"
        lines.append(
            "policy \(r.policy): \(r.states) states, \(r.steps) steps explored in \(String(format: "%.2f", seconds)) s; \(verdict)")
        let width = r.properties.map(\.id.count).max() ?? 0
        for p in r.properties {
            let status = p.status == .notApplicable ? "n/a" : p.status.rawValue
            lines.append(
                "  \(status.padding(toLength: 8, withPad: " ", startingAt: 0)) \(p.id.padding(toLength: width, withPad: " ", startingAt: 0))  \(p.sentence)"
            )
            if let c = p.counterexample {
                lines.append("      \(c.detail)" + (c.steps.isEmpty ? "" : ":"))
                for (i, s) in c.steps.enumerated() {
                    lines.append(
                        "      \(i + 1). \(s.event.time)  \(Self.describe(s.event)) -> \(s.decision?.rawValue ?? "none") (\(s.reason)), \(s.state.rawValue)"
                    )
                }
                if !c.concrete && !c.steps.isEmpty {
                    lines.append("      (verify found no concrete times for this path: the times shown are approximate)")
                }
            }
        }
        for i in r.inconsistencies { lines.append("  internal: \(i)") }
        guard r.exhaustive else {
            lines.append("  dead transitions: not known (the exploration did not finish)")
            return lines.joined(separator: "\n")
        }
        let byLever = Dictionary(grouping: r.deadTransitions, by: { $0.levers.first ?? "built-in" }).mapValues(\.count)
        lines.append(
            "  dead transitions: \(r.deadTransitions.count) of \(r.transitions)"
                + (byLever.isEmpty
                    ? "" : " (" + byLever.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"))
        if dead {
            for d in r.deadTransitions {
                let at = d.location.map { " \($0)" } ?? ""
                lines.append(
                    "    \(d.transition): `\(d.event.rawValue)` in `\(d.from.rawValue)`: \(d.check) [\(d.levers.joined(separator: ", "))]\(at)"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// An event in the words of a scenario step: `launch network=offline user=alice`.
    static func describe(_ e: Event) -> String {
        var parts = [e.kind.rawValue]
        for (k, v) in fields(e) { parts.append("\(k)=\(v)") }
        return parts.joined(separator: " ")
    }

    /// A scenario step's lines for an event, up to its `expect:`: its time, kind and facts.
    static func stepLines(_ e: Event) -> [String] {
        ["      - at: \(e.time)", "        event: \(e.kind.rawValue)"] + fields(e).map { "        \($0): \($1)" }
    }

    /// The facts an event carries, as scenario keys and values.
    static func fields(_ e: Event) -> [(String, String)] {
        var out: [(String, String)] = []
        if let n = e.network { out.append(("network", n.rawValue)) }
        if let u = e.user { out.append(("user", u)) }
        var device: [String] = []
        if let id = e.device.id { device.append("id: \(id)") }
        if let k = e.device.keystore { device.append("keystore: \(k.rawValue)") }
        if let i = e.device.integrity { device.append("integrity: \(i.rawValue)") }
        if !device.isEmpty { out.append(("device", "{ " + device.joined(separator: ", ") + " }")) }
        if let m = e.authMode { out.append(("auth_mode", m.rawValue)) }
        if let c = e.cause { out.append(("cause", c.rawValue)) }
        if let n = e.unsyncedItems { out.append(("unsynced_items", "\(n)")) }
        if let a = e.appID { out.append(("app_id", a)) }
        if !e.attributes.isEmpty {
            let pairs = e.attributes.sorted { $0.key < $1.key }.map { "\($0.key): \"\($0.value)\"" }
            out.append(("attributes", "{ " + pairs.joined(separator: ", ") + " }"))
        }
        return out
    }

    /// The covering runs of a report as one scenario file: every step expects what the engine
    /// decided. The header records the machine's fingerprint and its reachable transitions, which
    /// the tests use to tell when the file is stale.
    static func coveringScenarios(_ r: VerificationReport, machine: CompiledPolicy, policy: String) -> String {
        let reachable = r.transitions - r.deadTransitions.count
        var lines = [
            "# Covering scenarios for \(r.policy), written by `policyctl verify --covering`: together they take",
            "# every transition verify finds reachable. Regenerate them, do not edit them (docs/verify.md, \"Covering scenarios\").",
            "# machine: \(machine.machine.fingerprint)",
            "# reachable transitions: \(reachable) of \(r.transitions)",
            "policy: \(policy)",
            "scenarios:",
        ]
        for run in r.covering {
            let t = machine.machine.transitions[run.transition]
            let name = "#\(run.transition) \(t.event.rawValue) in \(t.from.rawValue): \(machine.machine.describe(t.guard))"
            lines.append("  - name: \"\(name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\"")
            lines.append("    start: \(run.steps[0].event.time)")
            lines.append("    steps:")
            // The last step, the one that takes the transition, also expects the whole next
            // session, so that what the transition records (times, counters, locks) is checked too.
            var session = SessionState.signedOut
            for (i, s) in run.steps.enumerated() {
                session = machine.evaluate(session, s.event).state
                lines += stepLines(s.event)
                let last = i == run.steps.count - 1 ? ", session: \(sessionLine(session))" : ""
                lines.append(
                    "        expect: { decision: \(s.decision?.rawValue ?? "none"), reason: \(s.reason), state: \(s.state.rawValue)\(last) }"
                )
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every field of a session (its machine state aside) as an expectation's `session:` mapping.
    static func sessionLine(_ s: SessionState) -> String {
        func show(_ v: (some CustomStringConvertible)?) -> String { v.map { "\($0)" } ?? "null" }
        let f = s.failures
        return "{ user: \(show(s.user)), device: \(show(s.device)), auth_mode: \(show(s.authMode?.rawValue)), "
            + "last_idp_login: \(show(s.lastIdPLogin)), last_online: \(show(s.lastOnline)), "
            + "last_activity: \(show(s.lastActivity)), highest_time: \(show(s.highestTime)), read_only: \(s.readOnly), "
            + "biometric_locked: \(s.biometricLocked), "
            + "failures: { biometric: \(f.biometric), offline_login: \(f.offlineLogin), idp_login: \(f.idpLogin) } }"
    }

    /// `path` relative to the directory `base`, as a scenario file there names its policy.
    static func relativePath(of path: String, from base: String) -> String {
        let target = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        let from = URL(fileURLWithPath: base).standardizedFileURL.pathComponents
        var common = 0
        while common < min(target.count, from.count) && target[common] == from[common] { common += 1 }
        return (Array(repeating: "..", count: from.count - common) + target[common...]).joined(separator: "/")
    }

    /// A counterexample as a scenario file: every step expects what the engine did, except
    /// the last, which expects what the property requires, so `check` fails there.
    static func scenario(_ c: Counterexample, property p: PropertyResult, policy: String) -> String {
        var lines = [
            "# Counterexample to `\(p.id)`, written by `policyctl verify`: \(p.sentence)",
            "# \(c.detail). `policyctl check` fails at the last step.",
            "policy: \(policy)",
            "scenarios:",
            "  - name: \"counterexample: \(p.id)\"",
            "    start: \(c.steps[0].event.time)",
            "    steps:",
        ]
        for (i, s) in c.steps.enumerated() {
            lines += stepLines(s.event)
            let last = i == c.steps.count - 1
            let decision = (last ? c.expected : s.decision)?.rawValue ?? "none"
            lines.append(
                "        expect: { decision: \(decision) }" + (last ? "   # the engine decides `\(s.decision?.rawValue ?? "none")`" : ""))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
