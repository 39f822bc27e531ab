import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport

/// Starts the real server on an ephemeral port (Hummingbird's live test framework) with the
/// shipped policies, a token secret and one user pool, and talks HTTP to it.
enum TestServer {
    static let poolSecret = "vendor-pool-secret-0123456789"
    /// The test server's clock unless a test gives another: a few days after the times the
    /// tests' events carry (2026-03-01 and 2026-03-02), within the allowed delay.
    static let now = Timestamp.parse("2026-03-03T09:00:00Z")!

    static func run(
        _ storage: TestStorage, policies: String = Fixtures.path("policies"),
        configure: (inout ServerConfiguration) -> Void = { _ in },
        clock: @escaping @Sendable () -> Timestamp = { TestServer.now },
        onAdminRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        _ body: @escaping @Sendable (HTTP) async throws -> Void
    ) async throws {
        let dir = try Fixtures.temporaryDirectory("server")
        defer { try? FileManager.default.removeItem(at: dir) }
        var c = ServerConfiguration()
        c.port = 0
        c.policyDirectory = policies
        c.storage = try storage.url(in: dir)
        c.hs256Secret = Tokens.secret
        c.serviceHS256Secret = Tokens.serviceSecret
        c.pools = ["vendor": poolSecret]
        c.apps = ["com.example.crm": "cross-app-device-sso", "com.example.field-service": "cross-app-device-sso"]
        c.reloadInterval = .milliseconds(100)
        c.decisionLogRetention = TestStorage.sharedRetention
        configure(&c)
        var logger = Logger(label: "test-server")
        logger.logLevel = .critical
        let app = try await buildApplication(
            configuration: c, logger: logger, clock: clock, handleSignals: false, onAdminRunning: onAdminRunning)
        try await app.test(.live) { client in try await body(HTTP(client: client)) }
    }
}

/// The built `policyctl-serve` (what `policyctl serve` runs) as a separate process, as a user runs it.
enum ServeProcess {
    /// The server package's executable.
    static let binary = CLI.executable("policyctl-serve")

    struct NoPort: Error, CustomStringConvertible {
        var firstLine: String
        var description: String { "policyctl serve did not say where it listens: \(firstLine)" }
    }

    /// Starts `policyctl-serve ARGUMENTS` and returns it with the port its first line names.
    static func start(
        _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil, standardError: FileHandle = .nullDevice
    ) async throws -> (process: Process, port: Int) {
        guard let binary else { throw NoPort(firstLine: "no policyctl-serve binary: build it first") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        // Servers that share the test database keep its decision log (see `TestStorage.sharedRetention`).
        var env = environment ?? ProcessInfo.processInfo.environment
        if env["SESSIONPOLICY_DECISION_LOG_RETENTION"] == nil { env["SESSIONPOLICY_DECISION_LOG_RETENTION"] = "3650d" }
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = standardError
        try process.run()
        let text = await FirstLine.read(out.fileHandleForReading)
        guard let port = text.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            process.terminate()
            throw NoPort(firstLine: text)
        }
        return (process, port)
    }
}

/// The first line a started process writes. It is read on a thread of its own: a blocking read
/// on Swift's cooperative pool (two threads on two cores) stalls every other test of the
/// process meanwhile, and under the whole suite that stall outlasted servers' idle timeouts.
enum FirstLine {
    static func read(_ handle: FileHandle) async -> String {
        await Socket.onThread {
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            return String(decoding: line, as: UTF8.self)
        }
    }
}

/// A small JSON client over the test client.
struct HTTP: Sendable {
    let client: any TestClientProtocol

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPFields
        var text: String
        /// The body parsed as JSON (nil if it is not JSON).
        var json: [String: any Sendable]? {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: any Sendable]
        }
        /// The first diagnostic's code, for error replies.
        var code: String? { ((json?["diagnostics"] as? [[String: Any]])?.first?["code"]) as? String }
        /// `outcome.decision` of an evaluation reply.
        var decision: String? { (json?["outcome"] as? [String: Any])?["decision"] as? String }
    }

    func send(
        _ method: HTTPRequest.Method, _ uri: String, _ body: String? = nil, token: String? = nil, headers: HTTPFields = [:]
    ) async throws -> Reply {
        var h = headers
        h[.contentType] = "application/json"
        if let token { h[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: uri, method: method, headers: h, body: body.map { ByteBuffer(string: $0) }) {
            Reply(status: Int($0.status.code), headers: $0.headers, text: String(buffer: $0.body))
        }
    }

    func post(_ uri: String, _ body: String, token: String? = nil, headers: HTTPFields = [:]) async throws -> Reply {
        try await send(.post, uri, body, token: token, headers: headers)
    }

    func get(_ uri: String, token: String? = nil) async throws -> Reply { try await send(.get, uri, token: token) }
}

/// JSON text of an encodable value (sorted keys, as the server writes).
func jsonText(_ value: some Encodable) -> String {
    let e = JSONEncoder()
    e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try! e.encode(value), as: UTF8.self)
}

extension CLI {
    /// `CLI.run` for async tests: the command runs and is waited for on a thread of its own, not
    /// on Swift's cooperative pool (two threads on two cores), which a waiting test would take
    /// from every other test of the process (`FirstLine`). In an async test, `try await
    /// CLI.run(...)` picks this one.
    static func run(
        _ args: [String], stdin: String? = nil, executable: String? = binary, environment: [String: String] = [:]
    ) async throws -> Result {
        try await Socket.onThread {
            Swift.Result { try CLI.run(args, stdin: stdin, executable: executable, environment: environment) as Result }
        }.get()
    }
}
