import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyJSON
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The fast codec against its references: the located-syntax path for decoding (the strict JSON
/// reader `JSONSyntax` and `SyntaxReader`, no diagnostics) and `JSONEncoder` for encoding.
/// Decoding must return either nil (fall back) or exactly the reference's value, and never a
/// value for bytes the reference refuses; the shipped corpus must never fall back; encoding must
/// be byte-identical.
@Suite("FastJSON")
struct FastJSONTests {
    // MARK: The references

    /// One request of a batch, comparable.
    struct Pair: Equatable {
        var state: SessionState
        var event: Event
    }

    /// What a reader returned, comparable across shapes.
    enum Decoded: Equatable {
        case state(SessionState)
        case event(Event)
        case request(Pair)
        case batch([Pair])
    }

    enum Shape: String, CaseIterable {
        case state, event, request, batch, eventRequest
    }

    static func fast(_ shape: Shape, _ bytes: [UInt8]) -> Decoded? {
        switch shape {
        case .state: FastJSON.sessionState(bytes).map(Decoded.state)
        case .event: FastJSON.event(bytes).map(Decoded.event)
        case .request: FastJSON.evaluationRequest(bytes).map { .request(Pair(state: $0.state, event: $0.event)) }
        case .batch: FastJSON.batchRequest(bytes).map { .batch($0.map { Pair(state: $0.state, event: $0.event) }) }
        case .eventRequest: FastJSON.eventRequest(bytes).map(Decoded.event)
        }
    }

    /// The slow path, the reference: `JSONSyntax`, then `SyntaxReader`; nil if anything was reported.
    static func slow(_ shape: Shape, _ bytes: [UInt8]) -> Decoded? {
        guard case let .success(root?) = JSONSyntax.parse(Data(bytes), file: "body.json") else { return nil }
        var r = SyntaxReader()
        let value: Decoded?
        switch shape {
        case .state: value = r.sessionState(root, path: "").map(Decoded.state)
        case .event: value = r.event(root, path: "").map(Decoded.event)
        case .request: value = slowRequest(root, path: "", &r).map(Decoded.request)
        case .batch:
            var items: [Pair] = []
            if let f = r.fields(root, path: "", allowed: ["items"]), let list = r.require(f, "items").flatMap({ r.list($0, "items") }) {
                for (i, node) in list.enumerated() {
                    if let p = slowRequest(node, path: "items[\(i)]", &r) { items.append(p) }
                }
            }
            value = .batch(items)
        case .eventRequest:
            let f = r.fields(root, path: "", allowed: ["event"])
            value = f.flatMap { r.require($0, "event") }.flatMap { r.event($0, path: "event") }.map(Decoded.event)
        }
        return r.diagnostics.isEmpty ? value : nil
    }

    /// `{"state": ..., "event": ...}` as `policyctl eval` reads one document.
    static func slowRequest(_ node: SyntaxNode, path: String, _ r: inout SyntaxReader) -> Pair? {
        guard let f = r.fields(node, path: path, allowed: ["state", "event"]) else { return nil }
        var state = SessionState()
        if let s = f["state"], let st = r.sessionState(s, path: f.path("state")) { state = st }
        guard let e = r.require(f, "event").flatMap({ r.event($0, path: f.path("event")) }) else { return nil }
        return Pair(state: state, event: e)
    }

    /// Fast against slow over many documents.
    struct Tally {
        /// The fast path returned the slow path's value.
        var agreed = 0
        /// The fast path fell back where the slow path reads a value.
        var fellBack = 0
        /// Both refused.
        var bothRefused = 0
        /// The fast path returned a value the slow path does not: the contract is broken.
        var wrong: [String] = []

        mutating func check(_ shape: Shape, _ bytes: [UInt8]) {
            let f = FastJSONTests.fast(shape, bytes)
            let s = FastJSONTests.slow(shape, bytes)
            switch (f, s) {
            case (nil, nil): bothRefused += 1
            case (nil, _?): fellBack += 1
            case let (f?, s): if f == s { agreed += 1 } else { wrong.append("\(shape) \(String(decoding: bytes, as: UTF8.self))") }
            }
        }

        mutating func check(_ shape: Shape, _ text: String) { check(shape, Array(text.utf8)) }

        var summary: String { "agreed \(agreed), fell back \(fellBack), both refused \(bothRefused), wrong \(wrong.count)" }
    }

    // MARK: The shipped corpus

    struct Corpus: Sendable {
        var states: [SessionState] = []
        var events: [Event] = []
        var requests: [Pair] = []
        var outcomes: [Outcome] = []
    }

    /// Every state, event and outcome met running the shipped scenarios against the shipped
    /// policies (initial states, each step's event, outcome and next state).
    static let corpus: Corpus = {
        var c = Corpus()
        let input = CheckInput.load(policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples")])
        for scenario in input.scenarios {
            guard let policy = input.policies[scenario.policy]?.compiled else { continue }
            var state = scenario.initial
            c.states.append(state)
            for step in scenario.steps {
                guard case let .success(event) = step.event else { continue }
                let outcome = policy.evaluate(state, event)
                c.events.append(event)
                c.requests.append(Pair(state: state, event: event))
                c.outcomes.append(outcome)
                state = outcome.state
                c.states.append(state)
            }
        }
        return c
    }()

    struct RequestBody: Encodable {
        var state: SessionState?
        var event: Event
    }

    struct BatchBody: Encodable {
        var items: [RequestBody]
    }

    struct EventBody: Encodable {
        var event: Event
    }

    static let formats: [JSONEncoder.OutputFormatting] = [
        [.sortedKeys], [], [.prettyPrinted], [.prettyPrinted, .sortedKeys], [.sortedKeys, .withoutEscapingSlashes],
    ]

    static func json(_ value: some Encodable, _ format: JSONEncoder.OutputFormatting = [.sortedKeys]) -> [UInt8] {
        let e = JSONEncoder()
        e.outputFormatting = format
        return try! [UInt8](e.encode(value))
    }

    @Test("the shipped corpus is large enough to mean something")
    func corpusSize() {
        #expect(Self.corpus.states.count >= 100)
        #expect(Self.corpus.events.count >= 80)
        #expect(Set(Self.corpus.events.map(\.kind.rawValue)).count >= 12)
        #expect(Self.corpus.states.contains { $0.lastIdPLogin != nil && $0.authMode != nil && $0.user != nil })
    }

    @Test("every shipped state and event decodes to exactly the slow path's value, in every JSONEncoder format")
    func shippedCorpus() {
        var misses: [String] = []
        for format in Self.formats {
            func expectSame(_ shape: Shape, _ bytes: [UInt8], _ original: Decoded) {
                let f = Self.fast(shape, bytes)
                let s = Self.slow(shape, bytes)
                if f == nil || f != s || f != original { misses.append("\(shape) \(String(decoding: bytes, as: UTF8.self))") }
            }
            for state in Self.corpus.states { expectSame(.state, Self.json(state, format), .state(state)) }
            for event in Self.corpus.events {
                expectSame(.event, Self.json(event, format), .event(event))
                expectSame(.eventRequest, Self.json(EventBody(event: event), format), .event(event))
                expectSame(
                    .request, Self.json(RequestBody(state: nil, event: event), format), .request(Pair(state: SessionState(), event: event)))
            }
            for r in Self.corpus.requests {
                expectSame(.request, Self.json(RequestBody(state: r.state, event: r.event), format), .request(r))
            }
            let batch = BatchBody(items: Self.corpus.requests.map { RequestBody(state: $0.state, event: $0.event) })
            expectSame(.batch, Self.json(batch, format), .batch(Self.corpus.requests))
        }
        #expect(misses.isEmpty, "\(misses.count) misses, first: \(misses.prefix(3))")
    }

    // MARK: Documents written for the test

    /// A state with every key, as JSON key/value texts.
    static let fullState: [(String, String)] = [
        ("state", #""suspended""#), ("user", #""alice""#), ("device", #""phone-1""#), ("auth_mode", #""biometric""#),
        ("last_idp_login", #""2026-02-01T09:00:00Z""#), ("last_online", #""2026-02-10T09:00:00.250Z""#),
        ("last_activity", #""2026-02-20T10:00:00+01:00""#), ("highest_time", #""2026-02-20""#),
        ("failures", #"{"biometric": 1, "offline_login": 2, "idp_login": 0}"#), ("read_only", "true"), ("biometric_locked", "false"),
    ]

    /// An event with every key.
    static let fullEvent: [(String, String)] = [
        ("type", #""launch""#), ("time", #""2026-03-01T09:00:00Z""#), ("network", #""offline""#), ("user", #""alice""#),
        ("device", #"{"id": "phone-1", "keystore": "hardware", "integrity": "ok"}"#), ("auth_mode", #""none""#), ("cause", #""network""#),
        ("unsynced_items", "2"), ("attributes", #"{"license": "revoked", "tier": ""}"#), ("app_id", #""com.example.app1""#),
    ]

    static let minimalEvent: [(String, String)] = [("type", #""launch""#), ("time", #""2026-03-01T09:00:00Z""#), ("network", #""online""#)]

    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
    }

    @Test("the documents written for the test use every key the slow path knows, and decode fast")
    func everyKey() {
        #expect(Set(Self.fullState.map(\.0)) == Set(SyntaxReader.stateKeys))
        #expect(Set(Self.fullEvent.map(\.0)) == Set(["type", "time"] + SyntaxReader.contextKeys))
        var t = Tally()
        t.check(.state, Self.object(Self.fullState))
        t.check(.event, Self.object(Self.fullEvent))
        t.check(.event, Self.object(Self.minimalEvent))
        t.check(.request, "{\"state\": \(Self.object(Self.fullState)), \"event\": \(Self.object(Self.fullEvent))}")
        #expect(t.agreed == 4, "\(t.summary) \(t.wrong)")
    }

    /// JSON values to put in place of each value: every type, edge numbers, names with edge
    /// characters, escapes, times valid and not, every vocabulary word and near misses, objects.
    static let replacements: [String] = {
        var v = [
            "null", "true", "false", "True", "0", "1", "7", "-1", "-0", "01", "1.0", "1.5", "1e3", "1E3", "+1",
            "9223372036854775807", "9223372036854775808", "99999999999999999999", #""0""#, #""3""#,
            #""""#, #"" ""#, #""alice""#, #"" alice""#, #""alice ""#, #""al ice""#, #""jörg""#, #""ö""#, #""Ødegaard""#,
            "\"\u{00A0}alice\"", "\"alice\u{2003}\"", "\"a\u{3000}\"", #""😀""#, "\"a\u{2028}b\"", "\"a\u{85}b\"", "\"a\u{FEFF}b\"",
            "\"\u{FEFF}a\"", #""a\u0062""#, #""a\/b""#, #""a\"b""#, #""a\nb""#, "\"a\tb\"", "\"a\u{7F}b\"", "\"a\u{01}b\"", #""a\b""#,
            #""a/b""#, #""a#b""#, #""a: b""#, #""- a""#, #""&a""#, #""*a""#, #""!a""#, #""%a""#, #""@a""#, #""{a}""#, #""[a]""#,
            #""2026-03-01T09:00:00Z""#, #""2026-03-01T09:00:00.250Z""#, #""2026-03-01T09:00:00.123456Z""#, #""2026-03-01t09:00:00z""#,
            #""2026-03-01 09:00:00Z""#, #""2026-03-01T09:00:00+02:00""#, #""2026-03-01T09:00:00-00:30""#, #""2026-03-01""#,
            #""2026-02-29T00:00:00Z""#, #""2024-02-29T00:00:00Z""#, #""0000-01-01T00:00:00Z""#, #""0001-01-01T00:00:00Z""#,
            #""0001-01-01T00:00:00+01:00""#, #""9999-12-31T23:59:59.999Z""#, #""9999-12-31T23:59:59-01:00""#, #""+3d""#, #""-1h""#,
            #""+0s""#, #""2026-03-01T24:00:00Z""#, #""2026-13-01T00:00:00Z""#, #""yesterday""#, #""2026-03-01T09:00:00""#,
            #""2026-03-01T09:00:00.Z""#, #""20260301T090000Z""#, #""12026-03-01T09:00:00Z""#, "2026-03-01T09:00:00Z",
            #""Active""#, #""ACTIVE""#, #""signed-out""#, #"" active""#, #""active ""#, #""nonee""#, #""None""#, #""Launch""#,
            "{}", "[]", "[1]", #"["launch"]"#, #"{"biometric": 1}"#, #"{"biometric": 1, "offline_login": 2, "idp_login": 3}"#,
            #"{"biometric": -1}"#, #"{"biometric": "1"}"#, #"{"biometric": 1, "biometric": 2}"#, #"{"x": 1}"#, #"{"biometric": null}"#,
            #"{"id": "d1", "keystore": "hardware", "integrity": "ok"}"#, #"{"id": " d1"}"#, #"{"keystore": "none"}"#,
            #"{"integrity": "compromised", "id": "d"}"#, #"{"keystore": "tpm"}"#, #"{"id": 5}"#,
            #"{"license": "revoked", "tier": ""}"#, #"{"license": 1}"#, #"{"license": null}"#, #"{"license": true}"#,
            #"{"a": "x", "a": "y"}"#, #"{"licence": "révoquée", "😀": "a😀b", "<<": "x", "a b": " x "}"#,
            "{\"k\": \"a\u{2028}b\"}", "{\"k\u{85}\": \"v\"}", "{\"k\": \"\u{FFFD}\u{E000}\u{10FFFF}\"}",
            "{\"\u{E9}\": \"1\", \"e\u{301}\": \"2\"}", #"{"": "x"}"#, #"{"a": ["x"]}"#, #"{"a": {"b": "c"}}"#,
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
            String(repeating: #"{"a": "#, count: 100) + "1" + String(repeating: "}", count: 100),
        ]
        let words: [[String]] = [
            MachineState.allCases.map(\.rawValue), AuthMode.allCases.map(\.rawValue), EventKind.allCases.map(\.rawValue),
            Network.allCases.map(\.rawValue), Keystore.allCases.map(\.rawValue), Integrity.allCases.map(\.rawValue),
            RefreshFailureCause.allCases.map(\.rawValue), Decision.allCases.map(\.rawValue), Scope.allCases.map(\.rawValue),
        ]
        v += Set(words.joined()).sorted().map { "\"\($0)\"" }
        return v
    }()

    /// Each key left out, repeated, misspelt and given every replacement value.
    static func variants(of pairs: [(String, String)]) -> [String] {
        var docs: [String] = []
        for (i, (key, value)) in pairs.enumerated() {
            var without = pairs
            without.remove(at: i)
            docs.append(object(without))
            docs.append(object(pairs + [(key, value)]))
            for typo in [key.uppercased(), key + " ", " " + key, String(key.dropLast()), key.replacingOccurrences(of: "_", with: "-")] {
                var p = pairs
                p[i].0 = typo
                docs.append(object(p))
            }
            for r in replacements {
                var p = pairs
                p[i].1 = r
                docs.append(object(p))
            }
        }
        return docs
    }

    @Test("every value replaced, every key removed, repeated or misspelt: the fast path agrees or falls back")
    func replacedValues() {
        var t = Tally()
        for doc in Self.variants(of: Self.fullState) { t.check(.state, doc) }
        for doc in Self.variants(of: Self.fullEvent) { t.check(.event, doc) }
        for doc in Self.variants(of: Self.minimalEvent) { t.check(.event, doc) }
        let request = [("state", Self.object(Self.fullState)), ("event", Self.object(Self.minimalEvent))]
        for doc in Self.variants(of: request) { t.check(.request, doc) }
        #expect(t.wrong.isEmpty, "\(t.summary): \(t.wrong.prefix(5))")
        // Not vacuous: a good share of the replacements are values the fast path must read.
        #expect(t.agreed >= 150, "\(t.summary)")
        #expect(t.bothRefused >= 1000, "\(t.summary)")
    }

    /// The indices just before and after every structural character outside strings.
    static func boundaries(_ bytes: [UInt8]) -> [Int] {
        var result: [Int] = [0, bytes.count]
        var inString = false
        for (i, b) in bytes.enumerated() {
            if b == UInt8(ascii: "\"") { inString.toggle() }
            if !inString, "{}[],:".utf8.contains(b) { result += [i, i + 1] }
        }
        return Array(Set(result)).sorted()
    }

    static let mutationBases: [(Shape, [UInt8])] = [
        (.state, Array(object(fullState).utf8)),
        (.event, Array(object(fullEvent).utf8)),
        (.request, Array("{\"state\": \(object(fullState)), \"event\": \(object(minimalEvent))}".utf8)),
        (
            .batch,
            Array(
                "{\"items\": [{\"event\": \(object(minimalEvent))}, {\"state\": {\"state\": \"active\"}, \"event\": \(object(fullEvent))}]}"
                    .utf8)
        ),
        (.eventRequest, Array("{\"event\": \(object(fullEvent))}".utf8)),
    ]

    @Test("whitespace between tokens, and around the document, is read the same")
    func whitespace() {
        var t = Tally()
        var mustRead: [String] = []
        for (shape, base) in Self.mutationBases {
            for i in Self.boundaries(base) {
                for space in [" ", "\n", "\t", "\r\n", "\r", "  \n\t  ", "\n\n"] {
                    let doc = Array(base[..<i]) + Array(space.utf8) + Array(base[i...])
                    t.check(shape, doc)
                    if Self.fast(shape, doc) == nil { mustRead.append(String(decoding: doc, as: UTF8.self)) }
                }
            }
        }
        #expect(t.wrong.isEmpty, "\(t.summary): \(t.wrong.prefix(5))")
        #expect(mustRead.isEmpty, "\(mustRead.count): \(mustRead.prefix(3))")
        #expect(t.agreed >= 500, "\(t.summary)")
    }

    @Test("truncated at every byte, garbage after the end, bytes replaced at random: agrees or falls back")
    func damaged() {
        var t = Tally()
        var random = SplitMix(seed: 42)
        let junk: [UInt8] = Array("\"\\{}[],: 09-xe.#&*!\t\n".utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xE2, 0xFF]
        for (shape, base) in Self.mutationBases {
            for n in 0..<base.count { t.check(shape, Array(base[..<n])) }
            for tail in ["x", ",", "}", "]", "{}", "\n---\n", "\n...\n", " #c", "\t", "\n\t", "\u{0}", "\n{}"] {
                t.check(shape, base + Array(tail.utf8))
            }
            t.check(shape, [0xEF, 0xBB, 0xBF] + base)
            for _ in 0..<400 {
                var doc = base
                for _ in 0..<(1 + random.below(2)) { doc[random.below(doc.count)] = junk[random.below(junk.count)] }
                t.check(shape, doc)
            }
        }
        #expect(t.wrong.isEmpty, "\(t.summary): \(t.wrong.prefix(5))")
        #expect(t.agreed >= 50, "\(t.summary)")
    }

    @Test("the cases named in the contract fall back")
    func namedCases() {
        let t = #""2026-03-01T09:00:00Z""#
        let cases: [(Shape, String)] = [
            (.state, #"{"state": "active", "colour": "blue"}"#),  // unknown key
            (.state, #"{"state": "active", "state": "active"}"#),  // duplicate key
            (.state, #"{"state": "active", "read_only": "true"}"#),  // wrong type
            (.state, #"{"state": "active", "last_online": "2026-02-30T00:00:00Z"}"#),  // bad time
            (.state, #"{"state": "sleeping"}"#),  // bad word
            (.state, #"{"state": "active"} x"#),  // trailing garbage
            (.state, #"{"state": "active""#),  // truncated
            (.state, #"{"state": "active", "failures": {"biometric": 99999999999999999999}}"#),  // huge number
            (.state, #"{"state": "active", "failures": {"biometric": -1}}"#),  // negative count
            (.state, #"{"state": "active", "last_online": "-2d"}"#),  // relative time
            (.state, #"{"user": "alice"}"#),  // missing state
            (.event, "{\"type\": \"launch\", \"time\": \(t)}"),  // launch without network
            (.event, "{\"type\": \"idp_login_succeeded\", \"time\": \(t), \"user\": \"a\"}"),  // without auth_mode
            (.event, "{\"type\": \"refresh_failed\", \"time\": \(t)}"),  // without cause
            (.event, "{\"type\": \"device_session_detected\", \"time\": \(t), \"user\": \"a\"}"),  // without app_id
            (.event, "{\"type\": \"background\", \"time\": \(t), \"unsynced_items\": 1.5}"),  // fraction
            (.event, "{\"type\": \"background\", \"time\": \(t), \"user\": \" a\"}"),  // surrounding space
            (.event, "{\"type\": \"background\"}"),  // no time
            (.request, "{\"state\": {\"state\": \"active\"}}"),  // no event
            (.request, "{\"state\": {\"state\": \"active\"}, \"event\": {\"type\": \"background\", \"time\": \(t)}, \"x\": 1}"),
            (.batch, "{\"items\": {}}"),
            (
                .eventRequest,
                "{\"event\": {\"type\": \"background\", \"time\": \(t)}, \"event\": {\"type\": \"background\", \"time\": \(t)}}"
            ),
            (.state, String(repeating: "[", count: 5000)),  // deep nesting
            (.state, #"{"state": "active", "failures": "# + String(repeating: #"{"a": "#, count: 5000)),
            // Not JSON, though YAML reads them: trailing commas, single quotes, comments, YAML.
            (.request, #"{"event": {"type": "background", "time": "2026-03-01T09:00:00Z"},}"#),
            (.batch, #"{"items": [{"event": {"type": "background", "time": "2026-03-01T09:00:00Z"}},]}"#),
            (.state, #"{"state": 'active'}"#),
            (.state, #"{"state": "active"} # comment"#),
            (.state, "state: active\n"),
            (.state, #"{state: "active"}"#),
            (.state, #"{"state": "active", "user": 7}"#),  // a number as a name
            (.event, #"{"type": "launch", "time": "2026-03-01T09:00:00Z", "network": "online", "app_id": false}"#),
        ]
        for (shape, text) in cases {
            #expect(Self.fast(shape, Array(text.utf8)) == nil, "\(text)")
            #expect(Self.slow(shape, Array(text.utf8)) == nil, "the reference must refuse \(text) too")
        }
        // Read by the slow path, deliberately left to it.
        let fallBacks: [(Shape, String, Decoded)] = [
            (.state, #"{"state": "act\u0069ve"}"#, .state(SessionState(state: .active))),  // an escape
            // a name starting with a non-ASCII character
            (.state, #"{"state": "active", "user": "\#u{C5}sa"}"#, .state(SessionState(state: .active, user: "\u{C5}sa"))),
            // a surrogate pair, which YAML refused
            (.state, #"{"state": "active", "user": "a\ud83d\ude00"}"#, .state(SessionState(state: .active, user: "a😀"))),
        ]
        for (shape, text, expected) in fallBacks {
            #expect(Self.fast(shape, Array(text.utf8)) == nil, "\(text)")
            #expect(Self.slow(shape, Array(text.utf8)) == expected, "\(text)")
        }
    }

    @Test("documents past the reference's size and node limits fall back")
    func limits() {
        let item = #"{"event":{"type":"background","time":"2026-03-01T09:00:00Z"}}"#
        func batch(_ n: Int) -> [UInt8] { Array(("{\"items\":[" + Array(repeating: item, count: n).joined(separator: ",") + "]}").utf8) }
        // 3 + 7n nodes: the root, `items`, the list, and per item the item, `event`, the event, 2 keys and 2 values.
        let most = (InputLimits.files.nodes - 3) / 7
        var t = Tally()
        t.check(.batch, batch(most))
        t.check(.batch, batch(most + 1))
        #expect(t.agreed == 1 && t.bothRefused == 1, "\(t.summary)")
        // Exactly the size limit, and one byte more.
        let head = Array(#"{"state": "active", "user": ""#.utf8)
        let fill = InputLimits.files.bytes - head.count - 2
        for n in [fill, fill + 1] {
            t.check(.state, head + Array(repeating: UInt8(ascii: "a"), count: n) + Array(#""}"#.utf8))
        }
        #expect(t.agreed == 2 && t.bothRefused == 2, "\(t.summary)")
    }

    @Test("a batch's limits follow the server's: both readers take the same bytes and node budget")
    func batchLimits() throws {
        let item = #"{"event":{"type":"background","time":"2026-03-01T09:00:00Z"}}"#
        func batch(_ n: Int) -> [UInt8] { Array(("{\"items\":[" + Array(repeating: item, count: n).joined(separator: ",") + "]}").utf8) }
        func slow(_ bytes: [UInt8], _ limits: InputLimits) -> Int? {
            guard case let .success(root?) = JSONSyntax.parse(Data(bytes), file: "body", limits: limits) else { return nil }
            var r = SyntaxReader()
            return r.evaluationBatch(root, limit: .max).map(\.count)
        }
        // 20,000 items: over the file limits (1 MiB, 100,000 values), within a batch's.
        let big = batch(20_000)
        let limits = InputLimits.batch(bytes: 16 << 20, items: 50_000)
        #expect(big.count > InputLimits.files.bytes)
        #expect(FastJSON.batchRequest(big) == nil && slow(big, .files) == nil)
        #expect(FastJSON.batchRequest(big, limits: limits)?.count == 20_000)
        #expect(slow(big, limits) == 20_000)
        // The node budget: 3 + 7n values here; at the budget and one item past it.
        let small = InputLimits.batch(bytes: 16 << 20, items: 1_000)
        let most = (small.nodes - 3) / 7
        #expect(FastJSON.batchRequest(batch(most), limits: small)?.count == most)
        #expect(slow(batch(most), small) == most)
        #expect(FastJSON.batchRequest(batch(most + 1), limits: small) == nil && slow(batch(most + 1), small) == nil)
        // The byte budget, exactly and one byte over.
        let exact = batch(10)
        let tight = InputLimits(bytes: exact.count, nodes: 1_000, depth: 64, hint: "")
        #expect(FastJSON.batchRequest(exact, limits: tight)?.count == 10 && slow(exact, tight) == 10)
        let over = InputLimits(bytes: exact.count - 1, nodes: 1_000, depth: 64, hint: "")
        #expect(FastJSON.batchRequest(exact, limits: over) == nil && slow(exact, over) == nil)
    }

    @Test("keys of any length, split from their colon by any whitespace, are read (libyaml's simple-key rule is gone)")
    func keys() {
        var t = Tally()
        for n in [10, 998, 1000, 1022, 1024, 2000, 100_000] {
            let key = String(repeating: "k", count: n)
            t.check(.event, #"{"type": "background", "time": "2026-03-01T09:00:00Z", "attributes": "# + "{\"\(key)\": \"v\"}}")
        }
        t.check(.state, "{\"state\"\n: \"active\"}")
        t.check(.state, "{\"state\" \t : \"active\"}")
        t.check(.state, "{\"state\"\r\n\t:\r\n\"active\"}")
        t.check(.state, "\t{\"state\": \"active\"}\t")
        t.check(.state, "\u{FEFF}{\"state\": \"active\"}")
        #expect(t.wrong.isEmpty, "\(t.summary): \(t.wrong)")
        #expect(t.agreed == 12, "\(t.summary)")
    }

    // MARK: Encoding

    static func reference(_ value: some Encodable) -> [UInt8] { json(value, [.sortedKeys, .withoutEscapingSlashes]) }

    static func describe(_ a: [UInt8], _ b: [UInt8]) -> String {
        "\n  fast:        \(String(decoding: a, as: UTF8.self))\n  JSONEncoder: \(String(decoding: b, as: UTF8.self))"
    }

    @Test("every outcome of the shipped scenarios, and every state, encodes exactly as JSONEncoder does")
    func shippedEncoding() {
        var misses: [String] = []
        for outcome in Self.corpus.outcomes {
            var out: [UInt8] = []
            FastJSON.append(outcome, to: &out)
            let expected = Self.reference(outcome)
            if out != expected { misses.append(Self.describe(out, expected)) }
        }
        for state in Self.corpus.states {
            var out: [UInt8] = []
            FastJSON.append(state, to: &out)
            let expected = Self.reference(state)
            if out != expected { misses.append(Self.describe(out, expected)) }
        }
        struct Results: Encodable { var results: [Outcome] }
        let body = FastJSON.batchResponse(Self.corpus.outcomes)
        let expected = Self.reference(Results(results: Self.corpus.outcomes))
        if body != expected { misses.append("batch response differs") }
        #expect(FastJSON.batchResponse([]) == Self.reference(Results(results: [])))
        #expect(misses.isEmpty, "\(misses.count): \(misses.prefix(3))")
        #expect(Self.corpus.outcomes.count >= 80)
        #expect(Set(Self.corpus.outcomes.map(\.reason)).count >= 15)
    }

    @Test("outcomes and states with every optional, notice set, edge number, time and character encode as JSONEncoder does")
    func synthesizedEncoding() {
        var random = SplitMix(seed: 7)
        var misses: [String] = []
        func check(_ outcome: Outcome) {
            var out: [UInt8] = []
            FastJSON.append(outcome, to: &out)
            let expected = Self.reference(outcome)
            if out != expected { misses.append(Self.describe(out, expected)) }
            // The state alone, appended after other bytes.
            var state: [UInt8] = Array("[".utf8)
            FastJSON.append(outcome.state, to: &state)
            if state != Array("[".utf8) + Self.reference(outcome.state) { misses.append("state: \(outcome.state)") }
        }
        var strings = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        strings += [
            "", "a/b", "\"quoted\" \\ back", "é", "\u{85}", "\u{2028}\u{2029}", "\u{FEFF}", "😀", "e\u{301}", "\u{10FFFF}", "\r\n\t",
        ]
        let all = String(strings.joined())
        strings.append(all)
        let times: [Timestamp?] =
            [
                nil, Timestamp.earliest, Timestamp.latest, Timestamp(millisecondsSinceEpoch: 0), Timestamp(millisecondsSinceEpoch: -1),
                Timestamp(millisecondsSinceEpoch: 1), Timestamp(millisecondsSinceEpoch: 10), Timestamp(millisecondsSinceEpoch: 100),
                Timestamp(millisecondsSinceEpoch: 999), Timestamp(millisecondsSinceEpoch: -86_400_001),
                Timestamp(millisecondsSinceEpoch: Timestamp.earliest.millisecondsSinceEpoch - 1),
                Timestamp(millisecondsSinceEpoch: Timestamp.latest.millisecondsSinceEpoch + 1),
                Timestamp(millisecondsSinceEpoch: -400_000_000_000_000), Timestamp(millisecondsSinceEpoch: 400_000_000_000_000),
            ]
            + (0..<3000).map { _ in
                let span = UInt64(Timestamp.latest.millisecondsSinceEpoch - Timestamp.earliest.millisecondsSinceEpoch)
                return Timestamp(millisecondsSinceEpoch: Timestamp.earliest.millisecondsSinceEpoch + Int64(random.next() % span))
            }
        let spans: [TimeSpan?] = [
            nil, .seconds(0), .seconds(1), .seconds(59), .seconds(60), .seconds(3661), .days(1), .seconds(90_061), TimeSpan.maximum,
            .seconds(-5),
        ]
        let ints = [0, 1, 9, 10, 99, 100, 12345, -1, -10, Int.max, Int.min]
        for (i, time) in times.enumerated() {
            let pick = { (n: Int) in (i &* 7 &+ n) }
            let state = SessionState(
                state: MachineState.allCases[pick(0) % MachineState.allCases.count],
                user: i % 5 == 0 ? nil : strings[pick(1) % strings.count],
                device: i % 3 == 0 ? nil : strings[pick(2) % strings.count],
                authMode: i % 6 == 0 ? nil : AuthMode.allCases[pick(3) % AuthMode.allCases.count],
                lastIdPLogin: time, lastOnline: times[pick(4) % times.count], lastActivity: times[pick(5) % times.count],
                highestTime: times[pick(6) % times.count],
                failures: .init(
                    biometric: ints[pick(7) % ints.count], offlineLogin: ints[pick(8) % ints.count], idpLogin: ints[i % ints.count]),
                readOnly: i % 2 == 0, biometricLocked: i % 3 == 1)
            check(
                Outcome(
                    decision: i % 5 == 0 ? nil : Decision.allCases[i % Decision.allCases.count],
                    reason: Reason(strings[pick(9) % strings.count] + "_x"), message: strings[i % strings.count],
                    notices: Notices(rawValue: UInt32(i % 32)), scope: i % 7 == 0 ? nil : Scope.allCases[i % Scope.allCases.count],
                    authMode: i % 4 == 0 ? nil : AuthMode.allCases[i % AuthMode.allCases.count],
                    noticeDelay: spans[i % spans.count], state: state, transition: ints[pick(10) % ints.count]))
        }
        // The longest fixed parts at once: every notice, the longest words, times outside the
        // years 0001-9999, the most negative numbers, the longest span.
        let far = Timestamp(millisecondsSinceEpoch: Int64.min / 2)
        for text in ["", "\u{1}", String(repeating: "\u{1}", count: 50)] {
            let worst = SessionState(
                state: .awaitingBiometric, user: text, device: text, authMode: .biometric, lastIdPLogin: far, lastOnline: far,
                lastActivity: far, highestTime: far, failures: .init(biometric: Int.min, offlineLogin: Int.min, idpLogin: Int.min),
                readOnly: true, biometricLocked: true)
            check(
                Outcome(
                    decision: .requireBiometric, reason: Reason(text), message: text, notices: Notices(rawValue: 31),
                    scope: .bioAuthGrantSE, authMode: .password, noticeDelay: TimeSpan(seconds: Int64.max), state: worst,
                    transition: Int.min))
        }
        for s in Array(0..<4000) + Array(stride(from: 4000, to: 2_000_000, by: 997)) {
            check(
                Outcome(
                    decision: nil, reason: .logout, message: "", notices: [], scope: nil, authMode: nil,
                    noticeDelay: .seconds(Int64(s) * 37), state: SessionState(), transition: s))
        }
        #expect(misses.isEmpty, "\(misses.count): \(misses.prefix(3))")
    }

    /// Random text over an alphabet of the characters that matter to both directions:
    /// quotes, backslashes, controls, DEL, spaces, line separators, multi-byte characters.
    static func randomTexts(_ count: Int, seed: UInt64) -> [String] {
        let alphabet: [String] = [
            "a", "b", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "\u{85}", "\u{A0}", "\u{2028}",
            "\u{FEFF}", "😀", "e\u{301}", "-", ":", "#", "{", "[",
        ]
        var random = SplitMix(seed: seed)
        return (0..<count).map { _ in
            let n = random.below(40)
            return (0..<n).map { _ in random.below(3) == 0 ? alphabet[random.below(alphabet.count)] : "x" }.joined()
        }
    }

    @Test("random text: read back exactly or left to the slow path, written exactly as JSONEncoder writes it")
    func randomText() {
        var t = Tally()
        var misses: [String] = []
        var outcomes: [Outcome] = []
        for (i, text) in Self.randomTexts(3000, seed: 99).enumerated() {
            // Raw, as a name and as an attribute value and key.
            let raw = "\"\(text)\""
            t.check(.event, #"{"type": "background", "time": "2026-03-01T09:00:00Z", "user": "# + raw + "}")
            t.check(
                .event, #"{"type": "background", "time": "2026-03-01T09:00:00Z", "attributes": {"k": "# + raw + ", " + raw + #": "v"}}"#)
            // As JSONEncoder writes it (escaped where it must be).
            let event = Event(.background, at: Timestamp(secondsSinceEpoch: 1_772_355_600 + Int64(i)), user: text, attributes: ["k": text])
            t.check(.event, Self.json(event))
            let outcome = Outcome(
                decision: .allow, reason: Reason(text), message: text, notices: [], scope: nil, authMode: nil, noticeDelay: nil,
                state: SessionState(state: .active, user: text, device: text, lastActivity: event.time), transition: i)
            var out: [UInt8] = []
            FastJSON.append(outcome, to: &out)
            if out != Self.reference(outcome) { misses.append(Self.describe(out, Self.reference(outcome))) }
            outcomes.append(outcome)
        }
        struct Results: Encodable { var results: [Outcome] }
        #expect(FastJSON.batchResponse(outcomes) == Self.reference(Results(results: outcomes)))
        #expect(misses.isEmpty, "\(misses.count): \(misses.prefix(3))")
        #expect(t.wrong.isEmpty, "\(t.summary): \(t.wrong.prefix(5))")
        #expect(t.agreed >= 500, "\(t.summary)")
    }
}
