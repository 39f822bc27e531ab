/// A condition a transition checks against the session state and the event.
package enum Guard: Sendable, Hashable {
    /// Always true: the last transition of a chain.
    case always
    /// The event reports a device that failed its integrity check.
    case deviceCompromised
    /// The event's time is earlier than the highest time seen, by more than `tolerance`.
    case clockRolledBack(tolerance: TimeSpan)
    /// The event names a user other than the session's.
    case differentUser
    /// The event comes from a device other than the one the session is bound to.
    case differentDevice
    /// More than `limit` since the last IdP login.
    case sessionMaxExceeded(TimeSpan)
    /// More than `limit` since the last activity.
    case idleExceeded(TimeSpan)
    /// More than `limit` since the last online validation.
    case offlineWindowExceeded(TimeSpan)
    /// The session does not record an auth mode.
    case authModeMissing
    /// The session's auth mode (password, PIN) needs the IdP.
    case authModeNeedsIdP
    /// The session's auth mode is not one of `offline`, the policy's offline modes.
    case authModeNotOffline(AuthModeSet)
    /// The device's keystore is not hardware-backed.
    case keystoreNotHardware
    /// The device's biometric path is locked (`biometric_locked`, set by an enrollment change
    /// until an IdP login) and the step leans on it: the session's auth mode is biometric, the
    /// event is `biometric_succeeded`, or it is `device_session_detected` (an adoption).
    case biometricLocked
    /// The session's auth mode is `mode`.
    case authModeIs(AuthMode)
    /// This failure is the `limit`-th on `path`.
    case failureLimitReached(FailurePath, limit: Int)
    /// The event says the device is offline.
    case networkOffline
    /// The refresh failed for `cause`.
    case refreshCause(RefreshFailureCause)
    /// The client reports unsynced items.
    case unsyncedItems
    /// The app that created a detected device session is not one the policy trusts
    /// (`StateMachine.trustedApps`).
    case appNotTrusted
    /// The condition of rule `index` (`StateMachine.rules`) reads a fact the event or state does not have.
    case ruleFactMissing(Int)
    /// The condition of rule `index` (`StateMachine.rules`) holds.
    case rule(Int)
    /// The event switches the session (another user, another device) and `inner` holds for the
    /// event judged against the session cleared, as from `signed_out`. The transitions that end
    /// one session and establish another are these: a switch passes every check a fresh login
    /// faces (docs/how-a-decision-is-made.md, "Switching user or device").
    indirect case switched(SessionSwitch, Guard)
}

/// What ends one session so that an `idp_login_succeeded` can establish another.
package enum SessionSwitch: String, Sendable, Hashable, Codable, CaseIterable {
    /// The event names another user than the session's (`device.single_user`).
    case user = "different_user"
    /// The event comes from another device than the one the session is bound to (`device.bind_session`).
    case device = "different_device"

    /// The guard that detects this switch on its own.
    package var trigger: Guard { self == .user ? .differentUser : .differentDevice }
    /// The reason of the wipe when the new login is accepted as it is.
    package var reason: Reason { self == .user ? .differentUser : .deviceMismatch }
}

/// The paths that count failures.
package enum FailurePath: String, Sendable, Hashable, Codable {
    case biometric
    case offlineLogin = "offline_login"
    case idpLogin = "idp_login"
}

/// Where a transition goes.
package enum Target: Sendable, Hashable {
    /// To this state.
    case state(MachineState)
    /// To `active`, or `read_only` when the session is read-only.
    case resting
    /// Stays where it is.
    case unchanged
}

/// Changes a transition makes to the session state besides its machine state.
package struct Effects: OptionSet, Sendable, Hashable {
    package var rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }
    /// A new session (an IdP login, or an adopted device session): record user, device, auth
    /// mode and times; reset the failures and read-only; an IdP login also unlocks the biometric path.
    package static let establish = Effects(rawValue: 1 << 0)
    /// Delete the session: everything but the highest time seen and the biometric lock (the device's).
    package static let clearSession = Effects(rawValue: 1 << 1)
    /// The server validated the session now (also resets the offline-login counter).
    package static let recordOnline = Effects(rawValue: 1 << 2)
    /// The user was active now.
    package static let recordActivity = Effects(rawValue: 1 << 3)
    package static let countBiometricFailure = Effects(rawValue: 1 << 4)
    package static let countOfflineFailure = Effects(rawValue: 1 << 5)
    package static let countIdPFailure = Effects(rawValue: 1 << 6)
    /// A successful biometric prompt: reset the biometric counter.
    package static let resetBiometricFailures = Effects(rawValue: 1 << 7)
    /// Close the biometric path until the next IdP login.
    package static let lockBiometric = Effects(rawValue: 1 << 8)
    /// Mark the session read-only.
    package static let setReadOnly = Effects(rawValue: 1 << 9)
    /// With `establish` on an adopted device session: protect it with this app's biometric prompt.
    package static let adoptBehindBiometric = Effects(rawValue: 1 << 10)
}

/// What a transition does when its guard holds.
package struct Action: Sendable, Hashable {
    /// The decision, or nil for events that need nothing from the user (`background`).
    package var decision: Decision?
    /// Why.
    package var reason: Reason
    /// The human message for `reason`.
    package var message: String
    /// Where the session goes.
    package var target: Target
    /// Other changes to the session state.
    package var effects: Effects
    /// Notices for the user interface.
    package var notices: Notices
    /// Whether the decision names the offline scope (behaviour K4, docs/behaviours.md).
    package var namesScope: Bool
    /// Whether an `idp_login` decision should use the auth mode of the last IdP login.
    package var usesPreviousAuthMode: Bool
    /// How long the user sees the message before the client acts.
    package var noticeDelay: TimeSpan?

    package init(
        decision: Decision?, reason: Reason, target: Target, effects: Effects = [], notices: Notices = [],
        namesScope: Bool = false, usesPreviousAuthMode: Bool = false, noticeDelay: TimeSpan? = nil, message: String? = nil
    ) {
        self.decision = decision
        self.reason = reason
        self.message = message ?? reason.message(for: decision)
        self.target = target
        self.effects = effects
        self.notices = notices
        self.namesScope = namesScope
        self.usesPreviousAuthMode = usesPreviousAuthMode
        self.noticeDelay = noticeDelay
    }
}

/// The policy lines a transition came from.
package struct TransitionSource: Sendable, Hashable, Codable {
    /// The levers involved, for example `["session.max", "session.on_expired"]`;
    /// `built-in` for transitions every policy has.
    package var levers: [String]
    /// Where the first lever that the file sets was written, if any.
    package var location: SourceLocation?

    package init(levers: [String], location: SourceLocation?) {
        self.levers = levers
        self.location = location
    }
}

/// One edge of the compiled machine: in `from`, on `event`, if `guard` holds, do `action`.
/// Transitions of one (state, event) pair are tried in order; the first whose guard holds wins.
package struct Transition: Sendable, Hashable {
    /// Stable id: the position in the machine's transition list.
    package var id: Int
    package var from: MachineState
    package var event: EventKind
    package var `guard`: Guard
    package var action: Action
    package var source: TransitionSource
}
