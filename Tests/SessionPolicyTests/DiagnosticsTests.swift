import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// Each case: a policy with a marker where the diagnostic must point, its code, and a
/// fragment of its help.
@Suite("Policy diagnostics")
struct DiagnosticsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var yaml: String
        var code: String
        var help: String?
        var testDescription: String { code }
    }

    static let header = "version: 1\nname: t\n"

    static let cases: [Case] = [
        Case(yaml: header + "offline:\n  1️⃣windw: 7d\n", code: "unknown-key", help: "did you mean `window`?"),
        Case(yaml: header + "1️⃣sesion:\n  max: 7d\n", code: "unknown-key", help: "did you mean `session`?"),
        Case(yaml: header + "session:\n  max: 1️⃣7 days\n", code: "invalid-duration", help: "without spaces"),
        Case(yaml: header + "session:\n  max: 1️⃣-1d\n", code: "invalid-duration", help: nil),
        Case(yaml: header + "session:\n  max: 1️⃣7x\n", code: "invalid-duration", help: "units are"),
        Case(yaml: header + "session:\n  max: 1️⃣7\n", code: "invalid-duration", help: "did you mean `7d`?"),
        Case(yaml: header + "session:\n  max: 1️⃣9999999999999999999999d\n", code: "invalid-duration", help: "largest"),
        Case(yaml: "1️⃣name: t\n", code: "missing-key", help: "version: 1"),
        Case(yaml: "1️⃣version: 1\ndescription: x\n", code: "missing-key", help: "name"),
        Case(yaml: "version: 1️⃣2\nname: t\n", code: "unsupported-version", help: nil),
        Case(yaml: header + "auth_modes:\n  offline: [biometric, 1️⃣password]\n", code: "offline-mode-needs-idp", help: nil),
        Case(yaml: header + "auth_modes:\n  offline:\n    - none\n    - 1️⃣pin\n", code: "offline-mode-needs-idp", help: nil),
        Case(yaml: header + "auth_modes:\n  offline: [1️⃣biometrics]\n", code: "invalid-value", help: "did you mean `biometric`?"),
        Case(yaml: header + "session:\n  max: 7d\noffline:\n  window: 1️⃣8d\n", code: "window-exceeds-session-max", help: "shorten"),
        Case(yaml: header + "retry:\n  biometric: { max: 1️⃣0 }\n", code: "retry-max-below-one", help: nil),
        Case(yaml: header + "retry:\n  idp_login:\n    max: 1️⃣-3\n", code: "retry-max-below-one", help: nil),
        Case(yaml: header + "signals:\n  tokens_revoked: 1️⃣allow\n", code: "reaction-not-allowed", help: "fails closed"),
        Case(yaml: header + "signals:\n  logout: 1️⃣read_only\n", code: "reaction-not-allowed", help: nil),
        Case(yaml: header + "signals:\n  license_revoked: 1️⃣suspend\n", code: "invalid-value", help: nil),
        Case(yaml: header + "session:\n  on_expired: 1️⃣wype\n", code: "invalid-value", help: "did you mean `wipe`?"),
        Case(yaml: header + "device:\n  single_user: 1️⃣yes\n", code: "wrong-type", help: nil),
        Case(yaml: header + "retry:\n  biometric: { max: 1️⃣three }\n", code: "wrong-type", help: nil),
        Case(yaml: header + "session: 1️⃣90d\n", code: "wrong-type", help: nil),
        Case(yaml: header + "auth_modes:\n  offline: 1️⃣biometric\n", code: "wrong-type", help: nil),
        Case(yaml: header + "signals:\n  license_revoked: { notice_delay: 1️⃣5 seconds, then: wipe }\n", code: "invalid-duration", help: nil),
        Case(yaml: header + "session:\n  max: 7d\n1️⃣session:\n  idle: 1d\n", code: "duplicate-key", help: nil),
        Case(yaml: header + "session:\n\tmax: 7d\n", code: "yaml-syntax", help: nil),
        Case(yaml: header + "session: 1️⃣&s\n  max: 7d\noffline: *s\n", code: "yaml-anchor", help: nil),
    ]

    @Test("each mistake gets its code at its place", arguments: cases)
    func located(_ c: Case) throws {
        let (text, markers) = Markers.extract(c.yaml, file: "test.yaml")
        let result = PolicyFile.compile(text: text, file: "test.yaml")
        guard case let .failure(error) = result else {
            Issue.record("policy compiled but should not have")
            return
        }
        let match = error.diagnostics.first { $0.code.rawValue == c.code }
        #expect(match != nil, "codes: \(error.diagnostics.map(\.code.rawValue))")
        if let expected = markers["1️⃣"] {
            #expect(match?.location == expected)
        }
        if let help = c.help {
            #expect(match?.help?.contains(help) == true, "help was \(match?.help ?? "nil")")
        }
        // Messages follow the house style: one lowercase line, no trailing period.
        for d in error.diagnostics {
            #expect(!d.message.contains("\n"))
            #expect(!d.message.hasSuffix("."))
            #expect(d.message.first?.isUppercase == false)
        }
    }

    @Test("every error in a file is reported at once")
    func allAtOnce() throws {
        let (text, markers) = Markers.extract(
            """
            version: 1
            name: many
            session:
              max: 1️⃣7 days
            offline:
              2️⃣windw: 7d
            auth_modes:
              offline: [3️⃣password]
            retry:
              biometric: { max: 4️⃣0 }
            """)
        guard case let .failure(error) = PolicyFile.compile(text: text, file: "test.yaml") else {
            Issue.record("expected errors")
            return
        }
        #expect(
            error.diagnostics.map(\.code.rawValue) == ["invalid-duration", "unknown-key", "offline-mode-needs-idp", "retry-max-below-one"])
        #expect(error.diagnostics.map(\.location) == ["1️⃣", "2️⃣", "3️⃣", "4️⃣"].map { markers[$0] })
    }

    @Test("the human rendering quotes the line and points at the column")
    func rendering() {
        let (text, _) = Markers.extract("version: 1\nname: t\noffline:\n  windw: 7d\n")
        guard case let .failure(error) = PolicyFile.compile(text: text, file: "p.yaml") else { return }
        let out = DiagnosticRenderer(sources: ["p.yaml": text]).render(error.diagnostics)
        #expect(
            out == """
                p.yaml:4:3: error[unknown-key]: unknown key `windw` in `offline`
                  |
                4 |   windw: 7d
                  |   ^
                  = help: did you mean `window`?

                1 error
                """)
    }

    @Test("a valid policy gives no diagnostics")
    func valid() throws {
        for file in Fixtures.files(in: "policies") {
            let result = PolicyFile.load(Fixtures.path(file))
            let loaded = try result.get()
            #expect(loaded.warnings.isEmpty, "\(file): \(loaded.warnings)")
        }
    }
}
