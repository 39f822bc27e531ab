import Foundation
import SessionPolicyTestSupport
import Testing

/// The server's commands the documents quote, run as written by bash in a folder of their own,
/// with the built `policyctl`, `policyctl-serve` and `policyctl-sessions` first on the `PATH`, as
/// a reader who installed them runs them: the README's server quick start, and the SQLite backup
/// and restore of docs/backup-and-restore.md.
@Suite("Documented commands")
struct DocumentedCommandsTests {
    static let binaries = ["policyctl", "policyctl-serve", "policyctl-sessions"].compactMap { CLI.executable($0) }
    static let ready = binaries.count == 3 && ["bash", "curl", "openssl", "setsid"].allSatisfy(Shell.has)

    /// A folder with the shipped policies in `policies/`, as the commands expect.
    static func folder(_ prefix: String) throws -> URL {
        let dir = try Fixtures.temporaryDirectory(prefix)
        try FileManager.default.createSymbolicLink(
            at: dir.appendingPathComponent("policies"), withDestinationURL: URL(fileURLWithPath: Fixtures.path("policies")))
        return dir
    }

    /// The JSON objects among `text`'s lines, in order.
    static func objects(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func log(_ dir: URL) -> String {
        (try? String(contentsOf: dir.appendingPathComponent("server.log"), encoding: .utf8)) ?? "(no server.log)"
    }

    @Test(
        "the README's server quick start runs as written: secrets, the server, two tokens, a login, a launch, the history",
        .enabled(if: ready))
    func quickStart() async throws {
        let dir = try Self.folder("quick-start")
        defer { try? FileManager.default.removeItem(at: dir) }
        let block = try #require(Shell.block(after: "server quick start", in: Fixtures.text("README.md")))
        let r = try await Shell.run(block, in: dir, binaries: Self.binaries, timeout: 180)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)\n\(Self.log(dir))")
        let replies = Self.objects(r.stdout)
        try #require(replies.count == 3, "\(r.stdout)\n\(r.stderr)\n\(Self.log(dir))")
        let login = try #require(replies[0]["outcome"] as? [String: Any])
        #expect(login["decision"] as? String == "allow" && login["reason"] as? String == "idp_login_succeeded", "\(replies[0])")
        #expect(replies[0]["revision"] as? Int == 1)
        let launch = try #require(replies[1]["outcome"] as? [String: Any])
        #expect(launch["decision"] as? String == "require_biometric" && launch["reason"] as? String == "within_limits", "\(replies[1])")
        #expect(launch["scope"] as? String != nil, "\(replies[1])")
        #expect((launch["state"] as? [String: Any])?["state"] as? String == "awaiting_biometric", "\(replies[1])")
        #expect(replies[1]["revision"] as? Int == 2)
        // The history route, newest first, then `policyctl history`, oldest first, in the policy's words.
        let decisions = try #require(replies[2]["decisions"] as? [[String: Any]], "\(replies[2])")
        #expect(decisions.map { $0["event"] as? String } == ["launch", "idp_login_succeeded"], "\(replies[2])")
        let timeline = r.stdout.split(separator: "\n").filter { $0.contains("  spendiq  phone  ") }
        #expect(timeline.count == 2, "\(r.stdout)\n\(r.stderr)")
        #expect(timeline.first?.contains("idp_login_succeeded online -> allow (idp_login_succeeded)") == true, "\(timeline)")
        #expect(timeline.last?.contains("launch offline -> require_biometric (within_limits)") == true, "\(timeline)")
        #expect(timeline.last?.contains("(policy line") == true, "\(timeline)")
    }

