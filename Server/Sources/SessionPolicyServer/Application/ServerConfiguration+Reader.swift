public import Configuration
import Foundation
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyYAML
import SystemPackage

/// The configuration keys of the server, in one table: `policyctl serve` and an embedder read the
/// same keys, from the command line, `SESSIONPOLICY_*` environment variables and a JSON file.
extension ServerConfiguration {
    /// One configuration key: its name (dot-separated, as in the JSON file), the command-line
    /// option that sets it in `policyctl serve`, and whether it is a secret (never logged).
    public struct Key: Sendable {
        /// The key, for example `token.issuer`; its environment variable is `SESSIONPOLICY_TOKEN_ISSUER`.
        public let name: String
        /// The `policyctl serve` option, if one sets it.
        public let option: String?
        /// Whether the value is a secret.
        public let isSecret: Bool

        /// The environment variable that sets this key.
        public var environmentVariable: String {
            "SESSIONPOLICY_" + name.uppercased().replacingOccurrences(of: ".", with: "_")
        }
    }

    /// Every key the server reads, in the README's order.
    public static let keys: [Key] = [
        Key(name: "host", option: "--host", isSecret: false),
        Key(name: "port", option: "--port", isSecret: false),
        Key(name: "policies", option: "--policies", isSecret: false),
        Key(name: "storage", option: "--storage", isSecret: true),
        Key(name: "hs256.secret", option: nil, isSecret: true),
        Key(name: "hs256.secret.file", option: "--hs256-secret-file", isSecret: false),
        Key(name: "es256.public.key", option: nil, isSecret: false),
        Key(name: "es256.public.key.file", option: "--es256-public-key", isSecret: false),
        Key(name: "service.hs256.secret", option: nil, isSecret: true),
        Key(name: "service.hs256.secret.file", option: "--service-hs256-secret-file", isSecret: false),
        Key(name: "service.es256.public.key", option: nil, isSecret: false),
        Key(name: "service.es256.public.key.file", option: "--service-es256-public-key", isSecret: false),
        Key(name: "signing.key", option: nil, isSecret: true),
        Key(name: "signing.key.file", option: "--signing-key", isSecret: false),
        Key(name: "machine.validity", option: "--machine-validity", isSecret: false),
        Key(name: "decision.log.retention", option: "--decision-log-retention", isSecret: false),
        Key(name: "decision.log", option: "--decision-log", isSecret: false),
        Key(name: "decision.log.hash.users", option: "--decision-log-hash-users", isSecret: false),
        Key(name: "token.issuer", option: "--token-issuer", isSecret: false),
        Key(name: "token.audience", option: "--token-audience", isSecret: false),
        Key(name: "pools", option: "--pool", isSecret: true),
        Key(name: "apps", option: "--app", isSecret: false),
        Key(name: "reload.interval", option: "--reload-interval", isSecret: false),
        Key(name: "max.body", option: "--max-body", isSecret: false),
        Key(name: "max.batch.body", option: "--max-batch-body", isSecret: false),
        Key(name: "max.batch.items", option: "--max-batch-items", isSecret: false),
        Key(name: "clock.skew", option: "--clock-skew", isSecret: false),
        Key(name: "clock.max.delay", option: "--clock-max-delay", isSecret: false),
        Key(name: "ticket.lifetime", option: "--ticket-lifetime", isSecret: false),
        Key(name: "detect.per.client", option: "--detect-per-client", isSecret: false),
        Key(name: "detect.per.device", option: "--detect-per-device", isSecret: false),
        Key(name: "store.timeout", option: "--store-timeout", isSecret: false),
        Key(name: "store.connect.timeout", option: "--store-connect-timeout", isSecret: false),
        Key(name: "health.max.write.wait", option: "--health-max-write-wait", isSecret: false),
        Key(name: "http.request.timeout", option: "--http-request-timeout", isSecret: false),
        Key(name: "http.idle.timeout", option: "--http-idle-timeout", isSecret: false),
        Key(name: "http.max.connections", option: "--http-max-connections", isSecret: false),
        Key(name: "log.level", option: "--log-level", isSecret: false),
    ]

