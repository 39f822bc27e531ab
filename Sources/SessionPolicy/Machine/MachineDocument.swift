/// The compiled machine as one versioned JSON document (`sessionpolicy-machine/1`,
/// docs/machine-format.md): what travels to an app, to the server and to the Java and
/// JavaScript runtimes. Written canonically (`CanonicalJSON`), so its SHA-256 digest, taken over
/// the document without its `digest` member, names the machine.
package enum MachineDocument {
    /// The format this build writes and reads.
    package static let format = "sessionpolicy-machine/1"

    // MARK: - Writing

    /// The document of `machine`, digest included. `source` is the policy file's name, kept
    /// for the locations of transitions and levers.
    package static func value(of machine: StateMachine, source: String?) -> CanonicalJSON {
        var members: [String: CanonicalJSON] = [
            "format": .string(format),
            "name": .string(machine.name),
            "description": machine.description.map(CanonicalJSON.string) ?? .null,
            "source": source.map(CanonicalJSON.string) ?? .null,
            "states": .array(MachineState.allCases.map { .string($0.rawValue) }),
            "events": .array(EventKind.allCases.map { .string($0.rawValue) }),
            "transitions": .array(machine.transitions.map(transition)),
            "rules": .array(machine.rules.map(rule)),
            "attributes": .array(machine.attributes.map(attribute)),
            "trusted_apps": .array(machine.trustedApps.map(CanonicalJSON.string)),
            "reveal_refusal": .bool(machine.revealsDetectionRefusal),
            "scopes": .object([
                "none": .string(machine.scopes.unprotected.rawValue),
                "none_hardware": .string(machine.scopes.unprotectedHardware.rawValue),
                "biometric": .string(machine.scopes.biometric.rawValue),
                "biometric_hardware": .string(machine.scopes.biometricHardware.rawValue),
            ]),
            "levers": .object(machine.sources.mapValues(location)),
        ]
        members["digest"] = .string(digest(of: .object(members)))
        return .object(members)
    }

    /// `sha256:` and the hex digest of the canonical text of `document` without its `digest` member.
    package static func digest(of document: CanonicalJSON) -> String {
        guard case var .object(members) = document else { return "sha256:" + SHA256.hex(Array(document.text.utf8)) }
        members["digest"] = nil
        return "sha256:" + SHA256.hex(Array(CanonicalJSON.object(members).text.utf8))
    }

    static func location(_ l: SourceLocation) -> CanonicalJSON {
        .object(["line": .int(Int64(l.line)), "column": .int(Int64(l.column))])
    }

    static func transition(_ t: Transition) -> CanonicalJSON {
        let a = t.action
        let target: String
        switch a.target {
        case let .state(s): target = s.rawValue
        case .resting: target = "resting"
        case .unchanged: target = "unchanged"
        }
        return .object([
            "id": .int(Int64(t.id)),
            "from": .string(t.from.rawValue),
            "event": .string(t.event.rawValue),
            "guard": guardValue(t.guard),
            "action": .object([
                "decision": a.decision.map { .string($0.rawValue) } ?? .null,
                "reason": .string(a.reason.rawValue),
                "message": .string(a.message),
                "target": .string(target),
                "effects": .array(Self.effects.filter { a.effects.contains($0.1) }.map { .string($0.0) }),
                "notices": .array(Notices.named.filter { a.notices.contains($0.1) }.map { .string($0.0) }),
                "names_scope": .bool(a.namesScope),
                "uses_previous_auth_mode": .bool(a.usesPreviousAuthMode),
                "notice_delay_seconds": a.noticeDelay.map { .int($0.seconds) } ?? .null,
            ]),
            "levers": .array(t.source.levers.map(CanonicalJSON.string)),
            "location": t.source.location.map(location) ?? .null,
        ])
    }

    /// The effects by name, in bit order.
    static let effects: [(String, Effects)] = [
        ("establish", .establish), ("clear_session", .clearSession), ("record_online", .recordOnline),
        ("record_activity", .recordActivity), ("count_biometric_failure", .countBiometricFailure),
        ("count_offline_failure", .countOfflineFailure), ("count_idp_failure", .countIdPFailure),
        ("reset_biometric_failures", .resetBiometricFailures), ("lock_biometric", .lockBiometric),
        ("set_read_only", .setReadOnly), ("adopt_behind_biometric", .adoptBehindBiometric),
    ]

    static func guardValue(_ g: Guard) -> CanonicalJSON {
        func kind(_ k: String, _ more: [String: CanonicalJSON] = [:]) -> CanonicalJSON {
            var m = more
            m["kind"] = .string(k)
            return .object(m)
        }
        switch g {
        case .always: return kind("always")
        case .deviceCompromised: return kind("device_compromised")
        case let .clockRolledBack(t): return kind("clock_rolled_back", ["tolerance_seconds": .int(t.seconds)])
        case .differentUser: return kind("different_user")
        case .differentDevice: return kind("different_device")
        case let .sessionMaxExceeded(t): return kind("session_max_exceeded", ["limit_seconds": .int(t.seconds)])
        case let .idleExceeded(t): return kind("idle_exceeded", ["limit_seconds": .int(t.seconds)])
        case let .offlineWindowExceeded(t): return kind("offline_window_exceeded", ["limit_seconds": .int(t.seconds)])
        case .authModeMissing: return kind("auth_mode_missing")
        case .authModeNeedsIdP: return kind("auth_mode_needs_idp")
        case let .authModeNotOffline(set):
            return kind("auth_mode_not_offline", ["modes": .array(set.modes.map { .string($0.rawValue) })])
        case .keystoreNotHardware: return kind("keystore_not_hardware")
        case .biometricLocked: return kind("biometric_locked")
        case let .authModeIs(m): return kind("auth_mode_is", ["mode": .string(m.rawValue)])
        case let .failureLimitReached(path, limit):
            return kind("failure_limit_reached", ["path": .string(path.rawValue), "limit": .int(Int64(limit))])
        case .networkOffline: return kind("network_offline")
        case let .refreshCause(c): return kind("refresh_cause", ["cause": .string(c.rawValue)])
        case .unsyncedItems: return kind("unsynced_items")
        case .appNotTrusted: return kind("app_not_trusted")
        case let .ruleFactMissing(i): return kind("rule_fact_missing", ["rule": .int(Int64(i))])
        case let .rule(i): return kind("rule", ["rule": .int(Int64(i))])
        case let .switched(s, inner): return kind("switched", ["switch": .string(s.rawValue), "inner": guardValue(inner)])
        }
    }

    static func rule(_ r: CompiledRule) -> CanonicalJSON {
        .object([
            "name": .string(r.name), "on": .array(r.on.map { .string($0.rawValue) }), "condition": condition(r.condition),
            "text": .string(r.text),
        ])
    }

    static func factValue(_ f: Fact) -> [String: CanonicalJSON] {
        if case let .attribute(name) = f { return ["attribute": .string(name)] }
        return ["fact": .string(Fact.builtIn.first { $0.1 == f }!.0)]
    }

    static func condition(_ c: Condition) -> CanonicalJSON {
        switch c {
        case let .oneOf(f, values, negated):
            var m = factValue(f)
            m["op"] = .string("one_of")
            m["values"] = .array(values.map(CanonicalJSON.string))
            m["negated"] = .bool(negated)
            return .object(m)
        case let .number(f, op, v):
            var m = factValue(f)
            m["op"] = .string("compare")
            m["comparison"] = .string(op.rawValue)
            m["value"] = .int(v)
            return .object(m)
        case let .version(f, op, v):
            var m = factValue(f)
            m["op"] = .string("compare_version")
            m["comparison"] = .string(op.rawValue)
            m["value"] = .string(v.parts.map(String.init).joined(separator: "."))
            return .object(m)
        case let .and(a, b): return .object(["op": .string("and"), "left": condition(a), "right": condition(b)])
        case let .or(a, b): return .object(["op": .string("or"), "left": condition(a), "right": condition(b)])
        case let .not(a): return .object(["op": .string("not"), "operand": condition(a)])
        }
    }

    static func attribute(_ a: AttributeDeclaration) -> CanonicalJSON {
        let type: CanonicalJSON
        switch a.type {
        case let .words(w): type = .object(["kind": .string("words"), "words": .array(w.map(CanonicalJSON.string))])
        case .version: type = .object(["kind": .string("version")])
        case .boolean: type = .object(["kind": .string("boolean")])
        case .integer: type = .object(["kind": .string("integer")])
        case .duration: type = .object(["kind": .string("duration")])
        case .string: type = .object(["kind": .string("string")])
        }
        return .object(["name": .string(a.name), "type": type])
    }
}
