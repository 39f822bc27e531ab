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
            --config JSON file (docs/server-configuration.md); the command line wins over the environment, \
            which wins over the file. Prefer the environment, or files, for secrets: command lines are \
            visible to other users of the machine. Set only in the environment or the file: \
            \(ConfigurationOptions.keysWithoutOption).
            Without --storage, sessions are kept in the SQLite file `sessionpolicy.sqlite`.
            The server reloads the policy directory on SIGHUP and when a file changes; a file that \
            no longer compiles, is gone, or repeats the name of a policy that serves is reported \
            (log, /healthz) while the last good version serves. A policy stops serving only on \
            purpose: a file NAME.removed in the directory, or a restart. \
            SIGTERM or SIGINT stops it gracefully (logged: `stopping` and `stopped`, with the \
            signal). Logs are logfmt lines on standard error.
            The server migrates the store's schema at start unless `storage.migrations` is `manual`; \
            `policyctl-serve migrate [--dry-run]` migrates it apart, or prints the SQL.
            Exit codes: 0 stopped; 2 invalid configuration, or the store cannot be opened; 64 usage error.
            """,
        version: SessionPolicyRelease.version,
        subcommands: [Migrate.self])

    /// `policyctl-serve migrate ...` runs ``Migrate`` as a command of its own: parsed as this
    /// command's subcommand, its `--storage` would be taken by this command's option of that name.
    /// (It is listed as a subcommand for `--help` and the manual page.)
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == Migrate.configuration.commandName {
            await Migrate.main(Array(arguments.dropFirst()))
        } else {
            await main(arguments)
        }
    }

    /// One option per configuration key, from `ServerConfiguration.keys`.
    @OptionGroup var options: ConfigurationOptions

    @Option(help: "A JSON file of configuration keys, the lowest-precedence source [SESSIONPOLICY_CONFIG].")
    var config: String?

    func run() async throws {
        let configuration: ServerConfiguration
        do {
            configuration = try await ServerConfiguration.load(
                commandLine: options.values, environment: ProcessInfo.processInfo.environment, configFile: config)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        }
        guard let level = Logger.Level(rawValue: configuration.logLevel) else {
            throw ValidationError(
                "unknown log level `\(configuration.logLevel)`; use trace, debug, info, notice, warning, error or critical")
        }
        // Every line written while a request is served carries its `request_id`.
        LoggingSystem.bootstrap(
            { label, provider in
                var handler = LogfmtHandler(label: label, level: level)
                handler.metadataProvider = provider
                return handler
            }, metadataProvider: RequestID.metadataProvider)
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
