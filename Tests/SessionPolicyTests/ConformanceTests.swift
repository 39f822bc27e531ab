import Foundation
import SessionPolicy
import SessionPolicyCheck
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
    static let input = CheckInput.load(
        policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples"), Fixtures.path("examples/generated")])
    static let shipped = input.policies.keys.sorted()
    static let record = ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil
    /// Random sequences per policy, and steps in each.
    static let sequences = 150
    static let length = 6

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
        ] {
            var code = "none"
            do { _ = try SessionState(json: Data(state.utf8), file: "state") } catch {
                code = error.diagnostics.first?.code.rawValue ?? "none"
            }
            lines.append(#"{"id":"\#(id)","state":\#(state),"event":\#(launch),"refuse":"\#(code)"}"#)
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
            user: pick([state.user ?? "alice", state.user ?? "alice", "mallory", nil]),
            device: .init(
                id: pick([state.device ?? "device-1", state.device ?? "device-1", "device-2", nil]),
                keystore: pick([.hardware, .software, .none, nil]), integrity: pick([.ok, .ok, .ok, .compromised, nil])),
            authMode: pick([AuthMode.unprotected, .biometric, .password, .pin, nil]), cause: pick([.network, .invalidToken, nil]),
            unsyncedItems: pick([nil, 0, 3]), attributes: [:])
        if kind == .deviceSessionDetected { e.appID = pick(["com.example.other", "com.example.app", nil]) }
        for a in compiled.policy.attributes where r.next() % 4 != 0 {
            switch a.type {
            case let .words(words): e.attributes[a.name] = pick(words)
            case .boolean: e.attributes[a.name] = pick(["true", "false"])
            case .integer: e.attributes[a.name] = pick(["0", "1", "5"])
            case .duration: e.attributes[a.name] = pick(["0s", "3d", "30d"])
            case .version: e.attributes[a.name] = pick(["1.0", "2.4.0", "10"])
            case .string: e.attributes[a.name] = pick(["a", "b"])
            }
        }
        return e
    }

    static func path(_ relative: String) -> String { Fixtures.path("spec/conformance/\(relative)") }

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

    @Test("Swift passes every committed vector through the machine document alone, byte for byte", arguments: shipped)
    func swiftRuntime(_ name: String) throws {
        let machine = try PolicyMachine(
            document: try Data(contentsOf: URL(fileURLWithPath: Self.path("machines/\(name).json"))), file: "\(name).json")
        var passed = 0
        var failed: [String] = []
        for line in try String(contentsOfFile: Self.path("vectors/\(name).jsonl"), encoding: .utf8).split(separator: "\n") {
            let v = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let stateData = try JSONSerialization.data(withJSONObject: v["state"]!)
            let eventData = try JSONSerialization.data(withJSONObject: v["event"]!)
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
