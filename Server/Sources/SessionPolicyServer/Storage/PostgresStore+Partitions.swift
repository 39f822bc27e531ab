import Foundation
import PostgresNIO
public import SessionPolicy

/// The decision log's day partitions on PostgreSQL (schema 6, docs/storage.md#the-decision-log-on-postgresql).
///
/// `decisions` is partitioned by range of `server_time`: one partition a UTC day
/// (`decisions_YYYYMMDD`, created ``partitionDaysAhead`` days ahead of the server's clock), the
/// records from before the migration in `decisions_legacy` (up to the end of the day it ran), and
/// `decisions_default` for a record no partition takes (a clock far off, a day not yet created).
/// Retention drops whole day partitions; the legacy and default ones lose their old records in
/// batches, as SQLite's log does.
extension PostgresStore {
    /// Days of partitions kept ready past the current one.
    static let partitionDaysAhead = 7
    /// How long creating or dropping a partition waits for its lock before it gives up until the
    /// next minute (it waits for the statements using the table, and writers wait behind it).
    static let partitionLockTimeout = "2s"
    static let millisecondsPerDay: Int64 = 86_400_000

    /// One partition of `decisions`: its name and its range of `server_time` (nil bounds:
    /// MINVALUE, MAXVALUE; both nil for the default partition).
    struct DecisionPartition: Sendable, Equatable {
        var name: String
        var lower: Int64?
        var upper: Int64?
        var isDefault: Bool

        /// True when it holds any part of [lower, upper).
        func overlaps(_ lower: Int64, _ upper: Int64) -> Bool {
            !isDefault && (self.lower ?? .min) < upper && lower < (self.upper ?? .max)
        }
    }
}

extension PostgresStore.DecisionPartition {
    /// Reads PostgreSQL's text of a partition bound: `FOR VALUES FROM ('1') TO ('2')`,
    /// `FOR VALUES FROM (MINVALUE) TO ('2')`, `DEFAULT`.
    init?(name: String, bound: String) {
        self.name = name
        if bound == "DEFAULT" {
            (lower, upper, isDefault) = (nil, nil, true)
            return
        }
        let values = bound.split(whereSeparator: { "()".contains($0) }).map { $0.trimmingCharacters(in: .whitespaces) }
        // ["FOR VALUES FROM", "'1'", "TO", "'2'"]
        guard values.count == 4, values[0] == "FOR VALUES FROM", values[2] == "TO" else { return nil }
        func value(_ text: String) -> Int64?? {
            if text == "MINVALUE" || text == "MAXVALUE" { return .some(nil) }
            return Int64(text.trimmingCharacters(in: CharacterSet(charactersIn: "'"))).map { .some($0) }
        }
        guard let lower = value(values[1]), let upper = value(values[3]) else { return nil }
        (self.lower, self.upper, isDefault) = (lower, upper, false)
    }
}

extension PostgresStore {
    /// The partitions of `decisions`, none before schema 6.
    func decisionPartitions(_ conn: PostgresConnection) async throws -> [DecisionPartition] {
        let rows = try await conn.query(
            """
            SELECT c.relname::text, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = to_regclass('decisions') ORDER BY c.relname
            """, logger: logger)
        var out: [DecisionPartition] = []
        for try await (name, bound) in rows.decode((String, String).self) {
            if let p = DecisionPartition(name: name, bound: bound) { out.append(p) }
        }
        return out
    }

    /// The name of the partition of the UTC day that starts at `start`: `decisions_20261128`.
    static func partitionName(dayStarting start: Int64) -> String {
        // `2026-11-28T00:00:00Z`
        "decisions_" + Timestamp(millisecondsSinceEpoch: start).description.prefix(10).filter { $0 != "-" }
    }

    /// Creates the day partitions from the day before `now` to ``partitionDaysAhead`` days after
    /// it, where none covers the day and the default partition holds none of its records (those
    /// stay there, purged in batches). The names of those created.
    public func prepareDecisionLog(now: Timestamp) async throws -> [String] {
        let today = now.millisecondsSinceEpoch - now.millisecondsSinceEpoch.modulo(Self.millisecondsPerDay)
        let days = (-1...Self.partitionDaysAhead).map { today + Int64($0) * Self.millisecondsPerDay }
        return try await bounded { conn in
            var partitions = try await self.decisionPartitions(conn)
            guard partitions.contains(where: \.isDefault) else { return [] }  // not partitioned (schema 5)
            var created: [String] = []
            for lower in days {
                let upper = lower + Self.millisecondsPerDay
                if partitions.contains(where: { $0.overlaps(lower, upper) }) { continue }
                let name = Self.partitionName(dayStarting: lower)
                let made = try await conn.withTransaction(logger: self.logger) { tx -> Bool in
                    try await tx.query(
                        PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(Self.partitionLockTimeout)'"), logger: self.logger)
                    // One server creates a day; another finds it made.
                    try await tx.query(
                        PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(\(Schema.advisoryLock + 1))"), logger: self.logger)
                    if try await self.decisionPartitions(tx).contains(where: { $0.overlaps(lower, upper) }) { return false }
                    let stray = try await tx.query(
                        "SELECT EXISTS (SELECT 1 FROM decisions_default WHERE server_time >= \(lower) AND server_time < \(upper))",
                        logger: self.logger)
                    for try await exists in stray.decode(Bool.self) where exists { return false }
                    for sql in [
                        "CREATE TABLE \(name) (LIKE decisions INCLUDING DEFAULTS)",
                        "ALTER TABLE \(name) ADD CONSTRAINT \(name)_pkey PRIMARY KEY (id)",
                        "ALTER TABLE decisions ATTACH PARTITION \(name) FOR VALUES FROM (\(lower)) TO (\(upper))",
                    ] {
                        try await tx.query(PostgresQuery(unsafeSQL: sql), logger: self.logger)
                    }
                    return true
                }
                if made {
                    created.append(name)
                    partitions.append(DecisionPartition(name: name, lower: lower, upper: upper, isDefault: false))
                }
            }
            return created
        }
    }

    /// Drops every partition whose records were all received before `cutoff` (day partitions
    /// and the legacy one), each in its own short transaction; what was dropped.
    public func dropDecisions(before cutoff: Timestamp) async throws -> [DroppedDecisions] {
        let expired = try await bounded { conn in
            try await self.decisionPartitions(conn).filter { p in
                !p.isDefault && (p.upper.map { $0 <= cutoff.millisecondsSinceEpoch } ?? false)
            }
        }
        var dropped: [DroppedDecisions] = []
        for p in expired {
            let started = ContinuousClock.now
            let records = try await transaction { tx -> Int64 in
                try await tx.query(
                    PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(Self.partitionLockTimeout)'"), logger: self.logger)
                var records: Int64 = 0
                let count = try await tx.query(
                    "SELECT GREATEST(reltuples, 0)::int8 FROM pg_class WHERE oid = to_regclass(\(p.name))", logger: self.logger)
                for try await n in count.decode(Int64.self) { records = n }
                try await tx.query(PostgresQuery(unsafeSQL: "DROP TABLE \(p.name)"), logger: self.logger)
                return records
            }
            dropped.append(DroppedDecisions(part: p.name, estimatedRecords: records, duration: ContinuousClock.now - started))
        }
        return dropped
    }
}

extension Int64 {
    /// The remainder of division by `m`, never negative (days before 1970 too).
    func modulo(_ m: Int64) -> Int64 {
        let r = self % m
        return r < 0 ? r + m : r
    }
}
