import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The engine (the compiled machine) against the reference model written from the documents
/// (`ReferenceModel`), over random valid policies and random event sequences at their
/// boundaries; and metamorphic properties of the engine (issue 16).
///
/// Environment:
/// - `SESSIONPOLICY_DIFF_STEPS`: how many steps to run (default 40,000: about 200 policies × 20
///   sequences × 10 steps);
/// - `SESSIONPOLICY_DIFF_SEED`: the first seed (default 16);
/// - `SESSIONPOLICY_DIFF_OUT`: where minimal reproducers are written as scenario files (default
///   a folder under the temporary directory, named in the failure).
///
/// Ten million steps (about 70 s of testing at ~145,000 steps/s, after a release build of the
/// tests, which `@testable import SessionPolicyVerify` elsewhere in this target needs
/// `-enable-testing` for):
///
///     SESSIONPOLICY_DIFF_STEPS=10000000 swift test -c release -Xswiftc -enable-testing \
///         --scratch-path .build-ref --filter 'DifferentialTests/differential'
@Suite("Differential: engine against the reference model")
struct DifferentialTests {
    static let env = ProcessInfo.processInfo.environment
    static let steps = Int(env["SESSIONPOLICY_DIFF_STEPS"] ?? "") ?? 40_000
    static let seed = UInt64(env["SESSIONPOLICY_DIFF_SEED"] ?? "") ?? 16
    static let sequencesPerPolicy = 20
    static let stepsPerSequence = 10

    // MARK: - Cases and comparison

    /// A policy, an initial state and the events of one sequence.
    struct Case {
        var spec: PolicySpec
        var initial: SessionState
        var events: [Event]
    }

    /// The first step where engine and model disagree.
    struct Mismatch {
        var step: Int
        var state: SessionState
        var event: Event
        var engine: Outcome
        var model: ModelOutcome
        var fields: [String]

        /// What kind of disagreement this is: shrinking keeps it.
        var kind: String {
            "\(event.kind.rawValue): \(fields.joined(separator: ",")) engine \(engine.reason) / model \(model.reason)"
        }
        /// Coarser, for counting distinct disagreements.
        var signature: String {
            "\(event.kind.rawValue) in \(state.state.rawValue): \(fields.joined(separator: ",")) engine \(engine.reason) / model \(model.reason)"
        }
    }

    /// The fields where the engine's outcome and the model's differ.
    static func differences(_ o: Outcome, _ m: ModelOutcome) -> [String] {
        differencesInAll(o, m).filter { !m.unspecified.contains($0) }
    }

    static func differencesInAll(_ o: Outcome, _ m: ModelOutcome) -> [String] {
        var out: [String] = []
        if o.decision != m.decision { out.append("decision") }
        if o.reason != m.reason { out.append("reason") }
        if let message = m.message, message != o.message { out.append("message") }
        if o.notices != m.notices { out.append("notices") }
        if o.scope != m.scope { out.append("scope") }
        if o.authMode != m.authMode { out.append("auth_mode") }
        if o.noticeDelay != m.noticeDelay { out.append("notice_delay") }
        if (m.transition == -1) != (o.transition == -1) { out.append("transition") }
        let a = o.state, b = m.state
        if a.state != b.state { out.append("state.state") }
        if a.user != b.user { out.append("state.user") }
        if a.device != b.device { out.append("state.device") }
        if a.authMode != b.authMode { out.append("state.auth_mode") }
        if a.lastIdPLogin != b.lastIdPLogin { out.append("state.last_idp_login") }
        if a.lastOnline != b.lastOnline { out.append("state.last_online") }
        if a.lastActivity != b.lastActivity { out.append("state.last_activity") }
        if a.highestTime != b.highestTime { out.append("state.highest_time") }
        if a.failures != b.failures { out.append("state.failures") }
        if a.readOnly != b.readOnly { out.append("state.read_only") }
        if a.biometricLocked != b.biometricLocked { out.append("state.biometric_locked") }
        return out
    }

