import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Where the server asks about opaque tokens (RFC 7662), and as whom.
public struct IntrospectionSettings: Sendable, Equatable {
    /// The endpoint; nil: the issuer's discovery document's `introspection_endpoint`.
    public var url: String?
    /// The server's own client id and secret at the issuer.
    public var clientID: String
    public var clientSecret: String
    /// The longest an answer is remembered.
    public var cacheMax: Duration = .seconds(300)

    public init(url: String? = nil, clientID: String, clientSecret: String) {
        self.url = url
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}

/// Opaque access tokens, asked about at the issuer's introspection endpoint (RFC 7662) with the
/// server's own client credentials (HTTP Basic, RFC 7662 §2.1 and RFC 6749 §2.3.1). Each answer
/// is remembered until the token's `exp`, at most `cacheMax`, so a client's next requests cost
/// no round trip; at most `cacheLimit` answers are kept.
final class TokenIntrospector: Sendable {
    typealias Settings = IntrospectionSettings

    let settings: Settings
    private let keySettings: KeySetSettings
    private let client: HTTPClient
    private let decoder: JSONDecoder
    private let discovered = NIOLockedValueBox<String?>(nil)
    private let answers = NIOLockedValueBox(
        BoundedCache<String, (claims: TokenVerifier.Claims, until: Date)>(limit: TokenIntrospector.cacheLimit))
    /// Most answers remembered.
    static let cacheLimit = 131_072

    init(settings: Settings, keySettings: KeySetSettings, client: HTTPClient, decoder: JSONDecoder) {
        self.settings = settings
        self.keySettings = keySettings
        self.client = client
        self.decoder = decoder
    }

    /// The claims of an active opaque token, or why not. The caller checks them as it checks a
    /// JWT's (issuer, audience, times).
    func introspect(_ token: String, now: Date = Date()) async throws(TokenRefusal) -> TokenVerifier.Claims {
        if let known = answers.withLockedValue({ $0.value(token) }), known.until > now { return known.claims }
        let url = try await endpoint()
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        let credentials = Data("\(Self.formEncoded(settings.clientID)):\(Self.formEncoded(settings.clientSecret))".utf8)
        request.headers.add(name: "Authorization", value: "Basic \(credentials.base64EncodedString())")
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "token=\(Self.formEncoded(token))&token_type_hint=access_token"))
        let body: ByteBuffer
        do {
            let response = try await client.execute(request, timeout: .init(keySettings.fetchTimeout))
            guard response.status == .ok else {
                throw TokenRefusal("the issuer's introspection endpoint answered \(response.status.code)", signatureMatched: false)
            }
            body = try await response.body.collect(upTo: KeySetSource.maxBody)
        } catch let refusal as TokenRefusal {
            throw refusal
        } catch {
            throw TokenRefusal("the issuer's introspection endpoint could not be asked: \(error)", signatureMatched: false)
        }
        struct Active: Decodable { var active: Bool }
        guard let active = try? JSONDecoder().decode(Active.self, from: Data(buffer: body)) else {
            throw TokenRefusal("the introspection answer has no `active` (RFC 7662 §2.2)", signatureMatched: false)
        }
        guard active.active else { throw TokenRefusal("the issuer says it is not active (RFC 7662)", signatureMatched: false) }
        let claims: TokenVerifier.Claims
        do {
            claims = try decoder.decode(TokenVerifier.Claims.self, from: Data(buffer: body))
        } catch {
            throw TokenRefusal("the introspection answer lacks the user claim or `exp`, or one has the wrong type")
        }
        let until = min(claims.exp.value, now.addingTimeInterval(KeySetSource.seconds(settings.cacheMax)))
        answers.withLockedValue { $0.insert(token, (claims, until)) }
        return claims
    }

    /// The configured endpoint, or the one the issuer's discovery document names.
    private func endpoint() async throws(TokenRefusal) -> String {
        if let url = settings.url { return url }
        if let url = discovered.withLockedValue({ $0 }) { return url }
        guard let issuer = keySettings.issuer else {
            throw TokenRefusal("no introspection endpoint is configured (`token.introspection.url`)", signatureMatched: false)
        }
        struct Discovery: Decodable { var introspection_endpoint: String? }
        do {
            let response = try await client.execute(
                HTTPClientRequest(url: KeySetSettings.discoveryURL(issuer)), timeout: .init(keySettings.fetchTimeout))
            let body = try await response.body.collect(upTo: KeySetSource.maxBody)
            guard let url = try JSONDecoder().decode(Discovery.self, from: Data(buffer: body)).introspection_endpoint,
                KeySetSettings.problem(url: url, allowFile: false) == nil
            else {
                throw TokenRefusal("the discovery document names no usable `introspection_endpoint`", signatureMatched: false)
            }
            discovered.withLockedValue { $0 = url }
            return url
        } catch let refusal as TokenRefusal {
            throw refusal
        } catch {
            throw TokenRefusal("the discovery document could not be read: \(error)", signatureMatched: false)
        }
    }

    /// `application/x-www-form-urlencoded` of one value.
    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text).replacingOccurrences(of: "%20", with: "+")
    }
}
