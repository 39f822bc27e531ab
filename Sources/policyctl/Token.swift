import ArgumentParser
import Crypto
import Foundation
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyYAML

/// `policyctl token`: a development token the server accepts, to try it without an identity
/// provider.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a development token (a JWT) that policyctl serve accepts.",
        discussion: """
            Signs a JWT with sub, iat and exp (and iss, aud and azp when given) with an HS256 secret \
            (--secret-file, the file of hs256.secret or service.hs256.secret, at least 32 bytes) or a \
            P-256 private key (--key, PEM; the server holds its public key, es256.public.key). A token \
            signed with the service secret or key is the back end's; --service also names the back end \
            in azp (default client id `backend`, see service.clients). For trying the server, not for \
            production: production tokens come from the identity provider (docs/identity-providers.md).
            Exit codes: 0 printed; 2 invalid input (the key or secret file); 64 usage error.
            """)

    @Option(help: ArgumentHelp("The user the token is for (`sub`); `backend` with --service.", valueName: "user"))
    var sub: String?

    @Flag(help: "A token of the back end: `azp` is --client (sign it with the service secret or key).")
    var service = false

    @Option(help: ArgumentHelp("The client id to put in `azp` (with --service: `backend`).", valueName: "id"))
    var client: String?

    @Option(help: ArgumentHelp("A file holding the HS256 secret (whitespace around it is ignored).", valueName: "file"))
    var secretFile: String?

    @Option(help: ArgumentHelp("A PEM P-256 private key to sign with (ES256).", valueName: "pem"))
    var key: String?

    @Option(help: ArgumentHelp("The issuer (`iss`), as the server's token.issuer.", valueName: "url"))
    var issuer: String?

    @Option(help: ArgumentHelp("The audience (`aud`), as the server's token.audience.", valueName: "aud"))
    var audience: String?

    @Option(help: ArgumentHelp("How long the token is valid, as a policy duration (default 15m).", valueName: "duration"))
    var validFor = "15m"

    func validate() throws {
        guard (secretFile == nil) != (key == nil) else {
            throw ValidationError("give either `--secret-file` (HS256) or `--key` (ES256), not both and not neither")
        }
        guard sub != nil || service else { throw ValidationError("give the user with `--sub USER` (or `--service`)") }
        guard case .success(let span) = TimeSpan.parse(validFor), span.seconds > 0 else {
            throw ValidationError("`--valid-for` must be a duration like `15m` or `12h`, not `\(validFor)`")
        }
    }

    func run() throws {
        let now = Int64(Date().timeIntervalSince1970)
        guard case .success(let span) = TimeSpan.parse(validFor) else { throw Exit.invalidInput }
        var claims: [String: Any] = ["sub": sub ?? "backend", "iat": now, "exp": now + span.seconds]
        if let issuer { claims["iss"] = issuer }
        if let audience { claims["aud"] = audience }
        if let azp = client ?? (service ? "backend" : nil) { claims["azp"] = azp }
        let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        if let secretFile {
            let secret = try Self.read(secretFile).trimmingCharacters(in: .whitespacesAndNewlines)
            guard secret.utf8.count >= 32 else {
                Self.fail("the secret in `\(secretFile)` is \(secret.utf8.count) bytes; the server takes 32 or more")
            }
            let input = Self.signingInput(alg: "HS256", payload: payload)
            let mac = HMAC<Crypto.SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
            print(input + "." + Base64URL.encode(Data(mac)))
        } else if let key {
            let pem = try Self.read(key)
            guard let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
                Self.fail("`\(key)` is not a PEM P-256 private key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)")
            }
            let input = Self.signingInput(alg: "ES256", payload: payload)
            let signature = try privateKey.signature(for: Data(input.utf8))
            print(input + "." + Base64URL.encode(signature.rawRepresentation))
        }
    }

    /// `BASE64URL(header) "." BASE64URL(payload)` (RFC 7515 §5.1).
    static func signingInput(alg: String, payload: Data) -> String {
        Base64URL.encode(Data(#"{"alg":"\#(alg)","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(payload)
    }

    /// A small file's text, or exit 2 with the reason.
    static func read(_ path: String) throws -> String {
        switch SourceFile.read(path, limit: 64 * 1024) {
        case let .failure(e):
            emit(e.diagnostics, sources: [:], json: false)
            throw Exit.invalidInput
        case let .success(data):
            return String(decoding: data, as: UTF8.self)
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        Foundation.exit(2)
    }
}
