import AsyncHTTPClient
import Foundation
import NIOCore
import SessionPolicyTestSupport
import Testing

/// Static keys rotate without a restart (issue 34 §7): the key files hold several keys, SIGHUP
/// reads them again, and the documented rotation (add, switch, remove) refuses no request made
/// with a key still listed. The real `policyctl-serve`, over HTTP.
@Suite("Static key rotation")
struct KeyRotationTests {
    static let second = "second-secret-0123456789abcdef-0123456789"

    @Test("several secrets in the file; SIGHUP reads it again; a secret removed verifies nothing more")
    func rotationBySIGHUP() async throws {
        let dir = try Fixtures.temporaryDirectory("rotation")
        defer { try? FileManager.default.removeItem(at: dir) }
        let userFile = dir.appendingPathComponent("user.secret"), serviceFile = dir.appendingPathComponent("service.secret")
        try Tokens.secret.write(to: userFile, atomically: true, encoding: .utf8)
        try Tokens.serviceSecret.write(to: serviceFile, atomically: true, encoding: .utf8)
        let (process, port) = try await ServeProcess.start(
            [
                "--port", "0", "--policies", Fixtures.path("policies"), "--storage", "sqlite:\(dir.path)/s.sqlite",
                "--hs256-secret-file", userFile.path, "--service-hs256-secret-file", serviceFile.path,
            ],
            environment: ["SESSIONPOLICY_LOG_LEVEL": "error"])
        defer { process.terminate() }
        func status(_ secret: String) async throws -> Int {
            let user = unique("u")
            let token = try await Tokens.hs256(user, secret: secret)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/policies/kobil-offline-token/sessions/\(user)/phone/events")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            // Dated now: this server keeps the real clock.
            let now = IdentityProviderTests.realClock().description
            request.body = .bytes(ByteBuffer(string: SessionTrustTests.event(SessionTrustTests.sample(.launch, time: now))))
            return Int(try await HTTPClient.shared.execute(request, timeout: .seconds(30)).status.code)
        }
        func hangUp(_ text: String) async throws {
            try text.write(to: userFile, atomically: true, encoding: .utf8)
            kill(process.processIdentifier, SIGHUP)
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(try await status(Tokens.secret) == 200)
        #expect(try await status(Self.second) == 401)
        // 1. Add the new secret beside the old one: both verify.
        try await hangUp(Tokens.secret + "\n" + Self.second + "\n")
        #expect(try await status(Tokens.secret) == 200)
        #expect(try await status(Self.second) == 200)
        // 2. After the longest token lifetime, remove the old one: it verifies nothing more.
        try await hangUp(Self.second + "\n")
        #expect(try await status(Self.second) == 200)
        #expect(try await status(Tokens.secret) == 401)
        // A bad file leaves the keys as they were.
        try await hangUp("short\n")
        #expect(try await status(Self.second) == 200)
        // A user secret that is also the service secret is refused the same way.
        try await hangUp(Self.second + "\n" + Tokens.serviceSecret + "\n")
        #expect(try await status(Tokens.serviceSecret) == 200, "the service secret still makes service tokens only")
        #expect(try await status(Tokens.secret) == 401)
    }
}
