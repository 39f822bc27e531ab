import Foundation

/// A machine-readable reason for a decision (`offline_window_exceeded`, ...).
///
/// A struct rather than an enum so the set can grow without breaking clients; every built-in
/// reason has a human message.
public struct Reason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    public static let withinLimits = Reason("within_limits")
    public static let biometricVerified = Reason("biometric_verified")
    public static let noSession = Reason("no_session")
    public static let idpLoginRequired = Reason("idp_login_required")
    public static let idpLoginSucceeded = Reason("idp_login_succeeded")
    public static let idpLoginFailed = Reason("idp_login_failed")
    public static let idpLoginRetriesExhausted = Reason("idp_login_retries_exhausted")
    public static let sessionMaxExceeded = Reason("session_max_exceeded")
    public static let sessionIdleExceeded = Reason("session_idle_exceeded")
    public static let offlineWindowExceeded = Reason("offline_window_exceeded")
    public static let authModeRequiresIdP = Reason("auth_mode_requires_idp")
    public static let authModeNotAllowedOffline = Reason("auth_mode_not_allowed_offline")
    public static let keyProtectionInsufficient = Reason("key_protection_insufficient")
    public static let biometricFailed = Reason("biometric_failed")
    public static let biometricRetriesExhausted = Reason("biometric_retries_exhausted")
    public static let biometricEnrollmentChanged = Reason("biometric_enrollment_changed")
    public static let offlineLoginFailed = Reason("offline_login_failed")
    public static let offlineLoginRetriesExhausted = Reason("offline_login_retries_exhausted")
    public static let differentUser = Reason("different_user")
    public static let deviceMismatch = Reason("device_mismatch")
    public static let clockRollback = Reason("clock_rollback")
    public static let deviceCompromised = Reason("device_compromised")
    public static let accountDeactivated = Reason("account_deactivated")
    public static let tokensRevoked = Reason("tokens_revoked")
    public static let licenseRevoked = Reason("license_revoked")
    public static let refreshTokenInvalid = Reason("refresh_token_invalid")
    public static let refreshDeferred = Reason("refresh_deferred")
    public static let tokenRefreshed = Reason("token_refreshed")
    public static let logout = Reason("logout")
    public static let registrationRequiresNetwork = Reason("registration_requires_network")
    public static let registration = Reason("registration")
    public static let backgrounded = Reason("backgrounded")
    public static let unexpectedEvent = Reason("unexpected_event")
    public static let noAuthMode = Reason("no_auth_mode")
    public static let invalidEvent = Reason("invalid_event")
    public static let ruleFactMissing = Reason("rule_fact_missing")
    public static let crossAppNotAllowed = Reason("cross_app_not_allowed")
    public static let crossAppSession = Reason("cross_app_session")
    public static let sessionExists = Reason("session_exists")

    /// Reasons renamed in an earlier release, by their old name: a scenario that still expects
    /// an old name is told the new one.
    public static let renamed: [String: String] = ["offline_window_expired": "offline_window_exceeded"]

    /// Every built-in reason with its human message, in a stable order.
    public static let builtIn: [(Reason, String)] = [
        (.withinLimits, "the session is within the policy's limits"),
        (.biometricVerified, "biometric verification succeeded"),
        (.noSession, "there is no session on this device: sign in with your identity provider"),
        (.idpLoginRequired, "sign in with your identity provider to continue"),
        (.idpLoginSucceeded, "signed in with the identity provider"),
        (.idpLoginFailed, "sign-in with the identity provider failed: try again"),
        (.idpLoginRetriesExhausted, "too many failed sign-ins: local data is removed"),
        (.sessionMaxExceeded, "your session has reached its maximum length: sign in again"),
        (.sessionIdleExceeded, "your session expired after a period of inactivity: sign in again"),
        (.offlineWindowExceeded, "you have been offline too long: sign in again with a network connection"),
        (.authModeRequiresIdP, "your sign-in method (password or PIN) needs your identity provider"),
        (.authModeNotAllowedOffline, "your sign-in method cannot resume a session without your identity provider: sign in again"),
        (.keyProtectionInsufficient, "this device cannot protect the sign-in key in hardware: sign in with your identity provider"),
        (.biometricFailed, "biometric verification failed: try again"),
        (.biometricRetriesExhausted, "biometric verification failed too often: sign in with your identity provider"),
        (.biometricEnrollmentChanged, "biometric settings changed on this device: sign in with your identity provider"),
        (.offlineLoginFailed, "offline login failed: sign in with your identity provider using the same method as before"),
        (.offlineLoginRetriesExhausted, "offline login failed too often"),
        (.differentUser, "another user signed in on this device: the previous user's data is removed"),
        (.deviceMismatch, "this session belongs to another device: local data is removed"),
        (.clockRollback, "the device clock went back: sign in again"),
        (.deviceCompromised, "this device failed its integrity check"),
        (.accountDeactivated, "your account was deactivated: you are signed out and local data is removed"),
        (.tokensRevoked, "your access was revoked: you are signed out and local data is removed"),
        (.licenseRevoked, "you do not have a license assigned: contact your system administrator"),
        (.refreshTokenInvalid, "your session is no longer valid: you will be signed out"),
        (.refreshDeferred, "the session could not be refreshed: it will be retried when the network is back"),
        (.tokenRefreshed, "the session was refreshed online"),
        (.logout, "you signed out: local data is removed"),
        (.registrationRequiresNetwork, "registration needs an internet connection"),
        (.registration, "register with your identity provider"),
        (.backgrounded, "the app went to the background"),
        (.unexpectedEvent, "this event is not expected in the session's current state: sign in again"),
        (.noAuthMode, "the session does not record how you signed in: sign in again"),
        (.invalidEvent, "the event is incomplete: sign in again"),
        (.ruleFactMissing, "the event does not report a fact a policy rule needs: sign in again"),
        (.crossAppNotAllowed, "this app cannot use the sign-in of another app on this device: sign in"),
        (.crossAppSession, "signed in with the session of another app on this device"),
        (.sessionExists, "this app already has a session"),
    ]

    /// The messages of reasons whose decision a lever chooses, for the decisions that would make
    /// the `builtIn` text untrue ("local data is removed" where nothing is removed, "sign in"
    /// where nothing is asked): (reason, decision, message); a nil decision is an outcome with no
    /// decision. Every other (reason, decision) takes the `builtIn` text.
    public static let byDecision: [(Reason, Decision?, String)] = [
        (.idpLoginRetriesExhausted, .idpLogin, "too many failed sign-ins: try again with your identity provider"),
        (.accountDeactivated, .idpLogin, "your account was deactivated: sign in with your identity provider"),
        (.tokensRevoked, .idpLogin, "your access was revoked: sign in with your identity provider"),
        (.logout, .idpLogin, "you signed out: sign in with your identity provider to continue"),
        (.refreshTokenInvalid, .idpLogin, "your session is no longer valid: sign in with your identity provider"),
        (
            .biometricEnrollmentChanged, .wipe,
            "biometric settings changed on this device: you are signed out and local data is removed"
        ),
        (
            .biometricEnrollmentChanged, nil,
            "biometric settings changed on this device: biometric sign-in is locked until you sign in with your identity provider"
        ),
        (.offlineLoginFailed, .wipe, "offline login failed: local data is removed, sign in with your identity provider"),
        (
            .biometricRetriesExhausted, .wipe,
            "biometric verification failed too often: local data is removed, sign in with your identity provider"
        ),
    ]

    /// The human message of a built-in reason.
    public var message: String {
        Self.builtIn.first { $0.0 == self }?.1 ?? rawValue.replacingOccurrences(of: "_", with: " ")
    }

    /// The human message of a built-in reason given with `decision` (nil: no decision): the
    /// `byDecision` text where there is one, else `message`.
    public func message(for decision: Decision?) -> String {
        Self.byDecision.first { $0.0 == self && $0.1 == decision }?.2 ?? message
    }
}
