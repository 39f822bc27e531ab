import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyJSON
import SessionPolicyTestSupport
import Testing

/// The conformance suite every runtime runs (spec/conformance/README.md): for each shipped
/// policy its machine document and vectors (a state, an event, the outcome the Swift engine
/// writes), from every step of the shipped and generated scenarios and from seeded random
/// sequences timed at the policy's boundaries. `RECORD_SNAPSHOTS=1` writes them again; without
/// it, a test fails when the committed files are stale, and Swift runs them all through the
/// machine document alone.
@Suite("Conformance suite")
struct ConformanceTests {
    /// The shipped policies with their scenarios, and the conformance-only policies of
    /// spec/conformance/policies (every attribute type, comparison and fact in rules; the levers
    /// the shipped policies leave at their defaults) with their covering scenarios.
    static let input = CheckInput.load(
        policies: [Fixtures.path("policies"), Fixtures.path("spec/conformance/policies")],
        scenarios: [
            Fixtures.path("examples"), Fixtures.path("examples/generated"), Fixtures.path("spec/conformance/scenarios"),
        ])
    static let shipped = input.policies.keys.sorted()
    static let record = ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil
    /// Random sequences per policy, and steps in each.
    static let sequences = 150
    static let length = 6
    /// Single steps from random states, per policy.
    static let singles = 1500

