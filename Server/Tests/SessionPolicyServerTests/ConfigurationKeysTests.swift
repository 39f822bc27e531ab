import ArgumentParser
import Configuration
import Foundation
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

@testable import policyctl_serve

/// `ServerConfiguration.keys`, the one table of the server's keys, and what follows from it: the
/// options of `policyctl-serve`, the environment variables, the file's keys, the table of
/// docs/server-configuration.md.
@Suite("Server configuration keys")
struct ConfigurationKeysTests {
    typealias Key = ServerConfiguration.Key

    static let secret = "ssssssssssssssssssssssssssssssssssssssss"
    /// A value that must never be printed: set as a secret, it may appear in no output.
    static let mark = "MARK-never-printed-7f3a"

    /// A value other than the default for every key, as the command line and the environment
    /// write it (a file path for the `.file` keys).
    static let samples: [String: String] = {
        // One fixed directory, written again by each run, so that runs leave nothing behind.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sessionpolicy-configuration-keys")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        func file(_ name: String, _ text: String) -> String {
            let url = dir.appendingPathComponent(name)
            try? text.write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }
        return [
            "host": "0.0.0.0", "port": "9001", "policies": "elsewhere", "storage": "sqlite:other.sqlite",
            "hs256.secret": secret, "hs256.secret.file": file("user.secret", secret + "\n"),
            "es256.public.key": Fixtures.text("spec/conformance/keys/a.pub.pem"),
            "es256.public.key.file": Fixtures.path("spec/conformance/keys/a.pub.pem"),
            "service.hs256.secret": secret, "service.hs256.secret.file": file("service.secret", secret),
            "service.es256.public.key": Fixtures.text("spec/conformance/keys/b.pub.pem"),
            "service.es256.public.key.file": Fixtures.path("spec/conformance/keys/b.pub.pem"),
            "signing.key": Fixtures.text("spec/conformance/keys/a.key.pem"),
            "signing.key.file": Fixtures.path("spec/conformance/keys/a.key.pem"),
            "signing.previous.key": Fixtures.text("spec/conformance/keys/b.key.pem"),
            "signing.previous.key.file": Fixtures.path("spec/conformance/keys/b.key.pem"),
            "storage.migrations": "manual", "log.access": "true",
            "machine.validity": "2d", "decision.log.retention": "30d", "decision.log": "stdout", "decision.log.hash.users": "true",
            "token.issuer": "https://id.example", "token.audience": "api", "pools": "vendor:0123456789abcdef",
            "apps": "com.example.crm:cross-app-device-sso", "reload.interval": "0.5", "max.body": "1000",
            "max.batch.body": "2000", "max.batch.items": "30", "clock.skew": "1m", "clock.max.delay": "1d",
            "ticket.lifetime": "2m", "detect.per.client": "5/2", "detect.per.device": "3/1", "store.timeout": "7s",
            "store.connect.timeout": "8s", "health.max.write.wait": "9s", "http.request.timeout": "11s",
            "http.idle.timeout": "12s", "http.max.connections": "13", "log.level": "debug",
            "token.jwks.url": "https://id.example/keys", "token.ca.file": Fixtures.path("spec/conformance/keys/a.pub.pem"),
            "token.leeway": "30s", "token.user.claim": "oid", "token.jwks.cache.min": "1m", "token.jwks.cache.max": "2h",
            "token.jwks.refetch.interval": "10s", "token.jwks.max.stale": "12h", "token.fetch.timeout": "3s",
            "service.clients": "back-end", "service.scopes": "sessions:grant", "id.token.audience": "mobile-app",
            "id.token.max.age": "5m", "token.introspection.url": "https://id.example/introspect",
            "token.introspection.client.id": "sessionpolicy-server", "token.introspection.client.secret": secret,
            "token.introspection.client.secret.file": file("introspection.secret", secret), "token.introspection.cache.max": "1m",
            "token.extra.issuers": "https://staging.example#staging-api", "store.pool.max": "4", "admin.port": "9002",
            "admin.host": "0.0.0.0", "tracing.otlp.endpoint": "http://collector.internal:4318", "tracing.export.delay": "2s",
            "tracing.user.ids": "true",
        ]
    }()

    /// Values of each secret key that are refused, each holding `mark`.
    static let refusedSecrets: [String: [String]] = [
        "storage": ["mysql://user:\(mark)@db", "postgres://user:\(mark)@/db", "postgres://user:\(mark)@db:1/db?sslmode=maybe"],
        "hs256.secret": ["\(mark)\(secret)"],  // refused beside the same service secret
        "service.hs256.secret": ["\(mark)\(secret)"],
        "signing.key": ["-----BEGIN PRIVATE KEY-----\n\(mark)\n-----END PRIVATE KEY-----"],
        "signing.previous.key": ["-----BEGIN PRIVATE KEY-----\n\(mark)\n-----END PRIVATE KEY-----"],
        "pools": [mark, ":\(mark)", "vendor:\(mark.prefix(10))"],
        "token.introspection.client.secret": ["\(mark)\n\(mark)"],
    ]

    static let sampledKeys: [Key] = ServerConfiguration.keys

    @Test("every key of the table has a sample value here, and the table has no duplicate")
    func everyKeySampled() {
        let names = ServerConfiguration.keys.map(\.name)
        #expect(Set(names).count == names.count, "a key is listed twice")
        let options = ServerConfiguration.keys.compactMap(\.option)
        #expect(Set(options).count == options.count, "two keys share an option")
        #expect(Set(Self.samples.keys) == Set(names), "add a sample for each new key (and drop those of removed keys)")
        let secretKeys = Set(ServerConfiguration.keys.filter(\.isSecret).map(\.name))
        #expect(secretKeys.isSubset(of: Set(Self.refusedSecrets.keys)), "give each secret key a refused value")
    }

    @Test("each key set by its option, its environment variable or the file has the same effect", arguments: sampledKeys)
    func sameEffectFromEverySource(_ key: Key) async throws {
        let sample = try #require(Self.samples[key.name])
        let base = Self.prerequisites(key)
        let defaults = try await ServerConfiguration.load(environment: base)
        let viaEnvironment = try await ServerConfiguration.load(environment: base.merging([key.environmentVariable: sample]) { $1 })
        #expect(viaEnvironment != defaults, "`\(key.environmentVariable)` changed nothing")
        let viaFile = try await Self.load(file: Self.json(key, sample), environment: base)
        #expect(viaFile == viaEnvironment, "`\(key.name)` in the file")
        guard let option = key.option else { return }
        let viaOption = try await Self.load(arguments: key.type == .bool ? [option] : [option, sample], environment: base)
        #expect(viaOption == viaEnvironment, "`\(option)`")
    }

    @Test("each default the table states is the default of the configuration", arguments: sampledKeys.filter { $0.defaultValue != nil })
    func defaultsAgree(_ key: Key) async throws {
        let stated = try await ServerConfiguration.load(environment: [key.environmentVariable: key.defaultValue ?? ""])
        #expect(stated == ServerConfiguration(), "`\(key.name)`: the table says `\(key.defaultValue ?? "")`")
        #expect(try await ServerConfiguration.load(environment: [:]) == ServerConfiguration())
    }

    @Test("a secret is never repeated in an error, from any source")
    func secretsNotInErrors() async throws {
        var refusals = 0
        for (name, values) in Self.refusedSecrets {
            let key = try #require(ServerConfiguration.key(name), "`\(name)` is no key")
            for value in values {
                var sources: [(String, () async throws -> ServerConfiguration)] = [
                    ("environment", { try await Self.load(environment: Self.companions(key, value)) }),
                    ("file", { try await Self.load(file: Self.json(key, value), environment: Self.companions(key, nil)) }),
                ]
                if let option = key.option {
                    sources.append(("option", { try await Self.load(arguments: [option, value], environment: Self.companions(key, nil)) }))
                }
                for (source, load) in sources {
                    do {
                        _ = try await load()
                        Issue.record("`\(name)` = `\(value)` from the \(source) was accepted")
                    } catch {
                        refusals += 1
                        #expect(!"\(error)".contains(Self.mark), "\(source): \(error)")
                    }
                }
            }
        }
        #expect(refusals >= 20)
    }

    @Test("policyctl-serve --help lists every option with its environment variable, and prints no secret")
    func help() async throws {
        var environment: [String: String] = [:]
        for key in ServerConfiguration.keys where key.isSecret { environment[key.environmentVariable] = Self.mark }
        let r = try await CLI.run(["--help"], executable: ServeProcess.binary, environment: environment)
        #expect(r.status == 0)
        #expect(!(r.stdout + r.stderr).contains(Self.mark))
        let text = r.stdout.replacingOccurrences(of: "\n", with: " ")
        for key in ServerConfiguration.keys {
            #expect(text.contains("[\(key.environmentVariable)"), "\(key.environmentVariable)")
            if let option = key.option {
                #expect(text.contains("\(option) "), "\(option)")
                #expect(text.contains("\(option) <") == (key.type != .bool), "\(option) takes a value unless a flag")
            }
        }
        #expect(text.contains("--config <config>"))
    }

    @Test("a secret given on the command line or in the environment is not in the error the binary prints")
    func secretsNotPrintedByTheBinary() async throws {
        let storage = try await CLI.run(["--storage", "mysql://user:\(Self.mark)@db"], executable: ServeProcess.binary)
        #expect(storage.status == 2)
        #expect(storage.stderr.contains("unknown storage URL"), "\(storage.stderr)")
        let pool = try await CLI.run([], executable: ServeProcess.binary, environment: ["SESSIONPOLICY_POOLS": Self.mark])
        #expect(pool.status == 2)
        #expect(pool.stderr.contains("a pool is written ID:SECRET"), "\(pool.stderr)")
        for r in [storage, pool] { #expect(!(r.stdout + r.stderr).contains(Self.mark), "\(r.stderr)") }
    }

    @Test("the command line still refuses an unknown option and a value of the wrong type (usage error, exit 64)")
    func usageErrors() {
        for arguments in [["--bogus", "1"], ["--port", "abc"], ["--reload-interval", "soon"], ["--hs256-secret", "x"]] {
            do {
                _ = try Serve.parse(arguments)
                Issue.record("\(arguments) parsed")
            } catch {
                #expect(Serve.exitCode(for: error) == ExitCode(64), "\(arguments)")
            }
        }
    }

    static let begin =
        "<!-- configuration keys: generated from ServerConfiguration.keys by ConfigurationKeysTests; "
        + "re-record with RECORD_SNAPSHOTS=1 -->"
    static let end = "<!-- end of configuration keys -->"

    /// The page that documents the keys.
    static let page = "docs/server-configuration.md"

    @Test("the table of configuration keys in docs/server-configuration.md is the table")
    func documentedTable() throws {
        let text = Fixtures.text(Self.page)
        let a = try #require(text.range(of: Self.begin), "\(Self.page) has no line \(Self.begin)")
        let b = try #require(text.range(of: Self.end, range: a.upperBound..<text.endIndex), "\(Self.page) has no line \(Self.end)")
        let table = "\n" + Self.markdownTable()
        if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
            let updated = String(text[..<a.upperBound]) + table + String(text[b.lowerBound...])
            try updated.write(toFile: Fixtures.path(Self.page), atomically: true, encoding: .utf8)
            return
        }
        let stored = String(text[a.upperBound..<b.lowerBound])
        let want = table.split(separator: "\n")
        let have = stored.split(separator: "\n")
        for (i, line) in want.enumerated() where i >= have.count || have[i] != line {
            Issue.record("\(Self.page)'s configuration table differs at row \(i + 1) (RECORD_SNAPSHOTS=1 rewrites it):\n  want: \(line)")
            return
        }
        #expect(have.count == want.count, "\(Self.page)'s configuration table has rows the table does not")
    }

    @Test("the configuration file of docs/server-configuration.md reads as it says: nested or dotted keys, lists as arrays")
    func documentedFile() async throws {
        let example = try #require(
            Shell.block(after: "configuration file example: read by ConfigurationKeysTests", in: Fixtures.text(Self.page)))
        let c = try await Self.load(file: example)
        #expect(c.host == "0.0.0.0" && c.port == 8080 && c.policyDirectory == "/etc/sessionpolicy/policies")
        #expect(c.apps == ["com.example.field-service": "cross-app-device-sso", "com.example.crm": "cross-app-device-sso"])
        #expect(c.pools.keys.sorted() == ["vendor"])
        #expect(c.tokenIssuer == "https://sso.example.com/realms/bank" && c.tokenAudience == "sessionpolicy-api")
        #expect(c.serviceClients == ["sessionpolicy-backend"])
        #expect(c.decisionLogRetention == TimeSpan(seconds: 30 * 86_400))
        #expect(c.reloadInterval == .seconds(5))
        // A list key takes an array, even of one value; a string in its place is refused.
        let one = try await Self.load(file: #"{"apps": ["com.example.crm:cross-app-device-sso"]}"#)
        #expect(one.apps == ["com.example.crm": "cross-app-device-sso"])
        await #expect(throws: ConfigurationError.self) { try await Self.load(file: #"{"apps": "com.example.crm:cross-app-device-sso"}"#) }
        // Dotted and nested spellings of a key read the same.
        let dotted = try await Self.load(file: #"{"token.issuer": "https://id.example", "service.clients": ["b"]}"#)
        let nested = try await Self.load(file: #"{"token": {"issuer": "https://id.example"}, "service": {"clients": ["b"]}}"#)
        #expect(dotted == nested && dotted.tokenIssuer == "https://id.example")
    }

    /// docs/server-configuration.md's rendering of the table.
    static func markdownTable() -> String {
        func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
        var out = "| key | what it sets | command line | environment | default |\n|---|---|---|---|---|\n"
        for key in ServerConfiguration.keys {
            let name = "`\(key.name)`" + (key.isSecret ? " (secret)" : "")
            let option = key.option.map { "`\($0)`" + (key.isRepeatable ? " (repeat)" : "") } ?? ""
            let note = key.isRepeatable ? " (comma-separated)" : key.type == .bool ? " (`true`)" : ""
            let value = key.defaultValue.map { "`\($0)`" } ?? "none"
            out += "| \(name) | \(cell(key.help)) | \(cell(option)) | `\(key.environmentVariable)`\(note) | \(cell(value)) |\n"
        }
        return out
    }

    /// The other keys a refused secret needs to be refused: the user key beside the same service key.
    /// What a key needs beside it to take effect: the previous signing key, a current one.
    static func prerequisites(_ key: Key) -> [String: String] {
        key.name.hasPrefix("signing.previous.key") ? ["SESSIONPOLICY_SIGNING_KEY": samples["signing.key"]!] : [:]
    }

    static func companions(_ key: Key, _ value: String?) -> [String: String] {
        var environment = value.map { [key.environmentVariable: $0] } ?? [:]
        if key.name == "hs256.secret" { environment["SESSIONPOLICY_SERVICE_HS256_SECRET"] = "\(mark)\(secret)" }
        if key.name == "service.hs256.secret" { environment["SESSIONPOLICY_HS256_SECRET"] = "\(mark)\(secret)" }
        return environment
    }

    /// A JSON file that sets `key` to `sample`, typed as the key is.
    static func json(_ key: Key, _ sample: String) throws -> String {
        var value: Any
        switch key.type {
        case .string: value = sample
        case .int: value = try #require(Int(sample))
        case .double: value = try #require(Double(sample))
        case .bool: value = sample == "true"
        case .list: value = [sample]
        }
        for component in key.components.reversed() { value = [component: value] }
        return String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
    }

    /// The configuration `policyctl-serve ARGUMENTS` reads, parsed by its own options.
    static func load(
        arguments: [String] = [], file: String? = nil, environment: [String: String] = [:]
    ) async throws -> ServerConfiguration {
        var path: String?
        if let file {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).json")
            try file.write(to: url, atomically: true, encoding: .utf8)
            path = url.path
        }
        defer { if let path { try? FileManager.default.removeItem(atPath: path) } }
        let serve = try Serve.parse(arguments)
        return try await ServerConfiguration.load(commandLine: serve.options.values, environment: environment, configFile: path)
    }
}
