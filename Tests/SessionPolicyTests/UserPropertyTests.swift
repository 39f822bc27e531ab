import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

@testable import SessionPolicyVerify

/// User properties: the property file's language and the monitors verify runs them with.
@Suite("User properties")
struct UserPropertyTests {
    static func load(_ text: String) -> ([UserProperty], [Diagnostic]) {
        switch YAMLSyntax.parse(text, file: "p.yaml") {
        case let .success(root?): return PropertyLoader.load(root, file: "p.yaml")
        case .success(nil): return ([], [])
        case let .failure(e): return ([], e.diagnostics)
        }
    }

    /// A step in the tables' shorthand: `event/decision/network`, decision `none` for no decision.
    static func step(_ s: String) -> ObservedStep {
        let parts = s.split(separator: "/").map(String.init)
        let decision = parts[1] == "none" ? nil : Decision(rawValue: parts[1])
        return ObservedStep(
            kind: EventKind(rawValue: parts[0])!, network: parts.count > 2 ? Network(rawValue: parts[2]) : nil, decision: decision,
            reason: Reason("x"), from: .active, to: .active)
    }

    /// (property body, steps, index of the step that breaks it or nil). Steps are
    /// `event/decision[/network]`.
    static let cases: [(String, [String], Int?)] = [
        // absence, globally: the first offline allow breaks it.
        ("never: { decision: allow, network: offline }", ["launch/allow/online", "launch/allow/offline"], 1),
        // absence after Q until R: only between them.
        (
            "never: { decision: allow }\n    after: { event: tokens_revoked }\n    until: { event: idp_login_succeeded }",
            ["launch/allow", "tokens_revoked/wipe", "idp_login_succeeded/allow", "launch/allow"], nil
        ),
        (
            "never: { decision: allow }\n    after: { event: tokens_revoked }\n    until: { event: idp_login_succeeded }",
            ["tokens_revoked/wipe", "launch/allow"], 1
        ),
        // absence between Q and R (`before`): counts only once R comes.
        (
            "never: { decision: allow }\n    after: { event: tokens_revoked }\n    before: { event: idp_login_succeeded }",
            ["tokens_revoked/wipe", "launch/allow"], nil
        ),
        (
            "never: { decision: allow }\n    after: { event: tokens_revoked }\n    before: { event: idp_login_succeeded }",
            ["tokens_revoked/wipe", "launch/allow", "background/none", "idp_login_succeeded/allow"], 3
        ),
        // universality.
        ("always: { decision: [allow, none] }", ["launch/allow", "background/none", "launch/idp_login"], 2),
        // existence before R: R without a match breaks it; with one it holds.
        ("eventually: { event: token_refreshed }\n    before: { event: logout }", ["launch/allow", "logout/wipe"], 1),
        ("eventually: { event: token_refreshed }\n    before: { event: logout }", ["token_refreshed/none", "logout/wipe"], nil),
        // precedence: `when` before any `first` breaks it.
        (
            "requires: { when: { decision: allow }, first: { event: idp_login_succeeded } }",
            ["idp_login_succeeded/allow", "launch/allow"], nil
        ),
        ("requires: { when: { event: launch, decision: allow }, first: { event: idp_login_succeeded } }", ["launch/allow"], 0),
        // response until R: a `when` still unanswered when R comes breaks it.
        (
            "responds: { when: { event: biometric_failed }, then: { decision: idp_login } }\n    until: { event: logout }",
            ["biometric_failed/require_biometric", "logout/wipe"], 1
        ),
        (
            "responds: { when: { event: biometric_failed }, then: { decision: idp_login } }\n    until: { event: logout }",
            ["biometric_failed/require_biometric", "launch/idp_login", "logout/wipe"], nil
        ),
        // response is strict: a step matching both `when` and `then` does not answer itself
        // (docs/verify.md, "`responds` is strict")...
        (
            "responds: { when: { event: biometric_failed }, then: { event: biometric_failed } }\n    before: { event: logout }",
            ["biometric_failed/require_biometric", "logout/wipe"], 1
        ),
        (
            "responds: { when: { event: biometric_failed }, then: { decision: require_biometric } }\n    before: { event: logout }",
            ["biometric_failed/require_biometric", "logout/wipe"], 1
        ),
        // ... it answers the earlier ones and waits for its own answer...
        (
            "responds: { when: { event: biometric_failed }, then: { event: biometric_failed } }\n    before: { event: logout }",
            ["biometric_failed/require_biometric", "biometric_failed/idp_login", "logout/wipe"], 2
        ),
        // ... which a later step gives.
        (
            "responds: { when: { event: biometric_failed }, then: { event: [biometric_failed, idp_login_succeeded] } }\n    before: { event: logout }",
            ["biometric_failed/require_biometric", "biometric_failed/idp_login", "idp_login_succeeded/allow", "logout/wipe"], nil
        ),
    ]

