import Foundation
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// The batch route's limits are the documented ones (`--max-batch-body`, `--max-batch-items`,
/// and a value budget that follows the item limit), each tested at, below and above.
@Suite("Batch limits")
struct BatchLimitTests {
    static let item = #"{"event":{"type":"background","time":"2026-01-01T00:00:00Z"}}"#

    static func batch(_ n: Int, item: String = item) -> String {
        "{\"items\":[" + Array(repeating: item, count: n).joined(separator: ",") + "]}"
    }

    /// An item whose event reports `n` attributes (2 values each): about `2n + 7` values.
    static func wideItem(_ n: Int) -> String {
        let attributes = (0..<n).map { "\"a\($0)\":\"v\"" }.joined(separator: ",")
        return #"{"event":{"type":"background","time":"2026-01-01T00:00:00Z","attributes":{"# + attributes + "}}}"
    }

    @Test("the item limit: at it 200, one more 400")
    func items() async throws {
        try await TestServer.run(.sqlite, configure: { $0.maxBatchItems = 1_000 }) { http in
            let at = try await http.post("/v1/policies/spendiq/evaluate/batch", Self.batch(1_000))
            #expect(at.status == 200)
            #expect((at.json?["results"] as? [Any])?.count == 1_000)
            let over = try await http.post("/v1/policies/spendiq/evaluate/batch", Self.batch(1_001))
            #expect(over.status == 400)
            #expect(over.code == "input-too-large" && over.text.contains("more than the limit of 1000"), "\(over.text)")
        }
    }

    @Test("the default limits take a batch far over the policy-file limits (the reported 4,000 and 5,000 item cases)")
    func defaults() async throws {
        try await TestServer.run(.sqlite) { http in
            // ~2 MB: once refused with the 1 MiB file limit.
            let state =
                #"{"state":"active","user":"alice","device":"phone-1","auth_mode":"none","last_idp_login":"2026-03-01T09:00:00Z","last_online":"2026-03-01T09:00:00Z","last_activity":"2026-03-01T09:00:00Z","highest_time":"2026-03-01T09:00:00Z"}"#
            let full =
                #"{"state":"# + state
                + #","event":{"type":"launch","time":"2026-03-05T09:00:00Z","network":"offline","user":"alice","device":{"id":"phone-1"}}}"#
            let big = Self.batch(4_000, item: full)
            #expect(big.utf8.count > 1 << 20)
            let reply = try await http.post("/v1/policies/spendiq/evaluate/batch", big)
            #expect(reply.status == 200, "\(reply.text.prefix(300))")
            // The same through the located reader (an escaped character makes the fast reader decline).
            let escaped = Self.batch(3_999, item: full).replacingOccurrences(
                of: "{\"items\":[", with: "{\"items\":[" + full.replacingOccurrences(of: "\"alice\"", with: #""al\u0069ce""#) + ",")
            let slow = try await http.post("/v1/policies/spendiq/evaluate/batch", escaped)
            #expect(slow.status == 200, "\(slow.text.prefix(300))")
            #expect((slow.json?["results"] as? [Any])?.count == 4_000)
            // Over 100,000 values: once refused with the file limit's `too-many-nodes`.
            let wide = Self.batch(5_000, item: Self.wideItem(8))
            let many = try await http.post("/v1/policies/spendiq/evaluate/batch", wide)
            #expect(many.status == 200, "\(many.text.prefix(300))")
        }
    }

    @Test("the value budget follows the item limit: 128 values per item")
    func values() async throws {
        try await TestServer.run(.sqlite, configure: { $0.maxBatchItems = 1_000 }) { http in
            // 1,000 items of ~117 values: over the 100,000 of a policy file, within 1,000 x 128.
            let within = try await http.post("/v1/policies/spendiq/evaluate/batch", Self.batch(1_000, item: Self.wideItem(55)))
            #expect(within.status == 200, "\(within.text.prefix(300))")
            // ~147 values per item: past the budget, refused wherever the reader is.
            let over = try await http.post("/v1/policies/spendiq/evaluate/batch", Self.batch(1_000, item: Self.wideItem(70)))
            #expect(over.status == 400)
            #expect(over.code == "too-many-nodes" && over.text.contains("--max-batch-items"), "\(over.text.prefix(400))")
        }
    }

    @Test("the byte limit: exactly at it 200, one byte more 413")
    func bytes() async throws {
        let body = Self.batch(100)
        try await TestServer.run(.sqlite, configure: { $0.maxBatchBytes = body.utf8.count + 10 }) { http in
            let padded = body + String(repeating: " ", count: 10)
            let at = try await http.post("/v1/policies/spendiq/evaluate/batch", padded)
            #expect(at.status == 200, "\(at.text.prefix(300))")
            let below = try await http.post("/v1/policies/spendiq/evaluate/batch", body)
            #expect(below.status == 200)
            let over = try await http.post("/v1/policies/spendiq/evaluate/batch", padded + " ")
            #expect(over.status == 413)
            #expect(over.code == "input-too-large")
        }
    }

    @Test("policyctl serve refuses a declared over-limit body with 413 at once, before any of it is sent")
    func promptRefusal() async throws {
        let dir = try Fixtures.temporaryDirectory("batch-413")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (process, port) = try await ServeProcess.start([
            "--port", "0", "--policies", Fixtures.path("policies"), "--storage", "sqlite:\(dir.path)/s.sqlite",
        ])
        defer {
            if process.isRunning { process.terminate() }
        }
        // 25 MB declared (over the 16 MiB default), none of it sent: the answer must come anyway.
        let request =
            "POST /v1/policies/spendiq/evaluate/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: 25000000\r\n\r\n"
        let reply = try RawHTTP.exchange(port: port, request: request, timeoutSeconds: 5)
        #expect(reply.hasPrefix("HTTP/1.1 413"), "\(reply.prefix(200))")
        #expect(reply.contains("input-too-large") && reply.contains("more than the limit of 16777216 bytes"), "\(reply)")
    }
}

/// One HTTP/1.1 exchange over a plain socket: send `request`, read until the server's response
/// is complete or the time is up (so a server that waits for a body never sent shows as a timeout).
enum RawHTTP {
    struct Timeout: Error {}

    static func exchange(port: Int, request: String, timeoutSeconds: Int) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Timeout() }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Timeout() }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
            let text = String(decoding: received, as: UTF8.self)
            if let split = text.range(of: "\r\n\r\n"),
                let length = text[..<split.lowerBound].split(separator: "\r\n").first(where: {
                    $0.lowercased().hasPrefix("content-length:")
                })
                .flatMap({ Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }),
                text.utf8.count - text[..<split.upperBound].utf8.count >= length
            {
                break
            }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
