import Foundation
import SessionPolicy

/// The keys that say where tokens' keys come from and what tokens must carry.
extension ServerConfiguration {
    /// The issuer's key set (where from, how kept fresh), the token rules and the back end's
    /// client ids and scopes.
    mutating func readTokenSources(_ config: KeyReader) throws(ConfigurationError) {
        func duration(_ name: String) throws(ConfigurationError) -> Duration? {
            guard let v = config.string(name) else { return nil }
            guard case let .success(span) = TimeSpan.parse(v), span.seconds > 0 else {
                throw ConfigurationError(
                    "`\(name)` is `\(v)`, not a duration (set by \(config.sources(name)))", help: "write for example `30s`, `5m` or `1h`")
            }
            return .seconds(span.seconds)
        }
        if let v = config.string("token.leeway") {
            guard case let .success(span) = TimeSpan.parse(v) else {
                throw ConfigurationError(
                    "`token.leeway` is `\(v)`, not a duration (set by \(config.sources("token.leeway")))",
                    help: "write for example `60s`; `0s` allows no clock difference")
            }
            tokenLeeway = .seconds(span.seconds)
        }
        if let v = config.string("token.user.claim") {
            guard !v.isEmpty else {
                throw ConfigurationError("`token.user.claim` is empty", help: "give a claim name such as `sub` or `oid`")
            }
            tokenUserClaim = v
        }
        serviceClients = config.list("service.clients") ?? []
        serviceScopes = config.list("service.scopes") ?? []
        idTokenAudiences = config.list("id.token.audience") ?? []
        extraIssuers = []
        for entry in config.list("token.extra.issuers") ?? [] {
            // An issuer has no fragment (OpenID Connect Discovery 1.0 §3), so `#` can part the audience.
            let parts = entry.split(separator: "#", maxSplits: 1).map(String.init)
            let extra = ExtraIssuer(issuer: parts.first ?? "", audience: parts.count == 2 && !parts[1].isEmpty ? parts[1] : nil)
            if let problem = KeySetSettings.problem(url: KeySetSettings.discoveryURL(extra.issuer), allowFile: false) {
                throw ConfigurationError(
                    "\(problem) (`token.extra.issuers`, set by \(config.sources("token.extra.issuers")))",
                    help: "write `https://ISSUER` or `https://ISSUER#AUDIENCE`")
            }
            guard extra.issuer != tokenIssuer, !extraIssuers.contains(where: { $0.issuer == extra.issuer }) else {
                throw ConfigurationError(
                    "the issuer `\(extra.issuer)` is given twice (`token.issuer`, `token.extra.issuers`)",
                    help: "give each issuer once")
            }
            extraIssuers.append(extra)
        }
        introspectionURL = config.string("token.introspection.url")
        if let url = introspectionURL, let problem = KeySetSettings.problem(url: url, allowFile: false) {
            throw ConfigurationError(
                "\(problem) (`token.introspection.url`, set by \(config.sources("token.introspection.url")))",
                help: "give the issuer's `https://` introspection endpoint")
        }
        introspectionClientID = config.string("token.introspection.client.id")
        if let path = config.string("token.introspection.client.secret.file") {
            introspectionClientSecret = try Self.read(path, what: "introspection client secret")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            introspectionClientSecret = config.string("token.introspection.client.secret")
        }
        if let secret = introspectionClientSecret, secret.isEmpty || secret.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            throw ConfigurationError(
                "the introspection client secret (set by \(config.sources("token.introspection.client.secret"))) is empty or "
                    + "holds a line break or another control character",
                help: "give the secret the issuer shows for the server's client, on one line")
        }
        if let v = try duration("token.introspection.cache.max") { introspectionCacheMax = v }
        if let v = try duration("id.token.max.age") { idTokenMaxAge = TimeSpan(seconds: v.components.seconds) }
        var settings = KeySetSettings(jwksURL: config.string("token.jwks.url"))
        settings.caFile = config.string("token.ca.file")
        if let v = try duration("token.jwks.cache.min") { settings.cacheMin = v }
        if let v = try duration("token.jwks.cache.max") { settings.cacheMax = v }
        if let v = try duration("token.jwks.refetch.interval") { settings.refetchInterval = v }
        if let v = try duration("token.jwks.max.stale") { settings.maxStale = v }
        if let v = try duration("token.fetch.timeout") { settings.fetchTimeout = v }
        guard settings.cacheMin <= settings.cacheMax else {
            throw ConfigurationError(
                "`token.jwks.cache.min` is longer than `token.jwks.cache.max`", help: "the least time must not pass the most")
        }
        keySet = settings
        guard let used = keySetSource else { return }
        let (name, url) = used.jwksURL.map { ("token.jwks.url", $0) } ?? ("token.issuer", KeySetSettings.discoveryURL(used.issuer ?? ""))
        if let problem = KeySetSettings.problem(url: url, allowFile: used.jwksURL != nil) {
            throw ConfigurationError(
                "\(problem) (`\(name)`, set by \(config.sources(name)))",
                help: "give the issuer's `https://` URL; `http://` is taken for 127.0.0.1, ::1 and localhost only")
        }
    }

    /// The issuer's key set the server fetches, if any: `token.jwks.url`, or else the issuer's
    /// discovery document when `token.issuer` is set and no static user key is.
    public var keySetSource: KeySetSettings? {
        let discovery = tokenIssuer != nil && hs256Secret == nil && es256PublicKeyPEM == nil
        guard keySet.jwksURL != nil || discovery else { return nil }
        var settings = keySet
        settings.issuer = tokenIssuer
        return settings
    }
}
