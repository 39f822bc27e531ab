import Crypto
import Foundation
public import SessionPolicy

/// Signs machine documents into envelopes (docs/envelope.md) with a P-256 private key.
public struct MachineSigner: Sendable {
    /// The id of the signing key's public key: what an envelope's `kid` says.
    public let keyID: String
    /// The public key, as PEM: what an app pins.
    public let publicKeyPEM: String
    private let key: P256.Signing.PrivateKey

    /// Reads a PEM private key (`PRIVATE KEY`, PKCS #8, or `EC PRIVATE KEY`, SEC 1) of the curve
    /// P-256. Throws `invalid-key` for anything else; `file` names the key in the diagnostic.
    public init(privateKeyPEM pem: String, file: String = "signing key") throws(DiagnosticError) {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw DiagnosticError([
                .error(
                    .invalidKey, "not a PEM private key of the curve P-256", at: SourceLocation(file: file, line: 1, column: 1),
                    help: "make one with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out signing.key.pem`")
            ])
        }
        self.key = key
        self.keyID = TrustedKey.keyID(key.publicKey.derRepresentation)
        self.publicKeyPEM = key.publicKey.pemRepresentation
    }

    /// The envelope of `machine`: the compact JWS of the payload, without a line feed.
    public func sign(_ machine: PolicyMachine, serial: Int64, issuedAt: Timestamp, expiresAt: Timestamp) throws -> String {
        let header = CanonicalJSON.object([
            "alg": .string(EnvelopeReader.algorithm), "kid": .string(keyID), "typ": .string(EnvelopeReader.type),
        ])
        let payload = CanonicalJSON.object([
            "format": .string(EnvelopeReader.format), "policy": .string(machine.name), "serial": .int(serial),
            "issued_at": .int(issuedAt.millisecondsSinceEpoch), "expires_at": .int(expiresAt.millisecondsSinceEpoch),
            "digest": .string(machine.digest), "machine": .string(machine.document),
        ])
        let input = Base64URL.encode(Array(header.text.utf8)) + "." + Base64URL.encode(Array(payload.text.utf8))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}
