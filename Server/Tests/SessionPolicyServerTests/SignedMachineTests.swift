import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyServer
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// `GET /v1/policies/{policy}/machine` (docs/envelope.md) on the real server: what an app's
/// updater fetches, verified by `MachineUpdater` as an app verifies it, with the test keys of
/// spec/conformance/keys.
@Suite("Signed machines")
struct SignedMachineTests {
    static let privateKey = Fixtures.text("spec/conformance/keys/a.key.pem")
    static func pinned(_ name: String = "a") throws -> TrustedKey {
        try TrustedKey(pem: Fixtures.text("spec/conformance/keys/\(name).pub.pem"))
    }

    @Test("without a signing key the route answers 404 machine-not-signed; an unknown policy 404 unknown-policy")
    func notSigned() async throws {
        try await TestServer.run(.sqlite) { http in
            let reply = try await http.get("/v1/policies/spendiq/machine")
            #expect(reply.status == 404)
            #expect(reply.code == "machine-not-signed")
        }
        try await TestServer.run(.sqlite, configure: { $0.signingKeyPEM = Self.privateKey }) { http in
            let reply = try await http.get("/v1/policies/nope/machine")
            #expect(reply.status == 404)
            #expect(reply.code == "unknown-policy")
        }
    }

    @Test(
        "fetch, 304, signed again at half its validity, a changed policy, and every bad envelope refused while the last good machine stays")
    func delivery() async throws {
        let dir = try Fixtures.temporaryDirectory("signed")
        defer { try? FileManager.default.removeItem(at: dir) }
        let spendiq = Fixtures.text("policies/spendiq.yaml")
        try spendiq.write(to: dir.appendingPathComponent("spendiq.yaml"), atomically: true, encoding: .utf8)
        let time = NIOLockedValueBox(TestServer.now)
        try await TestServer.run(
            .sqlite, policies: dir.path, configure: { $0.signingKeyPEM = Self.privateKey }, clock: { time.withLockedValue { $0 } }
        ) { http in
            var updater = try MachineUpdater(policy: "spendiq", keys: [Self.pinned()])
            let device = TestServer.now  // the device's clock agrees with the server's
            // Fetch.
            let first = try await http.get("/v1/policies/spendiq/machine")
            #expect(first.status == 200)
            #expect(first.headers[.contentType] == "application/jose")
            #expect(first.headers[.cacheControl] == "no-cache")
            let etag = try #require(first.headers[.eTag])
            guard case let .installed(signed) = updater.offer(Data(first.text.utf8), now: device) else {
                Issue.record("the served envelope was not installed")
                return
            }
            let compiled = try PolicyFile.compile(text: spendiq, file: "spendiq.yaml").get()
            #expect(signed.digest == (try PolicyMachine(document: Data(compiled.machineDocument.utf8))).digest)
            #expect(signed.serial == TestServer.now.millisecondsSinceEpoch)
            #expect(signed.expiresAt == TestServer.now.adding(.days(7)))
            // Not modified: the same ETag, strong or weak, or `*`; another one gets the envelope.
            for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let again = try await http.send(.get, "/v1/policies/spendiq/machine", headers: [.ifNoneMatch: condition])
                #expect(again.status == 304, "\(condition)")
                #expect(again.text.isEmpty)
                #expect(again.headers[.eTag] == etag)
            }
            let other = try await http.send(.get, "/v1/policies/spendiq/machine", headers: [.ifNoneMatch: "\"other\""])
            #expect(other.status == 200)
            #expect(other.text == first.text)
            // Half the validity later it is signed again: a new ETag, the same serial and machine.
            time.withLockedValue { $0 = TestServer.now.adding(.hours(84)) }
            let resigned = try await http.get("/v1/policies/spendiq/machine")
            #expect(resigned.headers[.eTag] != etag)
            guard case .unchanged = updater.offer(Data(resigned.text.utf8), now: TestServer.now.adding(.hours(84))) else {
                Issue.record("a new signature of the same machine changed something")
                return
            }
            // Bad envelopes: each refused with its code, and the machine held stays.
            let text = first.text
            let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            var payload = Array(parts[1])
            payload[payload.count / 2] = payload[payload.count / 2] == "A" ? "B" : "A"
            let bad: [(String, String, String)] = [
                ("a byte changed", parts[0] + "." + String(payload) + "." + parts[2], "bad-signature"),
                ("the signature stripped", parts[0] + "." + parts[1] + ".", "signature-missing"),
                ("the signature and its dot stripped", parts[0] + "." + parts[1], "envelope-malformed"),
                ("truncated", String(text.prefix(text.count / 2)), "envelope-malformed"),
                ("empty", "", "envelope-malformed"),
            ]
            for (what, envelope, code) in bad {
                guard case let .refused(d) = updater.offer(Data(envelope.utf8), now: device) else {
                    Issue.record("\(what): not refused")
                    continue
                }
                #expect(d.code.rawValue == code, "\(what)")
                #expect(updater.current?.digest == signed.digest, "\(what)")
            }
            var otherKey = try MachineUpdater(policy: "spendiq", keys: [Self.pinned("b")])
            guard case let .refused(d) = otherKey.offer(Data(text.utf8), now: device) else {
                Issue.record("an envelope signed with a key not pinned was installed")
                return
            }
            #expect(d.code.rawValue == "unpinned-key")
            #expect(otherKey.current == nil)
            // A changed policy: a new machine with a larger serial; the older one is then a rollback.
            time.withLockedValue { $0 = TestServer.now.adding(.hours(85)) }
            try spendiq.replacingOccurrences(of: "7d", with: "6d").write(
                to: dir.appendingPathComponent("spendiq.yaml"), atomically: true, encoding: .utf8)
            var changed = try await http.get("/v1/policies/spendiq/machine")
            for _ in 0..<100 where changed.text == resigned.text {
                try await Task.sleep(for: .milliseconds(100))
                changed = try await http.get("/v1/policies/spendiq/machine")
            }
            let later = TestServer.now.adding(.hours(85))
            guard case let .installed(update) = updater.offer(Data(changed.text.utf8), now: later) else {
                Issue.record("the changed policy's machine was not installed")
                return
            }
            #expect(update.digest != signed.digest)
            #expect(update.serial == later.millisecondsSinceEpoch)
            guard case let .refused(rollback) = updater.offer(Data(first.text.utf8), now: device) else {
                Issue.record("the older machine was installed over the newer one")
                return
            }
            #expect(rollback.code.rawValue == "rollback")
            #expect(updater.current?.digest == update.digest)
            // What an app stored restores at its next start, with no clock.
            var restarted = try MachineUpdater(policy: "spendiq", keys: [Self.pinned()])
            guard case .installed = restarted.restore(update.envelope) else {
                Issue.record("the stored envelope did not restore")
                return
            }
        }
    }

    @Test("a signing key that is not a P-256 private key is a configuration error naming where it was set")
    func badKey() async throws {
        do {
            _ = try await ServerConfiguration.load(environment: [
                "SESSIONPOLICY_SIGNING_KEY": Fixtures.text("spec/conformance/keys/a.pub.pem")
            ])
            Issue.record("a public key was taken as the signing key")
        } catch {
            #expect("\(error)".contains("signing key"), "\(error)")
        }
    }
}
