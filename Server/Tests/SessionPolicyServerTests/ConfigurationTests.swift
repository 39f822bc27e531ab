import Configuration
import Foundation
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// `serve`'s configuration as the library reads it: one set of keys, three sources, strict types.
@Suite("Server configuration")
struct ConfigurationTests {
    static let secret = "ssssssssssssssssssssssssssssssssssssssss"

    /// One source setting a key, and what the configuration must then hold.
    struct Case: Sendable, CustomStringConvertible {
        var description: String
        var commandLine: [String: ConfigContent] = [:]
        var environment: [String: String] = [:]
        var file: String?
        var check: @Sendable (ServerConfiguration) -> Bool

        init(
            _ description: String, commandLine: [String: ConfigContent] = [:], environment: [String: String] = [:],
            file: String? = nil, check: @escaping @Sendable (ServerConfiguration) -> Bool
        ) {
            self.description = description
            self.commandLine = commandLine
            self.environment = environment
            self.file = file
            self.check = check
        }
    }

    static let acceptedCases: [Case] = [
        Case("defaults") { $0.port == 8080 && $0.host == "127.0.0.1" && $0.policyDirectory == "policies" },
        Case("port from the environment", environment: ["SESSIONPOLICY_PORT": "9001"]) { $0.port == 9001 },
        Case("port from the file", file: #"{"port": 9002}"#) { $0.port == 9002 },
        Case("the command line wins over the environment", commandLine: ["port": .int(1)], environment: ["SESSIONPOLICY_PORT": "2"]) {
            $0.port == 1
        },
        Case("the environment wins over the file", environment: ["SESSIONPOLICY_PORT": "2"], file: #"{"port": 3}"#) { $0.port == 2 },
        Case("nested keys in the file", file: #"{"token": {"issuer": "https://id.example"}, "max": {"batch": {"items": 7}}}"#) {
            $0.tokenIssuer == "https://id.example" && $0.maxBatchItems == 7
        },
        Case("pools, comma-separated in the environment", environment: ["SESSIONPOLICY_POOLS": "a:0123456789abcdef,b:fedcba9876543210"]) {
            $0.pools == ["a": "0123456789abcdef", "b": "fedcba9876543210"]
        },
        Case("pools from the command line", commandLine: ["pools": .stringArray(["a:0123456789abcdef"])]) { $0.pools.count == 1 },
        Case("rates and durations", environment: ["SESSIONPOLICY_DETECT_PER_DEVICE": "5/2", "SESSIONPOLICY_TICKET_LIFETIME": "2m"]) {
            $0.detectPerDevice == .init(perMinute: 5, burst: 2) && $0.ticketLifetime == .seconds(120)
        },
        Case("storage", environment: ["SESSIONPOLICY_STORAGE": "sqlite:x.sqlite"]) { $0.storage == .sqlite(path: "x.sqlite") },
        Case("the HS256 secret", environment: ["SESSIONPOLICY_HS256_SECRET": secret]) { $0.hs256Secret == secret },
        Case("log level", file: #"{"log": {"level": "debug"}}"#) { $0.logLevel == "debug" },
    ]

    @Test("each source sets each key, in order of precedence", arguments: acceptedCases)
    func accepted(_ c: Case) async throws {
        let configuration = try await Self.load(c)
        #expect(c.check(configuration))
    }

    static let refusedCases: [(Case, String)] = [
        (
            Case("a port that is not a number", environment: ["SESSIONPOLICY_PORT": "abc"]) { _ in true },
            "`SESSIONPOLICY_PORT` is not a whole number"
        ),
        (
            Case("a file value of the wrong type", file: #"{"port": "x"}"#) { _ in true },
            "`port` in the configuration file is not a whole number"
        ),
        (Case("a port out of range", commandLine: ["port": .int(70000)]) { _ in true }, "port 70000 is out of range"),
        (
            Case("a reload interval that is not a number", environment: ["SESSIONPOLICY_RELOAD_INTERVAL": "soon"]) { _ in true },
            "is not a number"
        ),
        (Case("a negative body limit", file: #"{"max": {"body": -1}}"#) { _ in true }, "`max.body` must be positive"),
        (Case("a short pool secret", environment: ["SESSIONPOLICY_POOLS": "a:short"]) { _ in true }, "shorter than 16 bytes"),
        (Case("a bad rate", environment: ["SESSIONPOLICY_DETECT_PER_CLIENT": "fast"]) { _ in true }, "not N/BURST"),
        (Case("a bad storage URL", environment: ["SESSIONPOLICY_STORAGE": "mysql://x"]) { _ in true }, "storage"),
        (Case("a file that is not JSON", file: "[1") { _ in true }, "is not a JSON object"),
        (
            Case("a tracing endpoint that is not an http URL", environment: ["SESSIONPOLICY_TRACING_OTLP_ENDPOINT": "collector:4318"]) {
                _ in true
            }, "`tracing.otlp.endpoint` is `collector:4318`, not an http or https URL"
        ),
        (Case("the admin port on the API's", environment: ["SESSIONPOLICY_ADMIN_PORT": "8080"]) { _ in true }, "the same as `port`"),
        (
            Case("a pool of no connection", environment: ["SESSIONPOLICY_STORE_POOL_MAX": "0"]) { _ in true },
            "`store.pool.max` must be positive"
        ),
    ]

    @Test("a value of the wrong type or out of range is an error naming its source, never a default", arguments: refusedCases)
    func refused(_ c: Case, _ message: String) async throws {
        do {
            let configuration = try await Self.load(c)
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    static func load(_ c: Case) async throws(ConfigurationError) -> ServerConfiguration {
        var path: String?
        if let file = c.file {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).json")
            try? file.write(to: url, atomically: true, encoding: .utf8)
            path = url.path
        }
        defer { if let path { try? FileManager.default.removeItem(atPath: path) } }
        return try await ServerConfiguration.load(commandLine: c.commandLine, environment: c.environment, configFile: path)
    }
}
