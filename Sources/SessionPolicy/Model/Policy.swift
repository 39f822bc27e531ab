/// A session policy as written: every lever (docs/policy-language.md) with its value and,
/// where the file set it, the place it was set. Read one with `PolicyLoader` (from syntax) or
/// build one in code; `PolicyValidator` turns it into a `ValidatedPolicy`, which compiles.
public struct Policy: Sendable, Codable, Equatable {
    /// The policy language version; only `1` exists.
    public var version: Int
    /// The policy's name; scenario files refer to it.
    public var name: String
    /// What the policy is for.
    public var description: String?
    /// Limits on the whole session.
    public var session: Session
    /// Limits on offline re-authentication.
    public var offline: Offline
    /// The auth modes that may re-authenticate offline.
    public var authModes: AuthModes
    /// Failure limits per path.
    public var retry: Retry
    /// What to do when the offline path fails.
    public var fallback: Fallback
    /// Reactions to server signals.
    public var signals: Signals
    /// Device rules.
    public var device: Device
    /// Adopting a device session another app of the vendor created (behaviour A1, docs/behaviours.md).
    public var crossApp: CrossApp
    /// Custom facts events may report, for rules.
    public var attributes: [AttributeDeclaration]
    /// Custom rules, in the order they are tried.
    public var rules: [Rule]
    /// Settings for `policyctl lint`: the warnings this policy accepts on purpose.
    public var lint: LintSettings
    /// Where each lever was written: `session.max` -> its value's location.
    public var sources: [String: SourceLocation]

    /// Limits on the whole session.
    public struct Session: Sendable, Codable, Equatable {
        /// Absolute limit since the last full IdP login; nil means none.
        public var max: TimeSpan?
        /// Limit since the last activity; nil means none.
        public var idle: TimeSpan?
        /// What happens when either limit is exceeded.
        public var onExpired: Reaction = .idpLogin
        public init(max: TimeSpan? = nil, idle: TimeSpan? = nil, onExpired: Reaction = .idpLogin) {
            self.max = max
            self.idle = idle
            self.onExpired = onExpired
        }
    }

    /// Limits on offline re-authentication.
    public struct Offline: Sendable, Codable, Equatable {
        /// Limit since the last online validation (IdP login or token refresh); nil means none.
        public var window: TimeSpan?
        /// The offline credential kind.
        public var credential: OfflineCredential = .offlineToken
        /// Where a signed-JWT signing key must live.
        public var keyProtection: KeyProtection = .any
        /// What happens when the window is exceeded.
        public var onExpired: Reaction = .idpLogin
        public init(
            window: TimeSpan? = nil, credential: OfflineCredential = .offlineToken,
            keyProtection: KeyProtection = .any, onExpired: Reaction = .idpLogin
        ) {
            self.window = window
            self.credential = credential
            self.keyProtection = keyProtection
            self.onExpired = onExpired
        }
    }

    /// The auth modes that may re-authenticate offline.
    public struct AuthModes: Sendable, Codable, Equatable {
        /// Modes that may re-authenticate offline (`none`, `biometric`).
        public var offline: [AuthMode] = [.biometric]
        public init(offline: [AuthMode] = [.biometric]) { self.offline = offline }
    }

    /// A failure limit: `max` attempts, and what happens when the `max`-th attempt fails.
    public struct RetryLimit: Sendable, Codable, Equatable {
        /// Attempts allowed (at least 1). The `max`-th failure triggers `then`.
        public var max: Int
        /// What happens when the limit is reached.
        public var then: Reaction
        public init(max: Int, then: Reaction) {
            self.max = max
            self.then = then
        }
    }

    /// Failure limits per path.
    public struct Retry: Sendable, Codable, Equatable {
        public var biometric = RetryLimit(max: 3, then: .idpLogin)
        public var offlineLogin = RetryLimit(max: 3, then: .idpLogin)
        public var idpLogin = RetryLimit(max: 5, then: .wipe)
        public init() {}
    }

