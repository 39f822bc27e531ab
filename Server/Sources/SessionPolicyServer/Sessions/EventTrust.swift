public import SessionPolicy

/// Who may tell the server that an event happened: the server's threat model, one entry per
/// event kind. The principle: a user's token may report what a device knows, and nothing that
/// establishes or extends a session; that needs the back end's own credential (a service token),
/// because only the back end saw the IdP login or the refresh happen. Events that can only end,
/// restrict or count against a session may come from either. The table of docs/threat-model.md is
/// this one (a test keeps them equal).
public enum EventTrust: String, Sendable, CaseIterable {
    /// Something only the device knows (it was launched, resumed, sent to the background, a
    /// biometric prompt passed): the user's token or a service token.
    case deviceReport = "device report"
    /// Can only end, restrict or count against a session: the user's token or a service token.
    case restriction
    /// Establishes or extends a session (a login, a refresh, an adopted session): a service token
    /// only.
    case sessionGrant = "session grant"

    /// The trust an event of `kind` needs.
    public init(_ kind: EventKind) {
        switch kind {
        case .launch, .resume, .background, .biometricSucceeded, .register: self = .deviceReport
        case .biometricFailed, .biometricEnrollmentChanged, .offlineLoginFailed, .logout, .idpLoginFailed, .refreshFailed,
            .tokensRevoked, .accountDeactivated, .licenseRevoked:
            self = .restriction
        case .idpLoginSucceeded, .tokenRefreshed, .deviceSessionDetected: self = .sessionGrant
        }
    }

    /// Whether a user's own token may report it (for its own sessions).
    public var userTokenMay: Bool { self != .sessionGrant }
}
