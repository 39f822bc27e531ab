import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML

/// A policy as a list of levers, attributes and rules, written out as YAML: the form the
/// differential test generates and shrinks (a lever at a time).
struct PolicySpec: Sendable, CustomStringConvertible {
    /// `section.key` (or `section.key.sub`) and its YAML value, in the order written.
    var levers: [(path: String, value: String)] = []
    /// Declared attributes: name and YAML type (`[a, b]`, `version`, ...).
    var attributes: [(name: String, type: String)] = []
    var rules: [RuleSpec] = []
    var name = "generated"

    struct RuleSpec: Sendable {
        var name: String
        var on: [String]?
        var when: String
        var decision: String?  // nil: `state: read_only`
        var reason: String
        var message: String?
        var notices: [String]?
        var noticeDelay: String?
    }

    static let sections = ["session", "offline", "auth_modes", "retry", "fallback", "signals", "device", "cross_app"]

    var yaml: String {
        var out = "version: 1\nname: \(name)\n"
        for section in Self.sections {
            let inSection = levers.filter { $0.path.hasPrefix(section + ".") }
            guard !inSection.isEmpty else { continue }
            out += "\(section):\n"
            // Nested keys (`retry.biometric.max`) are grouped under their parent.
            var groups: [(key: String, items: [(String, String)])] = []
            for l in inSection {
                let rest = l.path.dropFirst(section.count + 1).split(separator: ".").map(String.init)
                if rest.count == 1 {
                    groups.append((rest[0], [("", l.value)]))
                } else if let i = groups.firstIndex(where: { $0.key == rest[0] }) {
                    groups[i].items.append((rest[1], l.value))
                } else {
                    groups.append((rest[0], [(rest[1], l.value)]))
                }
            }
            for g in groups {
                if g.items.count == 1, g.items[0].0.isEmpty {
                    out += "  \(g.key): \(g.items[0].1)\n"
                } else {
                    out += "  \(g.key): { " + g.items.map { "\($0.0): \($0.1)" }.joined(separator: ", ") + " }\n"
                }
            }
        }
        if !attributes.isEmpty {
            out += "attributes:\n"
            for a in attributes { out += "  \(a.name): \(a.type)\n" }
        }
        if !rules.isEmpty {
            out += "rules:\n"
            for r in rules {
                out += "  - name: \(r.name)\n"
                if let on = r.on { out += "    on: [\(on.joined(separator: ", "))]\n" }
                out += "    when: \(Self.quoted(r.when))\n"
                out += "    then:\n"
                if let d = r.decision { out += "      decision: \(d)\n" } else { out += "      state: read_only\n" }
                out += "      reason: \(r.reason)\n"
                if let m = r.message { out += "      message: \(Self.quoted(m))\n" }
                if let n = r.notices { out += "      notices: [\(n.joined(separator: ", "))]\n" }
                if let d = r.noticeDelay { out += "      notice_delay: \(d)\n" }
            }
        }
        return out
    }

    var description: String { yaml }

    /// A YAML double-quoted string (JSON escapes are YAML's).
    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    func compile() -> CompiledPolicy? {
        try? PolicyFile.compile(text: yaml, file: "\(name).yaml").get()
    }

    /// Every durations the policy names, in seconds (for times at its boundaries).
    var durations: [Int64] {
        var out: [Int64] = []
        for l in levers where ["session.max", "session.idle", "offline.window", "device.clock_tolerance"].contains(l.path) {
            if case let .success(span) = TimeSpan.parse(l.value) { out.append(span.seconds) }
        }
        return out
    }

    /// The same policy with one part removed: every lever, attribute and rule in turn (for shrinking).
    var simpler: [PolicySpec] {
        var out: [PolicySpec] = []
        for i in rules.indices.reversed() {
            var p = self
            p.rules.remove(at: i)
            out.append(p)
        }
        for i in levers.indices.reversed() {
            var p = self
            p.levers.remove(at: i)
            out.append(p)
        }
        for i in attributes.indices.reversed() {
            var p = self
            p.attributes.remove(at: i)
            out.append(p)
        }
        // A signal's long form as its short form.
        for i in levers.indices where levers[i].value.hasPrefix("{ then: ") {
            var p = self
            let then = levers[i].value.dropFirst("{ then: ".count).prefix { $0 != "," && $0 != " " }
            p.levers[i].value = String(then)
            out.append(p)
        }
        // A rule's optional parts.
        for i in rules.indices {
            for part in 0..<4 {
                var p = self
                switch part {
                case 0: if p.rules[i].message == nil { continue } else { p.rules[i].message = nil }
                case 1: if p.rules[i].notices == nil { continue } else { p.rules[i].notices = nil }
                case 2: if p.rules[i].noticeDelay == nil { continue } else { p.rules[i].noticeDelay = nil }
                default: if p.rules[i].on == nil { continue } else { p.rules[i].on = nil }
                }
                out.append(p)
            }
        }
        return out
    }
}

