public import Foundation
public import JWTKit

/// The claims the server reads from an app's OpenID Connect ID token (OpenID Connect Core 1.0
/// §2), which proves the app's own `idp_login_succeeded`.
public struct IDTokenClaims: Decodable, Sendable, Equatable {
    /// The user, read from the claim `token.user.claim` names.
    public var user: String
    public var exp: ExpirationClaim
    public var nbf: NotBeforeClaim?
    public var iat: IssuedAtClaim?
    public var iss: IssuerClaim?
    public var aud: AudienceClaim?
    /// When the user authenticated (`auth_time`): the login's time.
    public var authTime: Date?
    /// The nonce of the app's authentication request, if it sent one.
    public var nonce: String?
    /// How the user authenticated (`amr`), as the provider says.
    public var amr: [String]?
    /// Amazon Cognito's `token_use` (`id` for an ID token).
    public var tokenUse: String?

    public init(from decoder: any Decoder) throws {
        typealias Key = TokenVerifier.Claims.Key
        let c = try decoder.container(keyedBy: Key.self)
        let userClaim = decoder.userInfo[TokenVerifier.Claims.userClaimKey] as? String ?? "sub"
        user = try c.decode(String.self, forKey: Key(userClaim))
        exp = try c.decode(ExpirationClaim.self, forKey: Key("exp"))
        nbf = try c.decodeIfPresent(NotBeforeClaim.self, forKey: Key("nbf"))
        iat = try c.decodeIfPresent(IssuedAtClaim.self, forKey: Key("iat"))
        iss = try c.decodeIfPresent(IssuerClaim.self, forKey: Key("iss"))
        aud = try c.decodeIfPresent(AudienceClaim.self, forKey: Key("aud"))
        authTime = try c.decodeIfPresent(Double.self, forKey: Key("auth_time")).map { Date(timeIntervalSince1970: $0) }
        nonce = try? c.decodeIfPresent(String.self, forKey: Key("nonce"))
        amr = try? c.decodeIfPresent([String].self, forKey: Key("amr"))
        tokenUse = try? c.decodeIfPresent(String.self, forKey: Key("token_use"))
    }
}
