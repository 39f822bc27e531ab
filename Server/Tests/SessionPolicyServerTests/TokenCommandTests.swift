import Foundation
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// `policyctl token`: the development tokens of the README's server quick start, taken by the
/// real server (user and back end, HS256 and ES256), and its refusals.
@Suite("policyctl token")
struct TokenCommandTests {
    static let policyctl = CLI.executable("policyctl")

    static func token(_ arguments: [String]) async throws -> String {
        let r = try await CLI.run(["token"] + arguments, executable: policyctl)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a user token and the back end's token, with a secret file or a P-256 key, as the server takes them")
    func tokensTheServerTakes() async throws {
        let dir = try Fixtures.temporaryDirectory("token")
        defer { try? FileManager.default.removeItem(at: dir) }
        let userSecret = dir.appendingPathComponent("user.secret"), serviceSecret = dir.appendingPathComponent("service.secret")
        try (Tokens.secret + "\n").write(to: userSecret, atomically: true, encoding: .utf8)
        try Tokens.serviceSecret.write(to: serviceSecret, atomically: true, encoding: .utf8)
        let user = try await Self.token([
            "--sub", "zoe", "--secret-file", userSecret.path, "--audience", "api", "--issuer", "https://id.example",
        ])
        let service = try await Self.token([
            "--service", "--secret-file", serviceSecret.path, "--audience", "api", "--issuer", "https://id.example",
        ])
        let es256 = try await Self.token(["--sub", "zoe", "--key", Fixtures.path("spec/conformance/keys/a.key.pem"), "--valid-for", "1h"])
        try await TestServer.run(
            .sqlite,
            configure: {
                $0.tokenAudience = "api"
                $0.tokenIssuer = "https://id.example"
            }
        ) { http in
            let path = "/v1/policies/kobil-offline-token/sessions/zoe/phone/events"
            #expect(try await http.post(path, IdentityProviderTests.launch, token: user).status == 200)
            #expect(try await http.post(path, IdentityProviderTests.login, token: user).status == 403)
            let login = try await http.post(path, IdentityProviderTests.login, token: service)
            #expect(login.status == 200, "\(login.text)")
        }
        try await TestServer.run(
            .sqlite, configure: { $0.es256PublicKeyPEM = Fixtures.text("spec/conformance/keys/a.pub.pem") }
        ) { http in
            let reply = try await http.post(
                "/v1/policies/kobil-offline-token/sessions/zoe/phone/events", IdentityProviderTests.launch, token: es256)
            #expect(reply.status == 200, "\(reply.text)")
        }
    }

    @Test("refused: no key, two keys, a short secret, a file that is not a key")
    func refusals() async throws {
        let dir = try Fixtures.temporaryDirectory("token")
        defer { try? FileManager.default.removeItem(at: dir) }
        let short = dir.appendingPathComponent("short.secret")
        try "0123456789".write(to: short, atomically: true, encoding: .utf8)
        let cases: [([String], Int32, String)] = [
            (["--sub", "zoe"], 64, "either `--secret-file`"),
            (["--sub", "zoe", "--secret-file", short.path, "--key", short.path], 64, "not both"),
            (["--secret-file", short.path], 64, "--sub USER"),
            (["--sub", "zoe", "--secret-file", short.path], 2, "32 or more"),
            (["--sub", "zoe", "--key", short.path], 2, "not a PEM P-256 private key"),
            (["--sub", "zoe", "--secret-file", short.path, "--valid-for", "soon"], 64, "`--valid-for`"),
            (["--sub", "zoe", "--secret-file", dir.appendingPathComponent("missing").path], 2, "missing"),
        ]
        for (arguments, status, message) in cases {
            let r = try await CLI.run(["token"] + arguments, executable: Self.policyctl)
            #expect(r.status == status, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(arguments): \(r.stderr)")
        }
    }
}
