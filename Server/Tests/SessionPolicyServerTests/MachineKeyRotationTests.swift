import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOCore
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// Many servers, one signed machine (issue 37 §5, docs/signed-machines.md#rotating-the-signing-key):
/// the servers of one store serve the same envelope and `ETag`; a rotation of the signing key
/// (the new key current, the old one previous) refuses no app's update; SIGHUP reads the key
/// files again.
@Suite("Signed machines across servers and key rotations")
struct MachineKeyRotationTests {
    static func key(_ name: String) -> String { Fixtures.text("spec/conformance/keys/\(name).key.pem") }
    static func trusted(_ name: String) throws -> TrustedKey { try TrustedKey(pem: Fixtures.text("spec/conformance/keys/\(name).pub.pem")) }
    static let path = "/v1/policies/spendiq/machine"

    /// A folder with the shipped spendiq policy, and a store URL in it (SQLite) or the test database.
    static func setUp(_ storage: TestStorage, _ dir: URL) throws -> StorageURL {
        try Fixtures.text("policies/spendiq.yaml").write(to: dir.appendingPathComponent("spendiq.yaml"), atomically: true, encoding: .utf8)
        return try storage.url(in: dir)
    }

    @Test("two servers of one store answer the same envelope and ETag, each 304 to the other's", arguments: TestStorage.available)
    func twoServers(_ storage: TestStorage) async throws {
        let dir = try Fixtures.temporaryDirectory("two-servers")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Self.setUp(storage, dir)
        // A key of this test only: the PostgreSQL database is shared, and keeps each key's rows.
        let pem = P256PrivateKeyPEM.make()
        let configure: @Sendable (inout ServerConfiguration) -> Void = {
            $0.storage = store
            $0.signingKeyPEM = pem
        }
        try await TestServer.run(storage, policies: dir.path, configure: configure, clock: { IdentityProviderTests.realClock() }) { a in
            try await TestServer.run(storage, policies: dir.path, configure: configure, clock: { IdentityProviderTests.realClock() }) {
                b in
                var seen: Set<String> = []
                for http in [a, b, a, b] {
                    let reply = try await http.get(Self.path)
                    #expect(reply.status == 200)
                    seen.insert("\(reply.headers[.eTag] ?? "none") \(reply.text.count)")
                }
                #expect(seen.count == 1, "\(seen)")
                let etag = try #require(try await a.get(Self.path).headers[.eTag])
                #expect(try await b.send(.get, Self.path, headers: [.ifNoneMatch: etag]).status == 304)
            }
        }
    }

