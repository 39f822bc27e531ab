/// The configuration keys of the server, in one table. Everything else follows from it: the
/// options of `policyctl-serve` and their `--help`, the `SESSIONPOLICY_*` environment
/// variables, the keys of the JSON file, the table of docs/server-configuration.md (a test holds it equal), which
/// values are secret, and where an error says a bad value came from.
extension ServerConfiguration {
    /// One configuration key: its name (dot-separated, as in the JSON file), the type of its
    /// value, its default, what it sets, whether it is a secret, and the command-line option that
    /// sets it in `policyctl-serve`.
    public struct Key: Sendable, Equatable {
        /// The type of a value, as the three sources give it. A list is repeatable on the command
        /// line (`--pool A --pool B`), comma-separated in the environment and an array in the file.
        public enum ValueType: Sendable, Equatable {
            /// Text: a word, a path, a URL, a duration such as `5m`.
            case string
            /// A whole number.
            case int
            /// A number.
            case double
            /// `true` or `false`; on the command line a flag, which sets `true`.
            case bool
            /// A list of strings.
            case list
        }

        /// How the command line spells a key.
        public enum CommandLineOption: Sendable, Equatable {
            /// `--` and the name, dots as `-`: `store.timeout` is `--store-timeout`.
            case fromName
            /// An option of another name, such as `--pool` for `pools`.
            case named(String)
            /// No option: the key is set only in the environment or the file (a secret, a PEM).
            case absent
        }

        /// The key, for example `token.issuer`; its environment variable is `SESSIONPOLICY_TOKEN_ISSUER`.
        public let name: String
        /// The type of its value.
        public let type: ValueType
        /// The default, as one would write it (`5s`, `8080`); nil when unset by default.
        public let defaultValue: String?
        /// What the key sets, one line without a final period.
        public let help: String
        /// Whether the value is a secret: never printed, never logged.
        public let isSecret: Bool
        /// The `policyctl-serve` option, such as `--host`, if one sets the key.
        public let option: String?

        /// A key of the table.
        public init(
            _ name: String, _ type: ValueType, default defaultValue: String?, _ help: String, secret: Bool = false,
            option: CommandLineOption = .fromName
        ) {
            self.name = name
            self.type = type
            self.defaultValue = defaultValue
            self.help = help
            self.isSecret = secret
            switch option {
            case .fromName: self.option = "--" + name.replacingOccurrences(of: ".", with: "-")
            case let .named(spelled): self.option = spelled
            case .absent: self.option = nil
            }
        }

        /// Whether the command line takes the option several times (a list).
        public var isRepeatable: Bool { type == .list }

        /// The environment variable that sets this key: `SESSIONPOLICY_` and the name in
        /// capitals, dots as `_`.
        public var environmentVariable: String {
            "SESSIONPOLICY_" + name.uppercased().replacingOccurrences(of: ".", with: "_")
        }

        /// The key's path in the JSON file: `{"store": {"timeout": "5s"}}` sets `store.timeout`.
        public var components: [String] { name.split(separator: ".").map(String.init) }
    }

