import Foundation
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyVerify

/// `policyctl diff --storage URL`: what rolling out the new version changes for the sessions
/// stored now. Each stored session of the old version's policy is evaluated by both versions for
/// its next `launch`, online and offline, at one time; the sessions decided otherwise are
/// counted by change. The store keeps no attributes, so when the rules of either version read
/// attributes on `launch`, each session's launch is evaluated with every combination of the
/// values at the rules' boundaries, and a change names the values it happens with. The store is
/// read by `policyctl-sessions` (the server package's, which has the drivers), read-only.
struct StorageImpact: Encodable {
    /// One change of outcome on one network, and how many sessions it concerns.
    struct Change: Encodable {
        var network: Network
        var old: Side
        var new: Side
        var sessions: Int
        /// The attribute values the launch reported (empty when no rule reads one).
        var attributes: [String: String]
        /// The first such session (by user id, then device id).
        var example: Example
    }
    struct Side: Encodable, Hashable {
        var decision: Decision?
        var reason: Reason
    }
    struct Example: Encodable {
        var user: String
        var device: String
    }
    /// The storage, its password hidden.
    var storage: String
    var policy: String
    /// The time of the launches.
    var at: Timestamp
    /// The values tried for each attribute the rules read on `launch` (empty when none is read).
    var attributes: [String: [String]]
    /// Stored sessions read.
    var sessions: Int
    /// Sessions decided alike, per network.
    var unchanged: [String: Int]
    /// Changes, most sessions first.
    var changes: [Change]

    /// The device the launches come from: what the store does not know about a device is taken
    /// at its best (a hardware keystore that passes its integrity check), so a change is the
    /// policy's, not the device's.
    static func launch(_ s: ExportedSession, network: Network, at: Timestamp, attributes: [String: String] = [:]) -> Event {
        Event(
            .launch, at: at, network: network, user: s.user,
            device: Event.DeviceFacts(id: s.device, keystore: .hardware, integrity: .ok), attributes: attributes)
    }

    /// `policy`'s outcome for `event`, given only the attributes the policy declares (a client of
    /// either version reports those of its own).
    static func evaluate(_ policy: CompiledPolicy, _ state: SessionState, _ event: Event) -> Side {
        var e = event
        let declared = Set(policy.machine.attributes.map(\.name))
        e.attributes = e.attributes.filter { declared.contains($0.key) }
        let o = policy.evaluate(state, e)
        return Side(decision: o.decision, reason: o.reason)
    }

    /// The attribute combinations to launch with: those at the boundaries of either version's
    /// rules on `launch`.
    static func attributeSets(old: CompiledPolicy, new: CompiledPolicy) throws -> [[String: String]] {
        guard let sets = AttributeChoices.sets([old.machine, new.machine], .launch) else {
            throw Failure(
                message: "the rules read too many attribute values in combination to try every one for each stored session",
                help: "compare the versions without `--storage`, whose exploration covers every attribute value")
        }
        return sets
    }

