import Foundation
import Logging
import PostgresNIO
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// `policyctl-sessions`, what `policyctl diff --storage` reads a store with: every session of a
/// policy, in order, page by page, never writing.
@Suite("Session export")
struct SessionExportTests {
    static let t0 = Timestamp(secondsSinceEpoch: 1_700_000_000)
    static let binary = CLI.executable("policyctl-sessions")

    /// Stores `count` sessions of a new policy (and one of another policy) and returns the policy's name.
    static func fill(_ store: any SessionStore, count: Int) async throws -> String {
        let policy = unique("export")
        for i in 0..<count {
            let key = SessionKey(policy: policy, user: "user-\(i % 3)", device: "device \"\(i)\"")
            _ = try await store.updateSession(key, now: t0) { _ in
                (SessionState(state: .active, user: key.user, device: key.device, authMode: .biometric, lastIdPLogin: t0), ())
            }
        }
        _ = try await store.updateSession(SessionKey(policy: unique("other"), user: "user-0", device: "d"), now: t0) { _ in
            (SessionState(state: .active), ())
        }
        return policy
    }

    @Test("every session of the policy, ordered by user then device, across pages", arguments: TestStorage.available)
    func pages(_ kind: TestStorage) async throws {
        try await kind.withStore { store in
            let policy = try await Self.fill(store, count: 7)
            var lines: [String] = []
            let n = try await SessionExport.export(store, policy: policy, pageSize: 2) {
                lines += $0.split(separator: "\n").map(String.init)
            }
            #expect(n == 7)
            let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            let keys = objects.map { "\($0["user"]!)|\($0["device"]!)" }
            #expect(keys == keys.sorted() && Set(keys).count == 7)
            for o in objects {
                #expect(o["revision"] as? Int == 1)
                let state = try #require(o["state"] as? [String: Any])
                #expect(state["state"] as? String == "active" && state["device"] as? String == o["device"] as? String)
                #expect(o["updated_at"] as? String == "2023-11-14T22:13:20Z")
            }
        }
    }

    @Test("the binary reads an SQLite file without changing it; a missing file is exit 2 and stays missing")
    func binarySQLite() async throws {
        let dir = try Fixtures.temporaryDirectory("export")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("sessions.sqlite").path
        let store = try SQLiteStore(path: path)
        try await store.prepare()
        let policy = try await Self.fill(store, count: 5)
        await store.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let r = try await CLI.run(["--storage", "sqlite:\(path)", "--policy", policy], executable: Self.binary)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.split(separator: "\n").count == 5)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let missing = dir.appendingPathComponent("none.sqlite").path
        let m = try await CLI.run(["--storage", "sqlite:\(missing)", "--policy", policy], executable: Self.binary)
        #expect(m.status == 2)
        #expect(m.stderr.hasPrefix("error: cannot open the storage `sqlite:\(missing)`"), "\(m.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing))
        let bad = try await CLI.run(["--storage", "mysql://x", "--policy", policy], executable: Self.binary)
        #expect(bad.status == 2 && bad.stderr.contains("unknown storage URL"), "\(bad.stderr)")

        // Nothing listens on port 1: refused until the connection timeout, then exit 2 in words.
        let down = try await CLI.run(
            ["--storage", "postgres://postgres@127.0.0.1:1/db", "--policy", policy, "--connect-timeout", "1"],
            executable: Self.binary)
        #expect(down.status == 2)
        #expect(down.stderr.contains("the database cannot be reached or refused the connection"), "\(down.stderr)")
        #expect(!down.stderr.contains("ConnectionPool"), "\(down.stderr)")
    }

    @Test("the binary reads PostgreSQL", .enabled(if: TestStorage.postgresURL != nil, "needs SESSIONPOLICY_TEST_POSTGRES"))
    func binaryPostgres() async throws {
        try await TestStorage.postgres.withStore { store in
            let policy = try await Self.fill(store, count: 4)
            let clock = ContinuousClock()
            let start = clock.now
            let r = try await CLI.run(["--storage", TestStorage.postgresURL!, "--policy", policy], executable: Self.binary)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.split(separator: "\n").count == 4)
            // Done when read: the connection timer (10 s) is not waited out.
            #expect(clock.now - start < .seconds(8))
        }
    }
}
