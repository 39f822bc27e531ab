public import Foundation
public import JWTKit

extension TokenVerifier {
    /// The claims the server reads from a token. `sub` is the user, read from the claim
    /// `token.user.claim` names (`sub` by default).
    public struct Claims: JWTPayload, Equatable {
        /// The user id.
        public var sub: SubjectClaim
        /// The expiry; a token without one is refused.
        public var exp: ExpirationClaim
        /// Not valid before (RFC 7519 §4.1.5).
        public var nbf: NotBeforeClaim?
        /// Issued at (RFC 7519 §4.1.6).
        public var iat: IssuedAtClaim?
        /// The issuer.
        public var iss: IssuerClaim?
        /// The audience, one value or a list.
        public var aud: AudienceClaim?
        /// The client the token was issued to: `azp` (OpenID Connect, Entra ID v2.0),
        /// `client_id` (RFC 9068, Amazon Cognito), `cid` (Okta) or `appid` (Entra ID v1.0), the
        /// first present.
        public var client: String?
        /// Scopes (`scope`, space-separated, or `scp`) and roles (`roles`) the token carries.
        public var scopes: [String] = []
        /// What the token is for, where the issuer says (Amazon Cognito's `token_use`: `access`
        /// or `id`); a token that says anything but `access` is refused as a bearer token.
        public var tokenUse: String?
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
            picture: String? = nil, email: String? = nil, nbf: Date? = nil, iat: Date? = nil, client: String? = nil,
            scopes: [String] = []
        ) {
            self.sub = SubjectClaim(value: sub)
            self.exp = ExpirationClaim(value: exp)
            self.iss = iss.map { IssuerClaim(value: $0) }
            self.aud = aud.map { AudienceClaim(value: $0) }
            self.nickname = nickname
            self.name = name
            self.picture = picture
            self.email = email
            self.nbf = nbf.map { NotBeforeClaim(value: $0) }
            self.iat = iat.map { IssuedAtClaim(value: $0) }
            self.client = client
            self.scopes = scopes
        }

        /// Checked by the verifier, with its leeway.
        public func verify(using algorithm: some JWTAlgorithm) async throws {}

        /// The profile claims a ticket exchange may reveal.
        var profile: [String: String] {
            var out = ["sub": sub.value]
            if let nickname { out["nickname"] = nickname }
            if let name { out["name"] = name }
            if let picture { out["picture"] = picture }
            if let email { out["email"] = email }
            return out
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        /// The `userInfo` key that names the claim to read the user from.
        static let userClaimKey = CodingUserInfoKey(rawValue: "sessionpolicy.userClaim")!

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            let userClaim = decoder.userInfo[Self.userClaimKey] as? String ?? "sub"
            sub = SubjectClaim(value: try c.decode(String.self, forKey: Key(userClaim)))
            exp = try c.decode(ExpirationClaim.self, forKey: Key("exp"))
            nbf = try c.decodeIfPresent(NotBeforeClaim.self, forKey: Key("nbf"))
            iat = try c.decodeIfPresent(IssuedAtClaim.self, forKey: Key("iat"))
            iss = try c.decodeIfPresent(IssuerClaim.self, forKey: Key("iss"))
            aud = try c.decodeIfPresent(AudienceClaim.self, forKey: Key("aud"))
            client = ["azp", "client_id", "cid", "appid"].lazy.compactMap { try? c.decodeIfPresent(String.self, forKey: Key($0)) }.first
            let scope = (try? c.decodeIfPresent(String.self, forKey: Key("scope"))) ?? nil
            let scp =
                (try? c.decodeIfPresent([String].self, forKey: Key("scp")))
                ?? ((try? c.decodeIfPresent(String.self, forKey: Key("scp"))) ?? nil).map { $0.split(separator: " ").map(String.init) }
            let roles = (try? c.decodeIfPresent([String].self, forKey: Key("roles"))) ?? nil
            scopes = (scope?.split(separator: " ").map(String.init) ?? []) + (scp ?? []) + (roles ?? [])
            tokenUse = try? c.decodeIfPresent(String.self, forKey: Key("token_use"))
            nickname = try? c.decodeIfPresent(String.self, forKey: Key("nickname"))
            name = try? c.decodeIfPresent(String.self, forKey: Key("name"))
            picture = try? c.decodeIfPresent(String.self, forKey: Key("picture"))
            email = try? c.decodeIfPresent(String.self, forKey: Key("email"))
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(sub, forKey: Key("sub"))
            try c.encode(exp, forKey: Key("exp"))
            try c.encodeIfPresent(nbf, forKey: Key("nbf"))
            try c.encodeIfPresent(iat, forKey: Key("iat"))
            try c.encodeIfPresent(iss, forKey: Key("iss"))
            try c.encodeIfPresent(aud, forKey: Key("aud"))
            try c.encodeIfPresent(client, forKey: Key("azp"))
            if !scopes.isEmpty { try c.encode(scopes.joined(separator: " "), forKey: Key("scope")) }
            try c.encodeIfPresent(tokenUse, forKey: Key("token_use"))
            try c.encodeIfPresent(nickname, forKey: Key("nickname"))
            try c.encodeIfPresent(name, forKey: Key("name"))
            try c.encodeIfPresent(picture, forKey: Key("picture"))
            try c.encodeIfPresent(email, forKey: Key("email"))
        }
    }
}
