import Foundation
import NIOConcurrencyHelpers

/// A token-bucket rate limiter per key (a client address, a device id), in memory. Each key
/// may spend `burst` requests at once and regains `perMinute` per minute. The table is bounded:
/// past `maxKeys` the fullest buckets (the least recently limited) are dropped first.
/// With several servers each keeps its own buckets, so the effective limit is per server.
final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: Double
    }

    let perMinute: Double
    let burst: Double
    let maxKeys: Int
    private let buckets = NIOLockedValueBox([String: Bucket]())

    init(perMinute: Int, burst: Int, maxKeys: Int = 100_000) {
        self.perMinute = Double(perMinute)
        self.burst = Double(max(1, burst))
        self.maxKeys = maxKeys
    }

    /// Spends one request for `key` at `now` (seconds); returns nil if allowed, or the seconds
    /// to wait before the next request would be.
    func spend(_ key: String, now: Double) -> Double? {
        buckets.withLockedValue { table in
            var b = table[key] ?? Bucket(tokens: burst, updated: now)
            b.tokens = min(burst, b.tokens + max(0, now - b.updated) * perMinute / 60)
            b.updated = now
            if b.tokens >= 1 {
                b.tokens -= 1
                table[key] = b
                if table.count > maxKeys { Self.evict(&table, now: now, perMinute: perMinute, burst: burst) }
                return nil
            }
            table[key] = b
            return perMinute > 0 ? (1 - b.tokens) * 60 / perMinute : 60
        }
    }

    /// Drops the buckets that have refilled (they behave as new ones), then the oldest half.
    private static func evict(_ table: inout [String: Bucket], now: Double, perMinute: Double, burst: Double) {
        table = table.filter { $0.value.tokens + (now - $0.value.updated) * perMinute / 60 < burst }
        if table.count > 1000 {
            let sorted = table.sorted { $0.value.updated < $1.value.updated }
            for (key, _) in sorted.prefix(table.count / 2) { table[key] = nil }
        }
    }
}