/// Seeded random valid policies over every lever.
enum PolicyGenerator {
    /// Durations at the bounds and equal to each other: the generator draws from this pool, so
    /// two levers often share a value.
    static let durationPool = ["0s", "1s", "59s", "1m", "5m", "1h", "1d", "7d", "30d", "90d", "1d12h", "2w", "36600d"]

    static func seconds(_ d: String) -> Int64 { (try? TimeSpan.parse(d).get())?.seconds ?? 0 }

    static let reactions = ["idp_login", "wipe"]
    static let signalNames = [
        "account_deactivated", "tokens_revoked", "license_revoked", "biometric_enrollment_changed", "logout",
        "refresh_token_invalid",
    ]
    static let ruleEvents = ["launch", "resume", "biometric_succeeded", "idp_login_succeeded", "token_refreshed"]
    static let apps = ["com.example.app", "com.example.mail"]

    /// A random valid policy (`compile()` succeeds for nearly all; the caller draws again otherwise).
    static func policy(_ r: inout SplitMix, index: Int) -> PolicySpec {
        var p = PolicySpec()
        p.name = "generated-\(index)"
        func maybe(_ percent: Int) -> Bool { r.below(100) < percent }

        // Session and offline window: the window never above the max.
        var maxSeconds: Int64? = nil
        if maybe(60) {
            let m = r.pick(durationPool)
            maxSeconds = seconds(m)
            p.levers.append(("session.max", m))
        }
        if maybe(40) { p.levers.append(("session.idle", r.pick(durationPool))) }
        if maybe(50) { p.levers.append(("session.on_expired", r.pick(reactions))) }
        if maybe(60) {
            let allowed = durationPool.filter { maxSeconds == nil || seconds($0) <= maxSeconds! }
            p.levers.append(("offline.window", r.pick(allowed)))
        }
        if maybe(50) { p.levers.append(("offline.credential", r.pick(["offline_token", "signed_jwt"]))) }
        if maybe(40) { p.levers.append(("offline.key_protection", r.pick(["any", "hardware"]))) }
        if maybe(40) { p.levers.append(("offline.on_expired", r.pick(reactions))) }
        if maybe(70) {
            p.levers.append(("auth_modes.offline", r.pick(["[none]", "[biometric]", "[none, biometric]", "[biometric, none]"])))
        }
        for path in ["biometric", "offline_login", "idp_login"] where maybe(50) {
            p.levers.append(("retry.\(path).max", r.pick(["1", "1", "2", "3", "5"])))
            p.levers.append(("retry.\(path).then", r.pick(reactions)))
        }
        if maybe(40) { p.levers.append(("fallback.on_offline_failure", r.pick(reactions))) }
        for s in signalNames where maybe(40) {
            let choices = s == "license_revoked" ? reactions + ["read_only"] : reactions
            let then = r.pick(choices)
            if maybe(40) {
                p.levers.append(("signals.\(s)", "{ then: \(then), notice_delay: \(r.pick(["0s", "5s", "1m", "1d1h1m1s"])) }"))
            } else {
                p.levers.append(("signals.\(s)", then))
            }
        }
        if maybe(40) { p.levers.append(("device.single_user", r.pick(["true", "false"]))) }
        if maybe(40) { p.levers.append(("device.bind_session", r.pick(["true", "false"]))) }
        if maybe(40) { p.levers.append(("device.clock_rollback", r.pick(reactions))) }
        if maybe(50) { p.levers.append(("device.clock_tolerance", r.pick(durationPool.filter { seconds($0) <= 90 * 86_400 }))) }
        if maybe(30) { p.levers.append(("device.compromised", r.pick(reactions))) }
        if maybe(35) {
            p.levers.append(("cross_app.adopt", r.pick(["never", "require_biometric", "allow"])))
            p.levers.append(("cross_app.apps", r.pick(["[com.example.app]", "[com.example.app, com.example.mail]"])))
        }

        // Attributes of every type.
        let types = ["[gold, silver, none]", "[on_hold, \"zo\u{EB}\"]", "version", "boolean", "integer", "duration", "string"]
        if maybe(60) {
            let count = 1 + r.below(4)
            for i in 0..<count { p.attributes.append(("attr\(i)", r.pick(types))) }
        }

        // Rules.
        if maybe(55) {
            let count = 1 + r.below(3)
            for i in 0..<count { p.rules.append(rule(&r, i, p)) }
        }
        return p
    }

