/// The storage schema, as ordered migrations. A database records the versions it has applied;
/// the server applies the missing ones at start and refuses a database from a newer server.
enum Schema {
    /// One schema change, with its SQL for each database.
    struct Migration: Sendable {
        var version: Int
        var summary: String
        var sqlite: [String]
        var postgres: [String]
    }

    /// Every migration, oldest first. Append only: never edit a released one.
    static let migrations: [Migration] = [
        Migration(
            version: 1, summary: "sessions, device sessions, tickets",
            sqlite: [
                """
                CREATE TABLE sessions (
                  policy TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL,
                  state TEXT NOT NULL, revision INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                  PRIMARY KEY (policy, user_id, device_id))
                """,
                """
                CREATE TABLE device_sessions (
                  pool TEXT NOT NULL, device_id TEXT NOT NULL, app_id TEXT NOT NULL, user_id TEXT NOT NULL,
                  data TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
                  PRIMARY KEY (pool, device_id, app_id))
                """,
                "CREATE INDEX device_sessions_by_user ON device_sessions (device_id, user_id)",
                """
                CREATE TABLE tickets (
                  hash TEXT NOT NULL PRIMARY KEY, pool TEXT NOT NULL, data TEXT NOT NULL, expires_at INTEGER NOT NULL)
                """,
            ],
            postgres: [
                """
                CREATE TABLE sessions (
                  policy TEXT NOT NULL, user_id TEXT NOT NULL, device_id TEXT NOT NULL,
                  state TEXT, revision BIGINT NOT NULL, updated_at BIGINT NOT NULL,
                  PRIMARY KEY (policy, user_id, device_id))
                """,
                """
                CREATE TABLE device_sessions (
                  pool TEXT NOT NULL, device_id TEXT NOT NULL, app_id TEXT NOT NULL, user_id TEXT NOT NULL,
                  data TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
                  PRIMARY KEY (pool, device_id, app_id))
                """,
                "CREATE INDEX device_sessions_by_user ON device_sessions (device_id, user_id)",
                """
                CREATE TABLE tickets (
                  hash TEXT NOT NULL PRIMARY KEY, pool TEXT NOT NULL, data TEXT NOT NULL, expires_at BIGINT NOT NULL)
                """,
            ]),
        Migration(
            version: 2, summary: "the decision log",
            sqlite: [
                """
                CREATE TABLE decisions (
                  id INTEGER PRIMARY KEY AUTOINCREMENT, policy TEXT NOT NULL, digest TEXT NOT NULL,
                  user_id TEXT NOT NULL, device_id TEXT NOT NULL, revision INTEGER NOT NULL,
                  event_time INTEGER NOT NULL, server_time INTEGER NOT NULL, event TEXT NOT NULL, network TEXT,
                  decision TEXT, reason TEXT NOT NULL, notices TEXT NOT NULL, transition INTEGER NOT NULL,
                  state TEXT NOT NULL)
                """,
                "CREATE INDEX decisions_by_user ON decisions (user_id, id)",
                "CREATE INDEX decisions_by_time ON decisions (server_time)",
            ],
            postgres: [
                """
                CREATE TABLE decisions (
                  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, policy TEXT NOT NULL, digest TEXT NOT NULL,
                  user_id TEXT NOT NULL, device_id TEXT NOT NULL, revision BIGINT NOT NULL,
                  event_time BIGINT NOT NULL, server_time BIGINT NOT NULL, event TEXT NOT NULL, network TEXT,
                  decision TEXT, reason TEXT NOT NULL, notices TEXT NOT NULL, transition INTEGER NOT NULL,
                  state TEXT NOT NULL)
                """,
                "CREATE INDEX decisions_by_user ON decisions (user_id, id)",
                "CREATE INDEX decisions_by_time ON decisions (server_time)",
            ]),
    ]

    /// The newest version this server knows.
    static var current: Int { migrations.last?.version ?? 0 }

    /// Fails when a database was written by a newer server.
    static func check(applied: Int, store: String) throws {
        if applied > current {
            throw StoreError(
                "the \(store) database has schema version \(applied), newer than this server's \(current): upgrade the server")
        }
    }
}
