import NIOConcurrencyHelpers
import PostgresNIO

/// How a store's connection pool is used at one moment: what `/metrics` reports as
/// `sessionpolicy_store_pool_connections{state}` and `sessionpolicy_store_pool_waiting`.
public struct PoolStatus: Sendable, Equatable {
    /// Connections open and lent to an operation.
    public var inUse: Int
    /// Connections open and lent to none.
    public var idle: Int
    /// Operations waiting for a connection.
    public var waiting: Int
    /// Most connections the pool opens (`store.pool.max`).
    public var max: Int
}

/// Counts the PostgreSQL pool's connections as the store leases them: postgres-nio does not
/// publish its pool's state, so the store counts what it sees through public API. A connection
/// is open from its first lease until its channel closes (the pool opens connections only for
/// waiting operations, so none is open that was never lent); waiting is from the request for a
/// connection until the lease or the give-up.
final class PostgresPoolGauge: Sendable {
    private struct State {
        var open = Set<Int>()
        var inUse = 0
        var waiting = 0
    }
    private let state = NIOLockedValueBox(State())
    let max: Int

    init(max: Int) { self.max = max }

    /// An operation asks for a connection.
    func requested() { state.withLockedValue { $0.waiting += 1 } }

    /// An operation that asked gave up before it got one (a timeout, a cancellation, a pool error).
    func abandoned() { state.withLockedValue { $0.waiting -= 1 } }

    /// An operation got `connection`.
    func leased(_ connection: PostgresConnection) {
        let id = connection.id
        let first = state.withLockedValue { s -> Bool in
            s.waiting -= 1
            s.inUse += 1
            return s.open.insert(id).inserted
        }
        if first {
            connection.closeFuture.whenComplete { [self] _ in
                _ = state.withLockedValue { $0.open.remove(id) }
            }
        }
    }

    /// The operation that held a connection gave it back.
    func released() { state.withLockedValue { $0.inUse -= 1 } }

    /// The pool now.
    var status: PoolStatus {
        state.withLockedValue { s in
            PoolStatus(inUse: s.inUse, idle: Swift.max(0, s.open.count - s.inUse), waiting: s.waiting, max: max)
        }
    }
}
