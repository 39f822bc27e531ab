/// The state of one user's session on one device: a small value the caller stores (Keychain
/// on a phone, a database on a server) and passes to every evaluation.
///
/// JSON shape (keys in snake_case; absent keys mean "not known"):
/// `{"state": "active", "user": "alice", "device": "d1", "auth_mode": "biometric",
///   "last_idp_login": "...Z", "last_online": "...Z", "last_activity": "...Z",
///   "highest_time": "...Z", "failures": {"biometric": 0, "offline_login": 0, "idp_login": 0},
///   "read_only": false, "biometric_locked": false}`
///
/// Read JSON from anywhere else with `init(json:file:)`, which applies the rules of every
/// input (strict JSON, no unknown or repeated keys, names without surrounding spaces, the
/// input limits) and reports problems as located diagnostics. The `Codable` conformance is the
/// **lenient storage form**: it writes the same shape, but decoding checks only types, words and
/// times (Foundation's parser decides the syntax; unknown keys are ignored, a repeated key's
/// last value wins). It is meant for values this library wrote, such as the server's stored
/// states; no example reads input through it.
public struct SessionState: Sendable, Codable, Equatable {
    // The one-byte fields first, then the rest: 121 bytes instead of 138, small enough that a
    // copy of the state is a few vector moves rather than a call to `memcpy` (the hot path copies
    // the state into its outcome).

    /// The machine state.
    public var state: MachineState
    /// The auth mode of the last IdP login.
    public var authMode: AuthMode?
    /// Signed in without new data (license revoked).
    public var readOnly: Bool
    /// The device's biometric path is closed until the next IdP login (the biometric enrollment
    /// changed). A fact of the device, not of the session: it is set also while signed out, a
    /// wipe or a sign-out keeps it, and only an accepted `idp_login_succeeded` clears it (an
    /// adopted device session does not).
    public var biometricLocked: Bool
    /// The signed-in user.
    public var user: String?
    /// The device id the session is bound to.
    public var device: String?
    /// Consecutive failures per path.
    public var failures: Failures
    /// When the user last completed a full IdP login.
    public var lastIdPLogin: Timestamp?
    /// When the server last validated the session (IdP login or token refresh).
    public var lastOnline: Timestamp?
    /// When the user was last active (allowed in, or sent the app to the background).
    public var lastActivity: Timestamp?
    /// The highest event time seen: the clock never goes back past it.
    public var highestTime: Timestamp?

