import Foundation
import SessionPolicy
import Testing

/// The Unicode vectors of the conformance suite: names (users, device ids, attribute keys) and
/// words written in two forms that Unicode takes for one text (canonically equivalent) but that
/// hold other scalars. Every runtime compares names scalar by scalar (docs/machine-format.md,
/// "String equality"), so each pair is two names everywhere, whatever Unicode version the
/// platform's tables know: marks of Unicode 14 to 16 that JDK 11 (Unicode 10) and JDK 17
/// (Unicode 13) do not know, Hangul syllables and their jamo, older marks out of order, a
/// precomposed letter and its decomposition, and the Kelvin sign, which normalizes to an ASCII `K`.
extension ConformanceTests {
    /// Each pair: a label, and two spellings of one text under Unicode's canonical equivalence.
    static let unicodeForms: [(label: String, first: String, second: String)] = [
        ("U+1AC1 (Unicode 14) after a cedilla, and before it", "e\u{327}\u{1AC1}", "e\u{1AC1}\u{327}"),
        ("U+1DFA (Unicode 14) before an acute, and after it", "a\u{1DFA}\u{301}", "a\u{301}\u{1DFA}"),
        ("U+0897 (Unicode 16) after a grave below, and before it", "x\u{316}\u{897}", "x\u{897}\u{316}"),
        ("U+10EFD (Unicode 15) after an acute, and before it", "a\u{10EFD}\u{301}", "a\u{301}\u{10EFD}"),
        ("U+1E08F (Unicode 15) after a dot below, and before it", "a\u{323}\u{1E08F}", "a\u{1E08F}\u{323}"),
        ("Hangul syllables, and their jamo", "\u{D55C}\u{AD6D}", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}"),
        ("a dot below and an acute (Unicode 1.1), and out of order", "e\u{323}\u{301}", "e\u{301}\u{323}"),
        ("a precomposed letter with a mark, and decomposed", "\u{1EB9}\u{301}", "e\u{323}\u{301}"),
        ("NFC, and NFD", "zo\u{EB}", "zoe\u{308}"),
        ("the Kelvin sign, and an ASCII K", "\u{212A}ate", "Kate"),
    ]