    /// Reads the configuration as `policyctl serve` does: `commandLine` values first (keys as
    /// in `keys`), then the `SESSIONPOLICY_*` variables of `environment`, then the JSON file named
    /// by `configFile` (or `SESSIONPOLICY_CONFIG`), whose nesting spells the keys
    /// (`{"token": {"issuer": "..."}}`). Unset keys keep their defaults.
    public static func load(
        commandLine: [String: ConfigContent] = [:], environment: [String: String], configFile: String? = nil
    ) async throws(ConfigurationError) -> ServerConfiguration {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (name, content) in commandLine {
            values[AbsoluteConfigKey(name.split(separator: ".").map(String.init))] = ConfigValue(
                content, isSecret: keys.first { $0.name == name }?.isSecret ?? false)
        }
        let secrets = Set(keys.filter(\.isSecret).map(\.environmentVariable))
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: commandLineSource, values: values),
            EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .specific(secrets))
                .prefixKeys(with: "sessionpolicy"),
        ]
        if let path = configFile ?? environment["SESSIONPOLICY_CONFIG"] {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ConfigurationError("cannot read the configuration file `\(path)`", help: "check the path and its permissions")
            }
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(path)))
            } catch {
                throw ConfigurationError(
                    "the configuration file `\(path)` is not a JSON object of configuration keys",
                    help: "write for example {\"port\": 8080, \"token\": {\"issuer\": \"https://id.example\"}}")
            }
        }
        return try load(providers: providers)
    }

    /// Reads the configuration from providers of the embedder's choice, first provider first. A
    /// value a provider gives in the wrong type is an error that names the key and its source,
    /// never silently replaced by the default.
    public static func load(providers: [any ConfigProvider]) throws(ConfigurationError) -> ServerConfiguration {
        let problems = ConfigurationProblems()
        let reader = ConfigReader(providers: providers, accessReporter: problems)
        let configuration = try ServerConfiguration(config: reader)
        if let first = problems.first { throw first }
        return configuration
    }

    static let commandLineSource = "command line"

    /// Reads every key of `keys` from `config`. A value out of range is an error that names the
    /// key; a value of the wrong type is reported to `config`'s access reporter (`load(providers:)`
    /// turns it into an error).
    init(config: ConfigReader) throws(ConfigurationError) {
        self.init()
        func source(_ name: String) -> String {
            let key = Self.keys.first { $0.name == name }
            return [key?.option.map { "`\($0)`" }, key.map { "`\($0.environmentVariable)`" }, "`\(name)` in the file"]
                .compactMap { $0 }.joined(separator: ", ")
        }

        if let v = config.string(forKey: "host") { host = v }
        if let v = config.int(forKey: "port") {
            guard (0...65535).contains(v) else { throw ConfigurationError("port \(v) is out of range 0...65535") }
            port = v
        }
        if let v = config.string(forKey: "policies") { policyDirectory = v }
        if let v = config.string(forKey: "storage", isSecret: true) { storage = try StorageURL.parse(v) }
        if let path = config.string(forKey: "hs256.secret.file") {
            hs256Secret = try Self.read(path, what: "HS256 secret").trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let v = config.string(forKey: "hs256.secret", isSecret: true) {
            hs256Secret = v
        }
        if let path = config.string(forKey: "es256.public.key.file") {
            es256PublicKeyPEM = try Self.read(path, what: "ES256 public key")
        } else if let v = config.string(forKey: "es256.public.key") {
            es256PublicKeyPEM = v
        }
        if let path = config.string(forKey: "service.hs256.secret.file") {
            serviceHS256Secret = try Self.read(path, what: "service HS256 secret").trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let v = config.string(forKey: "service.hs256.secret", isSecret: true) {
            serviceHS256Secret = v
        }
        if let path = config.string(forKey: "service.es256.public.key.file") {
            serviceES256PublicKeyPEM = try Self.read(path, what: "service ES256 public key")
        } else if let v = config.string(forKey: "service.es256.public.key") {
            serviceES256PublicKeyPEM = v
        }
        if serviceHS256Secret != nil && serviceHS256Secret == hs256Secret
            || serviceES256PublicKeyPEM != nil && serviceES256PublicKeyPEM == es256PublicKeyPEM
        {
            throw ConfigurationError(
                "the service token key is the user token key, so any user token would pass as a service token",
                help: "give service tokens a key of their own (`service.hs256.secret`, `service.es256.public.key`)")
        }
        if let path = config.string(forKey: "signing.key.file") {
            signingKeyPEM = try Self.read(path, what: "machine signing key")
        } else if let v = config.string(forKey: "signing.key", isSecret: true) {
            signingKeyPEM = v
        }
        if let pem = signingKeyPEM {
            do {
                _ = try MachineSigner(privateKeyPEM: pem)
            } catch {
                throw ConfigurationError(
                    "the machine signing key (set by \(source(config.string(forKey: "signing.key.file") != nil ? "signing.key.file" : "signing.key"))) is not a PEM private key of the curve P-256",
                    help: "make one with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out signing.key.pem`")
            }
        }
        tokenIssuer = config.string(forKey: "token.issuer")
        tokenAudience = config.string(forKey: "token.audience")
        for entry in config.stringArray(forKey: "pools", isSecret: true) ?? [] {
            guard let colon = entry.firstIndex(of: ":"), colon != entry.startIndex else {
                throw ConfigurationError("a pool is written ID:SECRET, found `\(entry.prefix(while: { $0 != ":" }))...`")
            }
            let secret = String(entry[entry.index(after: colon)...])
            guard secret.utf8.count >= 16 else {
                throw ConfigurationError(
                    "the secret of pool `\(entry[..<colon])` is shorter than 16 bytes", help: "use a long random secret")
            }
            pools[String(entry[..<colon])] = secret
        }
        for entry in config.stringArray(forKey: "apps") ?? [] {
            let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ConfigurationError(
                    "an app is written APP:POLICY, found `\(entry)`", help: "for example `com.example.crm:cross-app-device-sso`")
            }
            apps[parts[0]] = parts[1]
        }
        if let v = config.double(forKey: "reload.interval") {
            guard v > 0, v.isFinite else { throw ConfigurationError("the reload interval must be a positive number of seconds") }
            reloadInterval = .milliseconds(Int64(v * 1000))
        }
        func positive(_ name: String) throws(ConfigurationError) -> Int? {
            guard let v = config.int(forKey: ConfigKey(name.split(separator: ".").map(String.init))) else { return nil }
            guard v > 0 else { throw ConfigurationError("`\(name)` must be positive, found \(v) (set by \(source(name)))") }
            return v
        }
        if let v = try positive("max.body") { maxBodyBytes = v }
        if let v = try positive("max.batch.body") { maxBatchBytes = v }
        if let v = try positive("max.batch.items") { maxBatchItems = v }
        func span(_ name: String, allowZero: Bool) throws(ConfigurationError) -> TimeSpan? {
            guard let v = config.string(forKey: ConfigKey(name.split(separator: ".").map(String.init))) else { return nil }
            guard case let .success(span) = TimeSpan.parse(v), span.seconds > 0 || allowZero && span.seconds == 0 else {
                throw ConfigurationError(
                    "`\(name)` is `\(v)`, not a duration (set by \(source(name)))", help: "write for example `5m`, `90s` or `7d`")
            }
            return span
        }
        if let v = try span("clock.skew", allowZero: true) { clockSkew = v }
        if let v = try span("clock.max.delay", allowZero: true) { maxEventDelay = v }
        if let v = try span("machine.validity", allowZero: false) { machineValidity = v }
        if config.string(forKey: "decision.log.retention") == "0" {
            decisionLogRetention = TimeSpan(seconds: 0)  // `0` alone: no decision log
        } else if let v = try span("decision.log.retention", allowZero: true) {
            decisionLogRetention = v
        }
        if let v = config.string(forKey: "decision.log") {
            guard !v.isEmpty else { throw ConfigurationError("`decision.log` is empty", help: "give `stdout` or a file's path") }
            decisionLogStream = v
        }
        if let v = config.bool(forKey: "decision.log.hash.users") { decisionLogHashUsers = v }
        if let v = config.string(forKey: "ticket.lifetime") {
            guard case let .success(span) = TimeSpan.parse(v), span.seconds > 0 else {
                throw ConfigurationError("the ticket lifetime `\(v)` is not a duration", help: "write for example `60s` or `2m`")
            }
            ticketLifetime = .seconds(span.seconds)
        }
        if let v = config.string(forKey: "detect.per.client") { detectPerClient = try Self.rate(v, "detect.per.client") }
        if let v = config.string(forKey: "detect.per.device") { detectPerDevice = try Self.rate(v, "detect.per.device") }
        if let v = try positive("http.max.connections") { httpMaxConnections = v }
        if let v = try span("store.timeout", allowZero: false) { storeTimeout = .seconds(v.seconds) }
        if let v = try span("store.connect.timeout", allowZero: false) { storeConnectTimeout = .seconds(v.seconds) }
        if let v = try span("health.max.write.wait", allowZero: false) { healthMaxWriteWait = .seconds(v.seconds) }
        if let v = try span("http.request.timeout", allowZero: false) { httpRequestTimeout = .seconds(v.seconds) }
        if let v = try span("http.idle.timeout", allowZero: false) { httpIdleTimeout = .seconds(v.seconds) }
        if let v = config.string(forKey: "log.level") { logLevel = v }
    }

    /// A secret or key file's text. At most 64 KiB plus one byte is read, so a wrong path
    /// (a large file, `/dev/zero`) is refused at once instead of filling memory.
    static func read(_ path: String, what: String) throws(ConfigurationError) -> String {
        let limit = 64 * 1024
        let tooLarge = ConfigurationError(
            "the \(what) file `\(path)` is more than \(limit) bytes", help: "check the path: a key or secret file is small")
        switch SourceFile.read(path, limit: limit) {
        case let .failure(e):
            throw e.diagnostics.contains { $0.code == .inputTooLarge }
                ? tooLarge : ConfigurationError("cannot read the \(what) file `\(path)`")
        case let .success(data):
            guard data.count <= limit else { throw tooLarge }
            guard let text = String(data: data, encoding: .utf8) else {
                throw ConfigurationError("cannot read the \(what) file `\(path)` as UTF-8 text")
            }
            return text
        }
    }

    static func rate(_ text: String, _ key: String) throws(ConfigurationError) -> RateLimit {
        let parts = text.split(separator: "/").map { Int($0) }
        guard parts.count == 2, let n = parts[0], let burst = parts[1], n >= 0, burst >= 1 else {
            throw ConfigurationError("`\(key)` is `\(text)`, not N/BURST", help: "for example `60/20`")
        }
        return .init(perMinute: n, burst: burst)
    }
}

