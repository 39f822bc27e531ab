import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// Upgrades without downtime (issue 37 §2, docs/storage.md#upgrades-without-downtime), with the
/// built `policyctl-serve` on SQLite and PostgreSQL: `migrate --dry-run` changes nothing and
/// prints a script that makes the schema `migrate` makes; a `manual` server refuses an
/// unmigrated store; a server runs against a store one expand step newer, and refuses one past
/// a contract step.
@Suite("Store migrations")
struct StoreMigrationTests {
    static let serve = CLI.executable("policyctl-serve")

    /// A fresh, empty store of `storage`'s kind: a new SQLite file, or a new PostgreSQL database
    /// beside the test one (dropped by `cleanup`).
    struct FreshStore {
        var url: String
        var storage: TestStorage
        var database: String?

        init(_ storage: TestStorage, in dir: URL, name: String) async throws {
            self.storage = storage
            switch storage {
            case .sqlite:
                url = "sqlite:" + dir.appendingPathComponent("\(name).sqlite").path
            case .postgres:
                let base = try #require(TestStorage.postgresURL)
                let database = "migration_\(name)_\(UUID().uuidString.prefix(8).lowercased())"
                try await Self.psql(base, "CREATE DATABASE \(database)")
                self.database = database
                url = base.replacingOccurrences(of: #"/[^/?]+(\?|$)"#, with: "/\(database)$1", options: .regularExpression)
            }
        }

        /// Drops the test's database (a `defer` cannot wait: the drop runs on the caller's thread).
        func cleanup() {
            guard let database, let base = TestStorage.postgresURL else { return }
            let bin = ProcessInfo.processInfo.environment["SESSIONPOLICY_TEST_PGBIN"].map { $0 + "/psql" } ?? "psql"
            let arguments = [base, "-X", "-q", "-c", "DROP DATABASE IF EXISTS \(database)"]
            _ =
                try? (bin.hasPrefix("/") ? CLI.run(arguments, executable: bin) : CLI.run([bin] + arguments, executable: "/usr/bin/env"))
                as CLI.Result
        }

        /// Runs `sql` (one or more statements) on the store.
        func run(_ sql: String) async throws {
            switch storage {
            case .sqlite: try await Self.tool("sqlite3", [String(url.dropFirst("sqlite:".count))], stdin: sql)
            case .postgres: try await Self.psql(url, sql)
            }
        }

        /// The schema as its database describes it, for comparison.
        func schema() async throws -> String {
            switch storage {
            case .sqlite:
                return try await Self.tool("sqlite3", [String(url.dropFirst("sqlite:".count)), ".schema"], stdin: "")
                    + (try await Self.tool(
                        "sqlite3", [String(url.dropFirst("sqlite:".count)), "SELECT version, oldest_server FROM schema_migrations"],
                        stdin: ""))
            case .postgres:
                return try await Self.psql(
                    url,
                    "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
                        + "WHERE table_schema = 'public' ORDER BY table_name, column_name; "
                        + "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname; "
                        + "SELECT version, oldest_server FROM schema_migrations ORDER BY version")
            }
        }

        @discardableResult
        static func psql(_ url: String, _ sql: String) async throws -> String {
            let bin = ProcessInfo.processInfo.environment["SESSIONPOLICY_TEST_PGBIN"].map { $0 + "/psql" } ?? "psql"
            return try await tool(bin, [url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", "-"], stdin: sql)
        }

        @discardableResult
        static func tool(_ name: String, _ arguments: [String], stdin: String) async throws -> String {
            let result =
                name.hasPrefix("/")
                ? try await CLI.run(arguments, stdin: stdin, executable: name)
                : try await CLI.run([name] + arguments, stdin: stdin, executable: "/usr/bin/env")
            #expect(result.status == 0, "\(name) \(arguments): \(result.stderr)")
            return result.stdout
        }
    }

    static func migrate(_ arguments: [String]) async throws -> CLI.Result {
        try await CLI.run(["migrate"] + arguments, executable: serve)
    }

    @Test("migrate --dry-run changes nothing; its script makes the schema migrate makes", arguments: TestStorage.available)
    func dryRun(_ storage: TestStorage) async throws {
        let dir = try Fixtures.temporaryDirectory("migrate")
        defer { try? FileManager.default.removeItem(at: dir) }
        let migrated = try await FreshStore(storage, in: dir, name: "migrated")
        let scripted = try await FreshStore(storage, in: dir, name: "scripted")
        defer {
            migrated.cleanup()
            scripted.cleanup()
        }
        let dry = try await Self.migrate(["--dry-run", "--storage", migrated.url])
        #expect(dry.status == 0, "\(dry.stderr)")
        let dialect = storage == .sqlite ? "SQLite" : "PostgreSQL"
        #expect(dry.stdout.hasPrefix("-- SessionPolicy schema migrations for \(dialect): version 0 to 6\nBEGIN;\n"), "\(dry.stdout)")
        #expect(dry.stdout.hasSuffix("COMMIT;\n"))
        #expect(dry.stdout.contains("(expand; servers of schema 2 or newer run against it)"))
        if storage == .sqlite {
            #expect(!FileManager.default.fileExists(atPath: String(migrated.url.dropFirst("sqlite:".count))), "a dry run creates no file")
        } else {
            #expect(try await FreshStore.psql(migrated.url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == "0\n")
        }

        try await scripted.run(dry.stdout)
        let done = try await Self.migrate(["--storage", migrated.url])
        #expect(done.status == 0, "\(done.stderr)")
        #expect(done.stdout == "migrated the store from schema version 0 to 6 (applied 1, 2, 3, 4, 5, 6)\n")
        let schemas = (try await migrated.schema(), try await scripted.schema())
        #expect(schemas.0 == schemas.1)
        #expect(
            try await Self.migrate(["--storage", migrated.url]).stdout == "the store is at schema version 6, this server's: nothing to do\n"
        )
        let nothing = try await Self.migrate(["--dry-run", "--storage", scripted.url])
        #expect(nothing.stdout.contains("nothing to do"), "\(nothing.stdout)")
    }

    @Test("a manual server refuses an unmigrated store; runs one expand step ahead; refuses a contract", arguments: TestStorage.available)
    func compatibility(_ storage: TestStorage) async throws {
        let dir = try Fixtures.temporaryDirectory("compat")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try await FreshStore(storage, in: dir, name: "compat")
        defer { store.cleanup() }
        let secret = dir.appendingPathComponent("user.secret")
        try Tokens.secret.write(to: secret, atomically: true, encoding: .utf8)
        let arguments = [
            "--port", "0", "--policies", Fixtures.path("policies"), "--storage", store.url, "--hs256-secret-file", secret.path,
        ]

        let manual = try await CLI.run(arguments + ["--storage-migrations", "manual"], executable: Self.serve)
        #expect(manual.status == 2)
        #expect(manual.stderr.contains("`storage.migrations` is `manual`"), "\(manual.stderr)")
        #expect(manual.stderr.contains("policyctl-serve migrate"))

        #expect(try await Self.migrate(["--storage", store.url]).status == 0)
        // The next release's migration 7, an expand step: a column this server does not know.
        try await store.run(
            "ALTER TABLE decisions ADD COLUMN next_release TEXT; "
                + "INSERT INTO schema_migrations (version, applied_at, oldest_server) VALUES (7, 0, 6);")
        let (server, port) = try await ServeProcess.start(arguments + ["--storage-migrations", "manual"])
        let user = unique("erin")
        let path = "/v1/policies/kobil-offline-token/sessions/\(user)/phone"
        let now = IdentityProviderTests.realClock().description
        let event = SessionTrustTests.event(SessionTrustTests.sample(.launch, time: now))
        let token = try await Tokens.hs256(user)
        func send(_ method: HTTPMethod, _ uri: String, body: String? = nil) async throws -> (Int, String) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(uri)")
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            if let body { request.body = .bytes(ByteBuffer(string: body)) }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        let posted = try await send(.POST, path + "/events", body: event)
        #expect(posted.0 == 200, "\(posted.1)")
        let history = try await send(.GET, path + "/history")
        #expect(history.0 == 200)
        #expect(history.1.contains("\"revision\":1"), "\(history.1)")
        server.terminate()
        server.waitUntilExit()
        #expect(
            try await Self.migrate(["--storage", store.url]).stdout.contains("newer than this server's 6; servers of schema 6 or newer"))

        // Then its contract step: this server is too old.
        try await store.run("INSERT INTO schema_migrations (version, applied_at, oldest_server) VALUES (8, 0, 8);")
        let refused = try await CLI.run(arguments, executable: Self.serve)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("needs a server of schema 8 or newer; this server's is 6"), "\(refused.stderr)")
        #expect(try await Self.migrate(["--storage", store.url]).status == 2)
    }
}
