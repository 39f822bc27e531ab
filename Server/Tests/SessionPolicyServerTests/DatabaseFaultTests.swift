import Foundation
import NIOConcurrencyHelpers
import SessionPolicyServer
import Testing

/// The server on PostgreSQL when the database goes away (issue 32 §0): restarted, crashed,
/// silent, or cut off, under concurrent stateful writes. A PostgreSQL cluster of the tests' own
/// (`TestCluster`) behind a TCP proxy of the test's (`TCPProxy`), so the shared test database is
/// never disturbed. Runs where the PostgreSQL suite runs (`SESSIONPOLICY_TEST_POSTGRES`).
@Suite(
    "Database faults", .serialized,
    .enabled(
        if: TestStorage.postgresURL != nil && TestCluster.bin != nil,
        "needs SESSIONPOLICY_TEST_POSTGRES and PostgreSQL's programs (SESSIONPOLICY_TEST_PGBIN)"))
struct DatabaseFaultTests {
    /// Rounds of faults; `SESSIONPOLICY_FAULT_ROUNDS` runs more by hand.
    static let rounds = ProcessInfo.processInfo.environment["SESSIONPOLICY_FAULT_ROUNDS"].flatMap { Int($0) } ?? 60
    /// The store's bound in these tests (`store.timeout`, `store.connect.timeout`).
    static let storeTimeout: Duration = .seconds(1)
    /// Every request must be answered within this, during a fault too (a 503 then).
    static let answerBound: Duration = .seconds(5)
    /// After the database is back, every client must have an acknowledged write within this.
    static let recoveryBound: Duration = .seconds(10)
    static let clients = 16

