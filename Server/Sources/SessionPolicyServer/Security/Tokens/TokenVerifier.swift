public import Foundation
import JWTKit
import Logging
import NIOConcurrencyHelpers

/// Verifies tokens: JWTs (RFC 7519) signed with a configured HS256 secret or ES256 public key,
/// or with a key of the issuer's key set (OpenID Connect discovery or a JWKS URL: RS, PS, ES
/// and EdDSA algorithms); `exp` required and `nbf` and `iat` honoured, with a leeway; from the
/// configured issuer and audience when those are set.
public struct TokenVerifier: Sendable {
    /// Why a token was refused.
    public typealias Refusal = TokenRefusal

    /// What a token must carry besides a good signature.
    public struct Rules: Sendable, Equatable {
        /// The `iss` required, if any.
        public var issuer: String?
        /// The value `aud` must be or include, if any.
        public var audience: String?
        /// How far `exp`, `nbf` and `iat` may be off (clocks differ).
        public var leeway: TimeInterval = 60
        /// The claim that names the user.
        public var userClaim = "sub"

        public init(issuer: String? = nil, audience: String? = nil, leeway: TimeInterval = 60, userClaim: String = "sub") {
            self.issuer = issuer
            self.audience = audience
            self.leeway = leeway
            self.userClaim = userClaim
        }
    }

    /// The configured secrets and public keys; replaced by `replaceStaticKeys` (SIGHUP).
    private let staticKeys: NIOLockedValueBox<TokenKeys>
    /// The issuer's key set, when the keys come from it.
    let keySet: KeySetSource?
    /// Asks the issuer about opaque tokens (RFC 7662), when configured.
    let introspector: TokenIntrospector?
    /// The verifiers of other issuers (`token.extra.issuers`), by issuer: a token whose `iss`
    /// is one of them is verified there, with that issuer's keys and audience.
    let others: [String: TokenVerifier]
    private let rules: Rules
    private let decoder: JSONDecoder
    /// Most verified tokens remembered (about 0.7 KB each: 100,000 distinct users' tokens took
    /// 71 MiB of resident memory, `load/token-cache.sh`).
    static let cacheLimit = 131_072
    /// Tokens already verified, until they expire: a client sends the same token many times.
    private let verified = NIOLockedValueBox(BoundedCache<String, Claims>(limit: cacheLimit))
    /// Whether any key is configured; without one, every token is refused.
    public var hasKeys: Bool { !staticKeys.withLockedValue(\.isEmpty) || keySet != nil || !others.isEmpty }

    /// Every issuer's key set: this verifier's, then the other issuers', for `/healthz`.
    var keySets: [KeySetSource] { (keySet.map { [$0] } ?? []) + others.keys.sorted().compactMap { others[$0]?.keySet } }

