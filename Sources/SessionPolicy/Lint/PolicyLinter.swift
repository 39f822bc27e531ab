/// Warnings about policies that are legal but that a security reviewer should look at twice
/// (`policyctl lint`; the levers are those of docs/policy-language.md): levers
/// that make sessions last for ever, weak reactions, limits that are no limits, and levers that
/// can never decide.
///
/// The linter is pure: a validated policy in (its conditions checked once, by the validator), sorted warnings out. A policy may accept a warning on
/// purpose by listing its code under `lint.allow`; an entry there that matches no warning is
/// itself reported (`unused-lint-allow`), so acknowledgements cannot outlive their reason.
package enum PolicyLinter {
    /// One lint: its code, why it matters, and the check.
    package struct Lint: Sendable {
        /// The stable code of the warnings this lint reports.
        package let code: DiagnosticCode
        /// Why a reviewer wants to know, in one line.
        package let rationale: String
        let check: @Sendable (ValidatedPolicy) -> [Diagnostic]
    }

    /// What the linter found in one policy.
    package struct Findings: Sendable, Equatable {
        /// The warnings to report, sorted.
        package var warnings: [Diagnostic]
        /// The warnings the policy accepts through `lint.allow`, sorted.
        package var allowed: [Diagnostic]
    }

    /// Offline use without any user verification for longer than this is reported.
    package static let longestUnverifiedOffline = TimeSpan.days(30)
    /// More biometric attempts than this are reported: each one is a guess.
    package static let mostBiometricAttempts = 10
    /// More offline or IdP login attempts than this are reported.
    package static let mostLoginAttempts = 20
    /// A clock tolerance above this is reported.
    package static let largestClockTolerance = TimeSpan.hours(1)

    /// Every lint, in one place. Codes are documented in `docs/diagnostics.md`.
    package static let lints: [Lint] = [
        Lint(
            code: .noSessionMax,
            rationale: "without `session.max` a session never needs a full login again; without `offline.window` either, it never ends",
            check: { noSessionMax($0.policy) }),
        Lint(
            code: .longOfflineWithoutBiometric,
            rationale: "auth mode `none` lets whoever holds the device in: a lost device should not stay open for more than 30 days",
            check: { longOfflineWithoutBiometric($0.policy) }),
        Lint(
            code: .retryLimitTooHigh,
            rationale: "a retry limit above 10 biometric or 20 login attempts does not stop guessing",
            check: { retryLimitTooHigh($0.policy) }),
        Lint(
            code: .idleNeverDecides,
            rationale: "an idle limit not shorter than the session max is reached only after the max: a dead lever",
            check: { idleNeverDecides($0.policy) }),
        Lint(
            code: .windowNeverDecides,
            rationale: "an offline window equal to the session max is reached only after the max, so `offline.on_expired` never happens",
            check: { windowNeverDecides($0.policy) }),
        Lint(
            code: .weakRevocation,
            rationale: "a deactivated account or revoked tokens should leave no data on the device",
            check: { weakRevocation($0.policy) }),
        Lint(
            code: .compromisedDeviceNotWiped,
            rationale: "data on a device that failed its integrity check is not safe",
            check: { compromisedDeviceNotWiped($0.policy) }),
        Lint(
            code: .largeClockTolerance,
            rationale: "a tolerance of more than an hour hides a clock set back on purpose",
            check: { largeClockTolerance($0.policy) }),
        Lint(
            code: .implicitKeyProtection,
            rationale: "a signed-JWT policy that does not say `key_protection` accepts software keys without anyone deciding so",
            check: { implicitKeyProtection($0.policy) }),
        Lint(
            code: .ruleNeverFires,
            rationale:
                "a rule that an earlier rule always pre-empts, or whose condition excludes its own events, is dead policy that reads as if it protected something",
            check: { ruleNeverFires($0) }),
    ]

    /// The warnings to report for `policy`: every lint's findings except those `lint.allow`
    /// accepts, plus `unused-lint-allow` for each allowed code that matched nothing. Sorted.
    package static func warnings(for validated: ValidatedPolicy) -> [Diagnostic] { findings(for: validated).warnings }

    /// The warnings to report and the ones `lint.allow` accepts.
    package static func findings(for validated: ValidatedPolicy) -> Findings {
        let policy = validated.policy
        let all = lints.flatMap { $0.check(validated) }
        let allow = policy.lint.allow
        var warnings = all.filter { !allow.contains($0.code) }
        for (i, code) in allow.enumerated() where !all.contains(where: { $0.code == code }) {
            warnings.append(
                .warning(
                    .unusedLintAllow, "`lint.allow` accepts `\(code)`, but the policy gives no such warning",
                    at: policy.sources["lint.allow[\(i)]"] ?? policy.sources["lint.allow"] ?? policy.top,
                    help: "remove `\(code)` from `lint.allow`"))
        }
        return Findings(warnings: warnings.sortedForOutput(), allowed: all.filter { allow.contains($0.code) }.sortedForOutput())
    }

    /// Notes for the app team, never warnings (`lint --strict` ignores them): each rule that
    /// reads a declared attribute makes the events it applies to depend on that attribute, and
    /// an event without it goes to the IdP (`rule_fact_missing`, fail closed by design).
    package static func notes(for validated: ValidatedPolicy) -> [Diagnostic] {
        let p = validated.policy
        var out: [Diagnostic] = []
        for (i, rule) in p.rules.enumerated() {
            let names = attributes(read: validated.conditions[i])
            guard !names.isEmpty else { continue }
            let listed = names.map { "`\($0)`" }.joined(separator: ", ")
            let events = rule.on.isEmpty ? "every event" : rule.on.map { "`\($0.rawValue)`" }.joined(separator: ", ")
            out.append(
                Diagnostic(
                    .note, .attributeRequired,
                    "rule `\(rule.name)` reads \(names.count == 1 ? "attribute" : "attributes") \(listed): \(events) must carry \(names.count == 1 ? "it" : "them")",
                    at: p.sources["rules[\(i)].when"] ?? p.sources["rules[\(i)]"] ?? p.top,
                    notes: [
                        "an event without \(names.count == 1 ? "it" : "one of them") goes to the IdP (`rule_fact_missing`): the rule fails closed"
                    ],
                    help:
                        "have the app or the server report `attributes: { \(names[0]): ... }` on \(rule.on.isEmpty ? "every event" : "those events")"
                ))
        }
        return out.sortedForOutput()
    }

    /// The declared attributes `condition` reads, sorted.
    static func attributes(read condition: Condition) -> [String] {
        var names: Set<String> = []
        func walk(_ c: Condition) {
            switch c {
            case let .oneOf(f, _, _), let .number(f, _, _), let .version(f, _, _):
                if case let .attribute(n) = f { names.insert(n) }
            case let .and(a, b), let .or(a, b):
                walk(a)
                walk(b)
            case let .not(a): walk(a)
            }
        }
        walk(condition)
        return names.sorted()
    }

    // MARK: The lints

    static func noSessionMax(_ p: Policy) -> [Diagnostic] {
        guard p.session.max == nil else { return [] }
        if let window = p.offline.window {
            return [
                .warning(
                    .noSessionMax, "no `session.max`: a session that goes online now and then never needs a full login again",
                    at: p.top,
                    notes: [
                        "`offline.window` is `\(window)`\(p.suffix("offline.window")): it limits offline use only, and a token refresh restarts it"
                    ],
                    help: "add `session.max` (for example `90d`) to require a full login at the identity provider that often")
            ]
        }
        return [
            .warning(
                .noSessionMax, "no `session.max` and no `offline.window`: a session in use never ends, online or offline", at: p.top,
                help: "add `session.max` (for example `90d`), and `offline.window` to limit offline use")
        ]
    }

    static func longOfflineWithoutBiometric(_ p: Policy) -> [Diagnostic] {
        guard let index = p.authModes.offline.firstIndex(of: .unprotected) else { return [] }
        let limit = p.offline.window ?? p.session.max
        if let limit, limit <= longestUnverifiedOffline { return [] }
        let note: String
        if let window = p.offline.window {
            note = "`offline.window` is `\(window)`\(p.suffix("offline.window"))"
        } else if let max = p.session.max {
            note = "`offline.window` is not set: offline use ends only with `session.max`, which is `\(max)`\(p.suffix("session.max"))"
        } else {
            note = "neither `offline.window` nor `session.max` is set"
        }
        let span = limit.map { "for up to `\($0)`" } ?? "and with no time limit"
        return [
            .warning(
                .longOfflineWithoutBiometric, "auth mode `none` allows offline logins without any user verification \(span)",
                at: p.place("auth_modes.offline[\(index)]", "auth_modes.offline"), notes: [note],
                help:
                    "set `offline.window` to at most `\(longestUnverifiedOffline)`, or remove `none` from `auth_modes.offline` so offline logins need biometrics"
            )
        ]
    }

    static func retryLimitTooHigh(_ p: Policy) -> [Diagnostic] {
        let paths: [(String, Policy.RetryLimit, Int, String, String)] = [
            (
                "biometric", p.retry.biometric, mostBiometricAttempts, "biometric attempts",
                "each biometric attempt is a guess by whoever holds the device"
            ),
            ("offline_login", p.retry.offlineLogin, mostLoginAttempts, "failed offline logins", "a limit this high stops no one"),
            ("idp_login", p.retry.idpLogin, mostLoginAttempts, "failed logins at the identity provider", "a limit this high stops no one"),
        ]
        return paths.compactMap { key, limit, most, what, why in
            guard limit.max > most else { return nil }
            let defaults = Policy.Retry()
            let byDefault = key == "biometric" ? defaults.biometric : key == "offline_login" ? defaults.offlineLogin : defaults.idpLogin
            return .warning(
                .retryLimitTooHigh, "`retry.\(key).max` allows \(limit.max) \(what) before `\(limit.then.rawValue)`",
                at: p.place("retry.\(key).max", "retry.\(key)"), notes: [why],
                help: "lower `retry.\(key).max` to at most `\(most)` (the default is `\(byDefault.max)`)")
        }
    }

    static func idleNeverDecides(_ p: Policy) -> [Diagnostic] {
        guard let idle = p.session.idle, let max = p.session.max, idle >= max else { return [] }
        return [
            .warning(
                .idleNeverDecides, "`session.idle` (`\(idle)`) is not shorter than `session.max` (`\(max)`), so it never ends a session",
                at: p.place("session.idle", "session"),
                notes: [
                    "`session.max` is `\(max)`\(p.suffix("session.max")): a session reaches it no later than its idle limit, and it is checked first"
                ],
                help: "shorten `session.idle` to less than `\(max)`, or remove it")
        ]
    }

    static func windowNeverDecides(_ p: Policy) -> [Diagnostic] {
        guard let window = p.offline.window, let max = p.session.max, window >= max else { return [] }
        var notes = [
            "`session.max` is `\(max)`\(p.suffix("session.max")): a session reaches it no later than its offline window, and it is checked first"
        ]
        if p.offline.onExpired != p.session.onExpired {
            notes.append(
                "`offline.on_expired: \(p.offline.onExpired.rawValue)` never happens: the session max decides with `session.on_expired: \(p.session.onExpired.rawValue)`"
            )
        }
        return [
            .warning(
                .windowNeverDecides,
                "`offline.window` (`\(window)`) is not shorter than `session.max` (`\(max)`), so it never ends a session",
                at: p.place("offline.window", "offline"), notes: notes,
                help: "shorten `offline.window` to limit offline use, or remove it")
        ]
    }

    static func weakRevocation(_ p: Policy) -> [Diagnostic] {
        var out: [Diagnostic] = []
        if p.signals.accountDeactivated.then == .idpLogin {
            out.append(
                .warning(
                    .weakRevocation, "`signals.account_deactivated: idp_login` keeps a deactivated account's data on the device",
                    at: p.place("signals.account_deactivated", "signals"), help: "use `wipe`: a deactivated account leaves no data behind"))
        }
        if p.signals.tokensRevoked.then == .idpLogin {
            out.append(
                .warning(
                    .weakRevocation,
                    "`signals.tokens_revoked: idp_login` keeps the user's data on the device after the server revoked the tokens",
                    at: p.place("signals.tokens_revoked", "signals"),
                    help: "use `wipe`, so revoking the tokens also removes the data they protected"))
        }
        return out
    }

    static func compromisedDeviceNotWiped(_ p: Policy) -> [Diagnostic] {
        guard p.device.compromised == .idpLogin else { return [] }
        return [
            .warning(
                .compromisedDeviceNotWiped,
                "`device.compromised: idp_login` keeps the session's data on a device that failed its integrity check",
                at: p.place("device.compromised", "device"),
                help: "use `wipe`: neither the data nor a new login is safe on a compromised device")
        ]
    }

    static func largeClockTolerance(_ p: Policy) -> [Diagnostic] {
        let tolerance = p.device.clockTolerance
        guard tolerance > largestClockTolerance else { return [] }
        return [
            .warning(
                .largeClockTolerance,
                "`device.clock_tolerance` (`\(tolerance)`) lets the clock go back that far without a `device.clock_rollback` reaction",
                at: p.place("device.clock_tolerance", "device"),
                notes: ["elapsed time already counts from the highest time seen: the tolerance only has to absorb clock drift"],
                help: "lower `device.clock_tolerance` to at most `\(largestClockTolerance)` (the default is `5m`)")
        ]
    }

    /// A rule never fires when an earlier rule applies to all its events with the same condition
    /// (the first match decides), or when its condition requires an `event` it does not apply to.
    /// (A rule can never shadow a revocation: rules do not apply to server signals.)
    static func ruleNeverFires(_ v: ValidatedPolicy) -> [Diagnostic] {
        let p = v.policy
        let conditions = v.conditions
        var out: [Diagnostic] = []
        for (j, rule) in p.rules.enumerated() {
            let c = conditions[j]
            let at = p.sources["rules[\(j)]"]
            if let i = (0..<j).first(where: { conditions[$0] == c && Set(p.rules[$0].on).isSuperset(of: rule.on) }) {
                out.append(
                    .warning(
                        .ruleNeverFires, "rule `\(rule.name)` never fires: rule `\(p.rules[i].name)` before it has the same condition",
                        at: at,
                        notes: p.sources["rules[\(i)]"].map { ["`\(p.rules[i].name)` is at \($0)"] } ?? [],
                        help: "remove one of the two rules, or make the conditions differ"))
                continue
            }
            if let events = requiredEvents(c), !rule.on.contains(where: { events.contains($0.rawValue) }) {
                out.append(
                    .warning(
                        .ruleNeverFires, "rule `\(rule.name)` never fires: its condition needs an event it does not apply to", at: at,
                        help: "add the events to `on`, or remove the `event` test from `when`"))
            }
        }
        return out
    }

    /// The events a condition requires (`event == x` or `event in [...]` on every path), if it says.
    static func requiredEvents(_ c: Condition) -> Set<String>? {
        switch c {
        case let .oneOf(.event, values, negated: false): return Set(values)
        case let .and(a, b):
            switch (requiredEvents(a), requiredEvents(b)) {
            case let (x?, y?): return x.intersection(y)
            case let (x?, nil), let (nil, x?): return x
            default: return nil
            }
        case let .or(a, b):
            guard let x = requiredEvents(a), let y = requiredEvents(b) else { return nil }
            return x.union(y)
        default: return nil
        }
    }

    static func implicitKeyProtection(_ p: Policy) -> [Diagnostic] {
        guard p.offline.credential == .signedJWT, p.offline.keyProtection == .any, p.sources["offline.key_protection"] == nil else {
            return []
        }
        return [
            .warning(
                .implicitKeyProtection,
                "`credential: signed_jwt` without `key_protection` accepts signing keys in a software keystore",
                at: p.place("offline.credential", "offline"),
                help:
                    "add `key_protection: hardware` to require a hardware-backed key, or `key_protection: any` to accept software keys on purpose"
            )
        ]
    }
}

extension Policy {
    /// The first line of the policy's file, for warnings about a lever that is not written.
    /// Nil for a policy built in code.
    fileprivate var top: SourceLocation? {
        sources.values.map(\.file).min().map { SourceLocation(file: $0, line: 1, column: 1) }
    }

    /// Where the first of `paths` was written, else the top of the file.
    fileprivate func place(_ paths: String...) -> SourceLocation? {
        paths.lazy.compactMap { sources[$0] }.first ?? top
    }

    /// ` (file:line:column)` for a lever that was written, else nothing.
    fileprivate func suffix(_ path: String) -> String {
        sources[path].map { " (\($0))" } ?? ""
    }
}
