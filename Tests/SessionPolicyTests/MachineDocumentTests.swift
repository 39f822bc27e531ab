import Foundation
import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import Testing

/// The portable machine document (docs/machine-format.md): written canonically, read back
/// without YAML, deciding as the compiled policy does; refused when it is another format,
/// altered, or not a machine this engine can run.
@Suite("Machine document")
struct MachineDocumentTests {
    static let input = CheckInput.load(
        policies: [Fixtures.path("policies")], scenarios: [Fixtures.path("examples"), Fixtures.path("examples/generated")])
    static let shipped = input.policies.keys.sorted()

    @Test("SHA-256 of the FIPS 180-4 examples and of a million a's")
    func sha256() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("the canonical rendering: keys in UTF-8 byte order, only the RFC 8785 escapes")
    func canonicalText() {
        // "Z" (0x5A) < "a" (0x61) < "z" < "é" (0xC3 0xA9) < "😀" (0xF0 ...): byte order, not
        // Unicode collation and not UTF-16 order.
        let keys = ["é", "z", "😀", "a", "Z", "ab", ""]
        let object = CanonicalJSON.object(Dictionary(uniqueKeysWithValues: keys.map { ($0, CanonicalJSON.int(1)) }))
        #expect(object.text == #"{"":1,"Z":1,"a":1,"ab":1,"z":1,"é":1,"😀":1}"#)
        // Each escape alone in its string, so none rides on another's.
        for (value, text) in [
            ("q\"", #""q\"""#), ("b\\n", #""b\\n""#), ("\n", #""\n""#), ("\r", #""\r""#), ("\t", #""\t""#),
            ("\u{08}", #""\b""#), ("\u{0C}", #""\f""#), ("\u{01}", #""\u0001""#), ("x\u{1F}", #""x\u001f""#),
            ("/ é\u{7F}", "\"/ é\u{7F}\""),
        ] {
            #expect(CanonicalJSON.string(value).text == text)
        }
        #expect(
            CanonicalJSON.array([.null, .bool(true), .int(-9_223_372_036_854_775_808), .string("plain")]).text
                == #"[null,true,-9223372036854775808,"plain"]"#)
    }

    @Test("a shipped policy's document reads back to the same machine, and decides every shipped step alike", arguments: shipped)
    func roundTrip(_ name: String) throws {
        let compiled = try #require(Self.input.policies[name]).compiled
        let text = compiled.machineDocument
        let read = try PolicyMachine(document: Data(text.utf8), file: "\(name).machine.json")
        #expect(read.name == compiled.name)
        #expect(read.digest == compiled.portable.digest)
        #expect(read.document == text, "written again, the document is the same bytes")
        #expect(read.machine.transitions.map(\.guard) == compiled.machine.transitions.map(\.guard))
        #expect(read.machine.transitions.map(\.action) == compiled.machine.transitions.map(\.action))
        #expect(read.machine.rules == compiled.machine.rules)
        #expect(read.machine.attributes == compiled.machine.attributes)
        #expect(read.machine.transitions.map(\.source.levers) == compiled.machine.transitions.map(\.source.levers))
        #expect(read.machine.transitions.map { $0.source.location?.line } == compiled.machine.transitions.map { $0.source.location?.line })
        var steps = 0
        for scenario in Self.input.scenarios where scenario.policy == name {
            var state = scenario.initial
            for step in scenario.steps {
                guard case let .success(event) = step.event else { continue }
                let want = compiled.evaluate(state, event)
                let got = read.evaluate(state, event)
                #expect(got == want, "\(scenario.name) step \(step.number)")
                state = want.state
                steps += 1
            }
        }
        #expect(steps > 50)
    }

    @Test("a random policy's document reads back to its own text and the same machine, and decides random sequences alike")
    func randomRoundTrip() throws {
        var r = SplitMix(seed: 29)
        var documents = 0
        var steps = 0
        for index in 0..<30 {
            let spec = PolicyGenerator.policy(&r, index: index)
            guard let compiled = spec.compile() else { continue }
            let text = compiled.machineDocument
            let read = try PolicyMachine(document: Data(text.utf8), file: "\(spec.name).machine.json")
            documents += 1
            #expect(read.document == text, "\(spec.name): written again, the document is other bytes")
            #expect(read.digest == compiled.portable.digest)
            #expect(read.machine.transitions.map(\.guard) == compiled.machine.transitions.map(\.guard), "\(spec.name)")
            #expect(read.machine.transitions.map(\.action) == compiled.machine.transitions.map(\.action), "\(spec.name)")
            #expect(read.machine.rules == compiled.machine.rules, "\(spec.name)")
            let gen = SequenceGenerator(policy: compiled.policy)
            for _ in 0..<10 {
                var s = gen.initialState(&r)
                var previous = s.highestTime ?? SequenceGenerator.start
                for _ in 0..<10 {
                    let e = gen.event(&r, s, previous: previous)
                    previous = e.time
                    let want = compiled.evaluate(s, e)
                    let got = read.evaluate(s, e)
                    if got != want {
                        Issue.record("\(spec.name): \(e) in \(s): the document decides \(got), the policy \(want)")
                        return
                    }
                    s = want.state
                    steps += 1
                }
            }
        }
        #expect(documents > 25, "too many generated policies refused")
        #expect(steps == documents * 100)
    }

    @Test("every shipped policy's document is valid against schemas/machine.schema.json", arguments: shipped)
    func schema(_ name: String) throws {
        let schema = try JSONSchema(contentsOfFile: Fixtures.path("schemas/machine.schema.json"))
        let text = try #require(Self.input.policies[name]).compiled.machineDocument
        let value = JSONValue(json: try JSONSerialization.jsonObject(with: Data(text.utf8)))
        #expect(schema.validate(value) == [])
        // And the schema refuses what the reader refuses: an unknown guard.
        let bad = JSONValue(
            json: try JSONSerialization.jsonObject(
                with: Data(text.replacingOccurrences(of: #"{"kind":"always"}"#, with: #"{"kind":"sometimes"}"#).utf8)))
        #expect(schema.validate(bad) != [])
    }

    /// The document of the SpendiQ policy, as text, for the refusals below.
    static func spendiq() throws -> String { try #require(input.policies["spendiq"]).compiled.machineDocument }

    /// `text` with its digest recomputed, so a check after the digest's is what refuses it.
    static func redigested(_ text: String) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let old = try #require(object["digest"] as? String)
        var stripped = object
        stripped["digest"] = nil
        let data = try JSONSerialization.data(withJSONObject: stripped, options: [.sortedKeys, .withoutEscapingSlashes])
        let fresh = "sha256:" + SHA256.hex(Array(data))
        return text.replacingOccurrences(of: old, with: fresh)
    }

    static func refusal(_ text: String) -> Diagnostic? {
        do {
            _ = try PolicyMachine(document: Data(text.utf8), file: "m.json")
            return nil
        } catch { return error.diagnostics.first }
    }

    @Test("another format version is refused before anything else, at its value")
    func otherFormat() throws {
        let text = try Self.spendiq().replacingOccurrences(of: "sessionpolicy-machine/1", with: "sessionpolicy-machine/2")
        let d = try #require(Self.refusal(text))
        #expect(d.code == .unsupportedFormat)
        #expect(d.message.contains("sessionpolicy-machine/2"))
        #expect(d.location?.line == 1 && (d.location?.column ?? 0) > 1)
    }

    @Test("a changed byte or a missing digest is refused: the digest names the content")
    func tampered() throws {
        let text = try Self.spendiq()
        let changed = text.replacingOccurrences(of: "\"limit_seconds\":604800", with: "\"limit_seconds\":604801")
        #expect(changed != text)
        #expect(Self.refusal(changed)?.code == .digestMismatch)
        let noDigest = text.replacing(#/"digest":"sha256:[0-9a-f]{64}",/#, with: "")
        #expect(Self.refusal(noDigest)?.code == .missingKey)
        let truncated = String(text.prefix(text.count / 2))
        #expect(Self.refusal(truncated)?.code == .invalidJSON)
        #expect(Self.refusal("")?.code == .emptyDocument)
    }

    @Test("an inconsistent machine is refused even with a digest that matches")
    func inconsistent() throws {
        let text = try Self.spendiq()
        // The last transition of a group made conditional: some event would fall through.
        let lastAlways = try #require(text.range(of: #"{"kind":"always"}"#, options: .backwards))
        var open = text
        open.replaceSubrange(lastAlways, with: #"{"kind":"network_offline"}"#)
        #expect(Self.refusal(try Self.redigested(open))?.code == .inconsistentMachine)
        // An unknown guard, with its name in the message.
        let unknown = text.replacingOccurrences(of: #"{"kind":"device_compromised"}"#, with: #"{"kind":"device_rooted"}"#)
        let d = try #require(Self.refusal(try Self.redigested(unknown)))
        #expect(d.code == .invalidValue && d.message.contains("device_rooted"))
        // A member this engine does not read.
        let extra = text.replacingOccurrences(of: #""names_scope":false,"#, with: #""names_scope":false,"priority":1,"#)
        let e = try #require(Self.refusal(try Self.redigested(extra)))
        #expect(e.code == .unknownKey && e.message.contains("priority"))
    }
}