    @Test("a rotation: apps pinning the old key, both keys or the new one each get an envelope they accept")
    func rotation() async throws {
        let dir = try Fixtures.temporaryDirectory("rotation")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try Self.setUp(.sqlite, dir)
        let a = try Self.trusted("a"), b = try Self.trusted("b")
        let clock: @Sendable () -> Timestamp = { IdentityProviderTests.realClock() }
        // The app's release 1 pins key a and names no key in its fetch.
        var release1 = try MachineUpdater(policy: "spendiq", keys: [a])
        try await TestServer.run(
            .sqlite, policies: dir.path,
            configure: {
                $0.storage = store; $0.signingKeyPEM = Self.key("a")
            }, clock: clock
        ) {
            http in
            guard case .installed = release1.offer(Data(try await http.get(Self.path).text.utf8), now: clock()) else {
                Issue.record("release 1 did not install the first machine")
                return
            }
        }
        // The rotation starts: key b signs, key a is the previous key. Release 2 pins both and names them.
        var release2 = try MachineUpdater(policy: "spendiq", keys: [a, b])
        _ = release2.restore(release1.current!.envelope)
        let both = "?keys=\(a.id),\(b.id)"
        let rotating: @Sendable (inout ServerConfiguration) -> Void = {
            $0.storage = store
            $0.signingKeyPEM = Self.key("b")
            $0.signingPreviousKeyPEM = Self.key("a")
        }
        try await TestServer.run(.sqlite, policies: dir.path, configure: rotating, clock: clock) { http in
            let old = try await http.get(Self.path)
            #expect(old.status == 200)
            #expect(Self.kid(old.text) == a.id, "an app that names no key gets the previous key's")
            #expect(Self.accepts(&release1, old.text, clock()), "release 1 after the rotation started")
            let new = try await http.get(Self.path + both)
            #expect(Self.kid(new.text) == b.id)
            #expect(Self.accepts(&release2, new.text, clock()), "release 2 takes the new key's envelope of the same machine")
            #expect(try await http.get(Self.path + "?keys=\(a.id)").text == old.text, "an app naming only key a")
            // A changed policy reaches both releases.
            let changed = Fixtures.text("policies/spendiq.yaml").replacingOccurrences(of: "window: 7d", with: "window: 5d")
            #expect(changed != Fixtures.text("policies/spendiq.yaml"))
            try changed.write(to: dir.appendingPathComponent("spendiq.yaml"), atomically: true, encoding: .utf8)
            // The server reloads the file within its reload interval (100 ms in the tests).
            var installed = false
            for _ in 0..<100 {
                var probe = release2
                if case .installed = probe.offer(Data(try await http.get(Self.path + both).text.utf8), now: clock()) {
                    release2 = probe
                    installed = true
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(installed, "release 2 did not install the changed machine")
            guard case .installed = release1.offer(Data(try await http.get(Self.path).text.utf8), now: clock()) else {
                Issue.record("release 1 did not install the changed machine")
                return
            }
            #expect(release1.current?.digest == release2.current?.digest)
            #expect(release1.current?.serial == release2.current?.serial, "one serial for one machine, under both keys")
            let metrics = try await http.get("/metrics").text
            #expect(metrics.contains(#"sessionpolicy_machine_envelopes_total{key="\#(a.id)",role="previous"}"#), "\(metrics)")
            #expect(metrics.contains(#"sessionpolicy_machine_envelopes_total{key="\#(b.id)",role="current"}"#))
        }
        // The rotation ends: key b alone. Release 2 carries on; an app pinning only key a is told so.
        try await TestServer.run(
            .sqlite, policies: dir.path,
            configure: {
                $0.storage = store; $0.signingKeyPEM = Self.key("b")
            }, clock: clock
        ) {
            http in
            #expect(Self.accepts(&release2, try await http.get(Self.path + both).text, clock()))
            let refused = try await http.get(Self.path + "?keys=\(a.id)")
            #expect(refused.status == 406)
            #expect(refused.code == "unpinned-key")
            #expect(try await http.get("/metrics").text.contains("sessionpolicy_machine_key_misses_total 1"))
        }
    }

    @Test("SIGHUP reads the signing key files again: a rotation starts and ends without a restart")
    func reloadBySIGHUP() async throws {
        let dir = try Fixtures.temporaryDirectory("signing-hup")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Self.setUp(.sqlite, dir)
        let current = dir.appendingPathComponent("signing.key.pem"), previous = dir.appendingPathComponent("previous.key.pem")
        try Self.key("a").write(to: current, atomically: true, encoding: .utf8)
        let (process, port) = try ServeProcess.start(
            [
                "--port", "0", "--policies", dir.path, "--storage", "sqlite:\(dir.path)/s.sqlite", "--signing-key", current.path,
                "--signing-previous-key", previous.path,
            ],
            environment: ["SESSIONPOLICY_LOG_LEVEL": "error"])
        defer { process.terminate() }
        func kid(_ query: String = "") async throws -> String? {
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)\(Self.path)\(query)"), timeout: .seconds(30))
            return Self.kid(String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        let a = try Self.trusted("a").id, b = try Self.trusted("b").id
        #expect(try await kid() == a)
        // Start the rotation: b current, a previous.
        try FileManager.default.moveItem(at: current, to: previous)
        try Self.key("b").write(to: current, atomically: true, encoding: .utf8)
        kill(process.processIdentifier, SIGHUP)
        var served: String?
        for _ in 0..<100 {
            served = try await kid("?keys=\(a),\(b)")
            if served == b { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(served == b)
        #expect(try await kid() == a)
        // End it: the previous key's file removed.
        try FileManager.default.removeItem(at: previous)
        kill(process.processIdentifier, SIGHUP)
        for _ in 0..<100 {
            served = try await kid()
            if served == b { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(served == b)
    }

    /// The `kid` of an envelope's protected header.
    static func kid(_ envelope: String) -> String? {
        guard let header = envelope.split(separator: ".").first, let data = Base64URLText.decode(String(header)) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["kid"] as? String
    }

    /// Whether `updater` takes `envelope` (installed, or the machine it holds).
    static func accepts(_ updater: inout MachineUpdater, _ envelope: String, _ now: Timestamp) -> Bool {
        switch updater.offer(Data(envelope.utf8), now: now) {
        case .installed, .unchanged: return true
        case let .refused(diagnostic):
            Issue.record("refused: \(diagnostic.code.rawValue) \(diagnostic.message)")
            return false
        }
    }
}

/// A new P-256 private key, PEM.
enum P256PrivateKeyPEM {
    static func make() -> String { P256.Signing.PrivateKey().pemRepresentation }
}

/// base64url without padding, decoded.
enum Base64URLText {
    static func decode(_ text: String) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }
}