    /// A JSON string: `escaped` writes every scalar outside ASCII as `\u` escapes (surrogate
    /// pairs beyond the BMP), else as UTF-8.
    static func json(_ s: String, escaped: Bool = false) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20 || (escaped && u.value > 0x7E):
                for unit in String(u).utf16 { out += String(format: "\\u%04x", unit) }
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }

    /// The Unicode vectors of one policy, as lines of its vectors file.
    static func unicodeVectors(_ name: String, _ compiled: CompiledPolicy) throws -> [String] {
        var lines: [String] = []
        func add(_ id: String, _ state: SessionState, _ event: String) throws {
            let idJSON = json("unicode: " + id)
            do {
                let e = try Event(json: Data(event.utf8), file: "event")
                let outcome = compiled.evaluate(state, e)
                lines.append(#"{"id":\#(idJSON),"state":\#(write(state)),"event":\#(event),"want":\#(write(outcome))}"#)
            } catch {
                let code = error.diagnostics.first?.code.rawValue ?? "invalid-value"
                lines.append(#"{"id":\#(idJSON),"state":\#(write(state)),"event":\#(event),"refuse":"\#(code)"}"#)
            }
        }
        let nine = Timestamp(millisecondsSinceEpoch: 1_772_355_600_000)  // 2026-03-01T09:00:00Z
        func session(user: String, device: String) -> SessionState {
            SessionState(
                state: .suspended, user: user, device: device, authMode: .unprotected, lastIdPLogin: nine, lastOnline: nine,
                lastActivity: nine, highestTime: nine)
        }
        // An event as every runtime writes it back (members and attribute keys in the order of
        // their UTF-8 bytes, text as UTF-8), so the runtimes' write-back check holds; only a
        // refused event is written otherwise (a key twice, once as `\u` escapes).
        func launch(user: String, device: String, attributes: [(String, String)] = []) -> String {
            let sorted = attributes.sorted { Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8)) }
            let a = sorted.isEmpty ? "" : #""attributes":{"# + sorted.map { "\(json($0.0)):\(json($0.1))" }.joined(separator: ",") + "},"
            return
                #"{\#(a)"device":{"id":\#(json(device))},"network":"online","time":"2026-03-01T10:00:00Z","type":"launch","user":\#(json(user))}"#
        }
        func twice(_ key: String) -> String {
            #"{"attributes":{\#(json(key)):"1",\#(json(key, escaped: true)):"2"},"device":{"id":"phone-1"},"#
                + #""network":"online","time":"2026-03-01T10:00:00Z","type":"launch","user":"alice"}"#
        }
        for (label, a, b) in unicodeForms {
            precondition(!a.unicodeScalars.elementsEqual(b.unicodeScalars), "one spelling twice: \(label)")
            for (x, y, order) in [(a, b, "first"), (b, a, "second")] {
                let form = "\(label): the \(order) form"
                try add("user \(form), the same", session(user: x, device: "phone-1"), launch(user: x, device: "phone-1"))
                try add("user \(form), then the other", session(user: x, device: "phone-1"), launch(user: y, device: "phone-1"))
                try add("device \(form), the same", session(user: "alice", device: x), launch(user: "alice", device: x))
                try add("device \(form), then the other", session(user: "alice", device: x), launch(user: "alice", device: y))
                try add(
                    "attribute keys \(form) and the other", session(user: "alice", device: "phone-1"),
                    launch(user: "alice", device: "phone-1", attributes: [(x, "1"), (y, "2")]))
                try add("attribute key \(form) twice, once escaped", session(user: "alice", device: "phone-1"), twice(x))
            }
        }
        guard name == "unicode-names" else { return lines }
        // The policy whose attribute names and words are not ASCII: each declared name and word
        // matches in the form the policy writes, and nowhere else.
        let healthy = session(user: "alice", device: "phone-1")
        var attributes: [(String, String)] = [
            ("tier_\u{E9}", "zo\u{EB}"), ("tier_e\u{301}", "zo\u{EB}"), ("tier_\u{E9}", "zoe\u{308}"),
            ("tier_\u{E9}", "\u{D55C}"), ("tier_\u{E9}", "\u{1112}\u{1161}\u{11AB}"), ("tier_\u{E9}", "gold"),
            ("\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}", "e\u{327}\u{1AC1}"),
            ("n\u{101}me", "\u{212A}ate"), ("na\u{304}me", "Kate"),
        ]
        for (_, a, b) in unicodeForms { attributes += [("\u{D55C}\u{AD6D}", a), ("\u{D55C}\u{AD6D}", b)] }
        // Every declared attribute at a value no rule matches (so that no rule's fact is missing),
        // with the attribute under test in its place; a spelling of a declared name in another
        // form stands in for it, so the declared one is missing and the other is undeclared.
        let quiet = [("tier_\u{E9}", "gold"), ("\u{D55C}\u{AD6D}", "none"), ("n\u{101}me", "x")]
        for (key, value) in attributes + [("n\u{101}me", "Kate"), ("tier_\u{E9}", "silver")] {
            let event = quiet.filter { $0.0 != key } + [(key, value)]
            try add(
                "declared names: \(json(key, escaped: true)) is \(json(value, escaped: true))", healthy,
                launch(user: "alice", device: "phone-1", attributes: event))
            if quiet.contains(where: { $0.0 == key }) && !quiet.contains(where: { $0.0.unicodeScalars.elementsEqual(key.unicodeScalars) }) {
                try add(
                    "declared names: \(json(key, escaped: true)) is \(json(value, escaped: true)), beside the declared spelling", healthy,
                    launch(user: "alice", device: "phone-1", attributes: quiet + [(key, value)]))
            }
        }
        // With the tier at `zoë`, the rule that reads `nāme` (the Kelvin sign in its constant).
        for (key, value) in [("n\u{101}me", "\u{212A}ate"), ("n\u{101}me", "Kate")] {
            let event = [("tier_\u{E9}", "zo\u{EB}"), ("\u{D55C}\u{AD6D}", "none"), (key, value)]
            try add(
                "declared names: the tier at `zoë` and \(json(key, escaped: true)) is \(json(value, escaped: true))", healthy,
                launch(user: "alice", device: "phone-1", attributes: event))
        }
        return lines
    }
}
