import Foundation
import Logging
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyServer
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// `policyctl history` as support staff run it: the built `policyctl` reading a real SQLite store
/// of the server through `policyctl-sessions`.
@Suite("policyctl history")
struct HistoryCLITests {
    static let policyctl = CLI.executable("policyctl")
    static let sessions = CLI.executable("policyctl-sessions")

    @Test(
        "a user's decisions as a timeline, oldest first, in the policy's words and with its line; JSON lines",
        .enabled(if: policyctl != nil && sessions != nil))
    func timeline() async throws {
        let dir = try Fixtures.temporaryDirectory("history")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("s.sqlite").path
        let store = try SQLiteStore(path: path)
        try await store.prepare()
        let compiled = try PolicyFile.compile(text: Fixtures.text("policies/spendiq.yaml"), file: "spendiq.yaml").get()
        let digest = try PolicyMachine(document: Data(compiled.machineDocument.utf8)).digest
        let key = SessionKey(policy: "spendiq", user: "alice", device: "phone-1")
        let t0 = Timestamp.parse("2026-03-03T09:14:05Z")!
        let events = [
            Event(.idpLoginSucceeded, at: t0, network: .online, user: "alice", authMode: .biometric),
            Event(.launch, at: t0.adding(.days(8)), network: .offline, user: "alice"),
        ]
        // The login posted by the back end, the launch by the app (who asked, as the server records it).
        let actors = [DecisionActor(kind: "service", id: "crm-backend"), DecisionActor(kind: "user", id: "alice")]
        for (event, actor) in zip(events, actors) {
            _ = try await SessionService(store: store, clock: { event.time }).apply(
                event, to: key, policy: compiled, digest: digest, origin: DecisionOrigin(actor: actor, requestID: "r-\(actor.kind)"))
        }
        // A decision of an earlier version of the policy.
        let old = SessionKey(policy: "spendiq", user: "alice", device: "tablet")
        _ = try await SessionService(store: store, clock: { t0 }).apply(events[0], to: old, policy: compiled, digest: "sha256:0123")
        await store.close()

        let environment = ["PATH": URL(fileURLWithPath: Self.sessions!).deletingLastPathComponent().path + ":/usr/bin:/bin"]
        let r = try await CLI.run(
            ["history", "--storage", "sqlite:\(path)", "alice", "--policies", Fixtures.path("policies")], executable: Self.policyctl,
            environment: environment)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(r.stdout)")
        #expect(
            lines.first?.hasPrefix("Tue 2026-03-03 09:14:05 UTC  spendiq  phone-1  idp_login_succeeded online -> allow") == true,
            "\(r.stdout)")
        let expired = try #require(lines.first { $0.contains("launch offline") })
        #expect(
            expired.hasPrefix(
                "Wed 2026-03-11 09:14:05 UTC  spendiq  phone-1  launch offline -> wipe (offline_window_exceeded): you have been offline too long"
            ), "\(expired)")
        #expect(expired.contains("(policy line 17)"), "\(expired)")
        #expect(expired.hasSuffix("; by user alice"), "\(expired)")
        #expect(lines.first?.hasSuffix("; by service crm-backend") == true, "\(r.stdout)")
        #expect(lines.contains { $0.contains("tablet") && $0.contains("earlier version of the policy") }, "\(r.stdout)")
        // Without the policy files, the lines lack the policy's words, and a note says why, once.
        let bare = try await CLI.run(
            ["history", "--storage", "sqlite:\(path)", "alice", "--policies", dir.path], executable: Self.policyctl,
            environment: environment)
        #expect(bare.status == 0, "\(bare.stderr)")
        #expect(!bare.stdout.contains("you have been offline too long"), "\(bare.stdout)")
        #expect(bare.stderr.components(separatedBy: "note: ").count == 2, "\(bare.stderr)")
        #expect(
            bare.stderr.contains(
                "note: decisions of `spendiq` are shown without the policy's words and file lines: no policy file in `\(dir.path)` names it"
            ), "\(bare.stderr)")
        #expect(!r.stderr.contains("note:"), "\(r.stderr)")
        // One device; JSON lines.
        let json = try await CLI.run(
            ["history", "--storage", "sqlite:\(path)", "alice", "phone-1", "--format", "json"], executable: Self.policyctl,
            environment: environment)
        #expect(json.status == 0, "\(json.stderr)")
        let records = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(records.map { $0["event"] as? String } == ["idp_login_succeeded", "launch"])
        #expect(records.last?["revision"] as? Int == 2)
        #expect(records.map { ($0["actor"] as? [String: String])?["id"] } == ["crm-backend", "alice"])
        #expect(records.map { $0["request_id"] as? String } == ["r-service", "r-user"])
        // Nobody, and a store that cannot be read.
        let none = try await CLI.run(
            ["history", "--storage", "sqlite:\(path)", "nobody"], executable: Self.policyctl, environment: environment)
        #expect(none.status == 0)
        #expect(none.stdout.contains("no decision recorded for `nobody`"))
        let missing = try await CLI.run(
            ["history", "--storage", "sqlite:\(dir.path)/missing.sqlite", "alice"], executable: Self.policyctl, environment: environment)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("error:"), "\(missing.stderr)")
    }
}
