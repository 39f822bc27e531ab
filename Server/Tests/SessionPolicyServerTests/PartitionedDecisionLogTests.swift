import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The decision log on PostgreSQL, partitioned by day of receipt (issue 38 §1,
/// docs/storage.md#the-decision-log-on-postgresql): records go to their day's partition, the
/// history walks the chain across partitions, retention drops whole days, and migration 6 turns
/// a store with data into the partitioned one without losing a record. Each test has a database
/// of its own: partitions are the database's, and the shared one has servers of other clocks.
@Suite("Partitioned decision log", .enabled(if: TestStorage.postgresURL != nil))
struct PartitionedDecisionLogTests {
    typealias FreshStore = StoreMigrationTests.FreshStore

    @Test("records go to their day's partition; retention drops whole days, then purges the default partition")
    func daysAndRetention() async throws {
        let dir = try Fixtures.temporaryDirectory("partitions")
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try await FreshStore(.postgres, in: dir, name: "partitions")
        defer { db.cleanup() }
        let t0 = Timestamp.parse("2026-03-01T12:00:00Z")!
        try await TestStorage.withStore(try StorageURL.parse(db.url)) { store in
            let created = try await store.prepareDecisionLog(now: t0.adding(.days(1)))
            // The day before the clock's (Mar 1) to seven after it (Mar 9).
            #expect(created.first == "decisions_20260301")
            #expect(created.last == "decisions_20260309")
            #expect(created.count == 9)
            #expect(try await store.prepareDecisionLog(now: t0.adding(.days(1))).isEmpty, "made once")

            let key = SessionKey(policy: "p", user: "dave", device: "d")
            // Feb 27 and 28 have no partition: the default one takes them.
            for day in -2..<5 { try await TestStorage.decide(store, key, at: t0.adding(.days(Int64(day))), transition: day + 2) }
            let places = try await FreshStore.psql(db.url, "SELECT tableoid::regclass, revision FROM decisions ORDER BY revision")
            #expect(
                places.split(separator: "\n") == [
                    "decisions_default|1", "decisions_default|2", "decisions_20260301|3", "decisions_20260302|4",
                    "decisions_20260303|5", "decisions_20260304|6", "decisions_20260305|7",
                ], "\(places)")
            #expect(try await store.decisions(DecisionQuery(user: "dave")).map(\.revision) == [7, 6, 5, 4, 3, 2, 1])
            // Each link names its partition: a record the time of the one before it, the session
            // its newest record's (what lets the walk look in one partition a step).
            let links = try await FreshStore.psql(
                db.url,
                "SELECT count(*) FROM decisions d JOIN decisions p ON p.id = d.previous WHERE d.previous_time = p.server_time; "
                    + "SELECT s.last_decision_time_of = s.last_decision AND s.last_decision_time = d.server_time "
                    + "FROM sessions s JOIN decisions d ON d.id = s.last_decision")
            #expect(links == "6\nt\n", "\(links)")
            // A page in the middle of the chain.
            let all = try await store.decisions(DecisionQuery(user: "dave"))
            var page = DecisionQuery(user: "dave")
            page.before = all[2].id
            page.limit = 2
            #expect(try await store.decisions(page).map(\.revision) == [4, 3])

            // Retention of "everything before Mar 3": the Mar 1 and Mar 2 partitions go whole;
            // the default partition's records go in batches.
            let cutoff = Timestamp.parse("2026-03-03T00:00:00Z")!
            let dropped = try await store.dropDecisions(before: cutoff)
            #expect(dropped.map(\.part) == ["decisions_20260301", "decisions_20260302"])
            #expect(try await store.purgeDecisions(before: cutoff, limit: 1) == 1)
            #expect(try await store.purgeDecisions(before: cutoff, limit: 100) == 1)
            #expect(try await store.decisions(DecisionQuery(user: "dave")).map(\.revision) == [7, 6, 5])
            #expect(try await store.dropDecisions(before: cutoff).isEmpty)
        }
    }

    @Test("migration 6 keeps every record of a store with data; the history reads them and goes on after them")
    func migrationKeepsRecords() async throws {
        let dir = try Fixtures.temporaryDirectory("partition-migration")
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try await FreshStore(.postgres, in: dir, name: "partition_migration")
        defer { db.cleanup() }
        // A store of schema 5, as the previous release left it: its migrations from the dry run.
        let script = try await StoreMigrationTests.migrate(["--dry-run", "--storage", db.url]).stdout
        let upTo5 = try #require(script.range(of: "\n-- 6: ")).lowerBound
        try await db.run(String(script[..<upTo5]) + "\nCOMMIT;\n")
        #expect(try await FreshStore.psql(db.url, "SELECT max(version) FROM schema_migrations") == "5\n")

        // Three decisions of one session, written as a server of schema 5 writes them: a chain
        // by `previous`, the session pointing at the newest; received three days ago to today.
        let user = unique("erin")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let state = String(decoding: try JSONEncoder().encode(SessionState()), as: UTF8.self).replacingOccurrences(of: "'", with: "''")
        var sql = ""
        for revision in 1...3 {
            let time = now - Int64(3 - revision) * 86_400_000 - 60_000
            sql += """
                INSERT INTO decisions (policy, digest, user_id, device_id, revision, event_time, server_time, event, network,
                  decision, reason, notices, transition, state, previous)
                VALUES ('kobil-offline-token', 'sha256:old', '\(user)', 'phone', \(revision), \(time), \(time), 'launch', 'online',
                  'allow', 'within_limits', '', 0, 's', (SELECT max(id) FROM decisions WHERE user_id = '\(user)'));

                """
        }
        sql += """
            INSERT INTO sessions (policy, user_id, device_id, state, revision, updated_at, last_decision)
            SELECT 'kobil-offline-token', '\(user)', 'phone', '\(state)', 3, \(now), max(id) FROM decisions WHERE user_id = '\(user)';
            """
        try await db.run(sql)
        let oldMax = try await FreshStore.psql(db.url, "SELECT max(id) FROM decisions")

        let migrated = try await StoreMigrationTests.migrate(["--storage", db.url])
        #expect(migrated.stdout == "migrated the store from schema version 5 to 6 (applied 6)\n", "\(migrated.stderr)")
        let parts = try await FreshStore.psql(
            db.url, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'decisions'::regclass")
        #expect(Set(parts.split(separator: "\n")) == ["decisions_legacy", "decisions_default"], "\(parts)")
        #expect(try await FreshStore.psql(db.url, "SELECT count(*) FROM decisions WHERE user_id = '\(user)'") == "3\n")

        // The server reads the old records, and its next decision follows them.
        let secret = dir.appendingPathComponent("user.secret")
        try Tokens.secret.write(to: secret, atomically: true, encoding: .utf8)
        let (server, port) = try await ServeProcess.start([
            "--port", "0", "--policies", Fixtures.path("policies"), "--storage", db.url, "--hs256-secret-file", secret.path,
        ])
        defer {
            server.terminate()
            server.waitUntilExit()
        }
        let token = try await Tokens.hs256(user)
        let path = "http://127.0.0.1:\(port)/v1/policies/kobil-offline-token/sessions/\(user)/phone"
        func send(_ method: HTTPMethod, _ url: String, body: String? = nil) async throws -> (Int, String) {
            var request = HTTPClientRequest(url: url)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            if let body { request.body = .bytes(ByteBuffer(string: body)) }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        let before = try await send(.GET, path + "/history")
        #expect(before.0 == 200, "\(before.1)")
        #expect(Self.revisions(before.1) == [3, 2, 1], "\(before.1)")
        let event = SessionTrustTests.event(SessionTrustTests.sample(.launch, time: IdentityProviderTests.realClock().description))
        let posted = try await send(.POST, path + "/events", body: event)
        #expect(posted.0 == 200, "\(posted.1)")
        let after = try await send(.GET, path + "/history")
        #expect(Self.revisions(after.1) == [4, 3, 2, 1], "\(after.1)")
        let newest = try await FreshStore.psql(
            db.url,
            "SELECT id > \(oldMax.trimmingCharacters(in: .whitespacesAndNewlines)) FROM decisions WHERE revision = 4 AND user_id = '\(user)'"
        )
        #expect(newest == "t\n", "ids go on after the old ones")
        // At its start the server made the day partitions up to seven days ahead of its clock:
        // the seven after the legacy partition's end (today's end).
        let days = try await FreshStore.psql(
            db.url,
            "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'decisions'::regclass AND c.relname LIKE 'decisions_2%'"
        )
        #expect(days == "7\n", "\(days)")

        // A server of schema 5 still running (an expand step) writes as it always has: the
        // sequence by `pg_get_serial_sequence`, a record without `previous_time`, the session's
        // `last_decision` alone; and purges with its batched delete. This server reads on.
        let later = Int64(Date().timeIntervalSince1970 * 1000)
        try await db.run(
            """
            WITH d AS (SELECT nextval(pg_get_serial_sequence('decisions', 'id')) AS id),
            s AS (UPDATE sessions SET revision = 5, updated_at = \(later), last_decision = d.id FROM d
              WHERE user_id = '\(user)' RETURNING d.id, last_decision AS unused)
            INSERT INTO decisions (id, policy, digest, user_id, device_id, revision, event_time, server_time, event, network,
              decision, reason, notices, transition, state, previous)
            SELECT s.id, 'kobil-offline-token', 'sha256:old', '\(user)', 'phone', 5, \(later), \(later), 'launch', 'online',
              'allow', 'within_limits', '', 0, 's', (SELECT max(id) FROM decisions WHERE user_id = '\(user)') FROM s;
            DELETE FROM decisions WHERE id IN (
              SELECT id FROM decisions WHERE server_time < \(later - 400 * 86_400_000) ORDER BY server_time LIMIT 1000);
            """)
        let mixed = try await send(.GET, path + "/history")
        #expect(Self.revisions(mixed.1) == [5, 4, 3, 2, 1], "\(mixed.1)")
    }

    /// The `revision` of each record of a history reply, in order.
    static func revisions(_ body: String) -> [Int] {
        let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        return (json?["decisions"] as? [[String: Any]])?.compactMap { $0["revision"] as? Int } ?? []
    }
}
