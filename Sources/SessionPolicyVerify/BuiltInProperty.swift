import SessionPolicy

/// The properties `policyctl verify` proves for every policy: each with a stable id, one
/// sentence, and the lever it protects.
public enum BuiltInProperty: String, CaseIterable, Sendable, Codable {
    case sessionMax = "session-max"
    case sessionIdle = "session-idle"
    case offlineWindow = "offline-window"
    case offlineAuthMode = "offline-auth-mode"
    case clearedUntilLogin = "cleared-until-login"
    case enrollmentChange = "enrollment-change"
    case clockRollback = "clock-rollback"
    case noDeadEnd = "no-dead-end"
    case total = "total"

    /// What the property says, in one sentence.
    public var sentence: String {
        switch self {
        case .sessionMax:
            "no `allow` once more than `session.max` has passed since the last IdP login (or adopted device session), by the highest time the session has seen"
        case .sessionIdle: "no `allow` once more than `session.idle` has passed since the last activity"
        case .offlineWindow:
            "no `allow` while offline (or not saying online) once more than the offline window has passed since the last online validation"
        case .offlineAuthMode:
            "no offline `allow` for a session whose last IdP login used an auth mode that is not one of the policy's offline modes"
        case .clearedUntilLogin:
            "after a wipe, a cleared session, a revocation or a deactivation, no `allow` and no `require_biometric` until a new session starts: an IdP login succeeds or another app's device session is adopted"
        case .enrollmentChange:
            "after a biometric enrollment change, signed in or not, no `allow` by a biometric prompt until an IdP login, whatever comes between (a sign-out, a wipe, an adopted device session)"
        case .clockRollback:
            "an event dated before the highest time seen never gets a more permissive decision than the same event at that time"
        case .noDeadEnd: "from every reachable state, some sequence of events brings the session back to `active` or `read_only`"
        case .total: "every (state, event) pair has a deciding transition: no event falls through the machine"
        }
    }

    /// The lever the property protects.
    public var lever: String {
        switch self {
        case .sessionMax: "session.max"
        case .sessionIdle: "session.idle"
        case .offlineWindow: "offline.window"
        case .offlineAuthMode: "auth_modes.offline"
        case .clearedUntilLogin: "signals.*, device.*, offline.on_expired"
        case .enrollmentChange: "signals.biometric_enrollment_changed"
        case .clockRollback: "device.clock_rollback, device.clock_tolerance"
        case .noDeadEnd: "retry, fallback"
        case .total: "the compiler"
        }
    }

    /// Whether the property says anything for this policy (a policy without a session max has
    /// nothing for `session-max` to protect).
    func applies(to policy: Policy) -> Bool {
        switch self {
        case .sessionMax: policy.session.max != nil
        case .sessionIdle: policy.session.idle != nil
        case .offlineWindow: policy.offline.window != nil
        default: true
        }
    }
}
