/// Notices for the user interface that come with a decision (`network_required`, ...).
/// A set; encoded as a sorted list of names.
public struct Notices: OptionSet, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The decision needs the network and the device is offline: tell the user.
    public static let networkRequired = Notices(rawValue: 1 << 0)
    /// Biometric verification failed too often: ask whether to change the sign-in method.
    public static let suggestAuthModeChange = Notices(rawValue: 1 << 1)
    /// The client reported unsynced items: warn before data is deleted.
    public static let unsyncedData = Notices(rawValue: 1 << 2)
    /// The session is read-only: no new data.
    public static let readOnly = Notices(rawValue: 1 << 3)
    /// Nothing is lost: retry when the network is back.
    public static let retryLater = Notices(rawValue: 1 << 4)

    /// Every notice with its name, in name order.
    public static let named: [(String, Notices)] = [
        ("network_required", .networkRequired),
        ("read_only", .readOnly),
        ("retry_later", .retryLater),
        ("suggest_auth_mode_change", .suggestAuthModeChange),
        ("unsynced_data", .unsyncedData),
    ]

    /// The notice called `name`, if there is one.
    public init?(name: String) {
        guard let n = Self.named.first(where: { $0.0 == name }) else { return nil }
        self = n.1
    }

    /// The names in this set, sorted.
    public var names: [String] { Self.named.filter { contains($0.1) }.map(\.0) }

    public var description: String { "[" + names.joined(separator: ", ") + "]" }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        var set = Notices()
        for name in try c.decode([String].self) {
            guard let n = Notices(name: name) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "unknown notice `\(name)`")
            }
            set.insert(n)
        }
        self = set
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(names)
    }
}
