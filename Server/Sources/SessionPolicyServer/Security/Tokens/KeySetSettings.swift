import Foundation

/// Where an issuer's keys come from and how they are kept fresh: OpenID Connect discovery from
/// the issuer, or a JWKS URL (`https:`, or `file:` for an air-gapped deployment).
public struct KeySetSettings: Sendable, Equatable {
    /// The issuer whose `/.well-known/openid-configuration` names the JWKS (OpenID Connect
    /// Discovery 1.0 §4), when `jwksURL` is nil.
    public var issuer: String?
    /// The JWKS's URL, without discovery.
    public var jwksURL: String?
    /// A PEM file of CA certificates trusted besides the system's, for HTTPS fetches.
    public var caFile: String?
    /// The least and most time a fetched key set is used before it is fetched again, whatever
    /// its `Cache-Control: max-age` says.
    public var cacheMin: Duration = .seconds(300)
    public var cacheMax: Duration = .seconds(3600)
    /// The least time between two fetches prompted by tokens naming a key id the set lacks.
    public var refetchInterval: Duration = .seconds(30)
    /// How long after the last successful fetch the keys are still used while the issuer does
    /// not answer; past it, every token of this issuer is refused.
    public var maxStale: Duration = .seconds(86_400)
    /// The longest one HTTP fetch (discovery or JWKS) may take.
    public var fetchTimeout: Duration = .seconds(5)

    public init(issuer: String? = nil, jwksURL: String? = nil) {
        self.issuer = issuer
        self.jwksURL = jwksURL
    }

    /// Where the keys come from, for logs and `/healthz`.
    public var source: String { jwksURL ?? (issuer.map { Self.discoveryURL($0) } ?? "") }

    /// The discovery document's URL: the issuer without a final `/`, then
    /// `/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4).
    public static func discoveryURL(_ issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// Why `url` may not be fetched from, or nil: HTTPS, or plain HTTP to a loopback address
    /// (a test provider, a sidecar), or `file:` where `allowFile`.
    public static func problem(url: String, allowFile: Bool) -> String? {
        if url.hasPrefix("file:") {
            return allowFile ? nil : "a `file:` URL is taken only for `token.jwks.url`"
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host, !host.isEmpty
        else { return "`\(url)` is not an absolute URL" }
        switch scheme {
        case "https": return nil
        case "http" where ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased()): return nil
        case "http": return "`\(url)` is plain HTTP to a host that is not loopback; keys must come over HTTPS"
        default: return "`\(url)` is neither `https:` nor `file:`"
        }
    }
}
