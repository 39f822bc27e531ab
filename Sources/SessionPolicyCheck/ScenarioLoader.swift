import Foundation
package import SessionPolicy
import SessionPolicyYAML

/// Reads scenario files (docs/scenario-files.md) into `Scenario` values, with located diagnostics.
///
/// Warnings do not stop a scenario from loading: an id in `covers:` written like a catalogue id
/// that is not one (`unknown-behaviour`), a scenario that expects nothing (`no-expectations`).
public enum ScenarioLoader {
    // The keys each mapping accepts; the tests check that `schemas/scenario.schema.json` lists
    // exactly the same keys.
    package static let fileKeys = ["policy", "scenarios"]
    package static let scenarioKeys = ["name", "covers", "policy", "start", "context", "state", "steps", "description"]
    package static let stepKeys = ["at", "event", "expect", "note"] + SyntaxReader.contextKeys
    package static let expectKeys = [
        "decision", "reason", "message", "state", "scope", "notices", "auth_mode", "notice_delay", "user", "error", "session",
    ]

    /// How a scenario file starts: the hint for an empty file or one that is not a mapping.
    package static let start = "a scenario file is a mapping that starts `policy: NAME` and `scenarios:`, a list of scenarios"

    /// Loads the scenarios of one file. `defaultPolicy` is used when the file names none.
    package static func load(_ root: SyntaxNode, file: String, defaultPolicy: String?) -> ([Scenario], [Diagnostic]) {
        var r = SyntaxReader()
        var out: [Scenario] = []
        guard let top = r.fields(root, path: "", allowed: fileKeys, start: Self.start) else { return ([], r.diagnostics) }
        let filePolicy = top["policy"].flatMap { r.name($0, "policy") }
        guard let list = r.require(top, "scenarios", help: "add `scenarios:` with a list of scenarios").flatMap({ r.list($0, "scenarios") })
        else {
            return ([], r.diagnostics)
        }
        if list.isEmpty { r.error(.missingKey, "`scenarios` is empty", at: top.node, help: "add at least one scenario") }
        var names: [String: SourceLocation] = [:]
        for (index, node) in list.enumerated() {
            let path = "scenarios[\(index)]"
            guard let f = r.fields(node, path: path, allowed: scenarioKeys) else { continue }
            let before = r.diagnostics.count
            let name = r.require(f, "name").flatMap { r.name($0, f.path("name")) } ?? path
            if let first = names[name], let n = f["name"] {
                r.error(
                    .duplicateValue, "two scenarios are named `\(name)`", at: n, notes: ["the first is at \(first)"],
                    help: "give each scenario its own name")
            }
            names[name] = node.location
            var covers: [String] = []
            if let c = f["covers"], let items = r.list(c, f.path("covers")) {
                for item in items {
                    guard let id = r.name(item, f.path("covers")) else { continue }
                    // Any id is accepted: the catalogue's, or a requirement id of the user's own.
                    // Only an id written like a catalogue id that is not one is worth a word.
                    covers.append(id)
                    if let help = Behaviours.lookalikeHelp(id) {
                        r.warning(
                            .unknownBehaviour, "`\(id)` looks like a behaviour id but is not in the catalogue", at: item,
                            help: help)
                    }
                }
            }
            let policy = f["policy"].flatMap { r.name($0, f.path("policy")) } ?? filePolicy ?? defaultPolicy
            if policy == nil {
                r.error(
                    .missingKey, "`\(name)` does not say which policy it runs against", at: node,
                    help: "add `policy: NAME` to the file or the scenario, or give one policy on the command line")
            }
            let start = r.require(f, "start", help: "add `start: 2026-03-01T09:00:00Z`").flatMap { r.time($0, f.path("start")) }
            var defaults = Event(.launch, at: start ?? Timestamp(secondsSinceEpoch: 0))
            var contextAttributes: [String: SourceLocation] = [:]
            if let c = f["context"], let cf = r.fields(c, path: f.path("context"), allowed: SyntaxReader.contextKeys) {
                r.applyContext(cf, to: &defaults)
                contextAttributes = attributeSources(cf)
            }
            var initial = SessionState()
            if let s = f["state"], let start, let state = r.sessionState(s, path: f.path("state"), relativeTo: start) {
                initial = state
            }
            var steps: [Scenario.Step] = []
            if let s = r.require(f, "steps", help: "add `steps:` with at least one event").flatMap({ r.list($0, f.path("steps")) }) {
                var clock = start ?? Timestamp(secondsSinceEpoch: 0)
                for (i, stepNode) in s.enumerated() {
                    if var step = readStep(
                        stepNode, number: i + 1, path: f.path("steps[\(i)]"), clock: &clock, defaults: defaults, reader: &r)
                    {
                        step.attributeSources.merge(contextAttributes) { own, _ in own }
                        steps.append(step)
                    }
                }
                if s.isEmpty { r.error(.missingKey, "`\(name)` has no steps", at: node, help: "add at least one step") }
            }
            if let policy, !r.diagnostics[before...].contains(where: { $0.severity == .error }) {
                var scenario = Scenario(
                    file: file, location: node.location, name: name, covers: covers, policy: policy, initial: initial, steps: steps)
                scenario.policyLocation = (f["policy"] ?? top["policy"])?.location
                if !scenario.expectsSomething {
                    r.warning(
                        .noExpectations, "scenario `\(name)` expects nothing, so it passes whatever the policy decides",
                        at: node, help: "add `expect:` to a step, for example `expect: { decision: allow }`")
                }
                out.append(scenario)
            }
        }
        return (out, r.diagnostics)
    }

