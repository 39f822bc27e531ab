public import SessionPolicy

/// Everything `policyctl serve` can be told; the defaults serve `policies/` on 127.0.0.1:8080
/// with an SQLite file. Read it from the command line, the environment and a file with
/// `load(commandLine:environment:configFile:)` (the keys are `keys`, one table), or build it in code.
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (the log and `policyctl serve` print it).
    public var port = 8080
    /// The directory the policies load from.
    public var policyDirectory = "policies"
    /// Where session states, device sessions and tickets are kept.
    public var storage = StorageURL.default
    /// Whether the server migrates the store's schema at start (`storage.migrations` `auto`);
    /// when false (`manual`) it refuses a store that needs a migration.
    public var migratesAtStart = true
    /// The HS256 secret user tokens may be signed with.
    public var hs256Secret: String?
    /// The ES256 public key (PEM) user tokens may be signed with.
    public var es256PublicKeyPEM: String?
    /// The `iss` user tokens must carry, if set.
    public var tokenIssuer: String?
    /// The `aud` user tokens must include, if set.
    public var tokenAudience: String?
    /// The issuer's key set: a JWKS URL, the trust roots and the refresh bounds; the keys come
    /// from it (or from discovery) as `keySetSource` says.
    public var keySet = KeySetSettings()
    /// How far a token's `exp`, `nbf` and `iat` may be off (clocks differ).
    public var tokenLeeway: Duration = .seconds(60)
    /// The claim that names the user (`sub`; Microsoft Entra ID deployments use `oid`).
    public var tokenUserClaim = "sub"
    /// Client ids whose tokens are the back end's (`azp`, `client_id` or `cid`).
    public var serviceClients: [String] = []
    /// Scopes or roles whose tokens are the back end's (`scope`, `scp` or `roles`).
    public var serviceScopes: [String] = []
    /// Another issuer whose tokens are taken (staging beside production), with its own audience
    /// and keys (from its discovery document).
    public struct ExtraIssuer: Sendable, Equatable {
        public var issuer: String
        /// The value `aud` must be or include, if any.
        public var audience: String?
        public init(issuer: String, audience: String? = nil) {
            self.issuer = issuer
            self.audience = audience
        }
    }
    /// The other issuers (`token.extra.issuers`).
    public var extraIssuers: [ExtraIssuer] = []
    /// The introspection endpoint of opaque tokens (RFC 7662); nil: the discovery document's.
    public var introspectionURL: String?
    /// The server's client id and secret at the issuer, to introspect opaque tokens; both or
    /// neither.
    public var introspectionClientID: String?
    public var introspectionClientSecret: String?
    /// The longest an introspection answer is remembered (never past the token's `exp`).
    public var introspectionCacheMax: Duration = .seconds(300)

    /// How the server introspects opaque tokens, when its client id and secret are set.
    public var introspection: IntrospectionSettings? {
        guard let id = introspectionClientID, let secret = introspectionClientSecret else { return nil }
        var settings = IntrospectionSettings(url: introspectionURL, clientID: id, clientSecret: secret)
        settings.cacheMax = introspectionCacheMax
        return settings
    }
    /// The apps' client ids an ID token proving an app's own login must be issued to.
    public var idTokenAudiences: [String] = []
    /// How long after its `auth_time` an ID token still proves a login.
    public var idTokenMaxAge = TimeSpan(seconds: 600)
    /// The files the token keys were read from (`*.file` keys): read again on SIGHUP, so keys
    /// rotate without a restart.
    public struct KeyFiles: Sendable, Equatable {
        public var hs256Secret: String?
        public var es256PublicKey: String?
        public var serviceHS256Secret: String?
        public var serviceES256PublicKey: String?
        public var signingKey: String?
        public var signingPreviousKey: String?
        public init() {}
    }
    public var keyFiles = KeyFiles()
    /// The HS256 secret service tokens (the back end's credential) may be signed with.
    public var serviceHS256Secret: String?
    /// The ES256 public key (PEM) service tokens may be signed with.
    public var serviceES256PublicKeyPEM: String?
    /// The P-256 private key (PEM) the server signs each policy's machine with
    /// (`GET /v1/policies/{policy}/machine`); without one, that route answers 404.
    public var signingKeyPEM: String?
    /// During a rotation, the signing key it replaces (docs/signed-machines.md#rotating-the-signing-key).
    public var signingPreviousKeyPEM: String?
    /// How long a signed machine is valid; the server signs it again when half of it has passed.
    public var machineValidity = TimeSpan(seconds: 7 * 86_400)
    /// How long the decision log keeps a record; 0 keeps no decision log.
    public var decisionLogRetention = TimeSpan(seconds: 90 * 86_400)
    /// Where every decision is also written as one JSON line: `stdout`, a file's path, or nil.
    public var decisionLogStream: String?
    /// Whether the streamed lines carry the user id hashed (SHA-256) instead of as it is.
    public var decisionLogHashUsers = false
    /// How far in the server's future an event may be dated (the devices' clock error).
    public var clockSkew = TimeSpan(seconds: 300)
    /// How late an event may be delivered: dated at most this long before the server receives it
    /// (an offline client's events arrive when it is back online).
    public var maxEventDelay = TimeSpan(seconds: 7 * 86_400)
    /// User pools and their secrets (the secret a back end shows to exchange a ticket).
    public var pools: [String: String] = [:]
    /// The policy that decides each app's detections, by app id: the server decides which policy
    /// judges a detection, never the caller. An app not listed cannot detect.
    public var apps: [String: String] = [:]
    /// How often the policy directory is checked for changes (SIGHUP reloads at once).
    public var reloadInterval: Duration = .seconds(2)
    /// The largest request body, except batches.
    public var maxBodyBytes = 64 * 1024
    /// The largest batch request body.
    public var maxBatchBytes = 16 * 1024 * 1024
    /// The most items in one batch.
    public var maxBatchItems = 50_000
    /// How long a detection ticket works.
    public var ticketLifetime: Duration = .seconds(60)
    /// The longest a device session lives (the creating token's expiry may end it sooner).
    public var deviceSessionLifetime: Duration = .seconds(30 * 86_400)
    /// Detections per minute allowed per client address, and the burst.
    public var detectPerClient = RateLimit(perMinute: 60, burst: 20)
    /// Detections per minute allowed per device id, and the burst.
    public var detectPerDevice = RateLimit(perMinute: 10, burst: 5)

    /// A rate limit: sustained requests per minute and how many may come at once.
    public struct RateLimit: Sendable, Equatable {
        public var perMinute: Int
        public var burst: Int
        public init(perMinute: Int, burst: Int) {
            self.perMinute = perMinute
            self.burst = burst
        }
    }

    /// The longest the server waits on the store for one thing: a connection from the pool, one
    /// statement (PostgreSQL's `statement_timeout` too), SQLite's lock (its busy timeout). A
    /// request whose wait passes it is answered 503 `store-unavailable`.
    public var storeTimeout: Duration = .seconds(5)
    /// The longest opening one PostgreSQL connection may take (TCP, TLS, authentication).
    public var storeConnectTimeout: Duration = .seconds(5)
    /// The most PostgreSQL connections the server opens (its pool's size).
    public var storePoolMax = 16
    /// `/healthz` answers 503 while a stateful write has waited longer than this (a wedged writer).
    public var healthMaxWriteWait: Duration = .seconds(30)
    /// A connection is closed when a request has not been answered this long after its first
    /// byte arrived: headers or a body that come too slowly (a slowloris) end here.
    public var httpRequestTimeout: Duration = .seconds(30)
    /// A connection with no request under way is closed after this long (idle keep-alive).
    public var httpIdleTimeout: Duration = .seconds(60)
    /// The most connections the server holds open at once; past it, new ones wait in the
    /// listen backlog. Lowered at start to what the open-file limit allows.
    public var httpMaxConnections = 10_000

    /// The log level `policyctl serve` logs at (`trace` ... `critical`); the library itself takes
    /// the embedder's `Logger` and does not read it.
    public var logLevel = "info"
    /// Whether every request is logged (`log.access`): method, route, status, duration, actor, request id.
    public var accessLog = false

    /// The port of a listener of its own for `/healthz` and `/metrics` (`admin.port`), which
    /// `port` then does not serve; nil: `port` serves them.
    public var adminPort: Int?
    /// The admin listener's address (`admin.host`); nil: `host`.
    public var adminHost: String?
    /// The OTLP/HTTP collector that receives the server's traces (`tracing.otlp.endpoint`), its
    /// base URL (spans go to `/v1/traces` under it); nil: no tracing.
    public var tracingEndpoint: String?
    /// The longest a finished span waits before it is sent (`tracing.export.delay`).
    public var tracingExportDelay: Duration = .seconds(5)
    /// Whether spans carry the user's id as `enduser.id` (`tracing.user.ids`).
    public var tracingUserIDs = false

    /// The defaults.
    public init() {}
}