    @Test("CI has PostgreSQL's programs for the fault tests")
    func programsOnCI() {
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            #expect(TestCluster.bin != nil, "CI must set SESSIONPOLICY_TEST_PGBIN (.ci/run does)")
        }
    }

    enum Fault: String, CaseIterable {
        /// Every connection to the database closed at once.
        case cut
        /// Nothing goes through for 1.5 s, then everything held does.
        case stall
        /// Stalled for 1.5 s, then cut: connections the database will never answer on.
        case stallThenCut = "stall+cut"
        /// `pg_ctl stop -m fast` and start: sessions terminated (57P01), a database refusing connections.
        case restart
        /// `pg_ctl stop -m immediate`, 0.5 s, start: a crash and its recovery.
        case crash

        /// Round `n`'s fault: a restart or a crash every 5th round, proxy faults between.
        static func of(round n: Int) -> Fault {
            if n % 5 == 4 { return (n / 5) % 2 == 0 ? .restart : .crash }
            return [.cut, .stall, .stallThenCut][n % 3]
        }
    }

    @Test("restarted, crashed, stalled and cut under 16 writing clients: every request answered in 5 s, nothing acknowledged lost")
    func faultRounds() async throws {
        let cluster = try await Socket.onThread { Result { try TestCluster.start() } }.get()
        defer { cluster.destroy() }
        let proxy = try TCPProxy(upstream: cluster.port)
        defer { proxy.stop() }
        try await TestServer.run(.sqlite, configure: { Self.configure(&$0, proxy: proxy) }) { http in
            let port = try #require(http.client.port)
            let service = try await Tokens.service()
            let load = Load(port: port, token: service, clients: Self.clients, timeout: .seconds(15))
            load.start()
            var recoveries: [(Fault, Duration)] = []
            for round in 0..<Self.rounds {
                let fault = Fault.of(round: round)
                let back = try await Self.inject(fault, cluster: cluster, proxy: proxy)
                let recovered = await load.waitForAcknowledgements(after: back, within: Self.recoveryBound)
                #expect(
                    recovered != nil,
                    "round \(round) (\(fault.rawValue)): a client had no write acknowledged 10 s after the database was back")
                if let recovered { recoveries.append((fault, recovered)) }
            }
            let samples = await load.stop()
            try await Self.check(samples, recoveries: recoveries, load: load, port: port)
        }
    }

    /// Injects `fault`; the instant the database is reachable again.
    static func inject(_ fault: Fault, cluster: TestCluster, proxy: TCPProxy) async throws -> ContinuousClock.Instant {
        switch fault {
        case .cut:
            proxy.cut()
        case .stall, .stallThenCut:
            proxy.stall(true)
            try await Task.sleep(for: .milliseconds(1500))
            if fault == .stallThenCut { proxy.cut() }
            proxy.stall(false)
        case .restart:
            try await Socket.onThread { Result { try cluster.stop("fast") } }.get()
            try await Socket.onThread { Result { try cluster.start() } }.get()
        case .crash:
            try await Socket.onThread { Result { try cluster.stop("immediate") } }.get()
            try await Task.sleep(for: .milliseconds(500))
            try await Socket.onThread { Result { try cluster.start() } }.get()
        }
        return .now
    }

    static func configure(_ c: inout ServerConfiguration, proxy: TCPProxy) {
        c.storage = try! StorageURL.parse("postgres://postgres@127.0.0.1:\(proxy.port)/postgres")
        c.storeTimeout = storeTimeout
        c.storeConnectTimeout = storeTimeout
    }

    /// Every request answered (200, or 503 `store-unavailable`) within the bound; per session,
    /// every acknowledged revision distinct and at most the stored one (an acknowledged write
    /// lost would let a later write take its revision again).
    /// (Over a connection of its own: the test client's has been idle longer than `http.idle.timeout`.)
    static func check(_ samples: [Load.Sample], recoveries: [(Fault, Duration)], load: Load, port: Int) async throws {
        let unanswered = samples.filter { $0.status == nil }
        #expect(unanswered.isEmpty, "\(unanswered.count) requests not answered: \(unanswered.prefix(3).map(\.error))")
        let slow = samples.filter { $0.duration > answerBound }
        let slowest = samples.map(\.duration).max() ?? .zero
        #expect(slow.isEmpty, "\(slow.count) requests answered after more than 5 s; slowest \(slowest)")
        let other = samples.filter { $0.status != nil && $0.status != 200 && !($0.status == 503 && $0.storeUnavailable) }
        #expect(other.isEmpty, "answers other than 200 and 503 store-unavailable: \(other.prefix(3).map { "\($0.status!) \($0.body)" })")
        let service = try await Tokens.service()
        for (user, acknowledged) in load.acknowledged(samples) {
            #expect(Set(acknowledged).count == acknowledged.count, "\(user): a revision acknowledged twice: a write was lost")
            let stored = try await get(port, "/v1/policies/spendiq/sessions/\(user)/phone-1", token: service)
            let json = (try? JSONSerialization.jsonObject(with: Data(stored.body.utf8))) as? [String: Any]
            let revision = json?["revision"] as? Int ?? 0
            #expect((acknowledged.max() ?? 0) <= revision, "\(user): acknowledged up to \(acknowledged.max() ?? 0), stored \(revision)")
        }
        let failures = samples.filter { $0.status == 503 }.count
        if failures > 0 {
            let metrics = try await get(port, "/metrics").body
            #expect(metrics.contains(#"sessionpolicy_store_errors_total{operation="update_session"}"#))
        }
        let worst = Dictionary(grouping: recoveries, by: { $0.0.rawValue }).mapValues { $0.map(\.1).max() ?? .zero }
        print(
            "fault rounds: \(recoveries.count) recovered of \(rounds); \(samples.count) requests, \(failures) answered 503; "
                + "slowest answer \(slowest); slowest recovery by fault \(worst.sorted { $0.key < $1.key })")
    }

    @Test("a database that accepts connections and never answers: 503 within the bound, then 200 when it answers")
    func silentDatabase() async throws {
        let cluster = try await Socket.onThread { Result { try TestCluster.start() } }.get()
        defer { cluster.destroy() }
        let proxy = try TCPProxy(upstream: cluster.port)
        defer { proxy.stop() }
        try await TestServer.run(.sqlite, configure: { Self.configure(&$0, proxy: proxy) }) { http in
            let port = try #require(http.client.port)
            let service = try await Tokens.service()
            let path = "/v1/policies/spendiq/sessions/\(unique("silent"))/phone-1/events"
            #expect(try await Self.post(port, path, token: service).status == 200)
            proxy.cut()
            proxy.stall(true)
            for _ in 0..<3 {
                let start = ContinuousClock.now
                let reply = try await Self.post(port, path, token: service)
                let took = ContinuousClock.now - start
                #expect(reply.status == 503 && reply.body.contains("store-unavailable"), "\(reply.status) \(reply.body)")
                #expect(took < .seconds(4), "answered after \(took)")
            }
            let health = try await Self.get(port, "/healthz")
            #expect(health.status == 503, "\(health.body)")
            proxy.stall(false)
            let deadline = ContinuousClock.now + Self.recoveryBound
            var last = 0
            while ContinuousClock.now < deadline {
                last = try await Self.post(port, path, token: service).status
                if last == 200 { break }
            }
            #expect(last == 200, "no write acknowledged after the database answered again")
        }
    }

    @Test("/healthz reports a write that waits past health.max.write.wait with 503")
    func wedgedWriter() async throws {
        let cluster = try await Socket.onThread { Result { try TestCluster.start() } }.get()
        defer { cluster.destroy() }
        let proxy = try TCPProxy(upstream: cluster.port)
        defer { proxy.stop() }
        let configure = { (c: inout ServerConfiguration) in
            Self.configure(&c, proxy: proxy)
            c.storeTimeout = .seconds(6)
            c.healthMaxWriteWait = .milliseconds(500)
        }
        try await TestServer.run(.sqlite, configure: configure) { http in
            let port = try #require(http.client.port)
            let service = try await Tokens.service()
            let path = "/v1/policies/spendiq/sessions/\(unique("wedge"))/phone-1/events"
            #expect(try await Self.post(port, path, token: service).status == 200)
            let healthy = try await Self.get(port, "/healthz")
            #expect(healthy.status == 200 && healthy.body.contains(#""writer":{"ok":true"#), "\(healthy.body)")
            proxy.stall(true)
            async let write = Self.post(port, path, token: service)
            try await Task.sleep(for: .seconds(1))
            let wedged = try await Self.get(port, "/healthz")
            #expect(wedged.status == 503, "\(wedged.body)")
            #expect(wedged.body.contains(#""writer":{"ok":false"#), "\(wedged.body)")
            proxy.stall(false)
            _ = try await write
            let after = try await Self.get(port, "/healthz")
            #expect(after.status == 200, "\(after.body)")
        }
    }

    static let event = #"{"event":{"type":"launch","time":"2026-03-03T08:00:00Z","network":"offline"}}"#

    static func post(_ port: Int, _ path: String, token: String) async throws -> BoundedHTTP.Reply {
        try await Socket.onThread {
            Result {
                try BoundedHTTP(port: port, timeout: .seconds(15)).send(
                    "POST", path, body: event, headers: ["Authorization": "Bearer \(token)"])
            }
        }.get()
    }

    static func get(_ port: Int, _ path: String, token: String? = nil) async throws -> BoundedHTTP.Reply {
        let headers = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
        return try await Socket.onThread {
            Result { try BoundedHTTP(port: port, timeout: .seconds(15)).send("GET", path, headers: headers) }
        }.get()
    }
}

