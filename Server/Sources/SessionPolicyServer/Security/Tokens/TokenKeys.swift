import Foundation
import JWTKit

/// The keys tokens may be signed with, each with the algorithms it may be used with: an RSA
/// key `RS256`/`384`/`512` and `PS256`/`384`/`512`, a P-256 key `ES256`, a P-384 key
/// `ES384`, an Ed25519 key `EdDSA`, a configured secret `HS256`; a key published with an
/// `alg` only that one. A token's `alg` must be one its key allows: never `none`, never an
/// HMAC made with a public key (a JWKS's symmetric keys are ignored).
struct TokenKeys: Sendable {
    /// One key and the algorithms it verifies, by name.
    struct Key: Sendable {
        var kid: String?
        /// `RSA`, `EC`, `OKP` or `oct`, for messages.
        var type: String
        var algorithms: [String: any JWTAlgorithm]
    }

    private(set) var keys: [Key] = []

    /// The algorithms an RSA key verifies when its JWK names none.
    static let rsaAlgorithms = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"]
    /// Every algorithm the server takes, for messages.
    static let supported = rsaAlgorithms + ["ES256", "ES384", "EdDSA", "HS256"]

    init(keys: [Key] = []) { self.keys = keys }

    /// Whether no key is configured.
    var isEmpty: Bool { keys.isEmpty }

    /// The key ids, for logs and `/healthz`.
    var kids: [String] { keys.compactMap(\.kid) }

    /// Adds an HS256 secret.
    mutating func add(hs256Secret secret: String, kid: String? = nil) async {
        let algorithm = try? await Self.algorithm { await $0.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: "k") }
        if let algorithm { keys.append(Key(kid: kid, type: "oct", algorithms: ["HS256": algorithm])) }
    }

    /// Adds a P-256 public key in PEM.
    mutating func add(es256PublicKeyPEM pem: String, kid: String? = nil) async throws {
        let key = try ES256PublicKey(pem: pem)
        keys.append(Key(kid: kid, type: "EC", algorithms: ["ES256": try await Self.algorithm { await $0.add(ecdsa: key, kid: "k") }]))
    }

    /// The keys to try for a token signed with `alg` and naming `kid`: the key of that id, or
    /// else the keys configured without an id (tried in turn), or every key when the token
    /// names none. A refusal when the named key does
    /// not take `alg`; `unknownKid` when no key has that id (the key set may be out of date).
    func candidates(alg: String, kid: String?) throws(TokenRefusal) -> [any JWTAlgorithm] {
        guard Self.supported.contains(alg) else {
            throw TokenRefusal(
                "its algorithm `\(alg)` is not one the server takes (\(Self.supported.joined(separator: ", ")))",
                signatureMatched: false)
        }
        if let kid, let key = keys.first(where: { $0.kid == kid }) {
            guard let algorithm = key.algorithms[alg] else {
                throw TokenRefusal(
                    "its algorithm `\(alg)` does not go with the \(key.type) key `\(kid)` (it takes "
                        + "\(key.algorithms.keys.sorted().joined(separator: ", ")))", signatureMatched: false)
            }
            return [algorithm]
        }
        // Keys configured without an id (an HS256 secret, an ES256 PEM) are tried for a token
        // that names a key no key set has, as well as for one that names none.
        let found = keys.filter { kid == nil || $0.kid == nil }.compactMap { $0.algorithms[alg] }
        if let kid, found.isEmpty { throw Self.unknownKid(kid) }
        guard !found.isEmpty else {
            throw TokenRefusal("no configured key takes its algorithm `\(alg)`", signatureMatched: false)
        }
        return found
    }

    /// The refusal for a key id no key has.
    static func unknownKid(_ kid: String) -> TokenRefusal {
        TokenRefusal("its key id (`kid`) `\(kid)` is not one of the issuer's keys", signatureMatched: false)
    }

    /// Whether `refusal` is the one `candidates` gives for an unknown key id.
    static func isUnknownKid(_ refusal: TokenRefusal) -> Bool { refusal.description.hasPrefix("its key id (`kid`)") }

    /// The algorithm a one-key collection built by `add` holds.
    static func algorithm(_ add: (JWTKeyCollection) async -> JWTKeyCollection) async throws -> any JWTAlgorithm {
        try await add(JWTKeyCollection()).getKey(for: "k")
    }
}

