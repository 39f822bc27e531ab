import Foundation
import SessionPolicy

/// An app's own IdP login, proved by its OpenID Connect ID token (`"id_token"` beside the
/// `idp_login_succeeded` event): a user token may then report the login, which otherwise only
/// the back end may (`EventTrust`).
extension Server {
    /// The login the ID token proves: its time (`auth_time`) and its `amr`. Refused (403, nothing
    /// stored) unless the event is an `idp_login_succeeded`, the token verifies with the issuer's
    /// keys for one of the apps' client ids (`id.token.audience`), names the path's user, was
    /// issued for the request's `nonce` when one is sent, logged the user in within
    /// `id.token.max.age` (and not beyond `clock.skew` in the server's future), and has not been
    /// used before.
    func provenLogin(
        _ token: String, nonce: String?, event: Event, user: String
    ) async throws(APIError) -> (
        time: Timestamp, amr: [String]?
    ) {
        func refuse(_ reason: String, help: String = "send the ID token the app received at this login") -> APIError {
            metrics.refused("id_token_refused")
            return APIError(.forbidden, .forbidden, "the ID token does not prove this login: \(reason)", help: help)
        }
        guard event.kind == .idpLoginSucceeded else {
            throw refuse(
                "an `id_token` proves an `idp_login_succeeded`, not a `\(event.kind.rawValue)`",
                help: "leave `id_token` out of other events")
        }
        guard !configuration.idTokenAudiences.isEmpty else {
            throw refuse(
                "the server takes no ID tokens", help: "list the apps' client ids with `id.token.audience` (`--id-token-audience`)")
        }
        let claims: IDTokenClaims
        do {
            claims = try await verifier.verifyIDToken(token, audiences: configuration.idTokenAudiences)
        } catch {
            throw refuse("it is not valid: \(error)")
        }
        guard claims.user == user else {
            throw refuse("it is the ID token of `\(claims.user)`, not of `\(user)`", help: "send it to that user's session")
        }
        if let nonce, claims.nonce != nonce {
            throw refuse("its `nonce` is not the request's", help: "send the nonce of the authentication request it answers")
        }
        let now = clock()
        let login = Timestamp(millisecondsSinceEpoch: Int64((claims.authTime ?? .distantPast).timeIntervalSince1970 * 1000))
        if login > now.adding(configuration.clockSkew) {
            throw refuse("its `auth_time` \(login) is in the server's future (\(now))")
        }
        if login < now.adding(TimeSpan(seconds: -configuration.idTokenMaxAge.seconds)) {
            throw refuse(
                "its `auth_time` \(login) is more than \(configuration.idTokenMaxAge) before the server's clock (\(now))",
                help: "report the login as it happens; the allowed age is `id.token.max.age`")
        }
        let hash = Secrets.hash(ticket: token)
        let expires = Timestamp(millisecondsSinceEpoch: Int64(claims.exp.value.timeIntervalSince1970 * 1000) + 60_000)
        let first: Bool
        do {
            first = try await store.useIDToken(hash: hash, expiresAt: expires)
        } catch {
            throw storeFailed("use_id_token", error)
        }
        guard first else { throw refuse("it was used before", help: "an ID token proves one login; sign in again") }
        return (login, claims.amr)
    }
}
