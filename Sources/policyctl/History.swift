import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyDelivery
import SessionPolicyYAML

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a user's decisions from the server's decision log as a timeline, for support staff.",
        discussion: """
            Reads the decision log of the server's store (read-only, through policyctl-sessions, built \
            by the server package) and prints the user's most recent decisions, oldest first: when, \
            the policy and device, the event, the decision and its reason, and, when the policy in \
            --policies still compiles to the machine that decided, the policy's own words for it and \
            the line of the policy file that set it.
            Exit codes: 0 printed (also when there is no decision); 2 the store cannot be read; 64 usage error.
            """)

    @Option(help: "The server's storage: sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE.")
    var storage: String

    @Argument(help: "The user id.")
    var user: String

    @Argument(help: "Only this device's decisions.")
    var device: String?

    @Option(help: "Only this policy's decisions.")
    var policy: String?

    @Option(help: "At most this many decisions, the most recent.")
    var limit = 50

    @Option(help: ArgumentHelp("The policy files, to explain each decision in their words.", valueName: "dir"))
    var policies = "policies"

    @Option(help: "Output format: human or json (the records, one per line).")
    var format: OutputFormat = .human

    func validate() throws {
        if limit < 1 { throw ValidationError("`--limit` must be at least 1") }
    }

    func run() throws {
        guard let exporter = ServeLauncher.locate("policyctl-sessions") else {
            FileHandle.standardError.write(
                Data(
                    """
                    error: `history` reads the store with `policyctl-sessions`, which is neither next to policyctl nor on the PATH
                      = help: it is built by the server package: `swift build --package-path Server --product policyctl-sessions`

                    """.utf8))
            throw Exit.invalidInput
        }
        var arguments = ["--storage", storage, "--decisions-of", user, "--limit", String(limit)]
        if let device { arguments += ["--device", device] }
        if let policy { arguments += ["--policy", policy] }
        var lines: [Data] = []
        let result = try StorageImpact.stream(exporter, arguments) { lines.append(Data($0)) }
        if let status = result.status, status != 0 {
            FileHandle.standardError.write(
                Data((result.text.isEmpty ? "error: `policyctl-sessions` failed (exit \(status))" : result.text).utf8 + [0x0A]))
            throw Exit.invalidInput
        }
        if format == .json {
            for line in lines.reversed() { print(String(decoding: line, as: UTF8.self)) }
            return
        }
        let decoder = JSONDecoder()
        let records = lines.reversed().compactMap { try? decoder.decode(DecisionRecord.self, from: $0) }
        if records.isEmpty {
            print("no decision recorded for `\(user)`\(device.map { " on `\($0)`" } ?? "")")
            return
        }
        // The policies as they are now, by name: a record is explained in their words only when
        // its machine is the one they compile to.
        let input = CheckInput.load(policies: [policies], scenarios: [])
        var machines: [String: (digest: String, compiled: CompiledPolicy)] = [:]
        for (name, loaded) in input.policies {
            machines[name] = (loaded.compiled.portable.digest, loaded.compiled)
        }
        for r in records { print(Self.line(r, machines[r.policy])) }
        if let note = Self.unexplained(records.map(\.policy), known: Set(machines.keys), directory: policies) {
            FileHandle.standardError.write(Data("note: \(note)\n".utf8))
        }
    }

    /// Why some decisions were printed without the policy's words and lines, said once: their
    /// policy is not among the files of `--policies`. Nil when every policy was found.
    static func unexplained(_ policies: [String], known: Set<String>, directory: String) -> String? {
        let missing = Set(policies).subtracting(known).sorted()
        guard !missing.isEmpty else { return nil }
        let names = missing.map { "`\($0)`" }.joined(separator: ", ")
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory)
        let found =
            exists
            ? "no policy file in `\(directory)` names \(missing.count == 1 ? "it" : "them")"
            : "`\(directory)` does not exist"
        return "decisions of \(names) are shown without the policy's words and file lines: \(found);"
            + " give the directory of the policy files with `--policies DIR`"
    }

    /// "Tue 2026-03-03 09:14:05 UTC  kobil-offline-token  phone-1  launch offline -> idp_login: ...;
    /// by user alice" (who asked, on records that say).
    static func line(_ r: DecisionRecord, _ current: (digest: String, compiled: CompiledPolicy)?) -> String {
        let when = Self.day(r.eventTime)
        var text = "\(when)  \(r.policy)  \(r.device)  \(r.event)\(r.network.map { " \($0)" } ?? "") -> \(r.decision ?? "no decision")"
        text += " (\(r.reason))"
        if let current, current.digest == r.digest, let why = current.compiled.machine.explanation(ofTransition: r.transition) {
            text += ": \(why.message)"
            if let line = why.line { text += " (policy line \(line))" }
        } else if current != nil {
            text += " [decided by an earlier version of the policy, \(r.digest.prefix(19))...]"
        }
        if !r.notices.isEmpty { text += "; notices: \(r.notices.joined(separator: ", "))" }
        if let actor = r.actor { text += "; by \(actor.kind) \(actor.id)" }
        return text
    }

    /// "Tue 2026-03-03 09:14:05 UTC".
    static func day(_ t: Timestamp) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(t.millisecondsSinceEpoch) / 1000))
    }
}

extension StateMachine {
    /// Transition `id`'s message and the line of the policy file that set it, if it exists.
    func explanation(ofTransition id: Int) -> (message: String, line: Int?)? {
        guard transitions.indices.contains(id) else { return nil }
        let t = transitions[id]
        return (t.action.message, t.source.location?.line)
    }
}
