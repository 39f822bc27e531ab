import Foundation

/// The semantic checks of a policy: what its values mean together. Run by `PolicyLoader` on a
/// file and by `CompiledPolicy.init` on every policy, including one built in code, so no policy
/// that could fail open is ever compiled.
public enum PolicyValidator {
    /// The reactions each lever accepts.
    static let endSession: [Reaction] = [.idpLogin, .wipe]

    /// Every problem with `p`, located where `p.sources` knows the place.
    public static func diagnostics(for p: Policy) -> [Diagnostic] {
        var out: [Diagnostic] = []
        func at(_ path: String) -> SourceLocation? { p.sources[path] }

        if p.version != 1 {
            out.append(
                .error(
                    .unsupportedVersion, "policy version `\(p.version)` is not supported", at: at("version"),
                    help: "the only version is `1`"))
        }
        if p.name.isEmpty || p.name.trimmingCharacters(in: .whitespacesAndNewlines) != p.name {
            out.append(.error(.invalidValue, "`name` must be a non-empty name without surrounding spaces", at: at("name")))
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
        return out.sortedForOutput()
    }
}
