/// Reads and validates a policy from located syntax (the levers of docs/policy-language.md). Every problem in the file is reported, each with its place and a hint.
package enum PolicyLoader {
    /// How a policy file starts: the hint for an empty file or one that is not a mapping.
    package static let start =
        "a policy is a mapping that starts `version: 1` and `name: NAME`, then its sections (`session:`, `offline:`, ...)"
    // The keys each mapping accepts. The loader reads them from here, and the tests check
    // that `schemas/policy.schema.json` lists exactly the same keys.
    package static let topKeys = [
        "version", "name", "description", "session", "offline", "auth_modes", "retry", "fallback", "signals", "device", "cross_app",
        "attributes", "rules", "lint",
    ]
    /// The retry paths, each with the limit it sets.
    static let retryLimits: [(key: String, limit: any WritableKeyPath<Policy.Retry, Policy.RetryLimit> & Sendable)] = [
        ("biometric", \.biometric), ("offline_login", \.offlineLogin), ("idp_login", \.idpLogin),
    ]
    package static var retryPaths: [String] { retryLimits.map(\.key) }
    /// The signals, each with the reaction it sets.
    static let signalReactions: [(key: String, reaction: any WritableKeyPath<Policy.Signals, Policy.SignalReaction> & Sendable)] = [
        ("account_deactivated", \.accountDeactivated), ("tokens_revoked", \.tokensRevoked), ("license_revoked", \.licenseRevoked),
        ("biometric_enrollment_changed", \.biometricEnrollmentChanged), ("logout", \.logout),
        ("refresh_token_invalid", \.refreshTokenInvalid),
    ]
    package static var signalKeys: [String] { signalReactions.map(\.key) }
    /// The keys of each section (a top-level mapping), by section name.
    package static let sectionKeys: [String: [String]] = [
        "session": ["max", "idle", "on_expired"],
        "offline": ["window", "credential", "key_protection", "on_expired"],
        "auth_modes": ["offline"],
        "retry": retryPaths,
        "fallback": ["on_offline_failure"],
        "signals": signalKeys,
        "device": ["single_user", "bind_session", "clock_rollback", "clock_tolerance", "compromised"],
        "cross_app": ["adopt", "apps", "reveal_refusal"],
        "lint": ["allow"],
    ]
    /// The keys of one rule, and of its `then`.
    package static let ruleKeys = ["name", "on", "when", "then", "description"]
    package static let ruleOutcomeKeys = ["decision", "reason", "message", "notices", "notice_delay", "state"]
    /// The keys of one retry limit (`retry.biometric: {max, then}`).
    package static let retryLimitKeys = ["max", "then"]
    /// The keys of a signal's long form (`{then, notice_delay}`).
    package static let signalLongFormKeys = ["then", "notice_delay"]
    /// The reactions of every lever but `signals.license_revoked`, which also takes `read_only`.
    package static let endSession: [Reaction] = [.idpLogin, .wipe]

    /// Reads the policy and validates it (once): the validated policy, or nil when there are
    /// errors; and every diagnostic (errors and warnings), sorted.
    package static func load(_ root: SyntaxNode) -> (policy: ValidatedPolicy?, diagnostics: [Diagnostic]) {
        var read = PolicyReader()
        guard let top = read.syntax.fields(root, path: "", allowed: topKeys, start: Self.start) else {
            return (nil, read.syntax.diagnostics)
        }
        var policy = read.header(top)
        if let node = top["session"] { policy.session = read.session(node) }
        if let node = top["offline"] { policy.offline = read.offline(node) }
        if let node = top["auth_modes"] { policy.authModes = read.authModes(node) }
        if let node = top["retry"] { policy.retry = read.retry(node) }
        if let node = top["fallback"] { policy.fallback = read.fallback(node) }
        if let node = top["signals"] { policy.signals = read.signals(node) }
        if let node = top["device"] { policy.device = read.device(node) }
        if let node = top["lint"] { policy.lint = read.lint(node) }
        if let node = top["cross_app"] { policy.crossApp = read.crossApp(node) }
        if let node = top["attributes"] { policy.attributes = read.attributes(node) }
        if let node = top["rules"] { policy.rules = read.rules(node) }
        policy.sources = read.sources
        // Values that did not read keep their (valid) defaults, so this adds no noise; a missing
        // name was reported by `header`.
        if policy.name.isEmpty { policy.name = "unnamed" }
        // What the values mean together: the same checks `CompiledPolicy` runs on a policy built in code.
        let (validated, problems) = PolicyValidator.validate(policy)
        for d in problems { read.syntax.report(d) }
        let diagnostics = read.syntax.diagnostics.sortedForOutput()
        return (diagnostics.hasErrors ? nil : validated, diagnostics)
    }
}
