/// The four decisions a login attempt can get. A closed set by design.
public enum Decision: String, PolicyKeyword {
    /// Resume silently: offline login, or a silent token refresh when online.
    case allow
    /// Prompt for biometrics; on success the session resumes.
    case requireBiometric = "require_biometric"
    /// Full login at the identity provider; needs the network.
    case idpLogin = "idp_login"
    /// Delete stored credentials and local user data, then full login.
    case wipe

    /// How much a decision lets the user do: `allow` 3 > `require_biometric` 2 > `idp_login` 1 >
    /// `wipe` 0. The clock check's place in a login attempt and verify's `clock-rollback` use it.
    package var permissiveness: Int {
        switch self {
        case .allow: 3
        case .requireBiometric: 2
        case .idpLogin: 1
        case .wipe: 0
        }
    }
}

/// How the user authenticated at the last IdP login, which decides how the stored
/// credential is protected (KOBIL's `AuthenticationMode`).
public enum AuthMode: String, PolicyKeyword {
    /// No user interaction protects the stored credential (KOBIL `.NO`). Written `none`;
    /// named `unprotected` in Swift so it never reads as `Optional.none`.
    case unprotected = "none"
    case biometric
    case password
    case pin

    /// True for modes that need user interaction at the IdP and can never re-authenticate offline.
    public var needsIdP: Bool { self == .password || self == .pin }
}

/// The machine states a session can be in.
public enum MachineState: String, PolicyKeyword, Comparable {
    /// No session on the device: fresh install, after a wipe or a logout.
    case signedOut = "signed_out"
    /// Signed in, app in the foreground.
    case active
    /// Signed in, app in the background or closed.
    case suspended
    /// A biometric prompt is showing.
    case awaitingBiometric = "awaiting_biometric"
    /// The user was sent to the IdP and has not come back.
    case awaitingIdP = "awaiting_idp"
    /// Signed in, but no new data may be fetched (for example after `license_revoked`).
    case readOnly = "read_only"

    /// True for states where a session (credentials, user data) exists on the device.
    public var hasSession: Bool { self != .signedOut }

    public static func < (lhs: MachineState, rhs: MachineState) -> Bool { lhs.ordinal < rhs.ordinal }
}

/// The kinds of events the machine reacts to.
public enum EventKind: String, PolicyKeyword {
    case launch
    case resume
    case background
    case biometricSucceeded = "biometric_succeeded"
    case biometricFailed = "biometric_failed"
    case offlineLoginFailed = "offline_login_failed"
    case idpLoginSucceeded = "idp_login_succeeded"
    case idpLoginFailed = "idp_login_failed"
    case tokenRefreshed = "token_refreshed"
    case refreshFailed = "refresh_failed"
    case accountDeactivated = "account_deactivated"
    case tokensRevoked = "tokens_revoked"
    case licenseRevoked = "license_revoked"
    case biometricEnrollmentChanged = "biometric_enrollment_changed"
    case logout
    case register
    /// Another app of the same vendor created a device session that this app detected
    /// (cross-app login, seeds 002/004); carries `user` and `app_id` of the creating app.
    case deviceSessionDetected = "device_session_detected"

    /// True for the server signals (`account_deactivated`, `tokens_revoked`, `license_revoked`,
    /// `biometric_enrollment_changed`): they only end or restrict a session, apply in every state,
    /// and skip the device checks. Every other event is a device event: the app reports it about
    /// its own session, and the device checks (integrity, then binding) come first.
    public var isServerSignal: Bool {
        switch self {
        case .accountDeactivated, .tokensRevoked, .licenseRevoked, .biometricEnrollmentChanged: true
        default: false
        }
    }
}

/// Network reachability reported with an event.
public enum Network: String, PolicyKeyword {
    case online
    case offline
}

/// Where the device keeps keys.
public enum Keystore: String, PolicyKeyword {
    /// A hardware-backed keystore (Secure Enclave, StrongBox, TEE).
    case hardware
    /// A software keystore.
    case software
    /// No keystore at all. Written `none`.
    case absent = "none"
}

/// What the device's integrity check says.
public enum Integrity: String, PolicyKeyword {
    case ok
    case compromised
}

/// Why a token refresh failed.
public enum RefreshFailureCause: String, PolicyKeyword {
    /// The server could not be reached: nothing is lost, retry later.
    case network
    /// The server rejected the refresh token (revoked or expired).
    case invalidToken = "invalid_token"
}

/// The offline credential (behaviour K4, docs/behaviours.md).
public enum OfflineCredential: String, PolicyKeyword {
    /// An OAuth refresh token of type offline (RFC 6749 §6).
    case offlineToken = "offline_token"
    /// A JWT signed by a device key (RFC 7523 jwt-bearer grant).
    case signedJWT = "signed_jwt"
}

/// Where the signing key of a signed-JWT credential must live.
public enum KeyProtection: String, PolicyKeyword {
    case any
    case hardware
}

/// The OAuth scope the client must request for an offline login (seed 000's tables).
public enum Scope: String, PolicyKeyword {
    case noAuthOffline = "no_auth_offline"
    case bioAuthOffline = "bio_auth_offline"
    case noAuthGrant = "no_auth_grant"
    case bioAuthGrant = "bio_auth_grant"
    case bioAuthGrantSE = "bio_auth_grant_SE"
}

/// What a policy lever says to do. Which reactions a lever accepts depends on the lever.
public enum Reaction: String, PolicyKeyword {
    case idpLogin = "idp_login"
    case wipe
    /// Stay signed in without new data (only for `signals.license_revoked`).
    case readOnly = "read_only"

    /// The decision this reaction produces, if any.
    public var decision: Decision? {
        switch self {
        case .idpLogin: .idpLogin
        case .wipe: .wipe
        case .readOnly: nil
        }
    }
}
