import Foundation
import SessionPolicyTestSupport
import Testing

/// `compile --format dot|mermaid`: the summary by default, `--full`, the focus options and their
/// usage errors, through the binary.
@Suite("policyctl compile pictures")
struct CompilePictureCLITests {
    static let policies = Fixtures.files(in: "policies")
    /// Two shipped policies for the checks that run `compile` several times each: every picture
    /// explores the policy (seconds in a debug build), and `MachinePictureTests` checks every
    /// shipped policy's pictures in one process.
    static let sample = ["policies/i360-salesforce.yaml", "policies/kobil-offline-token.yaml"]

    /// The edges of a dot picture, as (from, to, label), `->` lines in order.
    static func dotEdges(_ dot: String) -> [(from: String, to: String, label: String)] {
        dot.split(separator: "\n").compactMap { line in
            guard let m = line.firstMatch(of: /^  "([^"]+)" -> "([^"]+)" \[label="((?:[^"\\]|\\.)*)"/) else { return nil }
            return (String(m.1), String(m.2), String(m.3))
        }
    }

    /// The edges of a Mermaid picture: `-->` lines, the start marker included.
    static func mermaidEdges(_ mermaid: String) -> [Substring] {
        mermaid.split(separator: "\n").filter { $0.contains(" --> ") }
    }

    /// The number of transitions of a policy, from `compile --format json`.
    static func transitionCount(_ policy: String) throws -> Int {
        let r = try CLI.run(["compile", policy, "--format", "json"])
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return try #require(object?["transitions"] as? [Any]).count
    }

    @Test("the default picture of a shipped policy is small: at most 24 edges, 8,000 characters of Mermaid", arguments: sample)
    func small(_ policy: String) throws {
        let dot = try CLI.run(["compile", policy, "--format", "dot"])
        #expect(dot.status == 0)
        let edges = Self.dotEdges(dot.stdout)
        #expect(!edges.isEmpty && edges.count <= 24, "\(policy): \(edges.count) edges")
        #expect(edges.contains { $0.from == "any state" && $0.to == "signed_out" && $0.label.contains("device compromised") })
        #expect(edges.allSatisfy { $0.from != $0.to }, "loops are written in their state")
        let mermaid = try CLI.run(["compile", policy, "--format", "mermaid"])
        #expect(mermaid.status == 0)
        #expect(Self.mermaidEdges(mermaid.stdout).count <= 24, "\(policy)")
        #expect(mermaid.stdout.utf8.count <= 8_000, "\(policy): \(mermaid.stdout.utf8.count) characters")
        // Mermaid reads `:` after the label's start, `;` and `#` as syntax.
        for line in Self.mermaidEdges(mermaid.stdout) {
            let label = line.split(separator: ": ", maxSplits: 1).dropFirst().first ?? ""
            #expect(!label.contains(":") && !label.contains(";") && !label.contains("#"), "\(line)")
        }
    }

    @Test("--full draws every transition that can happen as its own edge, with its id; --show-dead all", arguments: sample)
    func full(_ policy: String) throws {
        let count = try Self.transitionCount(policy)
        let all = try CLI.run(["compile", policy, "--format", "dot", "--full", "--show-dead"])
        #expect(all.status == 0)
        let labels = Self.dotEdges(all.stdout).map(\.label)
        #expect(labels.count == count)
        #expect(labels.enumerated().allSatisfy { $0.element.hasPrefix("#\($0.offset) ") })
        // Without --show-dead the dead ones are left out and counted in a note.
        let dot = try CLI.run(["compile", policy, "--format", "dot", "--full"])
        let live = Self.dotEdges(dot.stdout).map(\.label)
        let dead = try #require(dot.stdout.firstMatch(of: /label="(\d+) transitions that cannot happen left out/).map { Int($0.1)! })
        #expect(live.count + dead == count && dead > 0)
        #expect(Set(live).isSubset(of: labels) && live.allSatisfy { !$0.hasSuffix("(cannot happen)") })
        #expect(labels.count { $0.hasSuffix(" (cannot happen)") } == dead)
        let mermaid = try CLI.run(["compile", policy, "--format", "mermaid", "--full"])
        #expect(mermaid.status == 0)
        #expect(Self.mermaidEdges(mermaid.stdout).count == live.count + 1, "one per transition and the start")
        #expect(mermaid.stdout.contains("  note left of signed_out\n    \(dead) transitions that cannot happen left out"))
    }

    @Test("a biometric-only policy's picture draws no allow for mode none and no read_only; --show-dead draws them grey")
    func biometricOnlyPicture() throws {
        let policy = "Tests/Fixtures/render/biometric-only.yaml"
        for format in ["dot", "mermaid"] {
            let r = try CLI.run(["compile", policy, "--format", format])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(!r.stdout.contains("mode none") && !r.stdout.contains("read_only"), "\(format)")
            let shown = try CLI.run(["compile", policy, "--format", format, "--show-dead"])
            #expect(shown.stdout.contains("[mode none]") && shown.stdout.contains("read_only"), "\(format)")
            #expect(shown.stdout.contains("allow (cannot happen)"), "\(format)")
        }
    }

    @Test(
        "--state draws only the transitions from or to the state",
        arguments: ["signed_out", "active", "suspended", "awaiting_biometric", "awaiting_idp", "read_only"])
    func state(_ state: String) throws {
        let policy = "policies/kobil-offline-token.yaml"
        // No signal of this policy makes a session read-only: its transitions are all dead.
        let showDead = state == "read_only"
        let dead = showDead ? ["--show-dead"] : []
        let r = try CLI.run(["compile", policy, "--format", "dot", "--state", state] + dead)
        #expect(r.status == 0, "\(r.stderr)")
        let edges = Self.dotEdges(r.stdout)
        #expect(!edges.isEmpty)
        // The state's own transitions start at it; `any state` only leads to it.
        #expect(edges.allSatisfy { $0.from == state || $0.to == state }, "\(policy) \(state)")
        // Every arrow from another state to it in the whole picture is kept.
        let whole = Self.dotEdges(try #require(Self.kobilWhole[showDead]))
        #expect(!whole.isEmpty, "the whole picture was drawn")
        func into(_ es: [(from: String, to: String, label: String)]) -> Set<String> {
            Set(es.filter { $0.to == state && $0.from != state && $0.from != "any state" }.map { "\($0.from)->\($0.to)" })
        }
        #expect(into(edges) == into(whole), "\(policy) \(state)")
        // The full Mermaid picture, for two of the states (each run explores the policy again).
        guard state == "active" || state == "read_only" else { return }
        let full = try CLI.run(["compile", policy, "--format", "mermaid", "--full", "--state", state] + dead)
        for line in Self.mermaidEdges(full.stdout) where !line.hasPrefix("  [*]") {
            #expect(line.hasPrefix("  \(state) --> ") || line.contains(" --> \(state): "), "\(line)")
        }
    }

    /// kobil-offline-token's whole summary picture in dot, without and with `--show-dead`, drawn
    /// once for every `state` case.
    static let kobilWhole: [Bool: String] = Dictionary(
        uniqueKeysWithValues: [false, true].map { showDead in
            let dead = showDead ? ["--show-dead"] : []
            return (showDead, (try? CLI.run(["compile", "policies/kobil-offline-token.yaml", "--format", "dot"] + dead).stdout) ?? "")
        })

    @Test("--event and --lever draw only their transitions; together they narrow")
    func eventAndLever() throws {
        let policy = "policies/kobil-offline-token.yaml"
        let event = try CLI.run(["compile", policy, "--format", "dot", "--full", "--event", "logout", "--show-dead"])
        #expect(event.status == 0)
        let logouts = Self.dotEdges(event.stdout)
        #expect(logouts.count == 6 * 2 + 5 * 1 + 6 * 1, "compromised, unsynced and otherwise everywhere, binding with a session")
        #expect(logouts.allSatisfy { $0.label.contains(" logout [") })
        // In read_only, which no signal of this policy leads to, all four cannot happen.
        let live = Self.dotEdges(try CLI.run(["compile", policy, "--format", "dot", "--full", "--event", "logout"]).stdout)
        #expect(live.count == logouts.count - 4 && live.allSatisfy { $0.from != "read_only" })
        let lever = try CLI.run(["compile", policy, "--format", "mermaid", "--lever", "session.max"])
        #expect(lever.status == 0)
        let lines = Self.mermaidEdges(lever.stdout)
        #expect(lines.count == 3, "from the states with a session to resume, read_only (which cannot happen here) left out")
        #expect(lines.allSatisfy { $0.contains(" --> awaiting_idp: idp_login<br>") && $0.contains("[since idp login > 90d]") })
        let both = try CLI.run([
            "compile", policy, "--format", "dot", "--full", "--lever", "session.max", "--event", "resume", "--state", "active",
        ])
        #expect(Self.dotEdges(both.stdout).map(\.label) == ["#48 resume [since idp login > 90d] / idp_login (session_max_exceeded)"])
    }

    /// (policy, arguments, golden file under Tests/Fixtures/golden/compile/focus).
    static let focusGoldens: [(String, [String], String)] = [
        ("kobil-offline-token", ["--format", "dot", "--state", "awaiting_biometric"], "kobil-offline-token.state-awaiting_biometric.dot"),
        ("kobil-offline-token", ["--format", "mermaid", "--event", "logout"], "kobil-offline-token.event-logout.mmd"),
        ("i360-marketsharp", ["--format", "mermaid", "--lever", "rules.user-without-license"], "i360-marketsharp.lever-rule.mmd"),
        ("spendiq", ["--format", "dot", "--full", "--lever", "offline.window"], "spendiq.full-lever-offline.window.dot"),
    ]

    @Test("focused pictures match their golden files", arguments: focusGoldens)
    func focusGolden(_ name: String, _ args: [String], _ golden: String) throws {
        let r = try CLI.run(["compile", "policies/\(name).yaml"] + args)
        #expect(r.status == 0, "\(r.stderr)")
        if let diff = Golden.check(r.stdout, against: "Tests/Fixtures/golden/compile/focus/\(golden)") {
            Issue.record(Comment(rawValue: diff))
        }
    }

    @Test(
        "a focus with another format, or one that names nothing, is a usage error that says what is valid",
        arguments: [
            (["--format", "text", "--state", "active"], "`--state` applies to `--format dot` and `--format mermaid`, not `--format text`"),
            (["--event", "launch"], "`--event` applies to `--format dot` and `--format mermaid`, not `--format text`"),
            (["--format", "json", "--full"], "`--full` applies to `--format dot` and `--format mermaid`, not `--format json`"),
            (
                ["--format", "machine", "--show-dead"],
                "`--show-dead` applies to `--format dot` and `--format mermaid`, not `--format machine`"
            ),
            (["--format", "json", "--lever", "session.max"], "`--lever` applies to"),
            (
                ["--format", "dot", "--state", "actve"],
                "unknown state `actve` (did you mean `active`?); the states are signed_out, active, suspended, awaiting_biometric, awaiting_idp, read_only"
            ),
            (["--format", "mermaid", "--state", "locked"], "unknown state `locked`; the states are signed_out, active,"),
            (
                ["--format", "mermaid", "--event", "lunch"],
                "unknown event `lunch` (did you mean `launch`?); the events are launch, resume, background,"
            ),
            (
                ["--format", "dot", "--lever", "offline.window"],
                "policy `kobil-offline-token` has no lever `offline.window`; its levers are auth_modes.offline, built-in,"
            ),
            (
                ["--format", "dot", "--lever", "session.mx"],
                "policy `kobil-offline-token` has no lever `session.mx` (did you mean `session.max`?)"
            ),
        ])
    func usageErrors(_ args: [String], _ message: String) throws {
        let r = try CLI.run(["compile", "policies/kobil-offline-token.yaml"] + args)
        #expect(r.status == 64, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("Error: \(message)"), "\(r.stderr)")
        #expect(r.stderr.contains("Usage: policyctl compile"))
        #expect(r.stdout.isEmpty)
    }

    @Test("a policy that does not load is invalid input, also with --lever")
    func missingPolicy() throws {
        let r = try CLI.run(["compile", "policies/nope.yaml", "--format", "dot", "--lever", "session.max"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("error[file-not-found]"))
    }

    @Test("--help explains the summary and the focus options")
    func help() throws {
        let r = try CLI.run(["compile", "--help"])
        #expect(r.status == 0)
        for text in ["--state <state>", "--event <event>", "--lever <lever>", "--full", "any state"] {
            #expect(r.stdout.contains(text), "\(text)")
        }
    }
}