    /// What to do when the offline path fails.
    public struct Fallback: Sendable, Codable, Equatable {
        /// The decision for an `offline_login_failed` below the retry limit.
        public var onOfflineFailure: Reaction = .idpLogin
        public init(onOfflineFailure: Reaction = .idpLogin) { self.onOfflineFailure = onOfflineFailure }
    }

    /// A reaction to a server signal, with an optional delay during which the user sees the
    /// message before the client acts (i360: sign-out 5 seconds after the message).
    public struct SignalReaction: Sendable, Codable, Equatable {
        public var then: Reaction
        public var noticeDelay: TimeSpan?
        public init(_ then: Reaction, noticeDelay: TimeSpan? = nil) {
            self.then = then
            self.noticeDelay = noticeDelay
        }
    }

    /// Reactions to server signals.
    public struct Signals: Sendable, Codable, Equatable {
        public var accountDeactivated = SignalReaction(.wipe)
        public var tokensRevoked = SignalReaction(.wipe)
        public var licenseRevoked = SignalReaction(.wipe)
        public var biometricEnrollmentChanged = SignalReaction(.idpLogin)
        public var logout = SignalReaction(.wipe)
        public var refreshTokenInvalid = SignalReaction(.wipe)
        public init() {}
    }

    /// Device rules.
    public struct Device: Sendable, Codable, Equatable {
        /// Only one user's data may live on the device: another user signing in wipes it first.
        public var singleUser = true
        /// The session is bound to the device it was created on: an event from another device id wipes it.
        public var bindSession = true
        /// What happens when the clock went back past the highest time seen.
        public var clockRollback: Reaction = .idpLogin
        /// How far the clock may go back before it counts as a rollback.
        public var clockTolerance: TimeSpan = .minutes(5)
        /// What happens on a device that fails its integrity check.
        public var compromised: Reaction = .wipe
        public init() {}
    }

    /// Whether and how an app may adopt a device session another app of the vendor created.
    public struct CrossApp: Sendable, Codable, Equatable {
        /// How: `never` (default), `require_biometric` or `allow`.
        public var adopt: Adoption = .never
        /// The ids of the apps whose device sessions may be adopted.
        public var apps: [String] = []
        /// Whether a server answers a refused detection with `found: true` and the refusal
        /// (default `false`: a refusal reads exactly as "no session on this device").
        public var revealRefusal: Bool = false
        public init(adopt: Adoption = .never, apps: [String] = [], revealRefusal: Bool = false) {
            self.adopt = adopt
            self.apps = apps
            self.revealRefusal = revealRefusal
        }
    }

    /// How a detected device session may be adopted.
    public enum Adoption: String, PolicyKeyword {
        case never
        case requireBiometric = "require_biometric"
        case allow
    }

    /// Settings for `policyctl lint`. They change no decision.
    public struct LintSettings: Sendable, Codable, Equatable {
        /// Lint warnings the policy accepts on purpose (codes such as
        /// `long-offline-without-biometric`): `PolicyLinter` does not report them, and reports
        /// an entry that no longer matches any warning.
        public var allow: [DiagnosticCode]
        public init(allow: [DiagnosticCode] = []) { self.allow = allow }
    }

    /// A policy with every lever at its default.
    public init(name: String, version: Int = 1) {
        self.version = version
        self.name = name
        self.session = Session()
        self.offline = Offline()
        self.authModes = AuthModes()
        self.retry = Retry()
        self.fallback = Fallback()
        self.signals = Signals()
        self.device = Device()
        self.crossApp = CrossApp()
        self.attributes = []
        self.rules = []
        self.lint = LintSettings()
        self.sources = [:]
    }

    /// The place lever `path` (for example `offline.window`) was written, if it was.
    public func source(of path: String) -> SourceLocation? { sources[path] }
}