    static func readStep(
        _ node: SyntaxNode, number: Int, path: String, clock: inout Timestamp, defaults: Event, reader r: inout SyntaxReader
    ) -> Scenario.Step? {
        guard let f = r.fields(node, path: path, allowed: stepKeys) else { return nil }
        if let at = f["at"], let t = r.time(at, f.path("at"), relativeTo: clock) {
            clock = t
        }
        var expect = Scenario.Expectation()
        if let e = f["expect"] { expect = readExpectation(e, path: f.path("expect"), clock: clock, reader: &r) }
        // The event is read with a separate reader: if the step expects an error, the event's
        // diagnostics are the expected outcome rather than a load failure.
        var er = SyntaxReader()
        var event = defaults
        event.time = clock
        event.kind = .launch
        var ok = true
        if let k = r.require(f, "event", help: "name the event, for example `event: launch`") {
            if let kind = er.keyword(k, f.path("event"), EventKind.self) { event.kind = kind } else { ok = false }
        } else {
            return nil
        }
        let ctx = er.fields(node, path: path, allowed: f.keys)  // unknown keys were reported above
        if let ctx {
            // The step's context keys override the scenario's defaults (device facts and attributes key by key).
            er.applyContext(ctx, to: &event)
            if ok { er.checkRequiredContext(event, in: ctx) }
        }
        let result: Result<Event, DiagnosticError> = er.diagnostics.isEmpty ? .success(event) : .failure(DiagnosticError(er.diagnostics))
        if case .failure = result, expect.error == nil {
            for d in er.diagnostics { r.report(d) }
            return nil
        }
        if case .success = result, let code = expect.error {
            r.error(
                .invalidValue, "step \(number) expects error `\(code)` but its event is valid", at: node,
                help: "remove `expect.error`, or make the event invalid on purpose")
            return nil
        }
        var step = Scenario.Step(number: number, location: node.location, event: result, expect: expect)
        if let ctx { step.attributeSources = attributeSources(ctx) }
        return step
    }

    /// Where each attribute of a context's `attributes` mapping is written: its value's place.
    static func attributeSources(_ f: SyntaxReader.Fields) -> [String: SourceLocation] {
        guard let v = f[Event.Field.attributes.key], case let .mapping(pairs) = v.kind else { return [:] }
        var out: [String: SourceLocation] = [:]
        for (key, value) in pairs { if let k = key.scalar { out[k] = value.location } }
        return out
    }

