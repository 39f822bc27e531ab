import Foundation
import Logging
public import PostgresNIO

/// Where sessions are kept, as given by `--storage`:
/// `sqlite:PATH` (the default, `sqlite:sessionpolicy.sqlite`) or
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=disable|require`.
public enum StorageURL: Sendable, Equatable, CustomStringConvertible {
    /// An SQLite file.
    case sqlite(path: String)
    /// A PostgreSQL database.
    case postgres(host: String, port: Int, user: String, password: String?, database: String, tls: Bool)

    /// The default: an SQLite file in the current directory.
    public static let `default` = StorageURL.sqlite(path: "sessionpolicy.sqlite")

    /// Parses a storage URL; the error says what is wrong and how to write it.
    public static func parse(_ text: String) throws(ConfigurationError) -> StorageURL {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else {
                throw ConfigurationError(
                    "the storage URL `\(text)` has no file", help: "write `sqlite:PATH`, for example `sqlite:sessions.sqlite`")
            }
            return .sqlite(path: path)
        }
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            guard let c = URLComponents(string: text), let host = c.host, !host.isEmpty else {
                throw ConfigurationError(
                    "the storage URL `\(Self.redacted(text))` is not a valid URL",
                    help: "write `postgres://USER:PASSWORD@HOST:PORT/DATABASE`")
            }
            let database = String(c.path.drop(while: { $0 == "/" }))
            guard !database.isEmpty else {
                throw ConfigurationError("the storage URL names no database", help: "add `/DATABASE` after the host")
            }
            let mode = c.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable"
            guard ["disable", "require"].contains(mode) else {
                throw ConfigurationError("unknown `sslmode=\(mode)`", help: "use `sslmode=disable` or `sslmode=require`")
            }
            return .postgres(
                host: host, port: c.port ?? 5432, user: c.user ?? "postgres", password: c.password,
                database: database, tls: mode == "require")
        }
        throw ConfigurationError(
            "unknown storage URL `\(Self.redacted(text))`",
            help: "use `sqlite:PATH` (embedded, the default) or `postgres://USER:PASSWORD@HOST:PORT/DATABASE`")
    }

    public var description: String {
        switch self {
        case let .sqlite(path): "sqlite:\(path)"
        case let .postgres(host, port, user, _, database, tls):
            "postgres://\(user)@\(host):\(port)/\(database)\(tls ? "?sslmode=require" : "")"
        }
    }

    /// Opens the store this URL names (not yet prepared); with `readOnly`, an SQLite file must
    /// exist and is never written (a PostgreSQL store writes only when asked to). `timeout` bounds
    /// every wait on the store (`store.timeout`), `connectTimeout` the opening of one PostgreSQL
    /// connection (`store.connect.timeout`); a PostgreSQL pool opens at most `poolMax` connections
    /// (`store.pool.max`).
    public func makeStore(
        logger: Logger, readOnly: Bool = false, timeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(5),
        poolMax: Int = 16
    ) throws -> any SessionStore {
        switch self {
        case let .sqlite(path):
            return try SQLiteStore(path: path, readOnly: readOnly, busyTimeout: timeout)
        case let .postgres(host, port, user, password, database, tls):
            var config = PostgresClient.Configuration(
                host: host, port: port, username: user, password: password, database: database,
                tls: tls ? .require(.makeClientConfiguration()) : .disable)
            config.options.maximumConnections = poolMax
            config.options.connectTimeout = connectTimeout
            config.options.additionalStartupParameters = Self.sessionSettings(timeout: timeout)
            // No keep-alive query: a `SELECT 1` on a connection whose database went silent would
            // wait without bound and hold the connection; every statement is bounded instead, and
            // a connection that passes the bound is closed (`PostgresStore.bounded`).
            config.options.keepAliveBehavior = nil
            return PostgresStore(configuration: config, timeout: timeout, logger: logger)
        }
    }

    /// The settings of the server's PostgreSQL sessions, sent when each connection opens: the
    /// database ends a statement that runs past `timeout` (and a transaction left idle past
    /// twice that), and probes an idle client's TCP connection (keepalive after 10 s, every 5 s,
    /// 3 probes), so a connection to a vanished client frees its locks; no JIT compilation.
    static func sessionSettings(timeout: Duration) -> [(String, String)] {
        let ms = max(1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return [
            ("application_name", "sessionpolicy"),
            ("statement_timeout", "\(ms)"),
            ("idle_in_transaction_session_timeout", "\(2 * ms)"),
            ("tcp_keepalives_idle", "10"),
            ("tcp_keepalives_interval", "5"),
            ("tcp_keepalives_count", "3"),
            // The server's statements are short; JIT compilation would cost more than it saves
            // (seconds, for a plan over many partitions whose estimated cost is high).
            ("jit", "off"),
        ]
    }

    /// The URL with its password hidden, for messages and logs.
    static func redacted(_ text: String) -> String {
        guard var c = URLComponents(string: text), c.password != nil else { return text }
        c.password = "***"
        return c.string ?? text
    }
}
