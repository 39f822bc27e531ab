import ArgumentParser
import Configuration
import Foundation
import Logging
import SessionPolicyServer

/// `policyctl-serve migrate [--dry-run]`: brings the store's schema to this server's apart from
/// a start, for a DBA to review (`--dry-run` prints the SQL) and run before a rolling deploy.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate the store's schema to this server's, or print the SQL it would run (--dry-run).",
        discussion: """
            Reads the storage as the server does: --storage, SESSIONPOLICY_STORAGE, or the --config file \
            (`storage`, `store.timeout`, `store.connect.timeout`). With --dry-run it changes nothing and prints \
            a script a DBA can review and run as it is (sqlite3 FILE < script, psql URL -f script). \
            See docs/storage.md, "Upgrades without downtime".
            Exit codes: 0 migrated, or nothing to do; 2 the store cannot be opened or reached, or it needs a \
            newer server; 64 usage error.
            """)

    @Option(help: "Session storage: `sqlite:PATH` or a `postgres://` URL [SESSIONPOLICY_STORAGE].")
    var storage: String?

    @Option(help: "A JSON file of configuration keys, the lowest-precedence source [SESSIONPOLICY_CONFIG].")
    var config: String?

    @Flag(help: "Print the SQL that migrating would run, and change nothing.")
    var dryRun = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration: ServerConfiguration
        do {
            configuration = try await ServerConfiguration.load(
                commandLine: storage.map { ["storage": .string($0)] } ?? [:], environment: environment,
                configFile: config)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        }
        var logger = Logger(label: "sessionpolicy.migrate")
        logger.logLevel = .error
        do {
            let status = try await StoreMigration.run(configuration, dryRun: dryRun, logger: logger)
            if dryRun {
                print(status.script, terminator: "")
            } else if !status.pending.isEmpty {
                print(
                    "migrated the store from schema version \(status.applied) to \(status.current) "
                        + "(applied \(status.pending.map(String.init).joined(separator: ", ")))")
            } else if status.applied > status.current {
                print(
                    "the store is at schema version \(status.applied), newer than this server's \(status.current); "
                        + "servers of schema \(status.oldestServer) or newer run against it: nothing to do")
            } else {
                print("the store is at schema version \(status.applied), this server's: nothing to do")
            }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw Exit.invalidInput
        }
    }
}