    static func rule(_ r: inout SplitMix, _ i: Int, _ p: PolicySpec) -> PolicySpec.RuleSpec {
        func maybe(_ percent: Int) -> Bool { r.below(100) < percent }
        var on: [String]? = nil
        if maybe(70) {
            var events = ruleEvents.filter { _ in maybe(35) }
            if events.isEmpty { events = [r.pick(ruleEvents)] }
            on = events
        }
        let events = on ?? ["launch", "resume"]
        var decisions = ["idp_login", "wipe"]
        if events.allSatisfy({ $0 == "launch" || $0 == "resume" }) { decisions.append("require_biometric") }
        var decision: String? = r.pick(decisions)
        if events.allSatisfy({ $0 == "idp_login_succeeded" || $0 == "token_refreshed" }), maybe(40) { decision = nil }
        let reason = maybe(85) ? "rule_reason_\(i)" : r.pick(["license_revoked", "within_limits", "no_license"])
        return PolicySpec.RuleSpec(
            name: "rule-\(i)", on: on, when: condition(&r, p, depth: 0), decision: decision, reason: reason,
            message: maybe(50) ? "rule \(i) says no" : nil,
            notices: maybe(30)
                ? ["network_required", "read_only", "retry_later", "suggest_auth_mode_change", "unsynced_data"].filter { _ in maybe(30) }
                : nil,
            noticeDelay: maybe(30) ? r.pick(["0s", "5s", "2m"]) : nil)
    }

    static func condition(_ r: inout SplitMix, _ p: PolicySpec, depth: Int) -> String {
        if depth < 2, r.below(100) < 35 {
            let a = condition(&r, p, depth: depth + 1)
            let b = condition(&r, p, depth: depth + 1)
            switch r.below(4) {
            case 0: return "\(a) and \(b)"
            case 1: return "(\(a) or \(b))"
            case 2: return "not (\(a))"
            default: return "(\(a) and not \(b))"
            }
        }
        return atom(&r, p)
    }

    static func atom(_ r: inout SplitMix, _ p: PolicySpec) -> String {
        let durations = (p.durations + [0, 1, 60, 86_400]).map { TimeSpan(seconds: $0).description }
        let ops = ["==", "!=", "<", "<=", ">", ">="]
        if !p.attributes.isEmpty, r.below(100) < 50 {
            let a = r.pick(p.attributes)
            switch a.type {
            case "version": return "\(a.name) \(r.pick(ops)) \"\(r.pick(["2.4.0", "2.4", "10", "2.3.99"]))\""
            case "boolean": return r.pick(["\(a.name)", "\(a.name) == true", "\(a.name) != false"])
            case "integer": return "\(a.name) \(r.pick(ops)) \(r.pick(["0", "3", "5", "4"]))"
            case "duration": return "\(a.name) \(r.pick(ops)) \(r.pick(["0s", "3d", "1d12h", "30d"]))"
            case "string": return r.pick(["\(a.name) == \"x\"", "\(a.name) != \"y\"", "\(a.name) in [\"x\", \"zo\u{EB}\"]"])
            default:
                let words = a.type.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return r.pick([
                    "\(a.name) == \(r.pick(words))", "\(a.name) != \(r.pick(words))",
                    "\(a.name) in [\(words.prefix(2).joined(separator: ", "))]",
                ])
            }
        }
        switch r.below(11) {
        case 0: return r.pick(["event == launch", "event in [resume, token_refreshed]", "event != idp_login_succeeded"])
        case 1: return r.pick(["state == active", "state in [suspended, read_only]", "state != awaiting_biometric", "state == signed_out"])
        case 2: return r.pick(["network == offline", "network != online"])
        case 3: return r.pick(["auth_mode == biometric", "auth_mode != none", "auth_mode in [none, pin]"])
        case 4: return r.pick(["device.keystore == hardware", "device.keystore != software", "device.integrity == ok"])
        case 5: return "elapsed.since_idp_login \(r.pick(ops)) \(r.pick(durations))"
        case 6: return "elapsed.since_online \(r.pick(ops)) \(r.pick(durations))"
        case 7: return "elapsed.since_activity \(r.pick(ops)) \(r.pick(durations))"
        case 8: return "failures.\(r.pick(["biometric", "offline_login", "idp_login"])) \(r.pick(ops)) \(r.pick(["0", "1", "2"]))"
        case 9: return r.pick(["read_only", "read_only == false", "not read_only"])
        default: return r.pick(["network == online and auth_mode == none", "device.keystore in [software, none]"])
        }
    }
}
