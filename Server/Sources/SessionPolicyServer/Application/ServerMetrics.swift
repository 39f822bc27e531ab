import Foundation
import NIOConcurrencyHelpers
import Prometheus
import SessionPolicy

/// The server's Prometheus metrics (`GET /metrics`), in one registry per application so tests
/// and embedders can run several servers in one process.
public final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    // The registry finds a metric by building a key from its labels; these remember them.
    private let counters = NIOLockedValueBox([DecisionKey: Counter]())
    private let histograms = NIOLockedValueBox([RequestKey: DurationHistogram]())
    private let storeHistograms = NIOLockedValueBox([String: DurationHistogram]())
    /// `sessionpolicy_policy_serving` of each policy that serves, by name, with its digest.
    private let serving = NIOLockedValueBox([String: (digest: String, gauge: Gauge)]())

    private struct DecisionKey: Hashable {
        var policy: String
        var decision: Decision?
        var reason: Reason
    }

    private struct RequestKey: Hashable {
        var route: String
        var method: String
        var status: Int
    }

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "sessionpolicy", metricName: metric, unitName: unit, helpText: help)
    }

    static var decisionsName: MetricNameDescriptor { name("decisions", "total", "Decisions made, by policy, decision and reason.") }
    static var requestsName: MetricNameDescriptor { name("request_duration", "seconds", "Time to answer a request, by route and status.") }
    static var storeErrorsName: MetricNameDescriptor { name("store_errors", "total", "Storage operations that failed, by operation.") }
    static var rateLimitedName: MetricNameDescriptor { name("rate_limited", "total", "Requests refused by a rate limit, by limit.") }
    static var refusedName: MetricNameDescriptor {
        name(
            "refused_events", "total",
            "Session events refused before evaluation, by why (untrusted_event, event_in_future, event_too_late).")
    }
    static var reloadsName: MetricNameDescriptor { name("policy_reloads", "total", "Policy directory reloads, by result.") }
    static var policiesName: MetricNameDescriptor { name("policies", "loaded", "Policies serving.") }
    static var brokenName: MetricNameDescriptor {
        name("policy_files", "broken", "Policy files that do not compile (their last good version serves).")
    }

    static var keyFetchesName: MetricNameDescriptor {
        name("token_key_fetches", "total", "Fetches of the issuer's key set (discovery and JWKS), by result.")
    }
    static var keysFetchedName: MetricNameDescriptor {
        name(
            "token_keys_fetched", "timestamp_seconds",
            "When the issuer's key set was last fetched successfully (alert on its age: the keys stop verifying at token.jwks.max.stale).")
    }
    static var keysName: MetricNameDescriptor { name("token_keys", "loaded", "Keys in the issuer's key set.") }

    static var machinesName: MetricNameDescriptor {
        name(
            "machine_envelopes", "total",
            "Signed machines served, by signing key id and role (current or previous): watch the previous key's fall to 0 "
                + "before ending a rotation.")
    }
    static var machineKeyMissesName: MetricNameDescriptor {
        name("machine_key_misses", "total", "Requests for a signed machine from apps that pin none of the server's signing keys.")
    }

    static var buildInfoName: MetricNameDescriptor {
        name("build", "info", "The server's version (always 1).")
    }
    static var servingName: MetricNameDescriptor {
        name("policy", "serving", "Each policy that serves, with its machine digest (always 1; a reload replaces the series).")
    }
    static var storeDurationName: MetricNameDescriptor {
        name("store_duration", "seconds", "Time of a storage operation of a request, by operation, failures included.")
    }

    static var groupSizeName: MetricNameDescriptor {
        name("store_group_commit", "writes", "Session writes per group commit (one transaction or statement).")
    }
    static var conflictsName: MetricNameDescriptor {
        name(
            "store_write_conflicts", "total",
            "PostgreSQL conditional writes that found their row changed (the event is evaluated again).")
    }
    static var lockedName: MetricNameDescriptor {
        name("store_locked_fallbacks", "total", "PostgreSQL events written by the locking transaction after repeated conflicts.")
    }

    static var poolConnectionsName: MetricNameDescriptor {
        name("store_pool", "connections", "PostgreSQL connections of the pool, by state (in_use, idle, max).")
    }
    static var poolWaitingName: MetricNameDescriptor {
        name("store_pool_waiting", "operations", "Storage operations waiting for a PostgreSQL connection of the pool.")
    }

    static let buckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
        .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .seconds(1),
    ]

    /// Creates the metrics, with `sessionpolicy_build_info{version}`.
    public init() {
        registry.makeGauge(descriptor: Self.buildInfoName, labels: [("version", SessionPolicyRelease.version)]).set(Double(1))
    }

    /// Counts `count` decisions of one kind.
    func decided(policy: String, _ outcome: Outcome, count: Int = 1) {
        let key = DecisionKey(policy: policy, decision: outcome.decision, reason: outcome.reason)
        if let counter = counters.withLockedValue({ $0[key] }) {
            counter.increment(by: Int64(count))
            return
        }
        let counter = registry.makeCounter(
            descriptor: Self.decisionsName,
            labels: [
                ("policy", policy), ("decision", outcome.decision?.rawValue ?? "none"), ("reason", outcome.reason.rawValue),
            ]
        )
        counters.withLockedValue { $0[key] = counter }
        counter.increment(by: Int64(count))
    }

    /// Records a request's duration.
    func request(route: String, method: String, status: Int, duration: Duration) {
        Self.histogram(in: histograms, RequestKey(route: route, method: method, status: status)) {
            registry.makeDurationHistogram(
                descriptor: Self.requestsName, labels: [("route", route), ("method", method), ("status", String(status))],
                buckets: Self.buckets)
        }.record(duration)
    }

    /// The histogram of `key` in `cache`, made by `make` the first time.
    private static func histogram<Key: Hashable>(
        in cache: NIOLockedValueBox<[Key: DurationHistogram]>, _ key: Key, make: () -> DurationHistogram
    ) -> DurationHistogram {
        if let histogram = cache.withLockedValue({ $0[key] }) { return histogram }
        let histogram = make()
        cache.withLockedValue { $0[key] = histogram }
        return histogram
    }

    /// Counts a failed storage operation.
    func storeError(_ operation: String) {
        registry.makeCounter(descriptor: Self.storeErrorsName, labels: [("operation", operation)]).increment()
    }

    /// Counts a request refused by a rate limit.
    func rateLimited(_ limit: String) {
        registry.makeCounter(descriptor: Self.rateLimitedName, labels: [("limit", limit)]).increment()
    }

    /// Counts a session event refused before evaluation.
    func refused(_ why: String) {
        registry.makeCounter(descriptor: Self.refusedName, labels: [("why", why)]).increment()
    }

    /// Records a reload and what serves after it: `serving` is each policy's machine digest.
    func reloaded(ok: Bool, serving policies: [String: String], broken: Int) {
        registry.makeCounter(descriptor: Self.reloadsName, labels: [("result", ok ? "ok" : "failed")]).increment()
        registry.makeGauge(descriptor: Self.policiesName).set(Double(policies.count))
        registry.makeGauge(descriptor: Self.brokenName).set(Double(broken))
        serving.withLockedValue { held in
            for (name, old) in held where policies[name] != old.digest {
                registry.unregisterGauge(old.gauge)
                held[name] = nil
            }
            for (name, digest) in policies where held[name] == nil {
                let gauge = registry.makeGauge(descriptor: Self.servingName, labels: [("policy", name), ("digest", digest)])
                gauge.set(Double(1))
                held[name] = (digest, gauge)
            }
        }
    }

    /// Records the time of a storage operation, failed or not.
    func stored(_ operation: String, _ duration: Duration) {
        Self.histogram(in: storeHistograms, operation) {
            registry.makeDurationHistogram(descriptor: Self.storeDurationName, labels: [("operation", operation)], buckets: Self.buckets)
        }.record(duration)
    }

    /// Records the PostgreSQL pool's use (set at each scrape).
    func pool(_ status: PoolStatus) {
        for (state, value) in [("in_use", status.inUse), ("idle", status.idle), ("max", status.max)] {
            registry.makeGauge(descriptor: Self.poolConnectionsName, labels: [("state", state)]).set(Double(value))
        }
        registry.makeGauge(descriptor: Self.poolWaitingName).set(Double(status.waiting))
    }

    /// Records a fetch of the issuer's key set.
    func tokenKeysFetched(ok: Bool, keys: Int) {
        registry.makeCounter(descriptor: Self.keyFetchesName, labels: [("result", ok ? "ok" : "failed")]).increment()
        guard ok else { return }
        registry.makeGauge(descriptor: Self.keysFetchedName).set(Date().timeIntervalSince1970)
        registry.makeGauge(descriptor: Self.keysName).set(Double(keys))
    }

    /// Counts a signed machine served, signed with `key`.
    func machineServed(key: String, current: Bool) {
        registry.makeCounter(descriptor: Self.machinesName, labels: [("key", key), ("role", current ? "current" : "previous")])
            .increment()
    }

    /// Counts a request for a signed machine that pins none of the server's keys.
    func machineKeyMissed() { registry.makeCounter(descriptor: Self.machineKeyMissesName).increment() }

    /// The Prometheus text exposition.
    public func render() -> [UInt8] { registry.emitToBuffer() }
}

extension ServerMetrics: StoreObserver {
    public func groupCommitted(size: Int) {
        registry.makeValueHistogram(descriptor: Self.groupSizeName, buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]).record(Double(size))
    }

    public func writeConflicted() { registry.makeCounter(descriptor: Self.conflictsName).increment() }

    public func lockedFallback() { registry.makeCounter(descriptor: Self.lockedName).increment() }
}