    @Test("each pattern and scope breaks at the step the pattern names, and not before", arguments: cases.indices)
    func monitor(_ i: Int) throws {
        let (body, steps, breaks) = Self.cases[i]
        let (properties, diagnostics) = Self.load("properties:\n  - id: p\n    \(body)\n")
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let p = try #require(properties.first)
        var m = Monitor.initial(p)
        var brokenAt: Int?
        for (j, s) in steps.enumerated() {
            let (next, broken) = m.next(p, Self.step(s))
            m = next
            if broken && brokenAt == nil { brokenAt = j }
        }
        #expect(brokenAt == breaks, "\(body)")
    }

    /// (file text, code, line, column) of the first error.
    static let bad: [(String, String, Int, Int)] = [
        ("properties:\n  - id: p\n    nevr: { decision: allow }\n", "unknown-key", 3, 5),
        ("properties:\n  - id: p\n    never: { decision: allow }\n    always: { decision: allow }\n", "conflicting-keys", 4, 13),
        (
            "properties:\n  - id: p\n    never: { decision: allow }\n    after: { event: launch }\n    before: { event: logout }\n    until: { event: logout }\n",
            "conflicting-keys", 6, 12
        ),
        ("properties:\n  - id: p\n    eventually: { event: logout }\n", "property-needs-end", 3, 17),
        ("properties:\n  - id: p\n    never: { decision: allowed }\n", "invalid-value", 3, 24),
        ("properties:\n  - id: p\n    never: { network: wifi }\n", "invalid-value", 3, 23),
        ("properties:\n  - id: session-max\n    never: { decision: allow }\n", "duplicate-value", 2, 9),
        ("properties:\n  - id: p\n    never: { decision: allow }\n  - id: p\n    never: { decision: wipe }\n", "duplicate-value", 4, 9),
        ("properties:\n  - id: p\n", "missing-key", 2, 5),
        ("properties:\n  - id: p\n    never: {}\n", "missing-key", 3, 12),
        ("rules: []\n", "unknown-key", 1, 1),
    ]

    @Test("a mistake in a property file is reported at its line and column, with its code", arguments: bad.indices)
    func diagnostics(_ i: Int) throws {
        let (text, code, line, column) = Self.bad[i]
        let (_, diagnostics) = Self.load(text)
        let first = try #require(diagnostics.first { $0.severity == .error }, "no error for:\n\(text)")
        #expect(first.code.rawValue == code, "\(first.message)")
        #expect(
            first.location?.line == line && first.location?.column == column, "\(first.message) at \(String(describing: first.location))")
        #expect(first.help != nil, "\(first.message)")
    }

    @Test("the shipped property file loads, and the schema lists exactly the keys the loader accepts")
    func shippedAndSchema() throws {
        let (properties, diagnostics) = Self.load(Fixtures.text("examples/properties/sessions.yaml"))
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(properties.count == 4)
        let schema = try #require(
            try JSONSerialization.jsonObject(with: Data(Fixtures.text("schemas/property.schema.json").utf8)) as? [String: Any])
        let definitions = try #require(schema["definitions"] as? [String: Any])
        func keys(_ name: String) -> Set<String> {
            Set(((definitions[name] as? [String: Any])?["properties"] as? [String: Any] ?? [:]).keys)
        }
        #expect(Set((schema["properties"] as? [String: Any] ?? [:]).keys) == Set(PropertyLoader.fileKeys))
        #expect(keys("property") == Set(PropertyLoader.propertyKeys))
        #expect(keys("step") == Set(PropertyLoader.stepKeys))
        let step = (definitions["step"] as? [String: Any])?["properties"] as? [String: Any]
        let elapsed = (step?["elapsed"] as? [String: Any])?["properties"] as? [String: Any]
        #expect(Set(elapsed?.keys ?? [:].keys) == Set(PropertyLoader.elapsedKeys))
        #expect(keys("requires") == Set(PropertyLoader.precedenceKeys))
        #expect(keys("responds") == Set(PropertyLoader.responseKeys))
    }
}