    /// The page's SQLite blocks, in the order an operator runs them, with what happens around
    /// them: a server that streams its decision log, a backup taken while it runs, revocations
    /// after the backup, the server stopped, the restore, the server started again (the
    /// revocations are undone, as the page says), and the revocations re-applied from the log.
    @Test(
        "docs/backup-and-restore.md: an online SQLite backup, its restore, and the revocations re-applied from the decision log",
        .enabled(if: ready && Shell.has("sqlite3") && Shell.has("jq")))
    func backupAndRestore() async throws {
        let dir = try Self.folder("backup")
        defer { try? FileManager.default.removeItem(at: dir) }
        let page = Fixtures.text("docs/backup-and-restore.md")
        let backup = try #require(Shell.block(after: "backup: sqlite", in: page))
        let restore = try #require(Shell.block(after: "restore: sqlite", in: page))
        let reapply = try #require(Shell.block(after: "reapply revocations", in: page))
        let start = """
            rm -f server.out
            policyctl-serve --policies policies --port 0 --decision-log decisions.jsonl \\
              --hs256-secret-file user.secret --service-hs256-secret-file service.secret > server.out 2>> server.log &
            SERVER=$!
            for i in $(seq 300); do grep -q '^listening on ' server.out && break; sleep 0.1; done
            API=$(sed -n 's/^listening on //p' server.out)

            """
        let post = """
            post() {  # USER DEVICE FIELDS: an event of the back end, dated now
              curl -sf -X POST "$API/v1/policies/spendiq/sessions/$1/$2/events" -H "Authorization: Bearer $BACKEND_TOKEN" \\
                -d '{"event": {'"$3"', "time": "'"$(date -u +%Y-%m-%dT%H:%M:%SZ)"'"}}' >/dev/null
            }
            state() { curl -sf "$API/v1/policies/spendiq/sessions/$1/$2" -H "Authorization: Bearer $BACKEND_TOKEN" | jq -r .state.state; }

            """
        let secrets = """
            openssl rand -base64 48 > user.secret
            openssl rand -base64 48 > service.secret
            BACKEND_TOKEN=$(policyctl token --service --secret-file service.secret)

            """
        let logins = """
            login='"type": "idp_login_succeeded", "network": "online", "auth_mode": "biometric"'
            post alice phone "$login"
            post bob tablet "$login"
            post carol laptop "$login"
            SINCE=$(date -u +%Y-%m-%dT%H:%M:%SZ)

            """
        let revocations = """
            sleep 1
            post alice phone '"type": "tokens_revoked"'
            post carol laptop '"type": "logout"'
            curl -sf -X POST "$API/v1/users/bob/revoke" -H "Authorization: Bearer $BACKEND_TOKEN" >/dev/null
            echo "revoked: $(state alice phone) $(state bob tablet) $(state carol laptop)"
            kill -TERM "$SERVER"; wait "$SERVER" || true
            echo "after the stop: $(ls sessionpolicy.sqlite* | tr '\\n' ' ')"

            """
        let restored = """
            echo "restored: $(state alice phone) $(state bob tablet) $(state carol laptop)"

            """
        let reapplied = """
            echo "re-applied: $(state alice phone) $(state bob tablet) $(state carol laptop)"
            kill -TERM "$SERVER"; wait "$SERVER" || true

            """
        let script = [secrets, start, post, logins, backup, revocations, restore, start, restored, reapply, reapplied].joined()
        let r = try await Shell.run(script, in: dir, binaries: Self.binaries, timeout: 240)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)\n\(Self.log(dir))")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("ok"), "integrity check: \(r.stdout)")
        #expect(lines.contains("revoked: signed_out signed_out signed_out"), "\(r.stdout)")
        // A graceful stop checkpointed the WAL into the file, as the page says.
        #expect(lines.contains("after the stop: sessionpolicy.sqlite "), "\(r.stdout)")
        #expect(lines.contains("restored: active active active"), "\(r.stdout)")
        #expect(lines.contains("re-applied: signed_out signed_out signed_out"), "\(r.stdout)\n\(r.stderr)")
        // Each re-applied event was answered with its outcome, a wipe.
        let answers = Self.objects(r.stdout).compactMap { $0["outcome"] as? [String: Any] }
        #expect(answers.count == 3 && answers.allSatisfy { $0["decision"] as? String == "wipe" }, "\(r.stdout)")
    }
}