    /// Consecutive failures per path; reset by success on that path or an IdP login.
    public struct Failures: Sendable, Codable, Equatable {
        public var biometric: Int = 0
        public var offlineLogin: Int = 0
        public var idpLogin: Int = 0
        public init(biometric: Int = 0, offlineLogin: Int = 0, idpLogin: Int = 0) {
            self.biometric = biometric
            self.offlineLogin = offlineLogin
            self.idpLogin = idpLogin
        }
        /// The keys of `failures`.
        package enum Field: UInt8, JSONField {

            case biometric, offlineLogin, idpLogin

            package var name: StaticString {
                switch self {
                case .biometric: "biometric"
                case .offlineLogin: "offline_login"
                case .idpLogin: "idp_login"
                }
            }

            package init?(_ key: UnsafeRawBufferPointer) {
                switch key.count {
                case 9 where key.equals(Self.biometric.name): self = .biometric
                case 9 where key.equals(Self.idpLogin.name): self = .idpLogin
                case 13 where key.equals(Self.offlineLogin.name): self = .offlineLogin
                default: return nil
                }
            }

        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            biometric = try c.decodeIfPresent(Int.self, forKey: .biometric) ?? 0
            offlineLogin = try c.decodeIfPresent(Int.self, forKey: .offlineLogin) ?? 0
            idpLogin = try c.decodeIfPresent(Int.self, forKey: .idpLogin) ?? 0
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Field.self)
            try c.encode(biometric, forKey: .biometric)
            try c.encode(offlineLogin, forKey: .offlineLogin)
            try c.encode(idpLogin, forKey: .idpLogin)
        }
    }

    /// A signed-out session with nothing known.
    public static let signedOut = SessionState()

    /// Creates a state.
    public init(
        state: MachineState = .signedOut, user: String? = nil, device: String? = nil,
        authMode: AuthMode? = nil, lastIdPLogin: Timestamp? = nil, lastOnline: Timestamp? = nil,
        lastActivity: Timestamp? = nil, highestTime: Timestamp? = nil, failures: Failures = Failures(),
        readOnly: Bool = false, biometricLocked: Bool = false
    ) {
        self.state = state
        self.user = user
        self.device = device
        self.authMode = authMode
        self.lastIdPLogin = lastIdPLogin
        self.lastOnline = lastOnline
        self.lastActivity = lastActivity
        self.highestTime = highestTime
        self.failures = failures
        self.readOnly = readOnly
        self.biometricLocked = biometricLocked
    }

    /// The keys of a session state: the one place they are spelled (`JSONField`).
    package enum Field: UInt8, JSONField {

        case state, user, device, authMode, lastIdPLogin, lastOnline, lastActivity, highestTime, failures, readOnly, biometricLocked

        package var name: StaticString {
            switch self {
            case .state: "state"
            case .user: "user"
            case .device: "device"
            case .authMode: "auth_mode"
            case .lastIdPLogin: "last_idp_login"
            case .lastOnline: "last_online"
            case .lastActivity: "last_activity"
            case .highestTime: "highest_time"
            case .failures: "failures"
            case .readOnly: "read_only"
            case .biometricLocked: "biometric_locked"
            }
        }

        package init?(_ key: UnsafeRawBufferPointer) {
            switch key.count {
            case 4 where key.equals(Self.user.name): self = .user
            case 5 where key.equals(Self.state.name): self = .state
            case 6 where key.equals(Self.device.name): self = .device
            case 8 where key.equals(Self.failures.name): self = .failures
            case 9 where key.equals(Self.authMode.name): self = .authMode
            case 9 where key.equals(Self.readOnly.name): self = .readOnly
            case 11 where key.equals(Self.lastOnline.name): self = .lastOnline
            case 12 where key.equals(Self.highestTime.name): self = .highestTime
            case 13 where key.equals(Self.lastActivity.name): self = .lastActivity
            case 14 where key.equals(Self.lastIdPLogin.name): self = .lastIdPLogin
            case 16 where key.equals(Self.biometricLocked.name): self = .biometricLocked
            default: return nil
            }
        }

    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encode(state, forKey: .state)
        try c.encodeIfPresent(user, forKey: .user)
        try c.encodeIfPresent(device, forKey: .device)
        try c.encodeIfPresent(authMode, forKey: .authMode)
        try c.encodeIfPresent(lastIdPLogin, forKey: .lastIdPLogin)
        try c.encodeIfPresent(lastOnline, forKey: .lastOnline)
        try c.encodeIfPresent(lastActivity, forKey: .lastActivity)
        try c.encodeIfPresent(highestTime, forKey: .highestTime)
        try c.encode(failures, forKey: .failures)
        try c.encode(readOnly, forKey: .readOnly)
        try c.encode(biometricLocked, forKey: .biometricLocked)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        state = try c.decode(MachineState.self, forKey: .state)
        user = try c.decodeIfPresent(String.self, forKey: .user)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        authMode = try c.decodeIfPresent(AuthMode.self, forKey: .authMode)
        lastIdPLogin = try c.decodeIfPresent(Timestamp.self, forKey: .lastIdPLogin)
        lastOnline = try c.decodeIfPresent(Timestamp.self, forKey: .lastOnline)
        lastActivity = try c.decodeIfPresent(Timestamp.self, forKey: .lastActivity)
        highestTime = try c.decodeIfPresent(Timestamp.self, forKey: .highestTime)
        failures = try c.decodeIfPresent(Failures.self, forKey: .failures) ?? Failures()
        readOnly = try c.decodeIfPresent(Bool.self, forKey: .readOnly) ?? false
        biometricLocked = try c.decodeIfPresent(Bool.self, forKey: .biometricLocked) ?? false
    }
}