    /// Every key the server reads, in the documented table's order. A new key is one line here and its
    /// use in `init(config:)`.
    public static let keys: [Key] = [
        Key("host", .string, default: "127.0.0.1", "Address to listen on"),
        Key("port", .int, default: "8080", "Port to listen on; 0 picks a free one (the first line of output says which)"),
        Key("policies", .string, default: "policies", "Directory of policy files"),
        Key(
            "storage", .string, default: "sqlite:sessionpolicy.sqlite",
            "Session storage: `sqlite:PATH` or `postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=require]`", secret: true),
        Key(
            "storage.migrations", .string, default: "auto",
            "`auto`: the server migrates the store's schema at start; `manual`: it refuses to start until `policyctl-serve "
                + "migrate` has"),
        Key("hs256.secret", .string, default: nil, "HS256 secret of user tokens, at least 32 bytes", secret: true, option: .absent),
        Key("hs256.secret.file", .string, default: nil, "File holding the HS256 secret of user tokens (wins over `hs256.secret`)"),
        Key("es256.public.key", .string, default: nil, "ES256 public key of user tokens, the PEM", option: .absent),
        Key(
            "es256.public.key.file", .string, default: nil,
            "PEM file of the ES256 public key of user tokens (wins over `es256.public.key`)", option: .named("--es256-public-key")),
        Key(
            "service.hs256.secret", .string, default: nil,
            "HS256 secret of service tokens, the back end's credential, at least 32 bytes", secret: true, option: .absent),
        Key(
            "service.hs256.secret.file", .string, default: nil,
            "File holding the HS256 secret of service tokens (wins over `service.hs256.secret`)"),
        Key("service.es256.public.key", .string, default: nil, "ES256 public key of service tokens, the PEM", option: .absent),
        Key(
            "service.es256.public.key.file", .string, default: nil,
            "PEM file of the ES256 public key of service tokens (wins over `service.es256.public.key`)",
            option: .named("--service-es256-public-key")),
        Key(
            "signing.key", .string, default: nil,
            "PEM of the P-256 private key the server signs each policy's machine with, served at "
                + "`GET /v1/policies/{policy}/machine` (without one, that route answers 404)", secret: true, option: .absent),
        Key(
            "signing.key.file", .string, default: nil, "PEM file of the machine signing key (wins over `signing.key`)",
            option: .named("--signing-key")),
        Key(
            "signing.previous.key", .string, default: nil,
            "During a rotation of the signing key, PEM of the key it replaces: it signs for apps that pin only it or name "
                + "no key", secret: true, option: .absent),
        Key(
            "signing.previous.key.file", .string, default: nil,
            "PEM file of the previous machine signing key (wins over `signing.previous.key`); while it does not exist, no "
                + "rotation is under way", option: .named("--signing-previous-key")),
        Key("machine.validity", .string, default: "7d", "How long a signed machine is valid, e.g. `7d`; signed again at half"),
        Key(
            "decision.log.retention", .string, default: "90d",
            "How long the decision log keeps each decision, e.g. `90d`; `0` keeps no decision log"),
        Key("decision.log", .string, default: nil, "Also write every decision as a JSON line to `stdout` or this file"),
        Key("decision.log.hash.users", .bool, default: "false", "In those lines, write the user id as its SHA-256"),
        Key(
            "token.issuer", .string, default: nil,
            "Required `iss` of tokens (not checked when unset); without a static user key or `token.jwks.url`, the "
                + "tokens' keys come from its OpenID Connect discovery document"),
        Key("token.audience", .string, default: nil, "Required `aud` of tokens, or one of its values (not checked when unset)"),
        Key(
            "token.jwks.url", .string, default: nil,
            "The issuer's key set (JWKS) instead of discovery: an `https:` URL (`http:` to a loopback address only) or "
                + "`file:PATH`"),
        Key("token.ca.file", .string, default: nil, "PEM file of CA certificates trusted besides the system's when fetching keys"),
        Key("token.leeway", .string, default: "60s", "How far a token's `exp`, `nbf` and `iat` may be off (clocks differ), e.g. `60s`"),
        Key("token.user.claim", .string, default: "sub", "The claim that names the user (`oid` on Microsoft Entra ID)"),
        Key(
            "token.jwks.cache.min", .string, default: "5m",
            "Least time a fetched key set is used before the next fetch, whatever its `Cache-Control` says"),
        Key("token.jwks.cache.max", .string, default: "1h", "Most time a fetched key set is used before the next fetch"),
        Key(
            "token.jwks.refetch.interval", .string, default: "30s",
            "Least time between fetches of the key set prompted by tokens naming a key id (`kid`) it lacks"),
        Key(
            "token.jwks.max.stale", .string, default: "24h",
            "While the issuer does not answer, its last keys verify until this old; then its tokens are refused"),
        Key("token.fetch.timeout", .string, default: "5s", "Longest time one fetch of the discovery document or the key set takes"),
        Key(
            "service.clients", .list, default: nil,
            "A client id whose tokens are the back end's (`azp`, `client_id` or `cid` of a token that verifies)",
            option: .named("--service-client")),
        Key(
            "service.scopes", .list, default: nil, "A scope or role whose tokens are the back end's (`scope`, `scp` or `roles`)",
            option: .named("--service-scope")),
        Key(
            "token.extra.issuers", .list, default: nil,
            "Another issuer whose tokens are taken, `ISSUER` or `ISSUER#AUDIENCE` (staging beside production), its keys "
                + "from its discovery document",
            option: .named("--token-extra-issuer")),
        Key(
            "token.introspection.url", .string, default: nil,
            "The issuer's RFC 7662 introspection endpoint for opaque tokens (default: its discovery document's)"),
        Key(
            "token.introspection.client.id", .string, default: nil,
            "The server's client id at the issuer, to introspect opaque tokens (with its secret)"),
        Key(
            "token.introspection.client.secret", .string, default: nil, "The server's client secret at the issuer",
            secret: true, option: .absent),
        Key(
            "token.introspection.client.secret.file", .string, default: nil,
            "File holding the server's client secret (wins over `token.introspection.client.secret`)"),
        Key(
            "token.introspection.cache.max", .string, default: "5m",
            "Longest an introspection answer is remembered (never past the token's `exp`), e.g. `5m`"),
        Key(
            "id.token.audience", .list, default: nil,
            "An app's client id: a user token may report `idp_login_succeeded` with an ID token issued to it",
            option: .named("--id-token-audience")),
        Key(
            "id.token.max.age", .string, default: "10m",
            "How long after its `auth_time` an app's ID token still proves a login, e.g. `10m`"),
        Key(
            "pools", .list, default: nil, "A user pool and its secret, `ID:SECRET` (a secret of 16 bytes or more)", secret: true,
            option: .named("--pool")),
        Key(
            "apps", .list, default: nil,
            "An app id and the policy that decides its detections, `APP:POLICY` (an app not listed cannot detect)",
            option: .named("--app")),
        Key("reload.interval", .double, default: "2", "Seconds between checks of the policy directory (SIGHUP reloads at once)"),
        Key("max.body", .int, default: "65536", "Largest request body in bytes, except batches"),
        Key("max.batch.body", .int, default: "16777216", "Largest batch request body in bytes"),
        Key("max.batch.items", .int, default: "50000", "Most items in one batch"),
        Key("clock.skew", .string, default: "5m", "How far in the server's future an event may be dated, e.g. `5m`"),
        Key("clock.max.delay", .string, default: "7d", "How long after its time an event may still arrive, e.g. `7d`"),
        Key("ticket.lifetime", .string, default: "60s", "How long a detection ticket works, e.g. `60s`, `2m`"),
        Key(
            "detect.per.client", .string, default: "60/20",
            "Detections allowed per client address per minute, and the burst, `N/BURST`"),
        Key("detect.per.device", .string, default: "10/5", "Detections allowed per device id per minute, and the burst, `N/BURST`"),
        Key(
            "store.timeout", .string, default: "5s",
            "Longest wait on the store for a connection, one statement or a lock (PostgreSQL's `statement_timeout`, "
                + "SQLite's busy timeout), e.g. `5s`; past it a request is answered 503 `store-unavailable`"),
        Key(
            "store.connect.timeout", .string, default: "5s",
            "Longest time to open one PostgreSQL connection (TCP, TLS, authentication), e.g. `5s`"),
        Key(
            "store.pool.max", .int, default: "16",
            "Most PostgreSQL connections the server opens: size the database's `max_connections` for every server's"),
        Key(
            "health.max.write.wait", .string, default: "30s",
            "`GET /healthz` answers 503 while a session write has waited longer than this (a wedged writer), e.g. `30s`"),
        Key(
            "http.request.timeout", .string, default: "30s",
            "Close a connection whose request is not answered this long after its first byte (headers or a body sent "
                + "slowly), e.g. `30s`"),
        Key("http.idle.timeout", .string, default: "60s", "Close a connection idle this long between requests, e.g. `60s`"),
        Key(
            "http.max.connections", .int, default: "10000",
            "Most connections held open at once (more wait in the listen backlog); lowered at start to the open-file "
                + "limit less 256"),
        Key("log.level", .string, default: "info", "Log level: `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`"),
        Key(
            "log.access", .bool, default: "false",
            "Log one line per request (method, route, status, duration, actor, request id), label `sessionpolicy.access`"),
        Key(
            "admin.port", .int, default: nil,
            "Serve `/healthz` and `/metrics` on this port only, not on `port`, so they need not be public; 0 picks a free one"),
        Key("admin.host", .string, default: nil, "Address the admin listener listens on (default: `host`)"),
        Key(
            "tracing.otlp.endpoint", .string, default: nil,
            "Send OpenTelemetry traces to this OTLP/HTTP collector (its base URL, e.g. `http://otel-collector:4318`; spans "
                + "go to `/v1/traces`); tracing is off when unset"),
        Key("tracing.export.delay", .string, default: "5s", "Longest a finished span waits before it is sent in a batch, e.g. `5s`"),
        Key("tracing.user.ids", .bool, default: "false", "Spans carry the user's id (`enduser.id`); off, no span names a user"),
    ]

    /// The key named `name`, if the table has one.
    public static func key(_ name: String) -> Key? { keys.first { $0.name == name } }
}
