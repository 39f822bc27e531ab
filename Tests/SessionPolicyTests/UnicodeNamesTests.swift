import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// Names (users, device ids, app ids, attribute names and words) are compared scalar by scalar
/// (docs/machine-format.md, "String equality"), never by Swift's `==` on `String` (canonical
/// equivalence under the standard library's Unicode tables), so that every runtime decides the
/// same on every platform. The conformance vectors (`unicode: ...`) hold the same cases for the
/// Java and JavaScript runtimes.
@Suite("Unicode names")
struct UnicodeNamesTests {
    static func state(user: String, device: String = "phone-1") -> SessionState {
        let nine = Timestamp(millisecondsSinceEpoch: 1_772_355_600_000)  // 2026-03-01T09:00:00Z
        return SessionState(
            state: .suspended, user: user, device: device, authMode: .unprotected, lastIdPLogin: nine, lastOnline: nine,
            lastActivity: nine, highestTime: nine)
    }

    static func launch(user: String, device: String = "phone-1", attributes: String = "") throws -> Event {
        let json = #"{"type":"launch","time":"2026-03-01T10:00:00Z","network":"online","user":"\#(user)","device":{"id":"\#(device)"}"#
        return try Event(json: Data((json + (attributes.isEmpty ? "" : #","attributes":{\#(attributes)}"#) + "}").utf8))
    }

    @Test("issue 32's reproducer: U+1AC1 (Unicode 14) and a cedilla in another order are another user")
    func reproducer() throws {
        let spendiq = try Fixtures.policy("spendiq")
        let s = Self.state(user: "e\u{327}\u{1AC1}")
        #expect(spendiq.evaluate(s, try Self.launch(user: "e\\u0327\\u1ac1")).decision == .allow)
        let other = spendiq.evaluate(s, try Self.launch(user: "e\\u1ac1\\u0327"))
        #expect(other.decision == .wipe)
        #expect(other.reason == .differentUser)
    }

    @Test("a device id or a user in another Unicode form is another device or user, and fails closed")
    func otherForms() throws {
        let spendiq = try Fixtures.policy("spendiq")
        for (a, b) in [("zo\u{EB}", "zoe\\u0308"), ("\u{D55C}", "\\u1112\\u1161\\u11ab"), ("\u{212A}ate", "Kate")] {
            let user = spendiq.evaluate(Self.state(user: a), try Self.launch(user: b))
            #expect(user.decision == .wipe && user.reason == .differentUser, "\(a.debugDescription)")
            let device = spendiq.evaluate(Self.state(user: "alice", device: a), try Self.launch(user: "alice", device: b))
            #expect(device.decision != .allow && device.reason == .deviceMismatch, "\(a.debugDescription): \(device.reason)")
        }
    }

    @Test("two spellings of one attribute key are two keys: the second is undeclared; one spelling twice is a duplicate")
    func attributeKeys() throws {
        let file = "spec/conformance/policies/unicode-names.yaml"
        let p = try PolicyFile.compile(text: Fixtures.text(file), file: file).get()
        let declared = p.evaluate(Self.state(user: "alice"), try Self.launch(user: "alice", attributes: #""tier_\u00e9":"gold""#))
        #expect(declared.reason != .invalidEvent)
        let e = try Self.launch(user: "alice", attributes: #""tier_\u00e9":"gold","tier_e\u0301":"gold""#)
        #expect(e.exactAttributes.count == 2)
        let undeclared = p.evaluate(Self.state(user: "alice"), e)
        #expect(undeclared.reason == .invalidEvent)
        #expect(undeclared.message.contains("is not declared"), "\(undeclared.message)")
        let word = p.evaluate(Self.state(user: "alice"), try Self.launch(user: "alice", attributes: #""tier_\u00e9":"zoe\u0308""#))
        #expect(word.reason == .invalidEvent, "a word in another form is not one of the type's words")
        #expect(throws: DiagnosticError.self) {
            try Self.launch(user: "alice", attributes: #""tier_\u00e9":"gold","tier_é":"gold""#)
        }
    }

    @Test("the core's sources call no Unicode normalization and no Unicode white-space table")
    func noTablesInSources() {
        let banned = try! Regex(
            #"CanonicalMapping|CompatibilityMapping|\.normaliz|whitespacesAndNewlines|\.whitespaces\b|localizedCompare|caseInsensitiveCompare"#
        )
        let files = SourceScan.swiftFiles(under: "Sources/SessionPolicy")
        #expect(files.count >= 20)
        for (path, text) in files {
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains(banned) {
                Issue.record("\(path):\(n + 1): `\(line.trimmingCharacters(in: .whitespaces))`")
            }
        }
    }
}