    /// Replays `c` on both (each step from the engine's state); the first disagreement of kind
    /// `kind` (any kind when nil), if any.
    static func firstMismatch(_ c: Case, _ compiled: CompiledPolicy, _ model: ReferenceModel, kind: String? = nil) -> Mismatch? {
        var s = c.initial
        for (i, e) in c.events.enumerated() {
            let o = compiled.evaluate(s, e)
            let m = model.evaluate(s, e)
            let d = differences(o, m)
            if !d.isEmpty {
                let found = Mismatch(step: i, state: s, event: e, engine: o, model: m, fields: d)
                if kind == nil || found.kind == kind { return found }
            }
            s = o.state
        }
        return nil
    }

    static func firstMismatch(
        _ c: Case, fault: ReferenceModel.SeededFault?, kind: String?, cache: inout [String: CompiledPolicy?]
    ) -> Mismatch? {
        let text = c.spec.yaml
        if cache[text] == nil { cache[text] = .some(c.spec.compile()) }
        guard let compiled = cache[text]! else { return nil }
        var model = ReferenceModel(policy: compiled.validated)
        model.fault = fault
        return firstMismatch(c, compiled, model, kind: kind)
    }

    // MARK: - The run

    struct Found {
        var mismatch: Mismatch
        var shrunk: Case
        var shrunkMismatch: Mismatch
        var file: String
        var reproduces: String
        var count = 1
    }

    struct RunResult {
        var steps = 0
        var policies = 0
        var refused = 0
        var seconds = 0.0
        var shrinkSeconds = 0.0
        var unreported = 0
        /// How often each (event, state before, engine reason) came up: what the run covered.
        var covered: [String: Int] = [:]
        /// Why generated policies were refused: diagnostic code -> policies.
        var refusedCodes: [String: Int] = [:]
        var found: [String: Found] = [:]
        var order: [String] = []
    }

    /// Runs at least `steps` steps from `seed`; shrinks and writes each distinct disagreement.
    static func run(steps: Int, seed: UInt64, fault: ReferenceModel.SeededFault? = nil, out: String, maxReports: Int = 40) -> RunResult {
        var result = RunResult()
        var r = SplitMix(seed: seed)
        let clock = ContinuousClock()
        let started = clock.now
        while result.steps < steps {
            let spec = PolicyGenerator.policy(&r, index: result.policies)
            result.policies += 1
            guard let compiled = spec.compile() else {
                result.refused += 1
                if case let .failure(e) = PolicyFile.compile(text: spec.yaml, file: "p.yaml") {
                    for code in Set(e.diagnostics.filter { $0.severity == .error }.map(\.code.rawValue)) {
                        result.refusedCodes[code, default: 0] += 1
                    }
                }
                continue
            }
            var model = ReferenceModel(policy: compiled.validated)
            model.fault = fault
            let gen = SequenceGenerator(policy: compiled.policy)
            for _ in 0..<sequencesPerPolicy {
                let initial = gen.initialState(&r)
                var s = initial
                var previous = s.highestTime ?? SequenceGenerator.start
                var events: [Event] = []
                for _ in 0..<stepsPerSequence {
                    let e = gen.event(&r, s, previous: previous)
                    previous = e.time
                    events.append(e)
                    let o = compiled.evaluate(s, e)
                    let m = model.evaluate(s, e)
                    result.steps += 1
                    result.covered["\(o.reason) (\(e.kind.rawValue) in \(s.state.rawValue))", default: 0] += 1
                    let d = differences(o, m)
                    if !d.isEmpty {
                        let mismatch = Mismatch(step: events.count - 1, state: s, event: e, engine: o, model: m, fields: d)
                        if result.found[mismatch.signature] != nil {
                            result.found[mismatch.signature]!.count += 1
                        } else if result.found.count < maxReports {
                            let c = Case(spec: spec, initial: initial, events: events)
                            let shrinkStart = clock.now
                            let (shrunk, sm) = shrink(c, mismatch, fault: fault)
                            let took = clock.now - shrinkStart
                            result.shrinkSeconds += Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
                            let index = result.found.count + 1
                            let file = write(shrunk, sm, index: index, out: out)
                            result.found[mismatch.signature] = Found(
                                mismatch: mismatch, shrunk: shrunk, shrunkMismatch: sm, file: file, reproduces: verify(file))
                            result.order.append(mismatch.signature)
                        } else {
                            result.unreported += 1
                        }
                        // The model is stateless: the sequence goes on from the engine's state.
                    }
                    s = o.state
                }
            }
        }
        let elapsed = clock.now - started
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }

