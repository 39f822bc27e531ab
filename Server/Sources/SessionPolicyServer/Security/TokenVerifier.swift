public import Foundation
public import JWTKit
import NIOConcurrencyHelpers

/// Verifies users' tokens: JWTs signed with a configured HS256 secret or ES256 public key,
/// not expired, and from the configured issuer and audience when those are set.
public struct TokenVerifier: Sendable {
    /// The claims the server reads from a user token.
    public struct Claims: JWTPayload, Equatable {
        /// The user id.
        public var sub: SubjectClaim
        /// The expiry; a token without one is refused.
        public var exp: ExpirationClaim
        /// The issuer.
        public var iss: IssuerClaim?
        /// The audience.
        public var aud: AudienceClaim?
        /// Display name.
        public var nickname: String?
        /// Full name.
        public var name: String?
        /// Avatar URL.
        public var picture: String?
        /// E-mail address.
        public var email: String?

        /// Creates claims (to sign tokens in tests and tools).
        public init(
            sub: String, exp: Date, iss: String? = nil, aud: [String]? = nil, nickname: String? = nil, name: String? = nil,
            picture: String? = nil, email: String? = nil
        ) {
            self.sub = SubjectClaim(value: sub)
            self.exp = ExpirationClaim(value: exp)
            self.iss = iss.map { IssuerClaim(value: $0) }
            self.aud = aud.map { AudienceClaim(value: $0) }
            self.nickname = nickname
            self.name = name
            self.picture = picture
            self.email = email
        }

        public func verify(using algorithm: some JWTAlgorithm) async throws {
            try exp.verifyNotExpired()
        }

        /// The profile claims a ticket exchange may reveal.
        var profile: [String: String] {
            var out = ["sub": sub.value]
            if let nickname { out["nickname"] = nickname }
            if let name { out["name"] = name }
            if let picture { out["picture"] = picture }
            if let email { out["email"] = email }
            return out
        }
    }

    /// Why a token was refused, in a sentence the 401 and the log give (RFC 6750's
    /// `error_description`): expired, a signature no configured key made, a missing claim, the
    /// wrong issuer or audience.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
        /// Whether a configured key made the signature (then the token is this verifier's, and
        /// its other problem is the one to report).
        public var signatureMatched = true
    }

    private let keys: JWTKeyCollection
    /// Most verified tokens remembered (about 0.5 KB each).
    static let cacheLimit = 131_072
    /// Tokens already verified, until they expire: a client sends the same token many times.
    private let verified = NIOLockedValueBox([String: Claims]())
    /// Whether any key is configured; without one, every token is refused.
    public let hasKeys: Bool
    private let issuer: String?
    private let audience: String?

    /// Creates a verifier from an HS256 secret and/or an ES256 public key in PEM.
    public init(
        hs256Secret: String?, es256PublicKeyPEM: String?, issuer: String? = nil, audience: String? = nil
    )
        async throws(ConfigurationError)
    {
        let keys = JWTKeyCollection()
        if let hs256Secret {
            guard hs256Secret.utf8.count >= 32 else {
                throw ConfigurationError(
                    "the HS256 secret is \(hs256Secret.utf8.count) bytes, fewer than 32",
                    help: "use a random secret of at least 32 bytes, for example `openssl rand -base64 48`")
            }
            await keys.add(hmac: HMACKey(from: hs256Secret), digestAlgorithm: .sha256, kid: "hs256")
        }
        if let pem = es256PublicKeyPEM {
            do {
                await keys.add(ecdsa: try ES256PublicKey(pem: pem), kid: "es256")
            } catch {
                throw ConfigurationError(
                    "the ES256 public key is not a P-256 public key in PEM", help: "give the `-----BEGIN PUBLIC KEY-----` file")
            }
        }
        self.keys = keys
        self.hasKeys = hs256Secret != nil || es256PublicKeyPEM != nil
        self.issuer = issuer
        self.audience = audience
    }

    /// Verifies `token` and returns its claims.
    public func verify(_ token: String) async throws(Refusal) -> Claims {
        guard hasKeys else { throw Refusal(description: "no token keys are configured") }
        if let claims = cached(token) { return claims }
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self, iteratingKeys: true)
        } catch {
            throw Self.refusal(error)
        }
        if let issuer, claims.iss?.value != issuer {
            throw Refusal(description: "its issuer (`iss`) is \(claims.iss.map { "`\($0.value)`" } ?? "missing"), not `\(issuer)`")
        }
        if let audience {
            do { try claims.aud?.verifyIntendedAudience(includes: audience) } catch {
                throw Refusal(description: "its audience (`aud`) does not include `\(audience)`")
            }
            if claims.aud == nil { throw Refusal(description: "it has no audience (`aud`); `\(audience)` is required") }
        }
        if claims.sub.value.isEmpty { throw Refusal(description: "its subject (`sub`) is empty") }
        verified.withLockedValue { cache in
            // Full: one entry makes room (whichever the hash order puts first), so a working
            // set a little over the limit still mostly hits.
            if cache.count >= Self.cacheLimit, cache[token] == nil { cache.remove(at: cache.startIndex) }
            cache[token] = claims
        }
        return claims
    }

    /// The claims of `token` if this verifier verified it before and it has not expired since:
    /// a dictionary lookup, no signature check.
    public func cached(_ token: String) -> Claims? {
        guard let claims = verified.withLockedValue({ $0[token] }) else { return nil }
        if claims.exp.value > Date() { return claims }
        verified.withLockedValue { $0[token] = nil }
        return nil
    }

    /// A jwt-kit failure in words.
    static func refusal(_ error: any Error) -> Refusal {
        guard let error = error as? JWTError else {
            // The payload did not decode: a required claim is missing or of the wrong type.
            return Refusal(description: "it lacks a required claim (`sub` and `exp`), or one has the wrong type")
        }
        switch error.errorType {
        case .claimVerificationFailure:
            if error.failedClaim is ExpirationClaim { return Refusal(description: "it has expired (`exp`)") }
            return Refusal(description: "a claim failed: \(error.reason ?? "unknown")")
        case .signatureVerificationFailed, .unknownKID, .noKeyProvided:
            return Refusal(description: "its signature was not made by a configured key", signatureMatched: false)
        case .malformedToken where (error.reason ?? "").contains("payload"):
            // The payload is decoded before the signature is checked, so this says nothing of the key.
            return Refusal(
                description: "it lacks a required claim (`sub` and `exp`), or one has the wrong type", signatureMatched: false)
        case .malformedToken:
            return Refusal(description: "it is not a JWT (three base64url parts)", signatureMatched: false)
        case .unsupportedAlgorithm, .signingAlgorithmFailure:
            return Refusal(description: "its algorithm is not one the server takes (HS256, ES256)", signatureMatched: false)
        default:
            if error.underlying is DecodingError {
                return Refusal(description: "it lacks a required claim (`sub` and `exp`), or one has the wrong type")
            }
            return Refusal(description: error.reason ?? "\(error.errorType)", signatureMatched: false)
        }
    }
}