/// Clients posting stateful events in a loop, each on its own thread and session, recording
/// every request: when it was sent, how long its answer took, its status and revision.
final class Load: Sendable {
    struct Sample: Sendable {
        var client: Int
        var sent: ContinuousClock.Instant
        var duration: Duration
        var status: Int?
        var revision: Int?
        var storeUnavailable: Bool
        var body: String
        var error: String
    }

    let port: Int
    let token: String
    let users: [String]
    let timeout: Duration
    private let samples = NIOLockedValueBox([Sample]())
    private let running = NIOLockedValueBox(true)
    private let finished = NIOLockedValueBox(0)

    init(port: Int, token: String, clients: Int, timeout: Duration) {
        self.port = port
        self.token = token
        self.users = (0..<clients).map { _ in unique("fault") }
        self.timeout = timeout
    }

    func start() {
        for (i, user) in users.enumerated() {
            let thread = Thread { [self] in
                run(client: i, user: user)
                finished.withLockedValue { $0 += 1 }
            }
            thread.start()
        }
    }

    private func run(client: Int, user: String) {
        let http = BoundedHTTP(port: port, timeout: timeout)
        let path = "/v1/policies/spendiq/sessions/\(user)/phone-1/events"
        while running.withLockedValue({ $0 }) {
            let sent = ContinuousClock.now
            var sample = Sample(
                client: client, sent: sent, duration: .zero, status: nil, revision: nil, storeUnavailable: false, body: "", error: "")
            do {
                let reply = try http.send("POST", path, body: DatabaseFaultTests.event, headers: ["Authorization": "Bearer \(token)"])
                sample.status = reply.status
                sample.body = String(reply.body.prefix(300))
                sample.storeUnavailable = reply.body.contains(#""code":"store-unavailable""#)
                let json = (try? JSONSerialization.jsonObject(with: Data(reply.body.utf8))) as? [String: Any]
                sample.revision = json?["revision"] as? Int
            } catch {
                sample.error = "\(error)"
            }
            sample.duration = ContinuousClock.now - sent
            samples.withLockedValue { $0.append(sample) }
            if sample.status != 200 { usleep(20_000) }
        }
    }

    /// Waits until every client has had a write acknowledged that it sent after `instant`; how
    /// long that took, or nil past `bound`.
    func waitForAcknowledgements(after instant: ContinuousClock.Instant, within bound: Duration) async -> Duration? {
        while ContinuousClock.now < instant + bound {
            let done = samples.withLockedValue { all in
                Set(all.filter { $0.sent >= instant && $0.status == 200 }.map(\.client)).count == users.count
            }
            if done { return ContinuousClock.now - instant }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// Stops the clients; every sample.
    func stop() async -> [Sample] {
        running.withLockedValue { $0 = false }
        while finished.withLockedValue({ $0 }) < users.count { try? await Task.sleep(for: .milliseconds(20)) }
        return samples.withLockedValue { $0 }
    }

    /// The revisions acknowledged to each user's client.
    func acknowledged(_ samples: [Sample]) -> [String: [Int]] {
        var out: [String: [Int]] = [:]
        for s in samples where s.status == 200 { out[users[s.client], default: []].append(s.revision ?? -1) }
        return out
    }
}
