import Foundation
import NIOConcurrencyHelpers
import SessionPolicyServer
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Slow clients (issue 32 §0, a slowloris): connections that send a request's headers or body a
/// line at a time are closed within `http.request.timeout`, idle keep-alive connections within
/// `http.idle.timeout`, and real requests are answered meanwhile.
@Suite("Slow clients", .serialized)
struct SlowClientTests {
    static let requestTimeout: Duration = .seconds(2)
    static let idleTimeout: Duration = .seconds(3)
    /// How late after its bound a connection may still be closed. Generous: the whole server
    /// suite runs in one process on 2 shared cores, and with it running alongside, 9.9 s was
    /// seen for the 2 s bound (3.6 s alone); still well under the 30 s idle timeout, so only the
    /// request timeout can have closed them. Without it they stay open (the check below).
    static let slack: Duration = .seconds(10)

    /// The request timeout under test, and an idle timeout that cannot close the slow
    /// connections first (so the request timeout is what closes them).
    static func configure(_ c: inout ServerConfiguration) {
        c.httpRequestTimeout = requestTimeout
        c.httpIdleTimeout = .seconds(30)
    }

    static func configureIdle(_ c: inout ServerConfiguration) {
        c.httpIdleTimeout = idleTimeout
    }

    @Test("200 connections dribbling headers and 20 dribbling a body are closed within the bound; real requests answered meanwhile")
    func slowloris() async throws {
        try await TestServer.run(.sqlite, configure: Self.configure) { http in
            let port = try #require(http.client.port)
            let slow = SlowConnections(port: port)
            try slow.open(headers: 200, bodies: 20)
            let dribbling = Task.detached { await Socket.onThread { slow.dribble(for: .seconds(16)) } }
            // Real requests while the slow ones are open: each answered, and soon.
            var slowest = Duration.zero
            let until = ContinuousClock.now + .seconds(4)
            while ContinuousClock.now < until {
                let start = ContinuousClock.now
                // A failure is recorded, not thrown: the test goes on until the slow connections
                // are closed, since a server torn down while connections wait to be accepted
                // trips NIO's `Deinited NIOAsyncWriter without calling finish()` (seen once so).
                let reply = await Socket.onThread {
                    Result { try BoundedHTTP(port: port, timeout: .seconds(10)).send("GET", "/v1/policies") }
                }
                switch reply {
                case let .success(r): #expect(r.status == 200)
                case let .failure(e): Issue.record("a real request failed while slow clients were connected: \(e)")
                }
                slowest = max(slowest, ContinuousClock.now - start)
                try await Task.sleep(for: .milliseconds(100))
            }
            // Under the bug every real request waited as long as the slow connections stayed; 5 s
            // leaves room for the rest of the suite running in the same process.
            #expect(slowest < .seconds(5), "a real request took \(slowest) while slow clients were connected")
            let lifetimes = await dribbling.value
            #expect(lifetimes.count == 220)
            let open = lifetimes.filter { $0 == nil }.count
            #expect(open == 0, "\(open) slow connections still open after 16 s")
            let longest = lifetimes.compactMap { $0 }.max() ?? .zero
            #expect(longest <= Self.requestTimeout + Self.slack, "a slow connection lived \(longest)")
        }
    }

    @Test("an idle keep-alive connection is closed after http.idle.timeout")
    func idleKeepAlive() async throws {
        try await TestServer.run(.sqlite, configure: Self.configureIdle) { http in
            let port = try #require(http.client.port)
            let lived = try await Socket.onThread { () -> Result<Duration, any Error> in
                Result {
                    let fd = try Socket.connect(port: port, timeout: .seconds(10))
                    defer { close(fd) }
                    Socket.send(fd, Array("GET /v1/policies HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                    _ = Socket.receive(fd)
                    let answered = ContinuousClock.now
                    while let chunk = Socket.receive(fd), !chunk.isEmpty {}
                    return ContinuousClock.now - answered
                }
            }.get()
            #expect(lived >= Self.idleTimeout - .milliseconds(200) && lived <= Self.idleTimeout + Self.slack, "closed after \(lived)")
        }
    }
}

/// Many connections that each send a request a little at a time, and when each was closed.
final class SlowConnections: @unchecked Sendable {
    let port: Int
    private var sockets: [(fd: Int32, opened: ContinuousClock.Instant, body: Bool)] = []

    init(port: Int) { self.port = port }

    func open(headers: Int, bodies: Int) throws {
        for i in 0..<(headers + bodies) {
            let fd = try Socket.connect(port: port, timeout: .seconds(5))
            let body = i >= headers
            let start =
                body
                ? "POST /v1/policies/spendiq/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
                : "GET /v1/policies HTTP/1.1\r\nHost: x\r\n"
            Socket.send(fd, Array(start.utf8))
            sockets.append((fd, .now, body))
        }
    }

    /// Sends one more header line (or body byte) on every open connection every 500 ms, for
    /// `duration`; each connection's life until the server closed it (nil: still open).
    func dribble(for duration: Duration) -> [Duration?] {
        var closed: [Duration?] = Array(repeating: nil, count: sockets.count)
        let end = ContinuousClock.now + duration
        var n = 0
        while ContinuousClock.now < end {
            for (i, s) in sockets.enumerated() where closed[i] == nil {
                var byte: UInt8 = 0
                let r = recv(s.fd, &byte, 1, Int32(MSG_DONTWAIT))
                if r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                    closed[i] = ContinuousClock.now - s.opened
                    continue
                }
                Socket.send(s.fd, Array((s.body ? " " : "X-Slow-\(n): \(n)\r\n").utf8))
            }
            n += 1
            usleep(100_000)
        }
        for s in sockets { close(s.fd) }
        return closed
    }
}
