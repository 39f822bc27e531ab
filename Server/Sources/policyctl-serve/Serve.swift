import ArgumentParser
import Foundation
import Logging
import SessionPolicy
import SessionPolicyServer

/// `policyctl-serve`, what `policyctl serve` runs: the server package's executable.
@main
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policyctl-serve",
        abstract: "Serve the policies over HTTP: evaluation, stored sessions, cross-app device sessions.",
        discussion: """
            Every option can also be set by an environment variable (shown in brackets); an option \
            given on the command line wins. Prefer the environment, or files, for secrets: command \
            lines are visible to other users of the machine.
            Without --storage, sessions are kept in the SQLite file `sessionpolicy.sqlite`.
            The server reloads the policy directory on SIGHUP and when a file changes; a file that \
            no longer compiles is reported (log, /healthz) while its last good version serves. \
            SIGTERM or SIGINT stops it gracefully. Logs are logfmt lines on standard error.
            Exit codes: 0 stopped; 2 invalid configuration, or the store cannot be opened; 64 usage error.
            """)

    @Option(help: "Address to listen on [SESSIONPOLICY_HOST] (default: 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one [SESSIONPOLICY_PORT] (default: 8080).")
    var port: Int?

    @Option(help: "Directory of policy files [SESSIONPOLICY_POLICIES] (default: policies).")
    var policies: String?

    @Option(
        help: """
            Session storage [SESSIONPOLICY_STORAGE]: sqlite:PATH (default sqlite:sessionpolicy.sqlite) \
            or postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=require].
            """)
    var storage: String?

    @Option(help: "File holding the HS256 secret of user tokens [SESSIONPOLICY_HS256_SECRET holds the secret itself].")
    var hs256SecretFile: String?

    @Option(help: "PEM file of the ES256 public key of user tokens [SESSIONPOLICY_ES256_PUBLIC_KEY holds the PEM].")
    var es256PublicKey: String?

    @Option(help: "Required `iss` of user tokens [SESSIONPOLICY_TOKEN_ISSUER].")
    var tokenIssuer: String?

    @Option(help: "Required `aud` of user tokens [SESSIONPOLICY_TOKEN_AUDIENCE].")
    var tokenAudience: String?

    @Option(
        help: """
            A user pool and its secret, ID:SECRET; repeat for several \
            [SESSIONPOLICY_POOLS: ID:SECRET,ID:SECRET].
            """)
    var pool: [String] = []

    @Option(help: "Seconds between checks of the policy directory [SESSIONPOLICY_RELOAD_INTERVAL] (default: 2).")
    var reloadInterval: Double?

    @Option(help: "Largest request body in bytes, except batches (default: 65536).")
    var maxBody: Int?

    @Option(help: "Largest batch request body in bytes (default: 16777216).")
    var maxBatchBody: Int?

    @Option(help: "Most items in one batch (default: 50000).")
    var maxBatchItems: Int?

    @Option(help: "How long a detection ticket works, e.g. 60s, 2m (default: 60s).")
    var ticketLifetime: String?

    @Option(help: "Detections allowed per client address per minute, and the burst, N/BURST (default: 60/20).")
    var detectPerClient: String?

    @Option(help: "Detections allowed per device id per minute, and the burst, N/BURST (default: 10/5).")
    var detectPerDevice: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical [SESSIONPOLICY_LOG_LEVEL] (default: info).")
    var logLevel: String?

    func run() async throws {
        let env = ProcessInfo.processInfo.environment
        let level = logLevel ?? env["SESSIONPOLICY_LOG_LEVEL"] ?? "info"
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw ValidationError("unknown log level `\(level)`; use trace, debug, info, notice, warning, error or critical")
        }
        LoggingSystem.bootstrap { label in LogfmtHandler(label: label, level: logLevel) }
        let logger = Logger(label: "sessionpolicy")
        let configuration: ServerConfiguration
        do {
            configuration = try makeConfiguration(env)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        }
        do {
            let app = try await buildApplication(
                configuration: configuration, logger: logger,
                onServerRunning: { port in
                    FileHandle.standardOutput.write(Data("listening on http://\(configuration.host):\(port)\n".utf8))
                })
            try await app.runService()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        }
    }

    func makeConfiguration(_ env: [String: String]) throws -> ServerConfiguration {
        var c = ServerConfiguration()
        if let v = host ?? env["SESSIONPOLICY_HOST"] { c.host = v }
        if let v = port {
            c.port = v
        } else if let v = env["SESSIONPOLICY_PORT"] {
            guard let p = Int(v) else { throw ConfigurationError("SESSIONPOLICY_PORT is `\(v)`, not a port number") }
            c.port = p
        }
        guard (0...65535).contains(c.port) else { throw ConfigurationError("port \(c.port) is out of range 0...65535") }
        if let v = policies ?? env["SESSIONPOLICY_POLICIES"] { c.policyDirectory = v }
        if let v = storage ?? env["SESSIONPOLICY_STORAGE"] { c.storage = try StorageURL.parse(v) }
        if let path = hs256SecretFile {
            c.hs256Secret = try read(path, what: "HS256 secret").trimmingCharacters(in: .whitespacesAndNewlines)
        } else if let v = env["SESSIONPOLICY_HS256_SECRET"] {
            c.hs256Secret = v
        }
        if let path = es256PublicKey {
            c.es256PublicKeyPEM = try read(path, what: "ES256 public key")
        } else if let v = env["SESSIONPOLICY_ES256_PUBLIC_KEY"] {
            c.es256PublicKeyPEM = v
        }
        c.tokenIssuer = tokenIssuer ?? env["SESSIONPOLICY_TOKEN_ISSUER"]
        c.tokenAudience = tokenAudience ?? env["SESSIONPOLICY_TOKEN_AUDIENCE"]
        let pools = pool.isEmpty ? (env["SESSIONPOLICY_POOLS"].map { $0.split(separator: ",").map(String.init) } ?? []) : pool
        for entry in pools {
            guard let colon = entry.firstIndex(of: ":"), colon != entry.startIndex else {
                throw ConfigurationError("a pool is written ID:SECRET, found `\(entry.prefix(while: { $0 != ":" }))...`")
            }
            let secret = String(entry[entry.index(after: colon)...])
            guard secret.utf8.count >= 16 else {
                throw ConfigurationError(
                    "the secret of pool `\(entry[..<colon])` is shorter than 16 bytes", help: "use a long random secret")
            }
            c.pools[String(entry[..<colon])] = secret
        }
        if let v = reloadInterval ?? env["SESSIONPOLICY_RELOAD_INTERVAL"].flatMap(Double.init) {
            guard v > 0 else { throw ConfigurationError("the reload interval must be positive") }
            c.reloadInterval = .milliseconds(Int64(v * 1000))
        }
        if let v = maxBody { c.maxBodyBytes = v }
        if let v = maxBatchBody { c.maxBatchBytes = v }
        if let v = maxBatchItems { c.maxBatchItems = v }
        if let v = ticketLifetime {
            guard case let .success(span) = TimeSpan.parse(v), span.seconds > 0 else {
                throw ConfigurationError("`--ticket-lifetime \(v)` is not a duration", help: "write for example `60s` or `2m`")
            }
            c.ticketLifetime = .seconds(span.seconds)
        }
        if let v = detectPerClient { c.detectPerClient = try rate(v, "--detect-per-client") }
        if let v = detectPerDevice { c.detectPerDevice = try rate(v, "--detect-per-device") }
        return c
    }

    func read(_ path: String, what: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError("cannot read the \(what) file `\(path)`")
        }
        return text
    }

    func rate(_ text: String, _ option: String) throws -> ServerConfiguration.RateLimit {
        let parts = text.split(separator: "/").map { Int($0) }
        guard parts.count == 2, let n = parts[0], let burst = parts[1], n >= 0, burst >= 1 else {
            throw ConfigurationError("`\(option) \(text)` is not N/BURST", help: "for example `60/20`")
        }
        return .init(perMinute: n, burst: burst)
    }
}
