import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// `PolicyLinter`: each lint at its place, the limits of each, `lint.allow`, and the corpus in
/// `Tests/Fixtures/lint/` (its rendered output is checked by the CLI tests).
@Suite("Lint")
struct LintTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var yaml: String
        var codes: [String]
        var help: String
        var testDescription: String { codes.joined(separator: ", ") }
    }

    /// A policy that is lint-clean: only the session max differs from the defaults.
    static let clean = "version: 1\nname: t\nsession:\n  max: 30d\n"

    static func lint(_ yaml: String, file: String = "test.yaml") throws -> PolicyLinter.Findings {
        PolicyLinter.findings(for: try PolicyFile.compile(text: yaml, file: file).get().validated)
    }

    /// Each case gives exactly the warnings `codes`, the first at marker 1️⃣, the second at 2️⃣.
    static let cases: [Case] = [
        Case(yaml: "1️⃣version: 1\nname: t\n", codes: ["no-session-max"], help: "add `session.max`"),
        Case(yaml: "1️⃣version: 1\nname: t\noffline:\n  window: 7d\n", codes: ["no-session-max"], help: "add `session.max`"),
        Case(
            yaml: "version: 1\nname: t\nsession:\n  max: 60d\noffline:\n  window: 31d\nauth_modes:\n  offline: [biometric, 1️⃣none]\n",
            codes: ["long-offline-without-biometric"],
            help: "at most `30d`"),
        Case(
            yaml: "version: 1\nname: t\nsession:\n  max: 90d\nauth_modes:\n  offline: [1️⃣none]\n", codes: ["long-offline-without-biometric"],
            help: "remove `none`"),
        Case(
            yaml: "2️⃣version: 1\nname: t\nauth_modes:\n  offline:\n    - 1️⃣none\n",
            codes: ["long-offline-without-biometric", "no-session-max"], help: "at most `30d`"),
        Case(yaml: clean + "retry:\n  biometric: { max: 1️⃣11 }\n", codes: ["retry-limit-too-high"], help: "at most `10`"),
        Case(yaml: clean + "retry:\n  offline_login:\n    max: 1️⃣21\n", codes: ["retry-limit-too-high"], help: "at most `20`"),
        Case(
            yaml: clean + "retry:\n  idp_login: { then: wipe, max: 1️⃣1000 }\n", codes: ["retry-limit-too-high"], help: "the default is `5`"),
        Case(yaml: clean + "  idle: 1️⃣30d\n", codes: ["idle-never-decides"], help: "shorten `session.idle`"),
        Case(yaml: clean + "  idle: 1️⃣1w\n  on_expired: wipe\n", codes: [], help: ""),
        Case(yaml: clean + "offline:\n  window: 1️⃣30d\n", codes: ["window-never-decides"], help: "shorten `offline.window`"),
        Case(yaml: clean + "signals:\n  account_deactivated: 1️⃣idp_login\n", codes: ["weak-revocation"], help: "use `wipe`"),
        Case(
            yaml: clean + "signals:\n  tokens_revoked: 1️⃣{ then: idp_login }\n  logout: idp_login\n", codes: ["weak-revocation"],
            help: "use `wipe`"),
        Case(yaml: clean + "device:\n  compromised: 1️⃣idp_login\n", codes: ["compromised-device-not-wiped"], help: "use `wipe`"),
        Case(yaml: clean + "device:\n  clock_tolerance: 1️⃣1h1s\n", codes: ["large-clock-tolerance"], help: "at most `1h`"),
        Case(yaml: clean + "offline:\n  credential: 1️⃣signed_jwt\n", codes: ["implicit-key-protection"], help: "key_protection: hardware"),
        Case(
            yaml: clean + "device:\n  compromised: idp_login\nlint:\n  allow: [compromised-device-not-wiped, 1️⃣weak-revocation]\n",
            codes: ["unused-lint-allow"], help: "remove"),
    ]

    @Test("each lint reports its warning at its place", arguments: cases)
    func located(_ c: Case) throws {
        let (text, markers) = Markers.extract(c.yaml)
        let warnings = try Self.lint(text).warnings
        #expect(warnings.map(\.code.rawValue).sorted() == c.codes.sorted())
        for (code, marker) in zip(c.codes, ["1️⃣", "2️⃣"]) {
            let match = warnings.first { $0.code.rawValue == code }
            #expect(match?.location == markers[marker], "\(code)")
            if code == c.codes.first { #expect(match?.help?.contains(c.help) == true, "help was \(match?.help ?? "nil")") }
        }
    }

    @Test("warnings follow the house style: one lowercase line, a remedy, no trailing period")
    func style() throws {
        let corpus = try Fixtures.files(in: "Tests/Fixtures/lint").flatMap { try Self.lint(Fixtures.text($0), file: $0).warnings }
        #expect(corpus.count >= 10)
        for d in corpus {
            #expect(d.severity == .warning)
            #expect(d.location != nil)
            #expect(!d.message.contains("\n") && !d.message.hasSuffix(".") && d.message.first?.isUppercase == false, "\(d.message)")
            let help = try #require(d.help, "\(d.code) has no help")
            #expect(!help.hasSuffix(".") && help.first?.isUppercase == false, "\(help)")
            for note in d.notes { #expect(!note.hasSuffix(".")) }
        }
    }

    @Test("the limits themselves are accepted")
    func limits() throws {
        let yaml =
            Self.clean + """
                  idle: 29d
                offline:
                  window: 30d
                  credential: signed_jwt
                  key_protection: any
                auth_modes:
                  offline: [none]
                retry:
                  biometric: { max: 10 }
                  offline_login: { max: 20 }
                  idp_login: { max: 20, then: idp_login }
                signals:
                  license_revoked: read_only
                  refresh_token_invalid: idp_login
                device:
                  clock_tolerance: 1h
                """
        // `offline.window: 30d` equals the max: the only warning is that it never decides.
        #expect(try Self.lint(yaml).warnings.map(\.code) == [.windowNeverDecides])
        let shorter = yaml.replacingOccurrences(of: "window: 30d", with: "window: 29d23h59m59s")
        #expect(try Self.lint(shorter).warnings.isEmpty)
    }

    @Test("the window note names the reaction that never happens only when it differs")
    func windowNote() throws {
        let same = try Self.lint(Self.clean + "offline:\n  window: 30d\n").warnings
        #expect(same.first?.notes.count == 1)
        let differs = try Self.lint(Self.clean + "offline:\n  window: 30d\n  on_expired: wipe\n").warnings
        #expect(differs.first?.notes.last?.contains("`offline.on_expired: wipe` never happens") == true)
    }

    @Test("`lint.allow` silences a warning and reports entries that match nothing")
    func allow() throws {
        let (text, markers) = Markers.extract(
            """
            version: 1
            name: t
            device:
              compromised: idp_login
              clock_tolerance: 1️⃣2h
            lint:
              allow:
                - compromised-device-not-wiped
                - no-session-max
                - 2️⃣weak-revocation
            """)
        let findings = try Self.lint(text)
        #expect(findings.allowed.map(\.code) == [.noSessionMax, .compromisedDeviceNotWiped])
        #expect(findings.warnings.map(\.code) == [.largeClockTolerance, .unusedLintAllow])
        #expect(findings.warnings.map(\.location) == [markers["1️⃣"], markers["2️⃣"]])
        #expect(PolicyLinter.warnings(for: try PolicyFile.compile(text: text, file: "test.yaml").get().validated) == findings.warnings)
    }

    @Test(
        "`lint.allow` takes only lint codes, once each",
        arguments: [
            ("lint:\n  allow: [1️⃣no-sesion-max]\n", "invalid-value", "did you mean `no-session-max`?"),
            ("lint:\n  allow: [1️⃣unused-lint-allow]\n", "invalid-value", "remove the unused entries"),
            ("lint:\n  allow: [1️⃣too-permissive]\n", "invalid-value", "docs/diagnostics.md"),
            ("lint:\n  allow: [no-session-max, 1️⃣no-session-max]\n", "duplicate-value", "remove the second"),
            ("lint:\n  allow: 1️⃣no-session-max\n", "wrong-type", "write `[a, b]`"),
            ("lint:\n  1️⃣alow: [no-session-max]\n", "unknown-key", "did you mean `allow`?"),
        ])
    func allowErrors(yaml: String, code: String, help: String) {
        let (text, markers) = Markers.extract(Self.clean + yaml)
        guard case let .failure(error) = PolicyFile.compile(text: text, file: "test.yaml") else {
            Issue.record("policy compiled but should not have")
            return
        }
        let match = error.diagnostics.first { $0.code.rawValue == code }
        #expect(match?.location == markers["1️⃣"], "\(error.diagnostics)")
        #expect(match?.help?.contains(help) == true, "help was \(match?.help ?? "nil")")
    }

    @Test("a policy built in code is linted too, without places")
    func codeBuilt() throws {
        var p = Policy(name: "in-code")
        p.authModes.offline = [.unprotected]
        p.device.compromised = .idpLogin
        let warnings = PolicyLinter.warnings(for: try PolicyValidator.validated(p))
        #expect(warnings.map(\.code) == [.compromisedDeviceNotWiped, .longOfflineWithoutBiometric, .noSessionMax])
        #expect(warnings.allSatisfy { $0.location == nil })
        p.session.max = .days(14)
        p.device.compromised = .wipe
        #expect(PolicyLinter.warnings(for: try PolicyValidator.validated(p)).isEmpty)
    }

    @Test("the corpus triggers every lint, and weak.yaml every one that can fire without a session max")
    func corpusCoversEveryLint() throws {
        let all = Set(PolicyLinter.lints.map(\.code) + [.unusedLintAllow])
        #expect(all.count == PolicyLinter.lints.count + 1, "lint codes must be unique")
        var seen: Set<DiagnosticCode> = []
        for file in Fixtures.files(in: "Tests/Fixtures/lint") {
            let warnings = try Self.lint(Fixtures.text(file), file: file).warnings
            #expect(warnings == warnings.sortedForOutput())
            seen.formUnion(warnings.map(\.code))
        }
        #expect(seen == all)
        let weak = Set(try Self.lint(Fixtures.text("Tests/Fixtures/lint/weak.yaml")).warnings.map(\.code))
        #expect(all.subtracting(weak) == [.idleNeverDecides, .windowNeverDecides, .ruleNeverFires])
    }

    @Test("shipped policies give no warnings; they accept exactly the ones they list, for the reason in their comments")
    func shippedPolicies() throws {
        for file in Fixtures.files(in: "policies") {
            let policy = try PolicyFile.compile(text: Fixtures.text(file), file: file).get().validated
            let findings = PolicyLinter.findings(for: policy)
            #expect(findings.warnings.isEmpty, "\(file): \(findings.warnings.map(\.code))")
            #expect(findings.allowed.map(\.code) == policy.policy.lint.allow, "\(file)")
        }
        let kobil = try Fixtures.policy("kobil-offline-token").policy
        #expect(kobil.lint.allow == [.longOfflineWithoutBiometric])
        #expect(try Fixtures.policy("spendiq").policy.lint.allow == [.noSessionMax])
    }

    @Test("the reference policy of docs/policy-language.md is lint-clean")
    func referencePolicy() throws {
        let yaml = try #require(DocsTests.blocks("yaml", in: "docs/policy-language.md").first)
        let policy = try PolicyFile.compile(text: yaml, file: "docs/policy-language.md").get().validated
        let findings = PolicyLinter.findings(for: policy)
        #expect(findings.warnings.isEmpty && findings.allowed.isEmpty, "\(findings)")
    }
}
