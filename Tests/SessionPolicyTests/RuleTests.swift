import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

@Suite("Custom rules and attributes")
struct RuleTests {
    static let header = """
        version: 1
        name: rules
        auth_modes:
          offline: [none]
        attributes:
          license: [active, revoked, none]
          app_version: version
          beta: boolean
        rules:
          - name: r
            on: [launch, idp_login_succeeded, token_refreshed]

        """

    struct Case: Sendable, CustomTestStringConvertible {
        var yaml: String
        var code: String
        var help: String?
        var testDescription: String { "\(code): \(yaml.split(separator: "\n").first ?? "")" }
    }

    static let cases: [Case] = [
        Case(
            yaml: "    when: 1️⃣licence == revoked\n    then: { decision: wipe, reason: x }\n", code: "unknown-attribute",
            help: "did you mean `license`?"),
        Case(
            yaml: "    when: \"license == 1️⃣revokd\"\n    then: { decision: wipe, reason: x }\n", code: "invalid-value",
            help: "did you mean `revoked`?"),
        Case(
            yaml: "    when: elapsed.since_online > 1️⃣\"abc\"\n    then: { decision: wipe, reason: x }\n", code: "type-mismatch",
            help: "duration"),
        Case(yaml: "    when: license < 1️⃣active\n    then: { decision: wipe, reason: x }\n", code: "type-mismatch", help: nil),
        Case(yaml: "    when: app_version < 1️⃣\"two\"\n    then: { decision: wipe, reason: x }\n", code: "type-mismatch", help: "version"),
        Case(
            yaml: "    when: license == revoked 1️⃣revoked\n    then: { decision: wipe, reason: x }\n", code: "invalid-expression", help: nil),
        Case(yaml: "    when: license 1️⃣= revoked\n    then: { decision: wipe, reason: x }\n", code: "invalid-expression", help: "=="),
        Case(yaml: "    when: 1️⃣app_version\n    then: { decision: wipe, reason: x }\n", code: "type-mismatch", help: nil),
        Case(yaml: "    when: beta\n    then: { decision: 1️⃣allow, reason: x }\n", code: "reaction-not-allowed", help: "only restrict"),
        Case(yaml: "    when: beta\n    then: { 1️⃣decision: require_biometric, reason: x }\n", code: "rule-not-allowed", help: nil),
    ]

    @Test("a mistake in a rule gets its code at its place", arguments: cases)
    func diagnostics(_ c: Case) {
        let (text, markers) = Markers.extract(Self.header + c.yaml, file: "r.yaml")
        guard case let .failure(e) = PolicyFile.compile(text: text, file: "r.yaml") else {
            Issue.record("compiled")
            return
        }
        let d = e.diagnostics.first { $0.code.rawValue == c.code }
        #expect(d != nil, "\(e.diagnostics.map(\.code.rawValue)): \(e.diagnostics.map(\.message))")
        if let m = markers["1️⃣"], c.code != "rule-not-allowed" { #expect(d?.location == m) }
        if let help = c.help { #expect(d?.help?.contains(help) == true, "help: \(d?.help ?? "nil")") }
    }

    @Test("rules cannot apply to signals, so they never override a revocation")
    func noSignals() {
        let text =
            Self.header.replacingOccurrences(of: "on: [launch, idp_login_succeeded, token_refreshed]", with: "on: [account_deactivated]")
            + "    when: beta == true\n    then: { decision: idp_login, reason: x }\n"
        guard case let .failure(e) = PolicyFile.compile(text: text, file: "r.yaml") else {
            Issue.record("compiled")
            return
        }
        #expect(e.diagnostics.map(\.code) == [.ruleNotAllowed])
    }

    @Test("a rule restricts after the built-in levers; a revocation still wipes")
    func order() throws {
        let text =
            Self.header
            + "    when: license == revoked or app_version < \"2.0\"\n    then: { decision: idp_login, reason: upgrade_or_license, message: \"update the app\" }\n"
        let p = try PolicyFile.compile(text: text, file: "r.yaml").get()
        let t0 = Timestamp.parse("2026-03-01T09:00:00Z")!
        let s = SessionState(state: .suspended, user: "a", authMode: .unprotected, lastIdPLogin: t0, lastOnline: t0, highestTime: t0)
        func launch(_ attrs: [String: String]) -> Outcome {
            p.evaluate(s, Event(.launch, at: t0.adding(.hours(1)), network: .online, user: "a", attributes: attrs))
        }
        #expect(launch(["license": "active", "app_version": "2.1.0"]).decision == .allow)
        let old = launch(["license": "active", "app_version": "1.9"])
        #expect(old.decision == .idpLogin)
        #expect(old.reason == Reason("upgrade_or_license"))
        #expect(old.message == "update the app")
        // `or` decides without the missing version when the licence is revoked.
        #expect(launch(["license": "revoked"]).decision == .idpLogin)
        // A missing fact the condition needs fails closed.
        #expect(launch(["license": "active"]).reason == .ruleFactMissing)
        // Undeclared attributes and values outside the declared set are refused.
        #expect(launch(["license": "active", "app_version": "2.1", "tier": "gold"]).reason == .invalidEvent)
        #expect(launch(["license": "expired", "app_version": "2.1"]).reason == .invalidEvent)
        // A refused event follows the notice rule of every idp_login, and moves no time.
        let offline = p.evaluate(
            s, Event(.launch, at: t0.adding(.hours(1)), network: .offline, user: "a", attributes: ["tier": "gold"]))
        #expect(offline.reason == .invalidEvent && offline.notices == [.networkRequired])
        #expect(offline.state.highestTime == t0 && offline.state.state == .awaitingIdP)
        #expect(launch(["tier": "gold"]).notices == [])
        // Signals are not affected by rules.
        let revoked = p.evaluate(s, Event(.accountDeactivated, at: t0.adding(.hours(1)), attributes: ["license": "active"]))
        #expect(revoked.decision == .wipe)
    }

    @Test("versions compare part by part")
    func versions() {
        #expect(Version("2.10")! > Version("2.9")!)
        #expect(Version("2.0")! == Version("2")!)
        #expect(Version("2.x") == nil)
        #expect(Version("") == nil)
    }

    @Test("the condition parser rejects what it cannot read", arguments: ["", "(", "a ==", "a == [b", "\"open", "a & b", "in"])
    func parser(_ text: String) {
        #expect(throws: ExpressionError.self) { try ExpressionParser.parse(text).get() }
    }
}
