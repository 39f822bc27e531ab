import ArgumentParser
import Foundation
import Logging
import SessionPolicy
import SessionPolicyServer

/// `policyctl-sessions`: the stored sessions of one policy as JSON lines, read-only. What
/// `policyctl diff --storage` runs to read the server's store (the store's drivers live in the
/// server package, so that checking policies never builds them).
@main
struct ExportSessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policyctl-sessions",
        abstract: "Write the stored sessions of one policy, or a user's decisions, as JSON lines, without changing the store.",
        discussion: """
            One line per stored session, ordered by user id then device id: \
            {"device":...,"revision":N,"state":{...},"updated_at":"...","user":...}, where `state` \
            is the session state as the server stores it and `updated_at` the server's time of its \
            last write. Reads page by page, so memory does not grow with the number of sessions. An \
            SQLite file is opened read-only and must exist; nothing is written to PostgreSQL.
            With --decisions-of USER: the user's most recent decisions from the decision log instead \
            (--limit, newest first; --policy and --device narrow them), one record per line, as \
            `policyctl history` reads them.
            Exit codes: 0 done; 2 the storage URL is invalid or the store cannot be read; 64 usage error.
            """,
        version: SessionPolicyRelease.version)

    @Option(help: "The server's storage: sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=require].")
    var storage: String

    @Option(help: "The policy's name (as the server serves it).")
    var policy: String?

    @Option(help: "Write this user's decisions instead of the sessions.")
    var decisionsOf: String?

    @Option(help: "With --decisions-of: only this device's.")
    var device: String?

    @Option(help: "With --decisions-of: at most this many, the most recent.")
    var limit = 100

    func validate() throws {
        if decisionsOf == nil && policy == nil { throw ValidationError("give `--policy NAME`, or `--decisions-of USER`") }
        if device != nil && decisionsOf == nil { throw ValidationError("`--device` goes with `--decisions-of`") }
        if limit < 1 { throw ValidationError("`--limit` must be at least 1") }
    }

    @Option(help: "Seconds to wait for PostgreSQL to answer the first query.")
    var connectTimeout = 10

    /// PostgreSQL did not answer within `connectTimeout`.
    struct Unreachable: Error {}

    /// What is read, for messages.
    var what: String { decisionsOf.map { "the decisions of `\($0)`" } ?? "the sessions of `\(policy ?? "")`" }

    func run() async throws {
        let url: StorageURL
        do {
            url = try StorageURL.parse(storage)
        } catch {
            Self.fail("\(error.message)", help: error.help)
        }
        var logger = Logger(label: "policyctl-sessions")
        logger.logLevel = .error
        let store: any SessionStore
        do {
            store = try url.makeStore(logger: logger, readOnly: true)
        } catch {
            Self.fail("cannot open the storage `\(url)`: \(error)", help: "give the server's `--storage` URL")
        }
        do {
            if let postgres = store as? PostgresStore {
                let policy = policy
                let limit = connectTimeout
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await postgres.run() }
                    defer { group.cancelAll() }
                    // The pool retries a refused connection for a minute; give up sooner. The first
                    // query races a timer; whichever ends first cancels the other.
                    try await withThrowingTaskGroup(of: Void.self) { race in
                        race.addTask { _ = try await postgres.sessionPage(policy: policy ?? "", after: nil, limit: 1) }
                        race.addTask {
                            try await Task.sleep(for: .seconds(limit))
                            throw Unreachable()
                        }
                        try await race.next()
                        race.cancelAll()
                    }
                    try await export(store)
                }
            } else {
                try await export(store)
            }
        } catch let error as StoreError {
            Self.fail("cannot read \(what) from `\(url)`: \(error)", help: "give the server's `--storage` URL")
        } catch {
            // The pool's own errors name its internals; say what the user can check.
            Self.fail(
                "cannot read \(what) from `\(url)`: the database cannot be reached or refused the connection",
                help: "check the host, port, user, password and database of the storage URL, and that the database runs")
        }
    }

    func export(_ store: any SessionStore) async throws {
        let out = FileHandle.standardOutput
        if let user = decisionsOf {
            let query = DecisionQuery(user: user, policy: policy, device: device)
            try await SessionExport.decisions(store, query, limit: limit) { out.write(Data($0.utf8)) }
        } else if let policy {
            try await SessionExport.export(store, policy: policy) { out.write(Data($0.utf8)) }
        }
    }

    static func fail(_ message: String, help: String?) -> Never {
        var text = "error: \(message)\n"
        if let help { text += "  = help: \(help)\n" }
        FileHandle.standardError.write(Data(text.utf8))
        Foundation.exit(2)
    }
}
