import Foundation
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// One suite, every store: what the server relies on from storage.
@Suite("Store conformance")
struct StoreConformanceTests {
    // In the past, so `purgeExpired` here never touches what other tests store in a shared PostgreSQL.
    static let t0 = Timestamp(secondsSinceEpoch: 1_000_000_000)

    @Test("CI runs the PostgreSQL suite, never skips it")
    func postgresOnCI() {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            #expect(TestStorage.postgresURL != nil, "CI must set SESSIONPOLICY_TEST_POSTGRES (.ci/run starts PostgreSQL)")
        }
    }

    /// Says in the test output when the PostgreSQL cases did not run: this test is then reported
    /// as skipped, with the reason and how to run them.
    @Test(
        "the PostgreSQL cases run against a real database",
        .enabled(
            if: TestStorage.postgresURL != nil,
            "PostgreSQL cases SKIPPED: no database; set SESSIONPOLICY_TEST_POSTGRES=postgres://USER:PASSWORD@HOST:PORT/DB (.ci/run does)"
        ))
    func postgresRuns() async throws {
        #expect(TestStorage.available.contains(.postgres))
        try await TestStorage.postgres.withStore { store in #expect(store.kind == "postgres") }
    }

    @Test("a session is stored, read, revised and deleted", arguments: TestStorage.available)
    func roundTrip(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let key = SessionKey(policy: "p", user: unique("u"), device: "d1")
            #expect(try await store.session(key) == nil)
            let (first, seen) = try await store.updateSession(key, now: Self.t0) { old in
                (SessionState(state: .active, user: key.user, device: "d1"), old == nil)
            }
            #expect(seen)
            #expect(first.revision == 1)
            let (second, _) = try await store.updateSession(key, now: Self.t0.adding(TimeSpan(seconds: 5))) { old in
                var s = old!.state
                s.failures.biometric = 2
                return (s, ())
            }
            #expect(second.revision == 2)
            let read = try #require(try await store.session(key))
            #expect(read.state.failures.biometric == 2)
            #expect(read.state.state == .active)
            #expect(read.revision == 2)
            #expect(read.updatedAt == Self.t0.adding(TimeSpan(seconds: 5)))
            #expect(try await store.deleteSession(key))
            #expect(try await !store.deleteSession(key))
            #expect(try await store.session(key) == nil)
        }
    }

    @Test("an update that throws stores nothing", arguments: TestStorage.available)
    func failedUpdate(_ kind: TestStorage) async throws {
        struct Refused: Error {}
        try await kind.withStore { store in
            let key = SessionKey(policy: "p", user: unique("u"), device: "d1")
            await #expect(throws: Refused.self) {
                try await store.updateSession(key, now: Self.t0) { _ -> (SessionState, Void) in throw Refused() }
            }
            let after = try await store.session(key)
            #expect(after == nil)
        }
    }

    @Test(
        "two spellings of one name are two sessions, also written at once (keys compare scalar by scalar)", arguments: TestStorage.available
    )
    func spellings(_ kind: TestStorage) async throws {
        let user = unique("zo")
        let composed = SessionKey(policy: "p", user: user + "\u{E9}", device: "d1")
        let decomposed = SessionKey(policy: "p", user: user + "e\u{301}", device: "d1")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        try await kind.withStore { store in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (key, n) in [(composed, 1), (decomposed, 2)] {
                    group.addTask {
                        _ = try await store.updateSession(key, now: Self.t0) { _ in
                            var s = SessionState(state: .active)
                            s.failures.idpLogin = n
                            return (s, ())
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await store.session(composed)?.state.failures.idpLogin == 1)
            #expect(try await store.session(decomposed)?.state.failures.idpLogin == 2)
        }
    }

    @Test("concurrent updates of one session are serialized: none is lost", arguments: TestStorage.available)
    func noLostUpdate(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let key = SessionKey(policy: "p", user: unique("u"), device: "d1")
            let writers = 40
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<writers {
                    group.addTask {
                        _ = try await store.updateSession(key, now: Self.t0) { old in
                            var s = old?.state ?? SessionState(state: .active)
                            s.failures.idpLogin += 1
                            return (s, ())
                        }
                    }
                }
                try await group.waitForAll()
            }
            let final = try #require(try await store.session(key))
            #expect(final.state.failures.idpLogin == writers)
            #expect(final.revision == Int64(writers))
        }
    }

    @Test(
        "concurrent updates of many sessions at once (first events and later ones, several per session): each lands once",
        arguments: TestStorage.available)
    func manySessionsAtOnce(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let user = unique("u")
            let keys = (0..<24).map { SessionKey(policy: "p", user: user, device: "d\($0)") }
            let rounds = 6
            // Every session's updates run at once with every other session's, so a group holds
            // first inserts, updates and two writes of one session (the second must wait).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (i, key) in keys.enumerated() {
                    for _ in 0..<rounds {
                        group.addTask {
                            _ = try await store.updateSession(key, now: Self.t0) { old in
                                var s = old?.state ?? SessionState(state: .active, device: key.device)
                                s.failures.idpLogin += 1
                                s.failures.biometric = i
                                return (s, ())
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            for (i, key) in keys.enumerated() {
                let final = try #require(try await store.session(key))
                #expect(final.state.failures.idpLogin == rounds, "\(key)")
                #expect(final.state.failures.biometric == i, "\(key)")
                #expect(final.state.device == key.device, "\(key)")
                #expect(final.revision == Int64(rounds), "\(key)")
            }
            #expect(try await store.sessions(policy: "p", user: user).count == keys.count)
        }
    }

    @Test(
        "PostgreSQL: two servers on one database write one session, interleaved and at once: none is lost or applied twice",
        .enabled(if: TestStorage.postgresURL != nil, "needs SESSIONPOLICY_TEST_POSTGRES"))
    func twoServersOneSession() async throws {
        try await TestStorage.postgres.withStore { a in
            try await TestStorage.postgres.withStore { b in
                let key = SessionKey(policy: "p", user: unique("u"), device: "d1")
                // What the stores report, as /metrics counts it.
                let observed = CountingObserver()
                a.observe(observed)
                b.observe(observed)
                @Sendable func bump(_ store: any SessionStore) async throws -> Int {
                    try await store.updateSession(key, now: Self.t0) { old in
                        var s = old?.state ?? SessionState(state: .active)
                        s.failures.idpLogin += 1
                        return (s, s.failures.idpLogin)
                    }.1
                }
                // Interleaved: each server's remembered row goes stale, so its next write conflicts,
                // reads the row again and applies the event to what the other server wrote.
                var seen: [Int] = []
                for i in 0..<10 { seen.append(try await bump(i % 3 == 0 ? a : b)) }
                #expect(seen == Array(1...10))
                // A session forgotten and recreated by the other server: the remembered row is gone.
                #expect(try await b.deleteSession(key))
                #expect(try await bump(b) == 1)
                #expect(try await bump(a) == 2)
                // At once, from both.
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for i in 0..<40 { group.addTask { try await bump(i % 2 == 0 ? a : b) } }
                    var results: [Int] = []
                    for try await r in group { results.append(r) }
                    #expect(results.sorted() == Array(3...42), "every event saw the one before it, none twice")
                }
                let final = try #require(try await a.session(key))
                #expect(final.state.failures.idpLogin == 42)
                #expect(final.revision == 42)
                let counts = observed.counts.withLockedValue { $0 }
                #expect(counts.conflicts >= 3, "interleaved writes conflict: \(counts)")
                #expect(counts.writes >= 42 && counts.groups >= 1 && counts.groups <= counts.writes, "\(counts)")
            }
        }
    }

    @Test("a steady stream of session updates does not starve the store's other writes", arguments: TestStorage.available)
    func otherWritesTakeTurns(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let user = unique("u")
            let stop = NIOLockedValueBox(false)
            let deadline = ContinuousClock.now + .seconds(20)  // the writers give up at the latest here
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<16 {
                    group.addTask {
                        let key = SessionKey(policy: "p", user: user, device: "d\(writer)")
                        while !stop.withLockedValue({ $0 }) && ContinuousClock.now < deadline {
                            _ = try await store.updateSession(key, now: Self.t0) { old in
                                (old?.state ?? SessionState(state: .active), ())
                            }
                        }
                    }
                }
                // While the updates keep coming, other writes still get their turn.
                for app in 0..<10 {
                    try await store.putDeviceSession(
                        DeviceSession(
                            pool: "vendor", device: "d0", app: "app\(app)", user: user, nickname: nil, profile: [:],
                            createdAt: Self.t0, expiresAt: Self.t0.adding(TimeSpan(seconds: 3600))))
                }
                #expect(try await store.deleteDeviceSessions(pool: "vendor", device: "d0", user: user, app: nil) == 10)
                #expect(ContinuousClock.now < deadline, "the other writes waited until the updates stopped")
                stop.withLockedValue { $0 = true }
                try await group.waitForAll()
            }
        }
    }

    @Test("device sessions: one app ends alone, destroy-all ends every app, expired ones are gone", arguments: TestStorage.available)
    func deviceSessions(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let device = unique("device"), user = unique("u")
            func session(_ app: String, expires: Int64 = 3600) -> DeviceSession {
                DeviceSession(
                    pool: "vendor", device: device, app: app, user: user, nickname: "Alice", profile: ["sub": user],
                    createdAt: Self.t0, expiresAt: Self.t0.adding(TimeSpan(seconds: expires)))
            }
            try await store.putDeviceSession(session("app1"))
            try await store.putDeviceSession(session("app2"))
            try await store.putDeviceSession(session("app3", expires: 10))
            #expect(try await store.deviceSessions(pool: "vendor", device: device, now: Self.t0).map(\.app) == ["app1", "app2", "app3"])
            let later = Self.t0.adding(TimeSpan(seconds: 60))
            #expect(try await store.deviceSessions(pool: "vendor", device: device, now: later).map(\.app) == ["app1", "app2"])
            #expect(try await store.deviceSessions(pool: "other", device: device, now: Self.t0).isEmpty)
            // Another user's token ends nothing.
            #expect(try await store.deleteDeviceSessions(pool: "vendor", device: device, user: "mallory", app: nil) == 0)
            #expect(try await store.deleteDeviceSessions(pool: "vendor", device: device, user: user, app: "app1") == 1)
            #expect(try await store.deviceSessions(pool: "vendor", device: device, now: later).map(\.app) == ["app2"])
            #expect(try await store.purgeExpired(now: later) >= 1)
            #expect(try await store.deleteDeviceSessions(pool: nil, device: device, user: user, app: nil) == 1)
            #expect(try await store.deviceSessions(pool: "vendor", device: device, now: Self.t0).isEmpty)
        }
    }

    @Test("a ticket works once, only in its pool, only before it expires", arguments: TestStorage.available)
    func tickets(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let s = DeviceSession(
                pool: "vendor", device: "d", app: "app1", user: "alice", createdAt: Self.t0,
                expiresAt: Self.t0.adding(TimeSpan(seconds: 3600)))
            let grant = TicketGrant(
                pool: "vendor", device: "d", detectedBy: "app2", session: s, expiresAt: Self.t0.adding(TimeSpan(seconds: 60)))
            let a = unique("ticket"), b = unique("ticket")
            try await store.putTicket(hash: a, grant: grant)
            try await store.putTicket(hash: b, grant: grant)
            #expect(try await store.takeTicket(hash: a, pool: "other", now: Self.t0) == nil)
            #expect(try await store.takeTicket(hash: a, pool: "vendor", now: Self.t0) == grant)
            #expect(try await store.takeTicket(hash: a, pool: "vendor", now: Self.t0) == nil)
            #expect(try await store.takeTicket(hash: b, pool: "vendor", now: Self.t0.adding(TimeSpan(seconds: 61))) == nil)
            #expect(try await store.takeTicket(hash: unique("none"), pool: "vendor", now: Self.t0) == nil)
        }
    }

    @Test("two takers of one ticket: exactly one gets it", arguments: TestStorage.available)
    func ticketRace(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let s = DeviceSession(
                pool: "vendor", device: "d", app: "app1", user: "alice", createdAt: Self.t0,
                expiresAt: Self.t0.adding(TimeSpan(seconds: 3600)))
            let hash = unique("ticket")
            try await store.putTicket(
                hash: hash,
                grant: TicketGrant(
                    pool: "vendor", device: "d", detectedBy: "app2", session: s, expiresAt: Self.t0.adding(TimeSpan(seconds: 60))))
            let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await store.takeTicket(hash: hash, pool: "vendor", now: Self.t0) != nil } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }

    @Test("preparing twice is harmless", arguments: TestStorage.available)
    func prepareTwice(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            try await store.prepare()
            let key = SessionKey(policy: "p", user: unique("u"), device: "d")
            _ = try await store.updateSession(key, now: Self.t0) { _ in (SessionState(), ()) }
            try await store.prepare()
            #expect(try await store.session(key) != nil)
        }
    }

    @Test("SQLite: an acknowledged write survives reopening; stored states read by either reader; a newer database is refused")
    func sqliteSchemaAndDurability() async throws {
        let dir = try Fixtures.temporaryDirectory("sqlite")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s.sqlite").path
        let key = SessionKey(policy: "p", user: "u", device: "d")
        do {
            let store = try SQLiteStore(path: path)
            try await store.prepare()
            _ = try await store.updateSession(key, now: Self.t0) { _ in (SessionState(state: .active), ()) }
            await store.close()
        }
        let reopened = try SQLiteStore(path: path)
        try await reopened.prepare()
        #expect(try await reopened.session(key)?.state.state == .active)
        await reopened.close()
        func sqlite3(_ sql: String) throws {
            let sqlite = Process()
            sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            sqlite.arguments = ["sqlite3", path, sql]
            try sqlite.run()
            sqlite.waitUntilExit()
            try #require(sqlite.terminationStatus == 0, "needs the sqlite3 command (apt-get install sqlite3)")
        }
        // A stored state the fast reader does not take (an escape) is read by the full one;
        // one that is not a state is a store error, never a made-up session.
        try sqlite3(#"UPDATE sessions SET state = replace(state, '"active"', '"\u0061ctive"')"#)
        let escaped = try SQLiteStore(path: path)
        #expect(try await escaped.session(key)?.state.state == .active)
        await escaped.close()
        try sqlite3(#"UPDATE sessions SET state = '{"state":'"#)
        let corrupt = try SQLiteStore(path: path)
        await #expect(throws: StoreError.self) { try await corrupt.session(key) }
        await corrupt.close()
        // Pretend a newer server migrated the file with a contract step (one this server cannot run against).
        try sqlite3("INSERT INTO schema_migrations (version, applied_at, oldest_server) VALUES (999, 0, 999)")
        let newer = try SQLiteStore(path: path)
        await #expect(throws: StoreError.self) { try await newer.prepare() }
        await newer.close()
    }

    @Test("storage URLs: SQLite paths, PostgreSQL URLs, and clear errors")
    func storageURLs() throws {
        #expect(try StorageURL.parse("sqlite:a/b.sqlite") == .sqlite(path: "a/b.sqlite"))
        #expect(try StorageURL.parse("sqlite:///tmp/x.sqlite") == .sqlite(path: "/tmp/x.sqlite"))
        #expect(
            try StorageURL.parse("postgres://app:pw@db.internal:6543/sessions?sslmode=require")
                == .postgres(host: "db.internal", port: 6543, user: "app", password: "pw", database: "sessions", tls: true))
        #expect(throws: ConfigurationError.self) { try StorageURL.parse("mysql://x") }
        #expect(throws: ConfigurationError.self) { try StorageURL.parse("postgres://host") }
        #expect(throws: ConfigurationError.self) { try StorageURL.parse("postgres://h/db?sslmode=maybe") }
        do {
            _ = try StorageURL.parse("redis://u:hunter2@h/0")
        } catch {
            #expect(!error.message.contains("hunter2"), "passwords never appear in messages")
        }
    }
}

/// Counts what a store reports to its observer.
final class CountingObserver: StoreObserver {
    struct Counts: Sendable {
        var groups = 0, writes = 0, conflicts = 0, locked = 0
    }
    let counts = NIOLockedValueBox(Counts())
    func groupCommitted(size: Int) {
        counts.withLockedValue {
            $0.groups += 1
            $0.writes += size
        }
    }
    func writeConflicted() { counts.withLockedValue { $0.conflicts += 1 } }
    func lockedFallback() { counts.withLockedValue { $0.locked += 1 } }
}