    /// The keys of a secrets text and a PEM text. Each may hold several, for a rotation: the
    /// secrets one per line (each at least 32 bytes), the P-256 public keys one PEM block after
    /// another; a token is checked against each in turn.
    static func makeStaticKeys(hs256Secret: String?, es256PublicKeyPEM: String?) async throws(ConfigurationError) -> TokenKeys {
        var keys = TokenKeys()
        for secret in hs256Secret.map(secrets) ?? [] {
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError(
                    "an HS256 secret is \(secret.utf8.count) bytes, fewer than 32",
                    help: "use random secrets of at least 32 bytes, one per line, for example `openssl rand -base64 48`")
            }
            await keys.add(hs256Secret: secret)
        }
        for pem in es256PublicKeyPEM.map(pemBlocks) ?? [] {
            do {
                try await keys.add(es256PublicKeyPEM: pem)
            } catch {
                throw ConfigurationError(
                    "an ES256 public key is not a P-256 public key in PEM", help: "give `-----BEGIN PUBLIC KEY-----` blocks")
            }
        }
        return keys
    }

    /// The secrets of a text, one per line, blank lines and surrounding spaces ignored.
    static func secrets(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The PEM blocks of a text, each from its `-----BEGIN` line to its `-----END` line; the
    /// whole text when it has none (so a bad key is reported as one).
    static func pemBlocks(_ text: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring] = []
        for line in text.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("-----BEGIN") { current = [] }
            current.append(line)
            if line.hasPrefix("-----END") { blocks.append(current.joined(separator: "\n") + "\n") }
        }
        return blocks.isEmpty ? [text] : blocks
    }

    /// Replaces the configured secrets and public keys (a rotation, on SIGHUP) and forgets the
    /// tokens verified so far, so that a key taken away verifies nothing more.
    func replaceStaticKeys(_ keys: TokenKeys) {
        staticKeys.withLockedValue { $0 = keys }
        verified.withLockedValue { $0.removeAll() }
    }

    /// Creates a verifier from an HS256 secret and/or an ES256 public key in PEM.
    public init(
        hs256Secret: String?, es256PublicKeyPEM: String?, issuer: String? = nil, audience: String? = nil
    )
        async throws(ConfigurationError)
    {
        try await self.init(
            hs256Secret: hs256Secret, es256PublicKeyPEM: es256PublicKeyPEM, rules: Rules(issuer: issuer, audience: audience),
            keySet: nil)
    }

    /// Creates a verifier from static keys and/or an issuer's key set, with `rules`.
    init(
        hs256Secret: String?, es256PublicKeyPEM: String?, rules: Rules, keySet: KeySetSource?,
        introspection: IntrospectionSettings? = nil, others: [TokenVerifier] = []
    ) async throws(ConfigurationError) {
        self.others = Dictionary(others.compactMap { v in v.rules.issuer.map { ($0, v) } }) { first, _ in first }
        self.staticKeys = NIOLockedValueBox(try await Self.makeStaticKeys(hs256Secret: hs256Secret, es256PublicKeyPEM: es256PublicKeyPEM))
        self.keySet = keySet
        self.rules = rules
        let decoder = JSONDecoder()
        // NumericDate: seconds since 1970 (RFC 7519 §2), not Foundation's 2001.
        decoder.dateDecodingStrategy = .secondsSince1970
        decoder.userInfo[Claims.userClaimKey] = rules.userClaim
        self.decoder = decoder
        self.introspector = keySet.flatMap { keySet in
            introspection.map { TokenIntrospector(settings: $0, keySettings: keySet.settings, client: keySet.client, decoder: decoder) }
        }
    }

    /// Verifies `token` and returns its claims.
    public func verify(_ token: String, now: Date = Date()) async throws(Refusal) -> Claims {
        guard hasKeys else { throw Refusal("no token keys are configured", signatureMatched: false) }
        if let claims = cached(token, now: now) { return claims }
        if let other = other(for: token) { return try await other.verify(token, now: now) }
        if let introspector, token.utf8.count(where: { $0 == UInt8(ascii: ".") }) != 2 {
            // Not a JWT: an opaque token, which only its issuer can tell about.
            var claims = try await introspector.introspect(token, now: now)
            // An answer need not repeat the issuer (RFC 7662 §2.2): the endpoint is the issuer's.
            if claims.iss == nil, let issuer = rules.issuer { claims.iss = IssuerClaim(value: issuer) }
            return try check(claims, now: now)
        }
        let claims = try check(try await signedPayload(token), now: now)
        verified.withLockedValue { $0.insert(token, claims) }
        return claims
    }

    /// Verifies an app's OpenID Connect ID token: a key of the issuer's made its signature; `exp`,
    /// `nbf` and `iat` within the leeway; the configured issuer; an `aud` that includes one of
    /// `audiences` (the apps' client ids); an `auth_time`; `token_use`, where present, `id`.
    /// Never cached: each use is checked, and a replay is the caller's to refuse.
    public func verifyIDToken(_ token: String, audiences: [String], now: Date = Date()) async throws(Refusal) -> IDTokenClaims {
        guard hasKeys else { throw Refusal("no token keys are configured", signatureMatched: false) }
        if let other = other(for: token) { return try await other.verifyIDToken(token, audiences: audiences, now: now) }
        let payload = try await signedPayload(token)
        let claims: IDTokenClaims
        do {
            claims = try decoder.decode(IDTokenClaims.self, from: payload)
        } catch {
            throw Refusal("it lacks a required claim (`\(rules.userClaim)` and `exp`), or one has the wrong type")
        }
        try checkTimes(exp: claims.exp.value, nbf: claims.nbf?.value, iat: claims.iat?.value, now: now)
        if let issuer = rules.issuer, claims.iss?.value != issuer {
            throw Refusal("its issuer (`iss`) is \(claims.iss.map { "`\($0.value)`" } ?? "missing"), not `\(issuer)`")
        }
        guard let aud = claims.aud?.value, aud.contains(where: audiences.contains) else {
            throw Refusal(
                "its audience (`aud`) is \(claims.aud.map { "`\($0.value.joined(separator: "`, `"))`" } ?? "missing"), "
                    + "not one of the apps' client ids (`id.token.audience`)")
        }
        if let use = claims.tokenUse, use != "id" { throw Refusal("its `token_use` is `\(use)`, not `id`") }
        guard claims.authTime != nil else { throw Refusal("it has no `auth_time`, so it does not say when the user logged in") }
        return claims
    }

    /// The verifier of another issuer when the token's unverified `iss` names one: only to pick
    /// the keys, which then verify the signature; that verifier checks `iss` again.
    private func other(for token: String) -> TokenVerifier? {
        guard !others.isEmpty else { return nil }
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = CompactJWS.base64URL(parts[1]) else { return nil }
        struct Issuer: Decodable { var iss: String? }
        guard let iss = (try? JSONDecoder().decode(Issuer.self, from: payload))?.iss else { return nil }
        return others[iss]
    }

    /// The payload of `token` once a configured key is found to have made its signature.
    private func signedPayload(_ token: String) async throws(Refusal) -> Data {
        let jws = try CompactJWS(token)
        let candidates: [any JWTAlgorithm]
        do {
            candidates = try keys().candidates(alg: jws.header.alg, kid: jws.header.kid)
        } catch let refusal where TokenKeys.isUnknownKid(refusal) {
            // The issuer may have rotated its keys: fetch them again (rate-limited) and retry once.
            guard let keySet else { throw refusal }
            await keySet.refetchForUnknownKid()
            candidates = try keys().candidates(alg: jws.header.alg, kid: jws.header.kid)
        }
        guard candidates.contains(where: { (try? $0.verify(jws.signature, signs: jws.signingInput)) == true }) else {
            throw Refusal("its signature was not made by a configured key", signatureMatched: false)
        }
        return jws.payload
    }

    /// Refuses an expired token, or one not yet valid or issued in the future, beyond the leeway.
    private func checkTimes(exp: Date, nbf: Date?, iat: Date?, now: Date) throws(Refusal) {
        let leeway = rules.leeway
        if exp.addingTimeInterval(leeway) <= now { throw Refusal("it has expired (`exp` \(Self.iso(exp)))") }
        if let nbf, nbf.addingTimeInterval(-leeway) > now {
            throw Refusal("it is not valid before \(Self.iso(nbf)) (`nbf`), \(Int(nbf.timeIntervalSince(now)))s from now")
        }
        if let iat, iat.addingTimeInterval(-leeway) > now { throw Refusal("it was issued in the future (`iat` \(Self.iso(iat)))") }
    }

    /// The static keys and the key set's current keys.
    private func keys() throws(Refusal) -> TokenKeys {
        let staticKeys = staticKeys.withLockedValue { $0 }
        guard let keySet else { return staticKeys }
        do {
            return TokenKeys(keys: staticKeys.keys + (try keySet.keys()).keys)
        } catch {
            if !staticKeys.isEmpty { return staticKeys }
            throw error
        }
    }

    /// The claims of a payload whose signature is good, checked against the rules.
    private func check(_ payload: Data, now: Date) throws(Refusal) -> Claims {
        let claims: Claims
        do {
            claims = try decoder.decode(Claims.self, from: payload)
        } catch {
            throw Refusal(
                "it lacks a required claim (`\(rules.userClaim)` and `exp`), or one has the wrong type",
                signatureMatched: true)
        }
        return try check(claims, now: now)
    }

    /// `claims`, checked against the rules (a JWT's, or an introspection answer's).
    private func check(_ claims: Claims, now: Date) throws(Refusal) -> Claims {
        try checkTimes(exp: claims.exp.value, nbf: claims.nbf?.value, iat: claims.iat?.value, now: now)
        if let issuer = rules.issuer, claims.iss?.value != issuer {
            throw Refusal("its issuer (`iss`) is \(claims.iss.map { "`\($0.value)`" } ?? "missing"), not `\(issuer)`")
        }
        if let audience = rules.audience {
            guard let aud = claims.aud else { throw Refusal("it has no audience (`aud`); `\(audience)` is required") }
            guard aud.value.contains(audience) else { throw Refusal("its audience (`aud`) does not include `\(audience)`") }
        }
        if let use = claims.tokenUse, use != "access" {
            throw Refusal("its `token_use` is `\(use)`, not `access`: an ID token is not a bearer token")
        }
        if claims.sub.value.isEmpty { throw Refusal("its user claim (`\(rules.userClaim)`) is empty") }
        return claims
    }

    /// The claims of `token` if this verifier verified it before and it has not expired since,
    /// nor have the keys that verified it gone stale: a dictionary lookup, no signature check.
    public func cached(_ token: String, now: Date = Date()) -> Claims? {
        guard let claims = verified.withLockedValue({ $0.value(token) }) else { return nil }
        if claims.exp.value.addingTimeInterval(rules.leeway) > now, keySet?.isUsable ?? true || !staticKeys.withLockedValue(\.isEmpty) {
            return claims
        }
        verified.withLockedValue { $0.remove(token) }
        return nil
    }

    static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
