import Foundation
import JWTKit
import Logging
import PostgresNIO
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The stores the server tests run against: SQLite always, PostgreSQL when
/// `SESSIONPOLICY_TEST_POSTGRES` names a database (`.ci/run` starts one and sets it; on CI a
/// missing database fails the run instead of skipping it).
enum TestStorage: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static let postgresURL = ProcessInfo.processInfo.environment["SESSIONPOLICY_TEST_POSTGRES"]

    /// The stores to test here.
    static var available: [TestStorage] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    var testDescription: String { rawValue }

    /// The decision log retention of the servers the tests start: ten years. Servers with
    /// different clocks share the test PostgreSQL database (most tests' clock is in March 2026,
    /// some the real one); with the default 90 days, a real-clock server's purge would drop the
    /// day partitions of a March test while it runs.
    static let sharedRetention = TimeSpan(seconds: 3650 * 86_400)

    /// A storage URL: a new SQLite file in `directory`, or the test PostgreSQL database.
    func url(in directory: URL) throws -> StorageURL {
        switch self {
        case .sqlite: return .sqlite(path: directory.appendingPathComponent("sessions.sqlite").path)
        case .postgres: return try StorageURL.parse(Self.postgresURL!)
        }
    }

    /// Runs `body` with a prepared store of this kind (its pool running, for PostgreSQL).
    func withStore(_ body: @Sendable (any SessionStore) async throws -> Void) async throws {
        let dir = try Fixtures.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Self.withStore(url(in: dir), body)
    }

    /// Runs `body` with the prepared store `url` names (its pool running, for PostgreSQL).
    static func withStore(_ url: StorageURL, _ body: @Sendable (any SessionStore) async throws -> Void) async throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let store = try url.makeStore(logger: logger)
        if let pg = store as? PostgresStore {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await pg.run() }
                try await pg.prepare()
                try await body(pg)
                group.cancelAll()
            }
        } else {
            try await store.prepare()
            try await body(store)
            await store.close()
        }
    }
}

extension TestStorage {
    /// One decision of `key` received at `now`, logged.
    static func decide(_ store: any SessionStore, _ key: SessionKey, at now: Timestamp, transition: Int) async throws {
        let event = Event(.launch, at: now, network: .online, user: key.user)
        _ = try await store.updateSession(
            key, now: now,
            log: { (outcome: Outcome) in DecisionRecord(key: key, digest: "sha256:x", event: event, serverTime: now, outcome: outcome) }
        ) { old in
            let state = old?.state ?? SessionState()
            let outcome = Outcome(
                decision: .allow, reason: .withinLimits, message: "", notices: [], scope: nil, authMode: nil, noticeDelay: nil,
                state: state, transition: transition)
            return (state, outcome)
        }
    }
}

/// Unique ids, so tests can share one PostgreSQL database.
func unique(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8))" }

/// User tokens for tests.
enum Tokens {
    static let secret = "test-secret-0123456789abcdef-0123456789"
    /// The service tokens' secret (the back end's credential), unlike the users'.
    static let serviceSecret = "service-secret-0123456789abcdef-01234567"

    /// A service token (the back end's), named `service`.
    static func service(_ name: String = "backend") async throws -> String {
        try await hs256(name, secret: serviceSecret)
    }
    /// An HS256 token for `user`, valid for an hour unless `expiresIn` says otherwise.
    static func hs256(
        _ user: String, secret: String = Tokens.secret, expiresIn: TimeInterval = 3600, nickname: String? = nil
    )
        async throws -> String
    {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(
            TokenVerifier.Claims(
                sub: user, exp: Date().addingTimeInterval(expiresIn), nickname: nickname,
                picture: nickname.map { "https://example.com/\($0).png" }))
    }

    /// An ES256 key pair: (private key for signing, public key PEM for the server).
    static func es256() throws -> (ES256PrivateKey, String) {
        let key = ES256PrivateKey()
        return (key, key.publicKey.pemRepresentation)
    }

    /// An ES256 token for `user`.
    static func es256(_ user: String, key: ES256PrivateKey) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key)
        return try await keys.sign(
            TokenVerifier.Claims(sub: user, exp: Date().addingTimeInterval(3600)))
    }
}
