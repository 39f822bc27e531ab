import ArgumentParser
import Configuration
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
            Every option can also be set by an environment variable (shown in brackets) or a key in the \
            --config JSON file (README "Configuration keys"); the command line wins over the \
            environment, which wins over the file. Prefer the environment, or files, for secrets: command \
            lines are visible to other users of the machine.
            Without --storage, sessions are kept in the SQLite file `sessionpolicy.sqlite`.
            The server reloads the policy directory on SIGHUP and when a file changes; a file that \
            no longer compiles, is gone, or repeats the name of a policy that serves is reported \
            (log, /healthz) while the last good version serves. A policy stops serving only on \
            purpose: a file NAME.removed in the directory, or a restart. \
            SIGTERM or SIGINT stops it gracefully (logged: `stopping` and `stopped`, with the \
            signal). Logs are logfmt lines on standard error.
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

    @Option(
        help: """
            File holding the HS256 secret of service tokens, the back end's credential \
            [SESSIONPOLICY_SERVICE_HS256_SECRET holds the secret itself].
            """)
    var serviceHs256SecretFile: String?

    @Option(
        help: "PEM file of the ES256 public key of service tokens [SESSIONPOLICY_SERVICE_ES256_PUBLIC_KEY holds the PEM].")
    var serviceEs256PublicKey: String?

    @Option(
        help: """
            PEM file of the P-256 private key the server signs each policy's machine with, served at \
            GET /v1/policies/{policy}/machine [SESSIONPOLICY_SIGNING_KEY holds the PEM] (default: none, that route answers 404).
            """)
    var signingKey: String?

    @Option(help: "How long a signed machine is valid, e.g. 7d; signed again at half [SESSIONPOLICY_MACHINE_VALIDITY] (default: 7d).")
    var machineValidity: String?

    @Option(
        help: """
            How long the decision log keeps each decision, e.g. 90d; 0 keeps no decision log \
            [SESSIONPOLICY_DECISION_LOG_RETENTION] (default: 90d).
            """)
    var decisionLogRetention: String?

    @Option(help: "Also write every decision as a JSON line to `stdout` or this file [SESSIONPOLICY_DECISION_LOG] (default: none).")
    var decisionLog: String?

    @Flag(help: "In those lines, write the user id as its SHA-256 [SESSIONPOLICY_DECISION_LOG_HASH_USERS=true].")
    var decisionLogHashUsers = false

    @Option(help: "How far in the server's future an event may be dated, e.g. 5m [SESSIONPOLICY_CLOCK_SKEW] (default: 5m).")
    var clockSkew: String?

    @Option(help: "How long after its time an event may still arrive, e.g. 7d [SESSIONPOLICY_CLOCK_MAX_DELAY] (default: 7d).")
    var clockMaxDelay: String?

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

    @Option(
        help: """
            An app id and the policy that decides its detections, APP:POLICY; repeat for several \
            [SESSIONPOLICY_APPS: APP:POLICY,APP:POLICY].
            """)
    var app: [String] = []

    @Option(help: "Seconds between checks of the policy directory [SESSIONPOLICY_RELOAD_INTERVAL] (default: 2).")
    var reloadInterval: Double?

    @Option(help: "Largest request body in bytes, except batches [SESSIONPOLICY_MAX_BODY] (default: 65536).")
    var maxBody: Int?

    @Option(help: "Largest batch request body in bytes [SESSIONPOLICY_MAX_BATCH_BODY] (default: 16777216).")
    var maxBatchBody: Int?

    @Option(help: "Most items in one batch [SESSIONPOLICY_MAX_BATCH_ITEMS] (default: 50000).")
    var maxBatchItems: Int?

    @Option(help: "How long a detection ticket works, e.g. 60s, 2m [SESSIONPOLICY_TICKET_LIFETIME] (default: 60s).")
    var ticketLifetime: String?

    @Option(
        help: "Detections allowed per client address per minute, and the burst, N/BURST [SESSIONPOLICY_DETECT_PER_CLIENT] (default: 60/20)."
    )
    var detectPerClient: String?

    @Option(help: "Detections allowed per device id per minute, and the burst, N/BURST [SESSIONPOLICY_DETECT_PER_DEVICE] (default: 10/5).")
    var detectPerDevice: String?

    @Option(
        help: """
            Longest wait on the store for a connection, one statement or a lock, e.g. 5s; past it a request \
            is answered 503 [SESSIONPOLICY_STORE_TIMEOUT] (default: 5s).
            """)
    var storeTimeout: String?

    @Option(help: "Longest time to open one PostgreSQL connection, e.g. 5s [SESSIONPOLICY_STORE_CONNECT_TIMEOUT] (default: 5s).")
    var storeConnectTimeout: String?

    @Option(
        help:
            "GET /healthz answers 503 while a write has waited longer than this, e.g. 30s [SESSIONPOLICY_HEALTH_MAX_WRITE_WAIT] (default: 30s)."
    )
    var healthMaxWriteWait: String?

    @Option(
        help: """
            Close a connection whose request is not answered this long after its first byte (slow headers or \
            body), e.g. 30s [SESSIONPOLICY_HTTP_REQUEST_TIMEOUT] (default: 30s).
            """)
    var httpRequestTimeout: String?

    @Option(help: "Close a connection idle this long between requests, e.g. 60s [SESSIONPOLICY_HTTP_IDLE_TIMEOUT] (default: 60s).")
    var httpIdleTimeout: String?

    @Option(
        help: """
            Most connections held open at once, lowered to what the open-file limit allows \
            [SESSIONPOLICY_HTTP_MAX_CONNECTIONS] (default: 10000).
            """)
    var httpMaxConnections: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical [SESSIONPOLICY_LOG_LEVEL] (default: info).")
    var logLevel: String?

    @Option(help: "A JSON file of configuration keys, the lowest-precedence source [SESSIONPOLICY_CONFIG].")
    var config: String?

    /// The options given, as configuration keys (`ServerConfiguration.keys`): they win over the
    /// environment, which wins over the file.
    var commandLine: [String: ConfigContent] {
        var v: [String: ConfigContent] = [:]
        let strings: [(String, String?)] = [
            ("host", host), ("policies", policies), ("storage", storage), ("hs256.secret.file", hs256SecretFile),
            ("es256.public.key.file", es256PublicKey), ("token.issuer", tokenIssuer), ("token.audience", tokenAudience),
            ("ticket.lifetime", ticketLifetime), ("detect.per.client", detectPerClient), ("detect.per.device", detectPerDevice),
            ("log.level", logLevel), ("service.hs256.secret.file", serviceHs256SecretFile),
            ("service.es256.public.key.file", serviceEs256PublicKey), ("clock.skew", clockSkew),
            ("clock.max.delay", clockMaxDelay), ("signing.key.file", signingKey), ("machine.validity", machineValidity),
            ("decision.log.retention", decisionLogRetention), ("decision.log", decisionLog),
            ("store.timeout", storeTimeout), ("store.connect.timeout", storeConnectTimeout),
            ("health.max.write.wait", healthMaxWriteWait), ("http.request.timeout", httpRequestTimeout),
            ("http.idle.timeout", httpIdleTimeout),
        ]
        for case let (key, value?) in strings { v[key] = .string(value) }
        let ints: [(String, Int?)] = [
            ("port", port), ("max.body", maxBody), ("max.batch.body", maxBatchBody), ("max.batch.items", maxBatchItems),
            ("http.max.connections", httpMaxConnections),
        ]
        for case let (key, value?) in ints { v[key] = .int(value) }
        if let reloadInterval { v["reload.interval"] = .double(reloadInterval) }
        if !pool.isEmpty { v["pools"] = .stringArray(pool) }
        if decisionLogHashUsers { v["decision.log.hash.users"] = .bool(true) }
        if !app.isEmpty { v["apps"] = .stringArray(app) }
        return v
    }

    func run() async throws {
        let configuration: ServerConfiguration
        do {
            configuration = try await ServerConfiguration.load(
                commandLine: commandLine, environment: ProcessInfo.processInfo.environment, configFile: config)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        }
        guard let level = Logger.Level(rawValue: configuration.logLevel) else {
            throw ValidationError(
                "unknown log level `\(configuration.logLevel)`; use trace, debug, info, notice, warning, error or critical")
        }
        LoggingSystem.bootstrap { label in LogfmtHandler(label: label, level: level) }
        let logger = Logger(label: "sessionpolicy")
        do {
            let app = try await buildApplication(
                configuration: configuration, logger: logger,
                onServerRunning: { port in
                    FileHandle.standardOutput.write(Data("listening on http://\(configuration.host):\(port)\n".utf8))
                })
            try await runApplication(app, logger: logger)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        }
    }
}
