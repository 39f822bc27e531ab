import Foundation

/// The semantic checks of a policy: what its values mean together. The only way to a
/// `ValidatedPolicy`, and so to a compiled machine: a policy read from a file and one built in
/// code face the same checks, once, and no policy that could fail open is ever compiled.
public enum PolicyValidator {
    /// Validates `p`: the validated policy when there is no error, and every diagnostic (errors
    /// and warnings), sorted. Each rule condition is parsed and type-checked here, once.
    public static func validate(_ p: Policy) -> (validated: ValidatedPolicy?, diagnostics: [Diagnostic]) {
        let (problems, conditions) = check(p)
        guard !problems.hasErrors, let conditions else { return (nil, problems) }
        return (ValidatedPolicy(policy: p, conditions: conditions, warnings: problems), problems)
    }

    /// Validates `p`, throwing its errors.
    public static func validated(_ p: Policy) throws(DiagnosticError) -> ValidatedPolicy {
        let (validated, problems) = validate(p)
        guard let validated else { throw DiagnosticError(problems) }
        return validated
    }

    /// Why `name` is not a policy name, or nil: a policy name is 1 to 64 of `A-Z a-z 0-9 - _ .`,
    /// starting with a letter or digit, and does not end in `.yaml`, `.yml` or `.json` (a scenario's
    /// `policy:` that ends so is a file path).
    static func nameProblem(_ name: String) -> String? {
        let allowed = name.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "-" || $0 == "_" || $0 == "."
        }
        guard let first = name.unicodeScalars.first else { return "must not be empty" }
        if !allowed { return "may hold only letters, digits, `-`, `_` and `.`" }
        if first == "-" || first == "_" || first == "." { return "must start with a letter or digit" }
        if name.count > 64 { return "must be at most 64 characters" }
        if [".yaml", ".yml", ".json"].contains(where: { name.lowercased().hasSuffix($0) }) { return "must not end like a file name" }
        return nil
    }

    /// `name` as a policy name: lowercase words joined by `-` (`Acme Bank` -> `acme-bank`).
    static func slug(_ name: String) -> String {
        let words = name.lowercased().split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
        let s = words.joined(separator: "-")
        return s.isEmpty ? "my-policy" : String(s.prefix(64))
    }

    /// The reactions each lever accepts.
    static let endSession: [Reaction] = [.idpLogin, .wipe]

    /// Every problem with `p`, located where `p.sources` knows the place, and the checked rule
    /// conditions when every one of them checks.
    static func check(_ p: Policy) -> ([Diagnostic], [Condition]?) {
        var out: [Diagnostic] = []
        func at(_ path: String) -> SourceLocation? { p.sources[path] }

        if p.version != 1 {
            out.append(
                .error(
                    .unsupportedVersion, "policy version `\(p.version)` is not supported", at: at("version"),
                    help: "the only version is `1`"))
        }
        if let problem = Self.nameProblem(p.name) {
            out.append(
                .error(
                    .invalidValue, "`name` \(problem), found `\(p.name)`", at: at("name"),
                    help: "a policy name is a URL path segment and what scenarios refer to: letters, digits, `-`, `_` and `.`,"
                        + " starting with a letter or digit, at most 64 characters, for example `\(Self.slug(p.name))`"))
        }
        var seen: [AuthMode] = []
        for (i, m) in p.authModes.offline.enumerated() {
            let place = at("auth_modes.offline[\(i)]") ?? at("auth_modes.offline")
            if m.needsIdP {
                out.append(
                    .error(
                        .offlineModeNeedsIdP, "auth mode `\(m.rawValue)` cannot re-authenticate offline", at: place,
                        help: "`password` and `pin` need the identity provider; offline modes are `none` and `biometric`"))
            } else if seen.contains(m) {
                out.append(
                    .error(
                        .duplicateValue, "auth mode `\(m.rawValue)` is listed twice", at: place,
                        help: "remove the second `\(m.rawValue)`"))
            }
            seen.append(m)
        }
        for (key, limit) in [("biometric", p.retry.biometric), ("offline_login", p.retry.offlineLogin), ("idp_login", p.retry.idpLogin)] {
            if limit.max < 1 {
                out.append(
                    .error(
                        .retryMaxBelowOne, "`retry.\(key).max` must be at least 1, found `\(limit.max)`",
                        at: at("retry.\(key).max") ?? at("retry.\(key)"),
                        help: "`max` counts attempts: `1` means the first failure already triggers `then`"))
            }
        }
        let levers: [(String, Reaction, [Reaction])] = [
            ("session.on_expired", p.session.onExpired, endSession),
            ("offline.on_expired", p.offline.onExpired, endSession),
            ("retry.biometric.then", p.retry.biometric.then, endSession),
            ("retry.offline_login.then", p.retry.offlineLogin.then, endSession),
            ("retry.idp_login.then", p.retry.idpLogin.then, endSession),
            ("fallback.on_offline_failure", p.fallback.onOfflineFailure, endSession),
            ("signals.account_deactivated", p.signals.accountDeactivated.then, endSession),
            ("signals.tokens_revoked", p.signals.tokensRevoked.then, endSession),
            ("signals.license_revoked", p.signals.licenseRevoked.then, [.readOnly, .wipe, .idpLogin]),
            ("signals.biometric_enrollment_changed", p.signals.biometricEnrollmentChanged.then, endSession),
            ("signals.logout", p.signals.logout.then, endSession),
            ("signals.refresh_token_invalid", p.signals.refreshTokenInvalid.then, endSession),
            ("device.clock_rollback", p.device.clockRollback, endSession),
            ("device.compromised", p.device.compromised, endSession),
        ]
        for (path, reaction, allowed) in levers where !allowed.contains(reaction) {
            let place = at(path) ?? at(path.split(separator: ".").dropLast().joined(separator: "."))
            out.append(
                .error(
                    .reactionNotAllowed, "`\(path)` cannot be `\(reaction.rawValue)`", at: place,
                    help: "use " + allowed.map { "`\($0.rawValue)`" }.joined(separator: " or ")))
        }
        if let window = p.offline.window, let max = p.session.max, window > max {
            let maxAt = at("session.max").map { " (\($0))" } ?? ""
            out.append(
                .error(
                    .windowExceedsSessionMax, "offline window `\(window)` is longer than the session max `\(max)`",
                    at: at("offline.window"), notes: ["`session.max` is `\(max)`\(maxAt)"],
                    help: "shorten `offline.window` to at most `\(max)`, or raise `session.max`"))
        }
        if p.offline.keyProtection == .hardware, p.offline.credential != .signedJWT {
            out.append(
                .warning(
                    .invalidValue,
                    "`offline.key_protection: hardware` has no effect with credential `\(p.offline.credential.rawValue)`",
                    at: at("offline.key_protection"), help: "key protection applies to `credential: signed_jwt`"))
        }
        if p.crossApp.adopt != .never, p.crossApp.apps.isEmpty {
            out.append(
                .error(
                    .missingKey, "`cross_app.adopt: \(p.crossApp.adopt.rawValue)` needs `cross_app.apps`",
                    at: at("cross_app.adopt") ?? at("cross_app"),
                    help: "list the ids of the apps whose device sessions may be adopted"))
        }
        let (ruleProblems, conditions) = checkRules(p)
        out += ruleProblems
        return (out.sortedForOutput(), conditions)
    }

    /// Checks declared attributes and rules: names, events, outcomes, and every condition's syntax
    /// and types. The conditions, by rule index, when every one checks.
    static func checkRules(_ p: Policy) -> ([Diagnostic], [Condition]?) {
        var out: [Diagnostic] = []
        var conditions: [Condition] = []
        var allChecked = true
        var names: Set<String> = []
        for a in p.attributes {
            let at = p.sources["attributes.\(a.name)"]
            if Fact.builtInNames.contains(a.name) {
                out.append(
                    .error(
                        .invalidValue, "attribute `\(a.name)` has the name of a built-in fact", at: at,
                        help: "choose another name; built-in facts are " + Fact.builtInNames.map { "`\($0)`" }.joined(separator: ", ")))
            }
            if !names.insert(a.name).inserted {
                out.append(.error(.duplicateValue, "attribute `\(a.name)` is declared twice", at: at))
            }
            if a.name.isEmpty || !a.name.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0 == "_" || ("0"..."9").contains($0) })
            {
                out.append(.error(.invalidValue, "attribute name `\(a.name)` must be letters, digits and `_`", at: at))
            }
        }
        let checker = ConditionChecker(attributes: p.attributes)
        var ruleNames: [String: Int] = [:]
        for (i, rule) in p.rules.enumerated() {
            let base = "rules[\(i)]"
            let at = p.sources[base]
            if let first = ruleNames[rule.name] {
                out.append(
                    .error(
                        .duplicateValue, "two rules are named `\(rule.name)`", at: p.sources["\(base).name"] ?? at,
                        notes: p.sources["rules[\(first)]"].map { ["the first is at \($0)"] } ?? [], help: "give each rule its own name"))
            }
            ruleNames[rule.name] = i
            if rule.on.isEmpty {
                out.append(
                    .error(
                        .ruleNotAllowed, "rule `\(rule.name)` applies to no event", at: p.sources["\(base).on"] ?? at,
                        help: "list the events it applies to, or leave `on` out for `[launch, resume]`"))
            }
            for (j, e) in rule.on.enumerated() where !Rule.events.contains(e) {
                out.append(
                    .error(
                        .ruleNotAllowed, "rules cannot apply to `\(e.rawValue)`", at: p.sources["\(base).on[\(j)]"] ?? at,
                        help: "rules apply to " + Rule.events.map { "`\($0.rawValue)`" }.joined(separator: ", ")
                            + "; signals, failures and logout are decided by the built-in levers, which rules never override"))
            }
            let then = rule.then
            let thenAt = p.sources["\(base).then.decision"] ?? p.sources["\(base).then"] ?? at
            if then.decision == .allow {
                out.append(
                    .error(
                        .reactionNotAllowed, "rule `\(rule.name)` cannot decide `allow`", at: thenAt,
                        help: "rules only restrict: decide `require_biometric`, `idp_login` or `wipe`, or set `state: read_only`"))
            }
            if then.decision == .requireBiometric, rule.on.contains(where: { ![.launch, .resume].contains($0) }) {
                out.append(
                    .error(
                        .ruleNotAllowed, "`require_biometric` is a decision for `launch` and `resume` only", at: thenAt,
                        help: "limit `on` to `[launch, resume]`, or decide `idp_login` or `wipe`"))
            }
            if then.readOnly {
                if then.decision != nil {
                    out.append(
                        .error(
                            .ruleNotAllowed, "rule `\(rule.name)` sets `state: read_only` and a decision", at: thenAt,
                            help: "`state: read_only` keeps the user signed in: leave `decision` out"))
                }
                if rule.on.contains(where: { ![.idpLoginSucceeded, .tokenRefreshed].contains($0) }) {
                    out.append(
                        .error(
                            .ruleNotAllowed, "`state: read_only` applies on `idp_login_succeeded` and `token_refreshed` only",
                            at: p.sources["\(base).then.state"] ?? thenAt,
                            help: "the server learns about licenses when it signs the user in or refreshes the session"))
                }
            }
            if then.reason.rawValue.isEmpty {
                out.append(.error(.invalidValue, "rule `\(rule.name)` needs a reason", at: p.sources["\(base).then"] ?? at))
            }
            let whenAt = p.sources["\(base).when"] ?? at
            let located: (ExpressionError) -> Diagnostic = { e in
                var loc = whenAt
                if var l = loc, !rule.when.contains("\n") { l.column += e.offset; loc = l }
                return .error(e.code, e.message, at: loc, notes: ["in the condition of rule `\(rule.name)`"], help: e.help)
            }
            switch ExpressionParser.parse(rule.when).flatMap({ checker.check($0) }) {
            case let .success(c): conditions.append(c)
            case let .failure(e):
                out.append(located(e))
                allChecked = false
            }
        }
        return (out, allChecked ? conditions : nil)
    }
}
