public import Configuration
import Foundation
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyYAML
import SystemPackage

/// Reading the keys of `ServerConfiguration.keys` from the command line, `SESSIONPOLICY_*`
/// environment variables and a JSON file, or from providers of an embedder's choice.
extension ServerConfiguration {
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
                content, isSecret: key(name)?.isSecret ?? false)
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
        let config = KeyReader(config: config)
        try readBasics(config)
        try readTokenKeys(config)
        try readTokenSources(config)
        try readLists(config)
        try readLimits(config)
        try readDurations(config)
        if let v = config.string("log.level") { logLevel = v }
        if let v = config.bool("log.access") { accessLog = v }
        try readOperations(config)
    }

    /// The admin listener and tracing.
    private mutating func readOperations(_ config: KeyReader) throws(ConfigurationError) {
        if let v = config.int("admin.port") {
            guard (0...65535).contains(v) else {
                throw ConfigurationError("`admin.port` \(v) is out of range 0...65535 (set by \(config.sources("admin.port")))")
            }
            guard v == 0 || v != port else {
                throw ConfigurationError(
                    "`admin.port` is \(v), the same as `port`",
                    help: "give the admin listener a port of its own, or leave `admin.port` unset")
            }
            adminPort = v
        }
        if let v = config.string("admin.host") { adminHost = v }
        if let v = config.string("tracing.otlp.endpoint") {
            guard let url = URL(string: v), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigurationError(
                    "`tracing.otlp.endpoint` is `\(v)`, not an http or https URL (set by \(config.sources("tracing.otlp.endpoint")))",
                    help: "give the collector's OTLP/HTTP address, for example `http://otel-collector:4318`")
            }
            tracingEndpoint = v
        }
        if let v = config.bool("tracing.user.ids") { tracingUserIDs = v }
    }

    /// The address, the policies, the store, the reload interval and the decision stream.
    private mutating func readBasics(_ config: KeyReader) throws(ConfigurationError) {
        if let v = config.string("host") { host = v }
        if let v = config.int("port") {
            guard (0...65535).contains(v) else { throw ConfigurationError("port \(v) is out of range 0...65535") }
            port = v
        }
        if let v = config.string("policies") { policyDirectory = v }
        if let v = config.string("storage") { storage = try StorageURL.parse(v) }
        if let v = config.string("storage.migrations") {
            guard v == "auto" || v == "manual" else {
                throw ConfigurationError(
                    "`storage.migrations` is `\(v)` (set by \(config.sources("storage.migrations")))", help: "give `auto` or `manual`")
            }
            migratesAtStart = v == "auto"
        }
        if let v = config.double("reload.interval") {
            guard v > 0, v.isFinite else { throw ConfigurationError("the reload interval must be a positive number of seconds") }
            reloadInterval = .milliseconds(Int64(v * 1000))
        }
        if let v = config.string("decision.log") {
            guard !v.isEmpty else { throw ConfigurationError("`decision.log` is empty", help: "give `stdout` or a file's path") }
            decisionLogStream = v
        }
        if let v = config.bool("decision.log.hash.users") { decisionLogHashUsers = v }
    }

    /// The token keys and the machine signing key: each from its file, or else inline.
    private mutating func readTokenKeys(_ config: KeyReader) throws(ConfigurationError) {
        func secret(_ name: String, what: String, trimmed: Bool) throws(ConfigurationError) -> String? {
            guard let path = config.string(name + ".file") else { return config.string(name) }
            let text = try Self.read(path, what: what)
            return trimmed ? text.trimmingCharacters(in: .whitespacesAndNewlines) : text
        }
        hs256Secret = try secret("hs256.secret", what: "HS256 secret", trimmed: true)
        es256PublicKeyPEM = try secret("es256.public.key", what: "ES256 public key", trimmed: false)
        serviceHS256Secret = try secret("service.hs256.secret", what: "service HS256 secret", trimmed: true)
        serviceES256PublicKeyPEM = try secret("service.es256.public.key", what: "service ES256 public key", trimmed: false)
        keyFiles.hs256Secret = config.string("hs256.secret.file")
        keyFiles.es256PublicKey = config.string("es256.public.key.file")
        keyFiles.serviceHS256Secret = config.string("service.hs256.secret.file")
        keyFiles.serviceES256PublicKey = config.string("service.es256.public.key.file")
        try Self.checkServiceKeysApart(
            user: (hs256Secret, es256PublicKeyPEM), service: (serviceHS256Secret, serviceES256PublicKeyPEM))
        signingKeyPEM = try secret("signing.key", what: "machine signing key", trimmed: false)
        // The previous key's file exists only during a rotation: missing, no rotation is under way
        // (SIGHUP reads it again, docs/signed-machines.md#rotating-the-signing-key).
        if let path = config.string("signing.previous.key.file"), !FileManager.default.fileExists(atPath: path) {
            signingPreviousKeyPEM = nil
        } else {
            signingPreviousKeyPEM = try secret("signing.previous.key", what: "previous machine signing key", trimmed: false)
        }
        keyFiles.signingKey = config.string("signing.key.file")
        keyFiles.signingPreviousKey = config.string("signing.previous.key.file")
        for (base, pem) in [("signing.key", signingKeyPEM), ("signing.previous.key", signingPreviousKeyPEM)] {
            guard let pem else { continue }
            do {
                _ = try MachineSigner(privateKeyPEM: pem)
            } catch {
                let name = config.string(base + ".file") != nil ? base + ".file" : base
                throw ConfigurationError(
                    "the \(base == "signing.key" ? "machine signing key" : "previous machine signing key") (set by "
                        + "\(config.sources(name))) is not a PEM private key of the curve P-256",
                    help: "make one with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out signing.key.pem`")
            }
        }
        if signingPreviousKeyPEM != nil, signingKeyPEM == nil {
            throw ConfigurationError(
                "`signing.previous.key` is set without `signing.key`",
                help: "a rotation has a new key (`signing.key`) and the one it replaces (`signing.previous.key`)")
        }
        tokenIssuer = config.string("token.issuer")
        tokenAudience = config.string("token.audience")
    }

    /// Refuses a service key that is also a user key (any one of several): any user token
    /// would then pass as the back end's.
    static func checkServiceKeysApart(user: (String?, String?), service: (String?, String?)) throws(ConfigurationError) {
        let userSecrets = Set(user.0.map(TokenVerifier.secrets) ?? []), userPEMs = Set(user.1.map(TokenVerifier.pemBlocks) ?? [])
        let sharedSecret = !(service.0.map(TokenVerifier.secrets) ?? []).allSatisfy { !userSecrets.contains($0) }
        let sharedPEM = !(service.1.map(TokenVerifier.pemBlocks) ?? []).allSatisfy { !userPEMs.contains($0) }
        if sharedSecret || sharedPEM {
            throw ConfigurationError(
                "the service token key is the user token key, so any user token would pass as a service token",
                help: "give service tokens a key of their own (`service.hs256.secret`, `service.es256.public.key`)")
        }
    }

    /// Pools and apps. A pool's secret is never repeated in an error, nor an entry that may be one.
    private mutating func readLists(_ config: KeyReader) throws(ConfigurationError) {
        for entry in config.list("pools") ?? [] {
            guard let colon = entry.firstIndex(of: ":"), colon != entry.startIndex else {
                let id = entry.firstIndex(of: ":") == nil ? "no `:`" : "no id before the `:`"
                throw ConfigurationError("a pool is written ID:SECRET, found \(id)")
            }
            let secret = String(entry[entry.index(after: colon)...])
            guard secret.utf8.count >= 16 else {
                throw ConfigurationError(
                    "the secret of pool `\(entry[..<colon])` is shorter than 16 bytes", help: "use a long random secret")
            }
            pools[String(entry[..<colon])] = secret
        }
        for entry in config.list("apps") ?? [] {
            let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ConfigurationError(
                    "an app is written APP:POLICY, found `\(entry)`", help: "for example `com.example.crm:cross-app-device-sso`")
            }
            apps[parts[0]] = parts[1]
        }
        if let v = config.string("detect.per.client") { detectPerClient = try Self.rate(v, "detect.per.client") }
        if let v = config.string("detect.per.device") { detectPerDevice = try Self.rate(v, "detect.per.device") }
    }

    /// The limits in bytes, items and connections: each positive.
    private mutating func readLimits(_ config: KeyReader) throws(ConfigurationError) {
        func positive(_ name: String) throws(ConfigurationError) -> Int? {
            guard let v = config.int(name) else { return nil }
            guard v > 0 else { throw ConfigurationError("`\(name)` must be positive, found \(v) (set by \(config.sources(name)))") }
            return v
        }
        if let v = try positive("max.body") { maxBodyBytes = v }
        if let v = try positive("max.batch.body") { maxBatchBytes = v }
        if let v = try positive("max.batch.items") { maxBatchItems = v }
        if let v = try positive("http.max.connections") { httpMaxConnections = v }
        if let v = try positive("store.pool.max") { storePoolMax = v }
    }

    /// The durations, written `5m`, `90s`, `7d`.
    private mutating func readDurations(_ config: KeyReader) throws(ConfigurationError) {
        func span(_ name: String, allowZero: Bool) throws(ConfigurationError) -> TimeSpan? {
            guard let v = config.string(name) else { return nil }
            guard case let .success(span) = TimeSpan.parse(v), span.seconds > 0 || allowZero && span.seconds == 0 else {
                throw ConfigurationError(
                    "`\(name)` is `\(v)`, not a duration (set by \(config.sources(name)))", help: "write for example `5m`, `90s` or `7d`")
            }
            return span
        }
        if let v = try span("clock.skew", allowZero: true) { clockSkew = v }
        if let v = try span("clock.max.delay", allowZero: true) { maxEventDelay = v }
        if let v = try span("machine.validity", allowZero: false) { machineValidity = v }
        if config.string("decision.log.retention") == "0" {
            decisionLogRetention = TimeSpan(seconds: 0)  // `0` alone: no decision log
        } else if let v = try span("decision.log.retention", allowZero: true) {
            decisionLogRetention = v
        }
        if let v = config.string("ticket.lifetime") {
            guard case let .success(span) = TimeSpan.parse(v), span.seconds > 0 else {
                throw ConfigurationError("the ticket lifetime `\(v)` is not a duration", help: "write for example `60s` or `2m`")
            }
            ticketLifetime = .seconds(span.seconds)
        }
        if let v = try span("store.timeout", allowZero: false) { storeTimeout = .seconds(v.seconds) }
        if let v = try span("store.connect.timeout", allowZero: false) { storeConnectTimeout = .seconds(v.seconds) }
        if let v = try span("health.max.write.wait", allowZero: false) { healthMaxWriteWait = .seconds(v.seconds) }
        if let v = try span("http.request.timeout", allowZero: false) { httpRequestTimeout = .seconds(v.seconds) }
        if let v = try span("http.idle.timeout", allowZero: false) { httpIdleTimeout = .seconds(v.seconds) }
        if let v = try span("tracing.export.delay", allowZero: false) { tracingExportDelay = .seconds(v.seconds) }
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

/// Reads the keys of `ServerConfiguration.keys` from a `ConfigReader`, each as the table types it
/// and secret where the table says so. Reading a key the table does not have, or as another type,
/// is a programmer error: the table is the only place a key is declared.
struct KeyReader {
    let config: ConfigReader

    func string(_ name: String) -> String? {
        let key = Self.key(name, .string)
        return config.string(forKey: ConfigKey(key.components), isSecret: key.isSecret)
    }

    func int(_ name: String) -> Int? {
        let key = Self.key(name, .int)
        return config.int(forKey: ConfigKey(key.components), isSecret: key.isSecret)
    }

    func double(_ name: String) -> Double? {
        let key = Self.key(name, .double)
        return config.double(forKey: ConfigKey(key.components), isSecret: key.isSecret)
    }

    func bool(_ name: String) -> Bool? {
        let key = Self.key(name, .bool)
        return config.bool(forKey: ConfigKey(key.components), isSecret: key.isSecret)
    }

    func list(_ name: String) -> [String]? {
        let key = Self.key(name, .list)
        return config.stringArray(forKey: ConfigKey(key.components), isSecret: key.isSecret)
    }

    /// Where the key `name` is set, for an error: its option, its environment variable, the file.
    func sources(_ name: String) -> String {
        let key = Self.key(name, nil)
        return [key.option.map { "`\($0)`" }, "`\(key.environmentVariable)`", "`\(name)` in the file"]
            .compactMap { $0 }.joined(separator: ", ")
    }

    private static func key(_ name: String, _ type: ServerConfiguration.Key.ValueType?) -> ServerConfiguration.Key {
        guard let key = ServerConfiguration.key(name), type == nil || key.type == type else {
            preconditionFailure("`\(name)` is read as \(type.map { "\($0)" } ?? "a key") but ServerConfiguration.keys says otherwise")
        }
        return key
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
        let key = ServerConfiguration.key(name)
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