    static func outFolder() -> String {
        if let o = env["SESSIONPOLICY_DIFF_OUT"], !o.isEmpty { return o }
        return (NSTemporaryDirectory() as NSString).appendingPathComponent("sessionpolicy-diff-\(getpid())")
    }

    static func summary(_ result: RunResult) -> String {
        var lines = [
            "\(result.steps) steps over \(result.policies - result.refused) policies (\(result.refused) generated policies refused) in "
                + String(
                    format: "%.2f s (%.2f s of it shrinking): %.0f steps/s", result.seconds, result.shrinkSeconds,
                    Double(result.steps) / max(result.seconds - result.shrinkSeconds, 1e-9))
                + (result.unreported > 0 ? "; \(result.unreported) disagreements past the report limit" : "")
        ]
        if !result.refusedCodes.isEmpty {
            lines.append(
                "refused generated policies by code: "
                    + result.refusedCodes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        var reasons: [String: Int] = [:]
        for (key, n) in result.covered { reasons[String(key.prefix { $0 != " " }), default: 0] += n }
        lines.append(
            "reasons given by the engine (\(reasons.count), \(result.covered.count) reason/event/state triples): "
                + reasons.sorted { $0.value < $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        for sig in result.order {
            let f = result.found[sig]!
            let m = f.shrunkMismatch
            lines.append(
                "- \(sig) (\(f.count)×); minimal: \(f.shrunk.events.count) steps, \(f.shrunk.spec.levers.count) levers, "
                    + "\(f.shrunk.spec.rules.count) rules; \(f.file) (scenario \(f.reproduces))\n"
                    + "    engine: \(describe(m.engine))\n    model:  \(describe(m.model))")
        }
        return lines.joined(separator: "\n")
    }

    static func describe(_ o: Outcome) -> String {
        "\(o.decision?.rawValue ?? "none") \(o.reason) notices \(o.notices) scope \(o.scope?.rawValue ?? "none") "
            + "auth_mode \(o.authMode?.rawValue ?? "null") delay \(o.noticeDelay?.description ?? "null") state \(json(o.state))"
    }

    static func describe(_ o: ModelOutcome) -> String {
        "\(o.decision?.rawValue ?? "none") \(o.reason) notices \(o.notices) scope \(o.scope?.rawValue ?? "none") "
            + "auth_mode \(o.authMode?.rawValue ?? "null") delay \(o.noticeDelay?.description ?? "null") state \(json(o.state))"
    }

    static func json<T: Encodable>(_ v: T) -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? enc.encode(v)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }

    // MARK: - Shrinking

    /// Fewer steps, fewer facts, a simpler initial state and a simpler policy, while the same
    /// kind of disagreement remains.
    static func shrink(_ c: Case, _ m: Mismatch, fault: ReferenceModel.SeededFault?) -> (Case, Mismatch) {
        var best = c
        best.events = Array(c.events.prefix(m.step + 1))
        var bestMismatch = m
        let kind = m.kind
        var cache: [String: CompiledPolicy?] = [:]
        func attempt(_ candidate: Case) -> Bool {
            guard let found = firstMismatch(candidate, fault: fault, kind: kind, cache: &cache) else { return false }
            var shortened = candidate
            shortened.events = Array(candidate.events.prefix(found.step + 1))
            best = shortened
            bestMismatch = found
            return true
        }
        var progress = true
        var rounds = 0
        while progress && rounds < 30 {
            progress = false
            rounds += 1
            // Fewer steps.
            var i = best.events.count - 1
            while i >= 0 {
                if i < best.events.count, best.events.count > 1 {
                    var cand = best
                    cand.events.remove(at: i)
                    if attempt(cand) { progress = true }
                }
                i -= 1
            }
            // Fewer facts.
            for i in 0..<best.events.count where i < best.events.count {
                for cand in simplerEvents(best.events[i]) {
                    var c2 = best
                    c2.events[i] = cand
                    if attempt(c2) { progress = true; break }
                }
            }
            // A simpler initial state.
            for cand in simplerStates(best.initial) {
                var c2 = best
                c2.initial = cand
                if attempt(c2) { progress = true; break }
            }
            // A simpler policy: one lever, attribute or rule part less.
            var changed = true
            while changed {
                changed = false
                for spec in best.spec.simpler {
                    var c2 = best
                    c2.spec = spec
                    if attempt(c2) { changed = true; progress = true; break }
                }
            }
        }
        return (best, bestMismatch)
    }

    static func simplerEvents(_ e: Event) -> [Event] {
        var out: [Event] = []
        func with(_ f: (inout Event) -> Void) { var x = e; f(&x); if x != e { out.append(x) } }
        for key in e.attributes.keys.sorted() { with { $0.attributes[key] = nil } }
        with { $0.unsyncedItems = nil }
        with { $0.device.integrity = nil }
        with { $0.device.keystore = nil }
        with { $0.device.id = nil }
        with { $0.user = nil }
        with { $0.authMode = nil }
        with { $0.appID = nil }
        with { $0.cause = nil }
        with { $0.network = nil }
        return out
    }

    static func simplerStates(_ s: SessionState) -> [SessionState] {
        var out: [SessionState] = []
        func with(_ f: (inout SessionState) -> Void) { var x = s; f(&x); if x != s { out.append(x) } }
        with { $0 = .signedOut }
        with { $0.user = nil }
        with { $0.device = nil }
        with { $0.authMode = nil }
        with { $0.lastIdPLogin = nil }
        with { $0.lastOnline = nil }
        with { $0.lastActivity = nil }
        with { $0.highestTime = nil }
        with { $0.failures.biometric = 0 }
        with { $0.failures.offlineLogin = 0 }
        with { $0.failures.idpLogin = 0 }
        with { $0.readOnly = false }
        with { $0.biometricLocked = false }
        return out
    }

    // MARK: - Reproducers as scenario files

    static func q(_ s: String) -> String { PolicySpec.quoted(s) }

    static func eventYAML(_ e: Event, indent: String) -> String {
        var out = "\(indent)- at: \(e.time)\n\(indent)  event: \(e.kind.rawValue)\n"
        if let n = e.network { out += "\(indent)  network: \(n.rawValue)\n" }
        if let u = e.user { out += "\(indent)  user: \(q(u))\n" }
        if let m = e.authMode { out += "\(indent)  auth_mode: \(m.rawValue)\n" }
        if let c = e.cause { out += "\(indent)  cause: \(c.rawValue)\n" }
        if let u = e.unsyncedItems { out += "\(indent)  unsynced_items: \(u)\n" }
        if let a = e.appID { out += "\(indent)  app_id: \(q(a))\n" }
        var device: [String] = []
        if let id = e.device.id { device.append("id: \(q(id))") }
        if let k = e.device.keystore { device.append("keystore: \(k.rawValue)") }
        if let i = e.device.integrity { device.append("integrity: \(i.rawValue)") }
        if !device.isEmpty { out += "\(indent)  device: { \(device.joined(separator: ", ")) }\n" }
        if !e.attributes.isEmpty {
            out +=
                "\(indent)  attributes: { "
                + e.attributes.sorted { $0.key < $1.key }.map { "\(q($0.key)): \(q($0.value))" }.joined(separator: ", ") + " }\n"
        }
        return out
    }

    static func stateYAML(_ s: SessionState, stateKey: Bool) -> String {
        func t(_ x: Timestamp?) -> String { x.map { "\($0)" } ?? "null" }
        var parts: [String] = []
        if stateKey { parts.append("state: \(s.state.rawValue)") }
        if stateKey {
            if let u = s.user { parts.append("user: \(q(u))") }
            if let d = s.device { parts.append("device: \(q(d))") }
            if let m = s.authMode { parts.append("auth_mode: \(m.rawValue)") }
            if let x = s.lastIdPLogin { parts.append("last_idp_login: \(x)") }
            if let x = s.lastOnline { parts.append("last_online: \(x)") }
            if let x = s.lastActivity { parts.append("last_activity: \(x)") }
            if let x = s.highestTime { parts.append("highest_time: \(x)") }
        } else {
            parts.append("user: \(s.user.map(q) ?? "null")")
            parts.append("device: \(s.device.map(q) ?? "null")")
            parts.append("auth_mode: \(s.authMode?.rawValue ?? "null")")
            parts.append("last_idp_login: \(t(s.lastIdPLogin))")
            parts.append("last_online: \(t(s.lastOnline))")
            parts.append("last_activity: \(t(s.lastActivity))")
            parts.append("highest_time: \(t(s.highestTime))")
        }
        parts.append(
            "failures: { biometric: \(s.failures.biometric), offline_login: \(s.failures.offlineLogin), idp_login: \(s.failures.idpLogin) }"
        )
        parts.append("read_only: \(s.readOnly)")
        parts.append("biometric_locked: \(s.biometricLocked)")
        return "{ " + parts.joined(separator: ", ") + " }"
    }

    /// Writes the policy and a scenario whose last step expects what the model (the documents)
    /// decides; returns the scenario's path.
    static func write(_ c: Case, _ m: Mismatch, index: Int, out: String) -> String {
        try? FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let name = "repro-\(index)"
        var spec = c.spec
        spec.name = name
        let policyFile = "\(name).policy.yaml"
        try? spec.yaml.write(toFile: (out as NSString).appendingPathComponent(policyFile), atomically: true, encoding: .utf8)

        let first = c.events.first?.time ?? SequenceGenerator.start
        var y = "# Reproducer written by DifferentialTests (issue 16): the engine and the reference model\n"
        y += "# (written from docs/) disagree at the last step, which expects the model's outcome.\n"
        y += "# differing: \(m.fields.joined(separator: ", "))\n"
        y += "# engine: \(describe(m.engine))\n"
        y += "# model:  \(describe(m.model))\n"
        y += "# API form: state \(json(c.initial))\n"
        for e in c.events { y += "#   event \(json(e))\n" }
        if let compiled = c.spec.compile(),
            c.events.contains(where: { ReferenceModel(policy: compiled.validated).incompleteProblem($0) != nil })
        {
            y += "# NOTE: an event is incomplete (a missing fact, an attribute not declared or of the wrong type):\n"
            y += "# a scenario step refuses it when loading, so the scenario cannot show it; use the API form.\n"
        }
        if m.model.noticeDelay == nil && m.engine.noticeDelay != nil {
            y += "# NOTE: the model gives no notice delay, the engine \(m.engine.noticeDelay!); `expect` cannot say none.\n"
        }
        y += "policy: \(policyFile)\nscenarios:\n"
        y += "  - name: \(q("engine and reference model disagree: " + m.fields.joined(separator: ", ")))\n"
        y += "    start: \(first)\n"
        if c.initial != .signedOut { y += "    state: \(stateYAML(c.initial, stateKey: true))\n" }
        y += "    steps:\n"
        for (i, e) in c.events.enumerated() {
            y += eventYAML(e, indent: "      ")
            guard i == c.events.count - 1 else { continue }
            let o = m.model
            y += "        expect:\n"
            // Only what the documents fix: a field they leave open is not expected.
            let open = o.unspecified
            if !open.contains("decision") { y += "          decision: \(o.decision?.rawValue ?? "none")\n" }
            y += "          reason: \(o.reason)\n"
            if let msg = o.message { y += "          message: \(q(msg))\n" }
            y += "          state: \(o.state.state.rawValue)\n"
            if !open.contains("scope") { y += "          scope: \(o.scope?.rawValue ?? "none")\n" }
            y += "          auth_mode: \(o.authMode?.rawValue ?? "null")\n"
            y += "          notices: [\(o.notices.names.joined(separator: ", "))]\n"
            if let d = o.noticeDelay { y += "          notice_delay: \(d)\n" }
            y += "          session: \(stateYAML(o.state, stateKey: false))\n"
        }
        let path = (out as NSString).appendingPathComponent("\(name).yaml")
        try? y.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Whether the scenario file loads and fails against the engine, as a reproducer should.
    static func verify(_ path: String) -> String {
        let input = CheckInput.load(policies: [], scenarios: [path])
        let errors = input.diagnostics.filter { $0.severity == .error }
        if !errors.isEmpty { return "does not load: " + errors.map { "\($0.code): \($0.message)" }.joined(separator: "; ") }
        guard let s = input.scenarios.first, let p = input.policies[s.policy] else { return "does not load" }
        let r = ScenarioRunner.run(s, against: p.compiled)
        return r.passed
            ? "PASSES on the engine (not a reproducer)" : "fails on the engine: " + (r.failure?.mismatches.joined(separator: "; ") ?? "")
    }

    // MARK: - Tests

    @Test("engine and reference model agree on random policies and sequences")
    func differential() {
        let out = Self.outFolder()
        let result = Self.run(steps: Self.steps, seed: Self.seed, out: out)
        print("Differential: " + Self.summary(result))
        #expect(result.refused * 10 < result.policies, "too many generated policies refused: \(result.refused) of \(result.policies)")
        let disagreements = result.found.count
        #expect(disagreements == 0, "engine and reference model disagree; reproducers in \(out):\n\(Self.summary(result))")
    }

    @Test("a fault seeded in the model is found and shrunk to a short reproducer")
    func seededFault() {
        let out = (NSTemporaryDirectory() as NSString).appendingPathComponent("sessionpolicy-diff-fault-\(getpid())")
        let result = Self.run(steps: 20_000, seed: Self.seed, fault: .limitInclusive, out: out, maxReports: 25)
        print("Seeded fault: " + Self.summary(result))
        let limits: [Reason] = [.sessionMaxExceeded, .sessionIdleExceeded, .offlineWindowExceeded]
        let faulty = result.found.values.filter {
            limits.contains($0.shrunkMismatch.model.reason) && $0.shrunkMismatch.engine.reason != $0.shrunkMismatch.model.reason
        }
        #expect(faulty.count > 0, "the seeded fault (`>=` for `>` at a limit) was not found")
        for f in faulty {
            #expect(f.shrunk.events.count <= 3, "not shrunk: \(f.shrunk.events.count) steps")
        }
    }
}

/// Metamorphic properties of the engine over the same random policies and sequences: shifting
/// every time by the same amount changes no outcome but its times; renaming users and devices
/// consistently changes no decision, reason or notices.
@Suite("Metamorphic properties of the engine")
struct MetamorphicTests {
    static let policies = Int(ProcessInfo.processInfo.environment["SESSIONPOLICY_META_POLICIES"] ?? "") ?? 60

    /// Random cases, each with the engine's outcomes.
    static func cases(seed: UInt64, policies: Int) -> [(CompiledPolicy, DifferentialTests.Case)] {
        var r = SplitMix(seed: seed)
        var out: [(CompiledPolicy, DifferentialTests.Case)] = []
        var index = 0
        while out.count < policies * 10 {
            let spec = PolicyGenerator.policy(&r, index: index)
            index += 1
            guard let compiled = spec.compile() else { continue }
            let gen = SequenceGenerator(policy: compiled.policy)
            for _ in 0..<10 {
                let initial = gen.initialState(&r)
                var s = initial
                var previous = s.highestTime ?? SequenceGenerator.start
                var events: [Event] = []
                for _ in 0..<12 {
                    let e = gen.event(&r, s, previous: previous)
                    previous = e.time
                    events.append(e)
                    s = compiled.evaluate(s, e).state
                }
                out.append((compiled, DifferentialTests.Case(spec: spec, initial: initial, events: events)))
            }
        }
        return out
    }

    static func shifted(_ t: Timestamp?, _ by: Int64) -> Timestamp? {
        t.map { Timestamp(millisecondsSinceEpoch: $0.millisecondsSinceEpoch + by) }
    }

    static func shifted(_ s: SessionState, _ by: Int64) -> SessionState {
        var n = s
        n.lastIdPLogin = shifted(s.lastIdPLogin, by)
        n.lastOnline = shifted(s.lastOnline, by)
        n.lastActivity = shifted(s.lastActivity, by)
        n.highestTime = shifted(s.highestTime, by)
        return n
    }

    @Test("shifting every time by the same amount changes no outcome beyond its times")
    func timeShift() {
        var failures: [String] = []
        var r = SplitMix(seed: 61)
        for (compiled, c) in Self.cases(seed: 60, policies: Self.policies) {
            let by: Int64 = r.pick([1, -1, 999, 86_400_000, -86_400_000, 1000 * 86_400_000, -3 * 365 * 86_400_000 + 7])
            var a = c.initial
            var b = Self.shifted(c.initial, by)
            for (i, e) in c.events.enumerated() {
                var f = e
                f.time = Self.shifted(e.time, by)!
                let x = compiled.evaluate(a, e)
                let y = compiled.evaluate(b, f)
                var expected = x
                expected.state = Self.shifted(x.state, by)
                if expected != y {
                    failures.append(
                        "\(c.spec.name) step \(i) shifted by \(by) ms: \(e.kind.rawValue) in \(a.state.rawValue)\n  original: "
                            + DifferentialTests.describe(x) + "\n  shifted:  " + DifferentialTests.describe(y)
                            + "\n  state \(DifferentialTests.json(a)) event \(DifferentialTests.json(e))\n\(c.spec.yaml)")
                    break
                }
                a = x.state
                b = y.state
            }
            if failures.count >= 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("renaming users and devices consistently changes no decision, reason or notices")
    func renaming() {
        // Names are compared scalar by scalar: `zoë` in NFC and in NFD are two users, renamed
        // apart (a `String` key would map both, as Swift's `==` takes them for one).
        let users = [("alice", "u-\u{00E9}1"), ("bob", "Bob Two"), ("zo\u{EB}", "Z"), ("zoe\u{308}", "Z2"), ("mallory", "m")]
        let devices = [("phone-1", "device \u{1F4F1}"), ("phone-2", "tablet-9")]
        func rename(_ n: String, _ table: [(String, String)]) -> String { table.first { sameScalars($0.0, n) }?.1 ?? "other-" + n }
        func user(_ u: String?) -> String? { u.map { rename($0, users) } }
        func device(_ d: String?) -> String? { d.map { rename($0, devices) } }
        func renamed(_ s: SessionState) -> SessionState {
            var n = s
            n.user = user(s.user)
            n.device = device(s.device)
            return n
        }
        var failures: [String] = []
        for (compiled, c) in Self.cases(seed: 62, policies: Self.policies) {
            var a = c.initial
            var b = renamed(c.initial)
            for (i, e) in c.events.enumerated() {
                var f = e
                f.user = user(e.user)
                f.device.id = device(e.device.id)
                let x = compiled.evaluate(a, e)
                let y = compiled.evaluate(b, f)
                if x.decision != y.decision || x.reason != y.reason || x.notices != y.notices || renamed(x.state) != y.state
                    || x.scope != y.scope || x.authMode != y.authMode || x.transition != y.transition
                {
                    failures.append(
                        "\(c.spec.name) step \(i): \(e.kind.rawValue) in \(a.state.rawValue)\n  original: " + DifferentialTests.describe(x)
                            + "\n  renamed:  " + DifferentialTests.describe(y))
                    break
                }
                a = x.state
                b = y.state
            }
            if failures.count >= 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