    /// Reads the sessions of `old`'s policy from `storage` through `policyctl-sessions` and
    /// evaluates both versions. Throws `Failure` with what to tell the user.
    static func measure(old: CompiledPolicy, new: CompiledPolicy, storage: String, at: Timestamp) throws -> StorageImpact {
        guard let exporter = ServeLauncher.locate("policyctl-sessions") else {
            throw Failure(
                message: "`diff --storage` reads the store with `policyctl-sessions`, which is neither next to policyctl nor on the PATH",
                help:
                    "it is built by the server package: `swift build --package-path Server --product policyctl-sessions`, then put its folder (`swift build --package-path Server --show-bin-path`) on the PATH"
            )
        }
        let sets = try attributeSets(old: old, new: new)
        var tried: [String: [String]] = [:]
        for set in sets {
            for (name, value) in set where !(tried[name] ?? []).contains(value) { tried[name, default: []].append(value) }
        }
        var impact = StorageImpact(
            storage: redacted(storage), policy: old.name, at: at, attributes: tried, sessions: 0,
            unchanged: ["online": 0, "offline": 0], changes: [])
        var index: [String: Int] = [:]
        let decoder = JSONDecoder()
        var bad: String?
        let stderr = try stream(exporter, ["--storage", storage, "--policy", old.name]) { line in
            guard bad == nil else { return }
            guard let s = try? decoder.decode(ExportedSession.self, from: line) else {
                bad = String(decoding: line.prefix(200), as: UTF8.self)
                return
            }
            impact.sessions += 1
            for network in [Network.online, .offline] {
                var changed = false
                for set in sets {
                    let e = launch(s, network: network, at: at, attributes: set)
                    let (sa, sb) = (evaluate(old, s.state, e), evaluate(new, s.state, e))
                    if sa == sb { continue }
                    changed = true
                    let values = set.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                    let key =
                        "\(network.rawValue) \(sa.decision?.rawValue ?? "-") \(sa.reason) \(sb.decision?.rawValue ?? "-") \(sb.reason) \(values)"
                    if let i = index[key] {
                        impact.changes[i].sessions += 1
                    } else {
                        index[key] = impact.changes.count
                        impact.changes.append(
                            Change(
                                network: network, old: sa, new: sb, sessions: 1, attributes: set,
                                example: Example(user: s.user, device: s.device)))
                    }
                }
                if !changed { impact.unchanged[network.rawValue, default: 0] += 1 }
            }
        }
        if let status = stderr.status, status != 0 {
            throw Failure(message: stderr.text.isEmpty ? "`policyctl-sessions` failed (exit \(status))" : stderr.text, help: nil)
        }
        if let bad { throw Failure(message: "`policyctl-sessions` wrote a line that is not a stored session: \(bad)", help: nil) }
        impact.changes.sort { ($0.sessions, $1.network.rawValue) > ($1.sessions, $0.network.rawValue) }
        return impact
    }

    /// Runs `executable`, handing each line of its standard output to `line` as it comes (memory
    /// does not grow with the output); returns its exit status and standard error.
    static func stream(_ executable: String, _ arguments: [String], line: (Data) -> Void) throws -> (status: Int32?, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        var pending = Data()
        while true {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            // Each complete line, then what is left of the last one (moved once per chunk).
            var start = pending.startIndex
            while let nl = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                line(pending[start..<nl])
                start = nl + 1
            }
            pending = Data(pending[start...])
        }
        if !pending.isEmpty { line(pending) }
        group.wait()
        process.waitUntilExit()
        let text = String(decoding: errData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return (process.terminationStatus, text)
    }

    /// A failure to tell the user, with a hint.
    struct Failure: Error {
        var message: String
        var help: String?
    }

    /// `postgres://user:***@host/db`: the URL with its password hidden.
    static func redacted(_ url: String) -> String {
        guard var c = URLComponents(string: url), c.password != nil else { return url }
        c.password = "***"
        return c.string ?? url
    }

    /// The human text, after the differences.
    var human: String {
        let where_ = "`\(policy)` stored in \(storage)"
        guard sessions > 0 else { return "impact: no session of \(where_)" }
        let reported =
            attributes.isEmpty
            ? ""
            : ", reporting each combination of "
                + attributes.sorted { $0.key < $1.key }.map { "`\($0.key)` \($0.value.joined(separator: "|"))" }.joined(separator: ", ")
        var lines = [
            "impact on the \(sessions) session\(sessions == 1 ? "" : "s") of \(where_), for their next launch at \(at)"
                + " (from a device with a hardware keystore that passes its integrity check\(reported)):"
        ]
        for network in [Network.online, .offline] {
            let list = changes.filter { $0.network == network }
            let alike = unchanged[network.rawValue] ?? 0
            lines.append("  \(network.rawValue): \(sessions - alike) decided otherwise, \(alike) alike")
            for c in list {
                func show(_ s: Side) -> String { "\(s.decision?.rawValue ?? "no decision") (\(s.reason))" }
                let with =
                    c.attributes.isEmpty
                    ? "" : " with " + c.attributes.sorted { $0.key < $1.key }.map { "`\($0.key)` \($0.value)" }.joined(separator: ", ")
                lines.append(
                    "    \(c.sessions)  \(show(c.old)) becomes \(show(c.new))\(with), for example user `\(c.example.user)` on `\(c.example.device)`"
                )
            }
        }
        return lines.joined(separator: "\n")
    }
}
