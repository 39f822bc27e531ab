import Foundation
import SessionPolicyTestSupport
import Testing

/// `policyctl sign` and `policyctl inspect` as a user runs them, with the test keys of
/// spec/conformance/keys and keys made by `openssl` where one is installed.
@Suite("policyctl sign and inspect")
struct SignCLITests {
    static let keys = "spec/conformance/keys"

    @Test("a policy signed, inspected with its public key; then a key not pinned, a byte changed, another policy, an expired envelope")
    func signAndInspect() throws {
        let dir = try Fixtures.temporaryDirectory("sign")
        defer { try? FileManager.default.removeItem(at: dir) }
        let envelope = dir.appendingPathComponent("spendiq.envelope").path
        let signed = try CLI.run([
            "sign", "policies/spendiq.yaml", "--key", "\(Self.keys)/a.key.pem", "--serial", "42", "--issued-at", "2026-03-01T09:00:00Z",
            "--valid-for", "30d", "-o", envelope,
        ])
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stderr.contains("signed policy `spendiq`"), "\(signed.stderr)")
        #expect(signed.stderr.contains("serial 42"), "\(signed.stderr)")
        let ok = try CLI.run([
            "inspect", envelope, "--public-key", "\(Self.keys)/a.pub.pem", "--at", "2026-03-02T00:00:00Z", "--format", "json",
        ])
        #expect(ok.status == 0, "\(ok.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(ok.stdout.utf8)) as? [String: Any])
        #expect(report["policy"] as? String == "spendiq")
        #expect(report["serial"] as? Int == 42)
        #expect(report["expires_at"] as? String == "2026-03-31T09:00:00Z")
        #expect((report["key_id"] as? String)?.count == 64)
        // The machine inside is the compiler's, byte for byte.
        let machine = try CLI.run([
            "inspect", envelope, "--public-key", "\(Self.keys)/a.pub.pem", "--at", "2026-03-02T00:00:00Z", "--machine",
        ])
        let compiled = try CLI.run(["compile", "policies/spendiq.yaml", "--format", "machine"])
        #expect(machine.status == 0)
        #expect(machine.stdout == compiled.stdout)
        // Refusals: exit 2, located, with a hint.
        let text = try String(contentsOfFile: envelope, encoding: .utf8)
        var chars = Array(text)
        chars[text.count / 2] = chars[text.count / 2] == "A" ? "B" : "A"
        let changed = dir.appendingPathComponent("changed.envelope").path
        try String(chars).write(toFile: changed, atomically: true, encoding: .utf8)
        for (arguments, code) in [
            (["inspect", envelope, "--public-key", "\(Self.keys)/b.pub.pem"], "unpinned-key"),
            (["inspect", changed, "--public-key", "\(Self.keys)/a.pub.pem", "--at", "2026-03-02T00:00:00Z"], "bad-signature"),
            (["inspect", envelope, "--public-key", "\(Self.keys)/a.pub.pem", "--policy", "kobil-offline-token"], "wrong-policy"),
            (["inspect", envelope, "--public-key", "\(Self.keys)/a.pub.pem", "--at", "2026-05-01T00:00:00Z"], "expired"),
            (["inspect", envelope, "--public-key", "\(Self.keys)/a.key.pem"], "invalid-key"),
            (["sign", "policies/spendiq.yaml", "--key", "\(Self.keys)/a.pub.pem"], "invalid-key"),
        ] {
            let r = try CLI.run(arguments)
            #expect(r.status == 2, "\(arguments): \(r.stdout)\(r.stderr)")
            #expect(r.stderr.contains("error[\(code)]"), "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("help:"), "\(arguments): \(r.stderr)")
            #expect(!r.stderr.contains("Swift") && !r.stderr.contains("Crypto"), "\(r.stderr)")
        }
        let located = try CLI.run(["inspect", changed, "--public-key", "\(Self.keys)/a.pub.pem", "--at", "2026-03-02T00:00:00Z"])
        #expect(located.stderr.contains("changed.envelope:1:"), "\(located.stderr)")
    }

    @Test("a machine document signs as its policy does; usage errors exit 64")
    func machineAndUsage() throws {
        let dir = try Fixtures.temporaryDirectory("sign")
        defer { try? FileManager.default.removeItem(at: dir) }
        let fromMachine = try CLI.run([
            "sign", "spec/conformance/machines/spendiq.json", "--key", "\(Self.keys)/b.key.pem", "--serial", "7",
        ])
        #expect(fromMachine.status == 0, "\(fromMachine.stderr)")
        let envelope = dir.appendingPathComponent("e").path
        try fromMachine.stdout.write(toFile: envelope, atomically: true, encoding: .utf8)
        let r = try CLI.run(["inspect", envelope, "--public-key", "\(Self.keys)/a.pub.pem", "--public-key", "\(Self.keys)/b.pub.pem"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("serial 7"), "\(r.stdout)")
        for arguments in [
            ["sign", "policies/spendiq.yaml", "--key", "\(Self.keys)/a.key.pem", "--serial", "0"],
            ["sign", "policies/spendiq.yaml", "--key", "\(Self.keys)/a.key.pem", "--valid-for", "soon"],
            ["inspect", envelope],
        ] {
            #expect(try CLI.run(arguments).status == 64, "\(arguments)")
        }
    }

    @Test("a key pair made by openssl signs and verifies", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func openssl() throws {
        let dir = try Fixtures.temporaryDirectory("openssl")
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = dir.appendingPathComponent("signing.key.pem").path, pub = dir.appendingPathComponent("signing.pub.pem").path
        for arguments in [
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
            ["pkey", "-in", key, "-pubout", "-out", pub],
        ] {
            let p = try Process.run(URL(fileURLWithPath: "/usr/bin/openssl"), arguments: arguments)
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
        }
        let envelope = dir.appendingPathComponent("e").path
        #expect(try CLI.run(["sign", "policies/kobil-offline-token.yaml", "--key", key, "-o", envelope]).status == 0)
        let r = try CLI.run(["inspect", envelope, "--public-key", pub])
        #expect(r.status == 0, "\(r.stderr)")
    }
}
