/// Something that happened to a session, with the time it happened and its context.
///
/// JSON shape: `{"type": "launch", "time": "2026-03-01T09:00:00Z", "network": "offline",
/// "user": "alice", "device": {"id": "d1", "keystore": "hardware", "integrity": "ok"},
/// "auth_mode": "biometric", "cause": "network", "unsynced_items": 2, "attributes": {"license": "revoked"}}`.
/// `network` is required for `launch`, `resume` and `register`; `auth_mode` for
/// `idp_login_succeeded`; `cause` for `refresh_failed`.
///
/// Read JSON with `init(json:file:)`, which applies these rules and those of every input and
/// reports problems as located diagnostics. The `Codable` conformance is the **lenient storage
/// form** (see `SessionState`): decoding checks types, words and times but not the rules above,
/// unknown or repeated keys, or names; it is not an input reader.
public struct Event: Sendable, Codable, Equatable {
    /// What happened.
    public var kind: EventKind
    /// When it happened (the device's clock for client events).
    public var time: Timestamp
    /// Network reachability at the time.
    public var network: Network?
    /// The user the event is about (for `idp_login_succeeded`: who signed in).
    public var user: String?
    /// Device facts.
    public var device: DeviceFacts
    /// The auth mode used, for `idp_login_succeeded`.
    public var authMode: AuthMode?
    /// Why a refresh failed, for `refresh_failed`.
    public var cause: RefreshFailureCause?
    /// Items not yet synced to the server, reported with `logout`.
    public var unsyncedItems: Int?
    /// For `device_session_detected`: the app that created the device session.
    public var appID: String?
    /// Values of the policy's declared attributes (`license: revoked`), as text.
    ///
    /// Keyed as Swift keys a dictionary: of two keys that differ only in their Unicode form
    /// (`"\u{E9}"`, `"e\u{301}"`) one is kept. The engine reads the attributes by name scalar by
    /// scalar (docs/machine-format.md, "String equality"), so such keys stay two attributes to it.
    public var attributes: [String: String] {
        get {
            var out: [String: String] = [:]
            for (k, v) in exactAttributes where out[k.text] == nil { out[k.text] = v }
            return out
        }
        set {
            exactAttributes = [:]
            for (k, v) in newValue { exactAttributes[ExactName(k)] = v }
        }
    }

    /// The attributes as the engine reads them: names compared scalar by scalar.
    package var exactAttributes: [ExactName: String] = [:]

    /// The value of attribute `name` (compared scalar by scalar), if the event reports it.
    @inline(__always) package func attribute(_ name: String) -> String? {
        exactAttributes.isEmpty ? nil : exactAttributes[ExactName(name)]
    }

    /// Facts about the device the event comes from. Unreported facts are treated fail-closed:
    /// an unknown keystore is not hardware; an unknown integrity is not known to be compromised.
    public struct DeviceFacts: Sendable, Codable, Equatable {
        public var id: String?
        public var keystore: Keystore?
        public var integrity: Integrity?
        public init(id: String? = nil, keystore: Keystore? = nil, integrity: Integrity? = nil) {
            self.id = id
            self.keystore = keystore
            self.integrity = integrity
        }

