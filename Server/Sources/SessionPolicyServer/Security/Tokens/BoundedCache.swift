/// A map that keeps at most `limit` entries, in two generations: entries go into the young one;
/// when it holds half the limit, it becomes the old one and the old one is dropped. A hit in the
/// old generation moves the entry to the young one, so what is used stays. Every operation is
/// O(1); the oldest unused entries go first, a generation at a time (no entry-by-entry eviction,
/// whose scans grew with the table's emptied slots).
struct BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let limit: Int
    private var young: [Key: Value] = [:]
    private var old: [Key: Value] = [:]

    init(limit: Int) { self.limit = max(2, limit) }

    /// How many entries are kept.
    var count: Int { young.count + old.count }

    /// The value of `key`, if kept.
    mutating func value(_ key: Key) -> Value? {
        if let value = young[key] { return value }
        guard let value = old.removeValue(forKey: key) else { return nil }
        insert(key, value)
        return value
    }

    /// Keeps `value` for `key`.
    mutating func insert(_ key: Key, _ value: Value) {
        if young.count >= limit / 2, young[key] == nil {
            old = young
            young = [:]
            young.reserveCapacity(limit / 2)
        }
        young[key] = value
        old[key] = nil
    }

    /// Forgets `key`.
    mutating func remove(_ key: Key) {
        young[key] = nil
        old[key] = nil
    }

    /// Forgets everything.
    mutating func removeAll() {
        young = [:]
        old = [:]
    }
}
