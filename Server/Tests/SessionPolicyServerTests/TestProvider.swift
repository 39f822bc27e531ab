import AsyncHTTPClient
import Foundation
import NIOCore
import SessionPolicyTestSupport

/// The test OpenID Connect provider (`Server/Tests/Provider/oidc_provider.py`, on joserfc) as a
/// process on loopback: discovery, a JWKS of RSA, P-256, P-384 and Ed25519 keys, tokens minted
/// on request, client credentials, rotation and outages on command, fetches counted. It exits
/// when this process closes its standard input (so a test that dies leaves none behind).
/// `SESSIONPOLICY_TEST_PYTHON` names the Python with joserfc (default `python3`).
final class TestProvider: Sendable {
    let issuer: String
    let process: Process
    private let stdin: Pipe
    /// The folder of `ca.pem` when serving HTTPS.
    let tlsDirectory: URL?

    struct StartFailed: Error, CustomStringConvertible {
        var description: String
    }

    init(tls: Bool = false) async throws {
        let script = Fixtures.path("Server/Tests/Provider/oidc_provider.py")
        var dir: URL?
        var arguments = [script, "--port", "0"]
        if tls {
            dir = try Fixtures.temporaryDirectory("provider-tls")
            arguments += ["--tls-dir", dir!.path]
        }
        let helper = try await PythonHelper(arguments)
        guard helper.firstLine.hasPrefix("listening on ") else {
            throw StartFailed(
                description: "the test provider did not start (`\(helper.python)` needs joserfc: pip install joserfc): "
                    + "\(helper.firstLine) \(helper.stopReadingErrors())")
        }
        let text = helper.firstLine
        let process = helper.process
        let input = helper.stdin
        self.issuer = String(text.dropFirst("listening on ".count))
        self.process = process
        self.stdin = input
        self.tlsDirectory = dir
    }

    /// Stops the provider.
    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        if let tlsDirectory { try? FileManager.default.removeItem(at: tlsDirectory) }
    }

    /// Runs `body` with a provider, stopped afterwards.
    static func with<T>(tls: Bool = false, _ body: (TestProvider) async throws -> T) async throws -> T {
        let provider = try await TestProvider(tls: tls)
        defer { provider.stop() }
        return try await body(provider)
    }

    /// A control call: POST `path` with a JSON body; the JSON answer.
    @discardableResult
    func control(_ path: String, _ body: [String: any Sendable] = [:]) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: issuer + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        let response = try await Self.client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return (try JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any] ?? [:]
    }

    /// A token minted by the provider (see `/control/mint`): `alg`, `sub`, `aud` and any other field.
    func mint(_ fields: [String: any Sendable]) async throws -> String {
        try await control("/control/mint", fields)["token"] as? String ?? ""
    }

    /// The provider's request counts (`jwks_fetches`, `discovery_fetches`, ...).
    func stats() async throws -> [String: Int] {
        try await control("/control/stats") as? [String: Int] ?? [:]
    }

    /// The back end's access token by the client credentials grant (RFC 6749 §4.4).
    func clientCredentials(client: String, secret: String) async throws -> String {
        var request = HTTPClientRequest(url: issuer + "/token")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "grant_type=client_credentials&client_id=\(client)&client_secret=\(secret)"))
        let response = try await Self.client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let json = (try JSONSerialization.jsonObject(with: Data(buffer: bytes))) as? [String: Any]
        return json?["access_token"] as? String ?? ""
    }

    /// The JWKS the provider publishes, as text.
    func jwks() async throws -> String {
        let response = try await Self.client.execute(HTTPClientRequest(url: issuer + "/jwks"), timeout: .seconds(30))
        return String(buffer: try await response.body.collect(upTo: 1 << 20))
    }

    /// Plain HTTP only: the HTTPS provider's control calls would need its CA.
    static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: {
            var c = HTTPClient.Configuration()
            var tls = c.tlsConfiguration ?? .makeClientConfiguration()
            tls.certificateVerification = .none  // the test's own provider on loopback
            c.tlsConfiguration = tls
            return c
        }())
}
