import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// Every wait on PostgreSQL is bounded: a connection from the pool, and the statements run on
/// it. Past the bound the caller gets a ``StoreError`` at once, the connection the work held is
/// closed (so a statement stuck on a dead or silent database cannot hold it: the pool opens a new
/// one for the next caller), and the work is cancelled (a lease still waiting gives up its place).
extension PostgresStore {
    /// Runs `body` on a connection of the pool within `bound` (the store's timeout when nil).
    /// Database failures (a driver or pool error, a timeout) become ``StoreError``; an error of
    /// the caller's own (`update` refusing an event) passes through.
    func bounded<T: Sendable>(
        _ bound: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let bound = bound ?? timeout
        let wait = BoundedWait<T>()
        return try await withCheckedThrowingContinuation { continuation in
            wait.begin(continuation)
            let timer = PostgresClient.defaultEventLoopGroup.any().scheduleTask(in: .nanoseconds(bound.nanoseconds)) {
                wait.timeOut(StoreError("PostgreSQL: no answer within \(bound.display) (`store.timeout`); the connection is closed"))
            }
            wait.setTimer(timer)
            let work = Task {
                let pool = self.pool
                var leased = false
                pool.requested()
                do {
                    let value = try await self.client.withConnection { connection in
                        pool.leased(connection)
                        leased = true
                        defer { pool.released() }
                        guard wait.leased(connection) else { throw CancellationError() }
                        return try await body(connection)
                    }
                    wait.finish(.success(value))
                } catch {
                    if !leased { pool.abandoned() }
                    wait.finish(.failure(Self.storeError(error)))
                }
            }
            wait.setWork(work)
        }
    }

    /// Runs `body` in a transaction on a connection of the pool, bounded as ``bounded(_:_:)``.
    func transaction<T: Sendable>(
        _ bound: Duration? = nil, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let logger = self.logger
        return try await bounded(bound) { connection in
            try await connection.withTransaction(logger: logger) { conn in try await body(conn) }
        }
    }

    /// The error a caller sees: the caller's own error as it is, anything of the database's as a
    /// ``StoreError`` (503 `store-unavailable`).
    static func storeError(_ error: any Error) -> any Error {
        switch error {
        case is StoreError:
            return error
        case let error as PostgresTransactionError:
            if let inner = error.closureError, !(inner is PSQLError), !(inner is CancellationError) {
                return inner
            }
            return StoreError("PostgreSQL: \(String(reflecting: error))")
        case let error as PSQLError:
            return StoreError("PostgreSQL: \(String(reflecting: error))")
        default:
            return StoreError("PostgreSQL: \(error)")
        }
    }

    /// The driver's log, with its records of `info` and above (a connection that could not be
    /// opened, a connection lost) raised to `error`: postgres-nio logs them at `info`.
    static func driverLogger(_ logger: Logger) -> Logger {
        let base = logger.handler
        var driver = Logger(label: "sessionpolicy.postgres") { _ in RaisingLogHandler(base: base) }
        // The driver's `info` records must reach the handler to be raised, when errors are shown.
        driver.logLevel = logger.logLevel <= .error ? min(logger.logLevel, .info) : logger.logLevel
        return driver
    }
}

/// One bounded wait: whichever of the work and the timer ends first answers the caller.
final class BoundedWait<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var connection: PostgresConnection?
        var timer: Scheduled<Void>?
        var work: Task<Void, Never>?
        var timedOut = false
    }
    private let state = NIOLockedValueBox(State())

    func begin(_ continuation: CheckedContinuation<T, any Error>) {
        state.withLockedValue { $0.continuation = continuation }
    }

    func setTimer(_ timer: Scheduled<Void>) {
        let done = state.withLockedValue { s -> Bool in
            s.timer = timer
            return s.continuation == nil
        }
        if done { timer.cancel() }
    }

    func setWork(_ work: Task<Void, Never>) {
        let cancel = state.withLockedValue { s -> Bool in
            s.work = work
            return s.timedOut
        }
        if cancel { work.cancel() }
    }

    /// Records the connection the work holds; false when the wait has already timed out.
    func leased(_ connection: PostgresConnection) -> Bool {
        state.withLockedValue { s -> Bool in
            guard !s.timedOut else { return false }
            s.connection = connection
            return true
        }
    }

    /// The work's result, unless the timer answered first.
    func finish(_ result: Result<T, any Error>) {
        let (continuation, timer) = state.withLockedValue { s in
            defer {
                s.continuation = nil
                s.connection = nil
                s.timer = nil
            }
            return (s.continuation, s.timer)
        }
        timer?.cancel()
        continuation?.resume(with: result)
    }

    /// The timer: answers `error` unless the work answered first, closes the work's connection
    /// and cancels the work.
    func timeOut(_ error: StoreError) {
        let (continuation, connection, work) = state.withLockedValue { s in
            defer {
                s.continuation = nil
                s.connection = nil
                s.timedOut = true
            }
            return (s.continuation, s.connection, s.work)
        }
        guard let continuation else { return }
        continuation.resume(throwing: error)
        let _: EventLoopFuture<Void>? = connection?.close()
        work?.cancel()
    }
}

/// Passes records to `base`, raising those of `info` and above to `error`.
struct RaisingLogHandler: LogHandler {
    var base: any LogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if event.level >= .info { event.level = .error }
        base.log(event: event)
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (s, a) = components
        return s * 1_000_000_000 + a / 1_000_000_000
    }

    /// `5s`, `1.5s`, `250ms`, for messages.
    var display: String {
        let ms = nanoseconds / 1_000_000
        return ms % 1000 == 0 ? "\(ms / 1000)s" : ms < 1000 ? "\(ms)ms" : "\(Double(ms) / 1000)s"
    }
}