        /// The keys of an event's `device`.
        package enum Field: UInt8, JSONField {

            case id, keystore, integrity

            package var name: StaticString {
                switch self {
                case .id: "id"
                case .keystore: "keystore"
                case .integrity: "integrity"
                }
            }

            package init?(_ key: UnsafeRawBufferPointer) {
                switch key.count {
                case 2 where key.equals(Self.id.name): self = .id
                case 8 where key.equals(Self.keystore.name): self = .keystore
                case 9 where key.equals(Self.integrity.name): self = .integrity
                default: return nil
                }
            }
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Field.self)
            id = try c.decodeIfPresent(String.self, forKey: .id)
            keystore = try c.decodeIfPresent(Keystore.self, forKey: .keystore)
            integrity = try c.decodeIfPresent(Integrity.self, forKey: .integrity)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Field.self)
            try c.encodeIfPresent(id, forKey: .id)
            try c.encodeIfPresent(keystore, forKey: .keystore)
            try c.encodeIfPresent(integrity, forKey: .integrity)
        }
    }

    /// Creates an event.
    public init(
        _ kind: EventKind, at time: Timestamp, network: Network? = nil, user: String? = nil,
        device: DeviceFacts = DeviceFacts(), authMode: AuthMode? = nil,
        cause: RefreshFailureCause? = nil, unsyncedItems: Int? = nil, attributes: [String: String] = [:]
    ) {
        self.appID = nil
        self.kind = kind
        self.time = time
        self.network = network
        self.user = user
        self.device = device
        self.authMode = authMode
        self.cause = cause
        self.unsyncedItems = unsyncedItems
        self.attributes = attributes
    }

    /// The keys of an event: the one place they are spelled (`JSONField`).
    package enum Field: UInt8, JSONField {

        case kind, time, network, user, device, authMode, cause, unsyncedItems, attributes, appID

        package var name: StaticString {
            switch self {
            case .kind: "type"
            case .time: "time"
            case .network: "network"
            case .user: "user"
            case .device: "device"
            case .authMode: "auth_mode"
            case .cause: "cause"
            case .unsyncedItems: "unsynced_items"
            case .attributes: "attributes"
            case .appID: "app_id"
            }
        }

        package init?(_ key: UnsafeRawBufferPointer) {
            switch key.count {
            case 4 where key.equals(Self.kind.name): self = .kind
            case 4 where key.equals(Self.time.name): self = .time
            case 4 where key.equals(Self.user.name): self = .user
            case 5 where key.equals(Self.cause.name): self = .cause
            case 6 where key.equals(Self.device.name): self = .device
            case 6 where key.equals(Self.appID.name): self = .appID
            case 7 where key.equals(Self.network.name): self = .network
            case 9 where key.equals(Self.authMode.name): self = .authMode
            case 10 where key.equals(Self.attributes.name): self = .attributes
            case 14 where key.equals(Self.unsyncedItems.name): self = .unsyncedItems
            default: return nil
            }
        }

        /// The keys of an event's context: every key but `type` and `time` (scenario steps
        /// write these beside `event:`).
        package static let contextKeys = allCases.filter { $0 != .kind && $0 != .time }.map(\.key)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        kind = try c.decode(EventKind.self, forKey: .kind)
        time = try c.decode(Timestamp.self, forKey: .time)
        network = try c.decodeIfPresent(Network.self, forKey: .network)
        user = try c.decodeIfPresent(String.self, forKey: .user)
        device = try c.decodeIfPresent(DeviceFacts.self, forKey: .device) ?? DeviceFacts()
        authMode = try c.decodeIfPresent(AuthMode.self, forKey: .authMode)
        cause = try c.decodeIfPresent(RefreshFailureCause.self, forKey: .cause)
        unsyncedItems = try c.decodeIfPresent(Int.self, forKey: .unsyncedItems)
        appID = try c.decodeIfPresent(String.self, forKey: .appID)
        attributes = try c.decodeIfPresent([String: String].self, forKey: .attributes) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encode(kind, forKey: .kind)
        try c.encode(time, forKey: .time)
        try c.encodeIfPresent(network, forKey: .network)
        try c.encodeIfPresent(user, forKey: .user)
        if device != DeviceFacts() { try c.encode(device, forKey: .device) }
        try c.encodeIfPresent(authMode, forKey: .authMode)
        try c.encodeIfPresent(cause, forKey: .cause)
        try c.encodeIfPresent(unsyncedItems, forKey: .unsyncedItems)
        if !exactAttributes.isEmpty { try c.encode(attributes, forKey: .attributes) }
        try c.encodeIfPresent(appID, forKey: .appID)
    }
}