/// Collects what a configuration source gave that could not be read (a port that is not a
/// number, a file value of the wrong type), so that `init(config:)` refuses it instead of
/// falling back to a default.
final class ConfigurationProblems: AccessReporter, Sendable {
    private let problems = NIOLockedValueBox<[ConfigurationError]>([])

    var first: ConfigurationError? { problems.withLockedValue { $0.first } }

    func report(_ event: AccessEvent) {
        let name = event.metadata.key.components.joined(separator: ".")
        let key = ServerConfiguration.keys.first { $0.name == name }
        for r in event.providerResults {
            let failed: Bool
            switch r.result {
            case .failure: failed = true
            case let .success(lookup): failed = lookup.value != nil && event.conversionError != nil
            }
            guard failed else { continue }
            let source =
                r.providerName == ServerConfiguration.commandLineSource
                ? key?.option.map { "`\($0)`" } ?? "the command line"
                : r.providerName.contains("Environment")
                    ? "`\(key?.environmentVariable ?? name)`" : "`\(name)` in the configuration file"
            let problem = ConfigurationError(
                "\(source) is not \(Self.describe(event.metadata.valueType))",
                help: "`\(name)` takes \(Self.describe(event.metadata.valueType))")
            problems.withLockedValue { $0.append(problem) }
            return
        }
    }

    static func describe(_ type: ConfigType) -> String {
        switch type {
        case .int: "a whole number"
        case .double: "a number"
        case .bool: "`true` or `false`"
        case .stringArray: "a list of strings (comma-separated in an environment variable)"
        default: "a string"
        }
    }
}