    /// `clock` is the step's time: relative times in `session:` count from it.
    static func readExpectation(
        _ node: SyntaxNode, path: String, clock: Timestamp, reader r: inout SyntaxReader
    ) -> Scenario.Expectation {
        var x = Scenario.Expectation()
        guard let f = r.fields(node, path: path, allowed: expectKeys) else { return x }
        func noneOr<K: PolicyKeyword>(_ key: String, _ type: K.Type) -> K?? {
            guard let v = f[key] else { return nil }
            if v.isNull || v.scalar == "none" { return .some(nil) }
            guard let k = r.keyword(v, f.path(key), type) else { return nil }
            return .some(k)
        }
        if let v = f["decision"] {
            if v.scalar == "none" || v.isNull {
                x.decision = .some(nil)
            } else if let d = r.keyword(v, f.path("decision"), Decision.self) {
                x.decision = .some(d)
            }
        }
        if let v = f["reason"], let s = r.name(v, f.path("reason")) {
            x.reason = Reason(s)
            x.reasonLocation = v.location
        }
        if let v = f["message"] { x.message = r.string(v, f.path("message")) }
        if let v = f["state"] { x.state = r.keyword(v, f.path("state"), MachineState.self) }
        x.scope = noneOr("scope", Scope.self)
        if let v = f["auth_mode"] {
            if v.isNull {
                x.authMode = .some(nil)
            } else if let m = r.keyword(v, f.path("auth_mode"), AuthMode.self) {
                x.authMode = .some(m)
            }
        }
        if let v = f["notices"], let items = r.list(v, f.path("notices")) {
            var set = Notices()
            for item in items {
                guard let n = r.name(item, f.path("notices")) else { continue }
                if let notice = Notices(name: n) {
                    set.insert(notice)
                } else {
                    r.error(
                        .invalidValue, "unknown notice `\(n)`", at: item, help: Suggestion.publicHelp(for: n, in: Notices.named.map(\.0)))
                }
            }
            x.notices = set
        }
        if let v = f["notice_delay"] { x.noticeDelay = r.duration(v, f.path("notice_delay")) }
        if let v = f["user"] { x.user = r.name(v, f.path("user")) }
        if let v = f["error"], let s = r.name(v, f.path("error")) { x.error = DiagnosticCode(s) }
        if let v = f["session"] { x.session = readSessionExpectation(v, path: f.path("session"), clock: clock, reader: &r) }
        return x
    }

    /// `session:`: the fields of a session state (`SyntaxReader.stateKeys`, `state` aside, which
    /// the expectation's own `state` checks), each `null` (or `none`, except for `auth_mode`,
    /// where `none` is a mode) for an absent value.
    static func readSessionExpectation(
        _ node: SyntaxNode, path: String, clock: Timestamp, reader r: inout SyntaxReader
    ) -> Scenario.SessionExpectation {
        typealias K = SessionState.Field
        var x = Scenario.SessionExpectation()
        let allowed = SyntaxReader.stateKeys.filter { $0 != K.state.key }
        guard let f = r.fields(node, path: path, allowed: allowed) else { return x }
        func absent(_ v: SyntaxNode) -> Bool { v.isNull || v.scalar == "none" }
        func name(_ field: K) -> String?? {
            guard let v = f[field.key] else { return nil }
            return absent(v) ? .some(nil) : r.name(v, f.path(field.key)).map { .some($0) }
        }
        func time(_ field: K) -> Timestamp?? {
            guard let v = f[field.key] else { return nil }
            return absent(v) ? .some(nil) : r.time(v, f.path(field.key), relativeTo: clock).map { .some($0) }
        }
        x.user = name(.user)
        x.device = name(.device)
        if let v = f[K.authMode.key] {
            // `none` is an auth mode here, as in `state:`; only `null` expects none recorded.
            x.authMode = v.isNull ? .some(nil) : r.keyword(v, f.path(K.authMode.key), AuthMode.self).map { .some($0) }
        }
        x.lastIdPLogin = time(.lastIdPLogin)
        x.lastOnline = time(.lastOnline)
        x.lastActivity = time(.lastActivity)
        x.highestTime = time(.highestTime)
        if let v = f[K.readOnly.key] { x.readOnly = r.bool(v, f.path(K.readOnly.key)) }
        if let v = f[K.biometricLocked.key] { x.biometricLocked = r.bool(v, f.path(K.biometricLocked.key)) }
        if let v = f[K.failures.key], let ff = r.fields(v, path: f.path(K.failures.key), allowed: SyntaxReader.failureKeys) {
            func count(_ field: SessionState.Failures.Field) -> Int {
                guard let n = ff[field.key], let c = r.int(n, ff.path(field.key)) else { return 0 }
                return c
            }
            x.failures = SessionState.Failures(
                biometric: count(.biometric), offlineLogin: count(.offlineLogin), idpLogin: count(.idpLogin))
        }
        return x
    }
}
