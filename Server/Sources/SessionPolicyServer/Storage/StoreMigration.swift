import Foundation
public import Logging
import ServiceLifecycle

/// `policyctl-serve migrate`: a store's schema brought to this server's, or the SQL that would
/// do it, apart from a server's start (docs/storage.md#upgrades-without-downtime).
public enum StoreMigration {
    /// Opens the store `configuration` names, and migrates it (`dryRun` false) or reports what
    /// migrating would run (`dryRun` true: nothing is changed, an SQLite file that does not exist
    /// is not created). Fails with a ``StoreError`` when the store cannot be reached within
    /// `store.connect.timeout` plus `store.timeout`, or needs a newer server.
    public static func run(_ configuration: ServerConfiguration, dryRun: Bool, logger: Logger) async throws -> SchemaStatus {
        if dryRun, case let .sqlite(path) = configuration.storage, !FileManager.default.fileExists(atPath: path) {
            return try Schema.prepare(applied: 0, oldestServer: nil, dialect: .sqlite, migrate: true).status
        }
        let store = try configuration.storage.makeStore(
            logger: logger, readOnly: false, timeout: configuration.storeTimeout, connectTimeout: configuration.storeConnectTimeout)
        let work: @Sendable () async throws -> SchemaStatus = {
            dryRun ? try await store.schemaStatus() : try await store.prepare(migrate: true)
        }
        guard let service = store as? any Service else {
            do {
                let status = try await work()
                await store.close()
                return status
            } catch {
                await store.close()
                throw error
            }
        }
        // PostgreSQL: the pool runs beside the work, which is bounded (a database that does not
        // answer is an error, not a wait).
        let bound = configuration.storeConnectTimeout + PostgresStore.migrationTimeout + .seconds(5)
        return try await withThrowingTaskGroup(of: SchemaStatus?.self) { group in
            group.addTask {
                try await service.run()
                return nil
            }
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: bound)
                throw StoreError("the store did not answer within \(bound)")
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let status = result { return status }
            }
            throw StoreError("the store's connection pool stopped")
        }
    }
}