/// A JSON Web Key Set (RFC 7517 §5): the public keys an issuer signs with.
extension TokenKeys {
    /// One JWK's members the server reads (RFC 7517 §4, RFC 7518 §6).
    struct JWK: Decodable {
        var kty: String
        var kid: String?
        var use: String?
        var alg: String?
        var n: String?
        var e: String?
        var crv: String?
        var x: String?
        var y: String?
    }

    struct JWKS: Decodable { var keys: [JWK] }

    /// The keys of a JWKS document. Keys for encryption (`use: enc`), symmetric keys and keys
    /// of a type or curve the server does not verify with are skipped, and named in `skipped`;
    /// a document that is not a JWKS, or whose every key is skipped, is an error.
    static func parse(jwks data: Data) async throws(KeySetError) -> (keys: TokenKeys, skipped: [String]) {
        let document: JWKS
        do {
            document = try JSONDecoder().decode(JWKS.self, from: data)
        } catch {
            throw KeySetError("the key set is not a JWKS (a JSON object with a `keys` array of JWKs): \(error)")
        }
        var keys = TokenKeys()
        var skipped: [String] = []
        for jwk in document.keys {
            let name = jwk.kid.map { "`\($0)`" } ?? "(no kid)"
            if jwk.use == "enc" {
                skipped.append("\(name): for encryption")
                continue
            }
            do {
                guard let key = try await key(jwk) else {
                    skipped.append("\(name): \(jwk.kty) \(jwk.crv ?? jwk.alg ?? "") is not a signature key the server takes")
                    continue
                }
                keys.keys.append(key)
            } catch {
                skipped.append("\(name): \(error)")
            }
        }
        guard !keys.isEmpty else {
            throw KeySetError("the key set has no key the server can verify with (\(skipped.joined(separator: "; ")))")
        }
        return (keys, skipped)
    }

    /// The key a JWK describes, or nil for one the server does not verify with.
    private static func key(_ jwk: JWK) async throws -> Key? {
        func only(_ names: [String]) -> [String] { jwk.alg.map { names.contains($0) ? [$0] : [] } ?? names }
        var algorithms: [String: any JWTAlgorithm] = [:]
        switch jwk.kty {
        case "RSA":
            guard let n = jwk.n, let e = jwk.e else { throw KeySetError("an RSA key without `n` and `e`") }
            let key = try Insecure.RSA.PublicKey(modulus: n, exponent: e)
            for name in only(rsaAlgorithms) {
                let digest: DigestAlgorithm = name.hasSuffix("256") ? .sha256 : name.hasSuffix("384") ? .sha384 : .sha512
                algorithms[name] = try await algorithm {
                    name.hasPrefix("PS")
                        ? await $0.add(pss: key, digestAlgorithm: digest, kid: "k")
                        : await $0.add(rsa: key, digestAlgorithm: digest, kid: "k")
                }
            }
        case "EC":
            guard let x = jwk.x, let y = jwk.y else { throw KeySetError("an EC key without `x` and `y`") }
            if jwk.crv == "P-256", !only(["ES256"]).isEmpty {
                let key = try ES256PublicKey(parameters: (x, y))
                algorithms["ES256"] = try await algorithm { await $0.add(ecdsa: key, kid: "k") }
            } else if jwk.crv == "P-384", !only(["ES384"]).isEmpty {
                let key = try ES384PublicKey(parameters: (x, y))
                algorithms["ES384"] = try await algorithm { await $0.add(ecdsa: key, kid: "k") }
            }
        case "OKP":
            guard jwk.crv == "Ed25519", let x = jwk.x, !only(["EdDSA"]).isEmpty else { return nil }
            let key = try EdDSA.PublicKey(x: x, curve: .ed25519)
            algorithms["EdDSA"] = try await algorithm { await $0.add(eddsa: key, kid: "k") }
        default:
            return nil
        }
        return algorithms.isEmpty ? nil : Key(kid: jwk.kid, type: jwk.kty, algorithms: algorithms)
    }
}

/// A key set that could not be had: the fetch failed, or the document is not a usable JWKS.
public struct KeySetError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
