import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
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
        let pem = P256.Signing.PrivateKey().pemRepresentation
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
        let release1 = NIOLockedValueBox(try MachineUpdater(policy: "spendiq", keys: [a]))
        let first: @Sendable (inout ServerConfiguration) -> Void = {
            $0.storage = store
            $0.signingKeyPEM = Self.key("a")
        }
        try await TestServer.run(.sqlite, policies: dir.path, configure: first, clock: clock) { http in
            let fetched = try await http.get(Self.path).text
            #expect(Self.offer(release1, fetched, clock()) == "installed", "release 1's first machine")
        }
        // The rotation starts: key b signs, key a is the previous key. Release 2 pins both and
        // names them; it starts from the envelope release 1 stored (an update of the app).
        var updated = try MachineUpdater(policy: "spendiq", keys: [a, b])
        _ = updated.restore(release1.withLockedValue { $0.current!.envelope })
        let release2 = NIOLockedValueBox(updated)
        let both = "?keys=" + updated.keyIDs.joined(separator: ",")
        let rotating: @Sendable (inout ServerConfiguration) -> Void = {
            $0.storage = store
            $0.signingKeyPEM = Self.key("b")
            $0.signingPreviousKeyPEM = Self.key("a")
        }
        try await TestServer.run(.sqlite, policies: dir.path, configure: rotating, clock: clock) { http in
            let old = try await http.get(Self.path)
            #expect(old.status == 200)
            #expect(Self.kid(old.text) == a.id, "an app that names no key gets the previous key's")
            #expect(Self.offer(release1, old.text, clock()) == "unchanged", "release 1 after the rotation started")
            let new = try await http.get(Self.path + both)
            #expect(Self.kid(new.text) == b.id)
            #expect(Self.offer(release2, new.text, clock()) == "unchanged", "release 2: the new key's envelope of the same machine")
            #expect(try await http.get(Self.path + "?keys=\(a.id)").text == old.text, "an app naming only key a")
            // A changed policy reaches both releases (the server reloads it within 100 ms here).
            let changed = Fixtures.text("policies/spendiq.yaml").replacingOccurrences(of: "window: 7d", with: "window: 5d")
            #expect(changed != Fixtures.text("policies/spendiq.yaml"))
            try changed.write(to: dir.appendingPathComponent("spendiq.yaml"), atomically: true, encoding: .utf8)
            var result = ""
            for _ in 0..<100 {
                result = Self.offer(release2, try await http.get(Self.path + both).text, clock())
                if result != "unchanged" { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(result == "installed", "release 2 and the changed machine")
            let changedForRelease1 = try await http.get(Self.path).text
            #expect(Self.offer(release1, changedForRelease1, clock()) == "installed", "release 1 and the changed machine")
            let held = (release1.withLockedValue { $0.current }, release2.withLockedValue { $0.current })
            #expect(held.0?.digest == held.1?.digest)
            #expect(held.0?.serial == held.1?.serial, "one serial for one machine, under both keys")
            let metrics = try await http.get("/metrics").text
            #expect(metrics.contains(#"sessionpolicy_machine_envelopes_total{key="\#(a.id)",role="previous"}"#), "\(metrics)")
            #expect(metrics.contains(#"sessionpolicy_machine_envelopes_total{key="\#(b.id)",role="current"}"#))
        }
        // The rotation ends: key b alone. Release 2 carries on; an app pinning only key a is told so.
        let last: @Sendable (inout ServerConfiguration) -> Void = {
            $0.storage = store
            $0.signingKeyPEM = Self.key("b")
        }
        try await TestServer.run(.sqlite, policies: dir.path, configure: last, clock: clock) { http in
            let fetched = try await http.get(Self.path + both).text
            #expect(Self.offer(release2, fetched, clock()) == "unchanged")
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
        let (process, port) = try await ServeProcess.start(
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
        guard let header = envelope.split(separator: ".").first, let bytes = Base64URL.decode(header.utf8) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])?["kid"] as? String
    }

    /// What `updater` does with `envelope`: `installed`, `unchanged`, or `refused CODE`.
    static func offer(_ updater: NIOLockedValueBox<MachineUpdater>, _ envelope: String, _ now: Timestamp) -> String {
        switch updater.withLockedValue({ $0.offer(Data(envelope.utf8), now: now) }) {
        case .installed: "installed"
        case .unchanged: "unchanged"
        case let .refused(diagnostic): "refused \(diagnostic.code.rawValue): \(diagnostic.message)"
        }
    }
}