    static func write(_ s: SessionState) -> String {
        var out: [UInt8] = []
        FastJSON.append(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func write(_ o: Outcome) -> String {
        var out: [UInt8] = []
        FastJSON.append(o, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func write(_ e: Event) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(e), as: UTF8.self)
    }

    /// The vectors of one policy, one per line: `{"id":...,"state":...,"event":...,"want":...}`.
    static func vectors(_ name: String) throws -> String {
        let compiled = try #require(input.policies[name]).compiled
        var lines: [String] = []
        func add(_ id: String, _ state: SessionState, _ event: Event) throws -> SessionState {
            let idJSON = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
            let eventJSON = try write(event)
            // An event the strict reader refuses (a fact its kind needs is missing) is a refusal
            // vector: every runtime must refuse it with the same code, and decide nothing.
            do {
                _ = try Event(json: Data(eventJSON.utf8), file: "event")
            } catch {
                let code = error.diagnostics.first?.code.rawValue ?? "invalid-value"
                lines.append(#"{"id":\#(idJSON),"state":\#(write(state)),"event":\#(eventJSON),"refuse":"\#(code)"}"#)
                return state
            }
            let outcome = compiled.evaluate(state, event)
            lines.append(#"{"id":\#(idJSON),"state":\#(write(state)),"event":\#(eventJSON),"want":\#(write(outcome))}"#)
            return outcome.state
        }
        for scenario in input.scenarios where scenario.policy == name {
            var state = scenario.initial
            let file = (scenario.file as NSString).lastPathComponent
            for step in scenario.steps {
                guard case let .success(event) = step.event else { continue }
                state = try add("\(file): \(scenario.name): step \(step.number)", state, event)
            }
        }
        // Malformed states: every runtime refuses them before deciding anything.
        let launch =
            #"{"device":{"id":"device-1","integrity":"ok","keystore":"hardware"},"network":"offline","time":"2026-01-01T00:00:00Z","type":"launch","user":"alice"}"#
        for (id, state) in [
            ("refused: an unknown machine state", #"{"failures":{"biometric":0,"idp_login":0,"offline_login":0},"state":"flying"}"#),
            (
                "refused: a key a state does not have",
                #"{"failures":{"biometric":0,"idp_login":0,"offline_login":0},"state":"active","trusted":true}"#
            ),
            (
                "refused: a time that is not one",
                #"{"failures":{"biometric":0,"idp_login":0,"offline_login":0},"highest_time":"yesterday","state":"active"}"#
            ),
            ("refused: a negative failure count", #"{"failures":{"biometric":-1,"idp_login":0,"offline_login":0},"state":"active"}"#),
            (
                "refused: a user that is a number",
                #"{"failures":{"biometric":0,"idp_login":0,"offline_login":0},"state":"active","user":12}"#
            ),
            (
                "refused: a device that is true",
                #"{"device":true,"failures":{"biometric":0,"idp_login":0,"offline_login":0},"state":"active"}"#
            ),
        ] {
            var code = "none"
            do { _ = try SessionState(json: Data(state.utf8), file: "state") } catch {
                code = error.diagnostics.first?.code.rawValue ?? "none"
            }
            lines.append(#"{"id":"\#(id)","state":\#(state),"event":\#(launch),"refuse":"\#(code)"}"#)
        }
        // Malformed events: a name that is not a string.
        let signedOut = #"{"failures":{"biometric":0,"idp_login":0,"offline_login":0},"state":"signed_out"}"#
        for (id, event) in [
            (
                "refused: an app id that is false",
                #"{"app_id":false,"network":"offline","time":"2026-01-01T00:00:00Z","type":"launch","user":"alice"}"#
            ),
            (
                "refused: a device id that is a number",
                #"{"device":{"id":-1.5e3},"network":"online","time":"2026-01-01T00:00:00Z","type":"resume"}"#
            ),
        ] {
            var code = "none"
            do { _ = try Event(json: Data(event.utf8), file: "event") } catch { code = error.diagnostics.first?.code.rawValue ?? "none" }
            lines.append(#"{"id":"\#(id)","state":\#(signedOut),"event":\#(event),"refuse":"\#(code)"}"#)
        }
        var random = SplitMix64(seed: UInt64(truncatingIfNeeded: name.utf8.reduce(5381) { ($0 << 5) &+ $0 &+ Int($1) }))
        let times = boundaries(compiled.policy)
        for n in 0..<sequences {
            var state = SessionState.signedOut
            var clock: Int64 = 1_767_225_600_000
            for k in 0..<length {
                let delta = times[Int(random.next() % UInt64(times.count))]
                clock += delta
                let event = randomEvent(&random, at: clock, state: state, compiled)
                state = try add("random \(n): step \(k + 1)", state, event)
            }
        }
        // Single steps from random states of every machine state (user, device, auth mode,
        // the four times at the policy's boundaries, counters near the retry limits, flags):
        // transitions that sequences from `signed_out` seldom reach.
        for n in 0..<singles {
            let clock: Int64 = 1_767_225_600_000
            func ago() -> Timestamp? {
                random.next() % 5 == 0
                    ? nil : Timestamp(millisecondsSinceEpoch: clock - abs(times[Int(random.next() % UInt64(times.count))]))
            }
            func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
            // Every other one a healthy session and a well-formed event (the user's own device,
            // a hardware keystore, integrity ok, recent times, every attribute at a valid value),
            // so the long chains of a login attempt are followed to their rules.
            let healthy = n % 2 == 1
            func recent() -> Timestamp? { Timestamp(millisecondsSinceEpoch: clock - pick([0, 1000, 60_000, 3_600_000])) }
            let state = SessionState(
                state: pick(MachineState.allCases), user: healthy ? "alice" : pick(["alice", "alice", nil]),
                device: healthy ? "device-1" : pick(["device-1", "device-1", nil]),
                authMode: healthy
                    ? pick([AuthMode.unprotected, .biometric]) : pick([AuthMode.unprotected, .biometric, .password, .pin, nil]),
                lastIdPLogin: healthy ? recent() : ago(), lastOnline: healthy ? recent() : ago(),
                lastActivity: healthy ? recent() : ago(), highestTime: healthy ? recent() : ago(),
                failures: .init(biometric: pick([0, 1, 2, 4]), offlineLogin: pick([0, 1, 2, 4]), idpLogin: pick([0, 1, 2, 4])),
                readOnly: random.next() % 4 == 0, biometricLocked: !healthy && random.next() % 4 == 0)
            var event = randomEvent(
                &random, at: clock + pick([0, 1000, -1000, 86_400_000, -2 * 86_400_000]), state: state, compiled)
            // Half of them login attempts, whose chains are the longest.
            if n % 4 < 2 { event.kind = pick([.launch, .resume]) }
            if healthy {
                event.user = "alice"
                event.device = .init(id: "device-1", keystore: .hardware, integrity: .ok)
                event.network = event.network ?? .online
                event.attributes = event.attributes.filter { name, _ in compiled.policy.attributes.contains { $0.name == name } }
                for a in compiled.policy.attributes where !(a.type.accepts(event.attributes[a.name] ?? "")) {
                    switch a.type {
                    case let .words(words): event.attributes[a.name] = pick(words)
                    case .boolean: event.attributes[a.name] = pick(["true", "false"])
                    case .integer: event.attributes[a.name] = pick(["0", "1", "3", "5"])
                    case .duration: event.attributes[a.name] = pick(["0s", "3d", "1d"])
                    case .version: event.attributes[a.name] = pick(["2.4.0", "2.3.99", "10", "9.9.9"])
                    case .string: event.attributes[a.name] = pick(["a", "b"])
                    }
                }
            }
            _ = try add("random state \(n)", state, event)
        }
        lines += try unicodeVectors(name, compiled)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Time steps in milliseconds: the policy's limits and tolerances exactly, a millisecond and a
    /// second either side, no time at all, and clocks set back within and beyond the tolerance.
    static func boundaries(_ p: Policy) -> [Int64] {
        var limits: [Int64] = [0, 1000, 60_000, 86_400_000]
        for span in [p.session.max, p.session.idle, p.offline.window, p.device.clockTolerance].compactMap({ $0 }) {
            let ms = span.seconds * 1000
            limits += [ms, ms - 1, ms + 1, ms - 1000, ms + 1000, -ms, -ms - 1000]
        }
        return limits.filter { $0 > -400 * 86_400_000 }
    }

    static func randomEvent(_ r: inout SplitMix64, at clock: Int64, state: SessionState, _ compiled: CompiledPolicy) -> Event {
        func pick<T>(_ values: [T]) -> T { values[Int(r.next() % UInt64(values.count))] }
        let kind = pick(EventKind.allCases)
        var e = Event(
            kind, at: Timestamp(millisecondsSinceEpoch: clock), network: pick([.online, .offline, .online, nil]),
            // A user written in two Unicode forms (NFC and NFD): two users to every runtime, which
            // compare names scalar by scalar (docs/machine-format.md, "String equality").
            user: pick([state.user ?? "alice", state.user ?? "alice", "mallory", "zo\u{EB}", "zoe\u{308}", nil]),
            device: .init(
                id: pick([state.device ?? "device-1", state.device ?? "device-1", "device-2", nil]),
                keystore: pick([.hardware, .software, .none, nil]), integrity: pick([.ok, .ok, .ok, .compromised, nil])),
            authMode: pick([AuthMode.unprotected, .biometric, .password, .pin, nil]), cause: pick([.network, .invalidToken, nil]),
            unsyncedItems: pick([nil, 0, 3]), attributes: [:])
        if kind == .deviceSessionDetected { e.appID = pick(["com.example.other", "com.example.app", nil]) }
        // Each declared attribute three times in four, at values that sit on the rules' constants
        // and at the edges of what its type accepts; now and then a value its type refuses.
        for a in compiled.policy.attributes where r.next() % 4 != 0 {
            let invalid = r.next() % 16 == 0
            switch a.type {
            case let .words(words): e.attributes[a.name] = invalid ? pick(["", words[0].uppercased()]) : pick(words)
            case .boolean: e.attributes[a.name] = invalid ? pick(["True", "1", ""]) : pick(["true", "false"])
            case .integer:
                e.attributes[a.name] =
                    invalid
                    ? pick(["1.5", "1e3", "", " 5", "9223372036854775808"])
                    : pick(["0", "1", "3", "4", "5", "-3", "+5", "007", "9223372036854775807", "-9223372036854775808"])
            case .duration:
                e.attributes[a.name] =
                    invalid
                    ? pick(["3", "-1d", "1.5d", "36601d", "3 d", ""]) : pick(["0s", "3d", "2d23h59m59s", "30d", "1w", "72h", "1d12h"])
            case .version:
                e.attributes[a.name] =
                    invalid
                    ? pick(["1..2", "1.2.3.4.5", "v2", "", "-1", "99999999999999999999"])
                    : pick(["1.0", "2.4.0", "2.4", "2.3.99", "10", "9.9.9", "09.9.9.0", "+2.4"])
            case .string: e.attributes[a.name] = pick(["a", "b", "", "B", "a b"])
            }
        }
        // An attribute the policy does not declare makes the event invalid too.
        if !compiled.policy.attributes.isEmpty && r.next() % 32 == 0 { e.attributes["undeclared"] = "x" }
        return e
    }

    static func path(_ relative: String) -> String { Fixtures.path("spec/conformance/\(relative)") }

    /// Machine documents every runtime must refuse, one per line: `{"id", "document", "refuse"}`,
    /// the document as a JSON string (it need not be JSON) and the code of the first diagnostic
    /// the Swift reader gives. Made from the conformance policy's document by one change each,
    /// its digest written anew unless the change is to the digest or comes after it.
    static func refusedDocuments() throws -> String {
        let compiled = try #require(input.policies["every-rule"]).compiled
        guard case let .object(good) = MachineDocument.value(of: compiled.machine, source: "every-rule.yaml"),
            case let .array(transitions)? = good["transitions"], case let .object(first) = transitions[0]
        else { throw CancellationError() }
        func signed(_ m: [String: CanonicalJSON]) -> String {
            var m = m
            m["digest"] = .string(MachineDocument.digest(of: .object(m)))
            return CanonicalJSON.object(m).text
        }
        func changed(_ change: (inout [String: CanonicalJSON]) -> Void) -> String {
            var m = good
            change(&m)
            return signed(m)
        }
        func transition(_ i: Int, _ change: (inout [String: CanonicalJSON]) -> Void) -> String {
            changed { m in
                guard case var .array(ts)? = m["transitions"], case var .object(t) = ts[i] else { return }
                change(&t)
                ts[i] = .object(t)
                m["transitions"] = .array(ts)
            }
        }
        func action(_ i: Int, _ key: String, _ value: CanonicalJSON) -> String {
            transition(i) { t in
                guard case var .object(a)? = t["action"] else { return }
                a[key] = value
                t["action"] = .object(a)
            }
        }
        let text = CanonicalJSON.object(good).text
        // The index of the first group's final `always` guard.
        let lastOfFirstGroup = transitions.firstIndex { t in
            guard case let .object(m) = t, case let .object(g)? = m["guard"] else { return false }
            return g["kind"] == .string("always")
        }!
        let maxGuard = transitions.firstIndex { t in
            guard case let .object(m) = t, case let .object(g)? = m["guard"] else { return false }
            return g["kind"] == .string("session_max_exceeded")
        }!
        let ruleGuard = transitions.firstIndex { t in
            guard case let .object(m) = t, case let .object(g)? = m["guard"] else { return false }
            return g["kind"] == .string("rule")
        }!
        let cases: [(String, String)] = [
            ("not JSON", String(text.prefix(40))),
            ("empty", ""),
            ("a list, not a document", "[" + text + "]"),
            ("another format", changed { $0["format"] = .string("sessionpolicy-machine/2") }),
            ("no format", changed { $0["format"] = nil }),
            ("a byte changed after the digest was taken", text.replacingOccurrences(of: "update the app", with: "update the apq")),
            ("no digest", CanonicalJSON.object(good.filter { $0.key != "digest" }).text),
            ("a digest of another machine", text.replacingOccurrences(of: "sha256:", with: "sha256:0")),
            ("the same member twice", "{\"name\":\"every-rule\"," + text.dropFirst()),
            ("a member no reader knows", changed { $0["comment"] = .string("hello") }),
            ("a missing member", changed { $0["levers"] = nil }),
            ("a member of the wrong type", changed { $0["reveal_refusal"] = .string("no") }),
            (
                "a number that is not an integer",
                text.replacingOccurrences(of: "\"limit_seconds\":2592000", with: "\"limit_seconds\":2592000.5")
            ),
            (
                "the states in another order",
                changed {
                    $0["states"] = .array(
                        ["active", "signed_out", "suspended", "awaiting_biometric", "awaiting_idp", "read_only"].map(CanonicalJSON.string))
                }
            ),
            (
                "a state this engine does not have",
                changed {
                    $0["states"] = .array(
                        ["signed_out", "active", "suspended", "awaiting_biometric", "awaiting_idp", "read_only", "flying"].map(
                            CanonicalJSON.string))
                }
            ),
            (
                "an event missing from the list",
                changed { m in
                    guard case let .array(es)? = m["events"] else { return }
                    m["events"] = .array(Array(es.dropLast()))
                }
            ),
            ("a transition to a state that does not exist", action(0, "target", .string("flying"))),
            ("a decision that does not exist", action(0, "decision", .string("maybe"))),
            ("an effect that does not exist", action(0, "effects", .array([.string("grant_admin")]))),
            ("effects out of their order", action(0, "effects", .array([.string("record_online"), .string("clear_session")]))),
            ("a notice that does not exist", action(0, "notices", .array([.string("be_happy")]))),
            ("a negative notice delay", action(0, "notice_delay_seconds", .int(-5))),
            ("a notice delay longer than any policy may set", action(0, "notice_delay_seconds", .int(3_162_240_001))),
            (
                "a limit longer than any policy may set",
                transition(maxGuard) { $0["guard"] = .object(["kind": .string("session_max_exceeded"), "limit_seconds": .int(Int64.max)]) }
            ),
            ("a guard kind that does not exist", transition(0) { $0["guard"] = .object(["kind": .string("moon_phase")]) }),
            ("a guard missing its parameter", transition(ruleGuard) { $0["guard"] = .object(["kind": .string("rule")]) }),
            ("a rule that does not exist", transition(ruleGuard) { $0["guard"] = .object(["kind": .string("rule"), "rule": .int(99)]) }),
            ("an id out of place", transition(1) { $0["id"] = .int(0) }),
            ("a transition in another state's group", transition(0) { $0["from"] = .string("active") }),
            (
                "a group without its final always",
                transition(lastOfFirstGroup) { $0["guard"] = .object(["kind": .string("network_offline")]) }
            ),
            (
                "a transition more than the machine has",
                changed { m in
                    guard case let .array(ts)? = m["transitions"] else { return }
                    m["transitions"] = .array(ts + [.object(first)])
                }
            ),
            (
                "an attribute of a type that does not exist",
                changed { m in
                    guard case var .array(attrs)? = m["attributes"], case var .object(a) = attrs[0] else { return }
                    a["type"] = .object(["kind": .string("colour")])
                    attrs[0] = .object(a)
                    m["attributes"] = .array(attrs)
                }
            ),
            (
                "a scope missing",
                changed { m in
                    guard case var .object(sc)? = m["scopes"] else { return }
                    sc["none_hardware"] = nil
                    m["scopes"] = .object(sc)
                }
            ),
        ]
        var lines: [String] = []
        // Documents every runtime must accept, with the digest it must report: the digest is
        // taken of the canonical text of what was received, so whitespace and member order do
        // not change it.
        let spaced = text.replacingOccurrences(of: ",\"", with: ", \"").replacingOccurrences(of: "\":", with: "\" : ")
        let reordered = "{\"name\":\"every-rule\"," + text.dropFirst().replacingOccurrences(of: ",\"name\":\"every-rule\"", with: "")
        for (id, document) in [("whitespace between tokens", spaced), ("members in another order", reordered)] {
            let machine = try PolicyMachine(document: Data(document.utf8), file: "machine.json")
            let idJSON = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
            lines.append(#"{"id":\#(idJSON),"document":\#(CanonicalJSON.string(document).text),"accept":"\#(machine.digest)"}"#)
        }
        for (id, document) in cases {
            var code = "accepted"
            do { _ = try PolicyMachine(document: Data(document.utf8), file: "machine.json") } catch {
                code = error.diagnostics.first?.code.rawValue ?? "none"
            }
            #expect(code != "accepted", "the Swift reader accepted \(id)")
            let idJSON = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
            lines.append(#"{"id":\#(idJSON),"document":\#(CanonicalJSON.string(document).text),"refuse":"\#(code)"}"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("the committed refused documents are the Swift reader's, and it refuses each")
    func refused() throws {
        let documents = try Self.refusedDocuments()
        if Self.record {
            try documents.write(toFile: Self.path("documents.jsonl"), atomically: true, encoding: .utf8)
            return
        }
        #expect(
            try String(contentsOfFile: Self.path("documents.jsonl"), encoding: .utf8) == documents,
            "stale: RECORD_SNAPSHOTS=1 swift test --disable-xctest --filter ConformanceTests")
    }

    @Test("the committed machine documents and vectors are the Swift engine's, not stale", arguments: shipped)
    func fresh(_ name: String) throws {
        let machine = try #require(Self.input.policies[name]).compiled.machineDocument + "\n"
        let vectors = try Self.vectors(name)
        if Self.record {
            try FileManager.default.createDirectory(atPath: Self.path("machines"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: Self.path("vectors"), withIntermediateDirectories: true)
            try machine.write(toFile: Self.path("machines/\(name).json"), atomically: true, encoding: .utf8)
            try vectors.write(toFile: Self.path("vectors/\(name).jsonl"), atomically: true, encoding: .utf8)
            return
        }
        let committedMachine = try String(contentsOfFile: Self.path("machines/\(name).json"), encoding: .utf8)
        let committedVectors = try String(contentsOfFile: Self.path("vectors/\(name).jsonl"), encoding: .utf8)
        #expect(committedMachine == machine, "stale: RECORD_SNAPSHOTS=1 swift test --disable-xctest --filter ConformanceTests")
        #expect(committedVectors == vectors, "stale: RECORD_SNAPSHOTS=1 swift test --disable-xctest --filter ConformanceTests")
    }

    /// The text of member `key` of a vector's line, up to member `next` (the members of a line
    /// are `id`, `state`, `event`, then `want` or `refuse`).
    static func member(_ line: Substring, _ key: String, before next: String) -> String? {
        guard let start = line.range(of: ",\"\(key)\":"), let end = line.range(of: ",\"\(next)\":", options: .backwards),
            start.upperBound <= end.lowerBound
        else { return nil }
        return String(line[start.upperBound..<end.lowerBound])
    }

    @Test("Swift passes every committed vector through the machine document alone, byte for byte", arguments: shipped)
    func swiftRuntime(_ name: String) throws {
        let machine = try PolicyMachine(
            document: try Data(contentsOf: URL(fileURLWithPath: Self.path("machines/\(name).json"))), file: "\(name).json")
        var passed = 0
        var failed: [String] = []
        for line in try String(contentsOfFile: Self.path("vectors/\(name).jsonl"), encoding: .utf8).split(separator: "\n") {
            let v = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            // The state and the event as written (a Foundation dictionary would merge keys that
            // are two spellings of one text, or a key written twice).
            let stateData = Data(try #require(Self.member(line, "state", before: "event")).utf8)
            let eventData = Data(try #require(Self.member(line, "event", before: v["refuse"] == nil ? "want" : "refuse")).utf8)
            if let code = v["refuse"] as? String {
                do {
                    _ = try SessionState(json: stateData, file: "state")
                    _ = try Event(json: eventData, file: "event")
                    failed.append(v["id"] as? String ?? "?")
                } catch {
                    if error.diagnostics.first?.code.rawValue == code { passed += 1 } else { failed.append(v["id"] as? String ?? "?") }
                }
                continue
            }
            let state = try SessionState(json: stateData, file: "state")
            let event = try Event(json: eventData, file: "event")
            let got = Self.write(machine.evaluate(state, event))
            // The vector's `want` exactly as written: the last member of the line.
            let want = try #require(line.range(of: #","want":"#)).upperBound
            if got == String(line[want..<line.index(before: line.endIndex)]) {
                passed += 1
            } else {
                failed.append(v["id"] as? String ?? "?")
            }
        }
        #expect(failed.isEmpty, "\(failed.prefix(5))")
        #expect(passed >= Self.sequences * Self.length)
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a seeded generator whose sequence is the same on every platform.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
