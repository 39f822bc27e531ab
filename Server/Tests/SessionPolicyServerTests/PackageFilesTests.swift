import Foundation
import SessionPolicy
import SessionPolicyServer
import SessionPolicyTestSupport
import Testing

/// What the Debian package (packaging/build.sh) installs for the server: the two executables of
/// this package print the one version, and the commented configuration files under
/// /etc/sessionpolicy/ list every key of `ServerConfiguration.keys` and are read as the server
/// reads them.
@Suite("Package files")
struct PackageFilesTests {
    static let version = Fixtures.text("VERSION").trimmingCharacters(in: .whitespacesAndNewlines)

    @Test("policyctl-serve --version and policyctl-sessions --version print VERSION", arguments: ["policyctl-serve", "policyctl-sessions"])
    func version(_ name: String) async throws {
        let r = try await CLI.run(["--version"], executable: CLI.executable(name))
        #expect(r.status == 0)
        #expect(r.stdout == Self.version + "\n", "set every version at once with `packaging/set-version.sh`")
    }

    /// The values the package sets, where the server's defaults suit a checkout rather than an
    /// installed service.
    static let packageValues = [
        "policies": "/etc/sessionpolicy/policies",
        "storage": "sqlite:/var/lib/sessionpolicy/sessionpolicy.sqlite",
    ]
    static let marker =
        "# ---- every key: generated from ServerConfiguration.keys by PackageFilesTests; re-record with RECORD_SNAPSHOTS=1 ----\n"
    /// The configuration file (keys that are not secret) and the secrets file (root only).
    static let files = [("packaging/debian/sessionpolicy.env", false), ("packaging/debian/secrets.env", true)]

    /// The generated part of a file: each key with what it sets, as a comment, then the
    /// variable, commented out at its default unless the package sets it.
    static func keys(secret: Bool) -> String {
        var out = marker
        for key in ServerConfiguration.keys where key.isSecret == secret {
            var note = key.isRepeatable ? "; several are comma-separated" : ""
            let value = packageValues[key.name]
            if value != nil { note += " (set by this package; the server's own default: `\(key.defaultValue ?? "")`)" }
            out += "\n# \(key.help)\(note)\n\(value == nil ? "#" : "")\(key.environmentVariable)=\(value ?? key.defaultValue ?? "")\n"
        }
        return out
    }

    @Test("the configuration and secrets files list every key, each in its file", arguments: files)
    func everyKey(_ path: String, secret: Bool) throws {
        let text = Fixtures.text(path)
        let at = try #require(text.range(of: Self.marker), "\(path) has no line \(Self.marker)")
        let generated = Self.keys(secret: secret)
        if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1" {
            try (String(text[..<at.lowerBound]) + generated).write(toFile: Fixtures.path(path), atomically: true, encoding: .utf8)
            return
        }
        #expect(String(text[at.lowerBound...]) == generated, "\(path) differs from the table of keys (RECORD_SNAPSHOTS=1 rewrites it)")
    }

    /// The variables an `EnvironmentFile=` sets, read as systemd reads these files: `NAME=value`
    /// lines; `#` starts a comment line. With `uncommented`, the commented `#NAME=value` lines too.
    static func environment(_ path: String, uncommented: Bool = false) -> [String: String] {
        var out: [String: String] = [:]
        for var line in Fixtures.text(path).split(separator: "\n") {
            if uncommented, line.hasPrefix("#SESSIONPOLICY_") { line = line.dropFirst() }
            guard !line.hasPrefix("#"), let eq = line.firstIndex(of: "=") else { continue }
            out[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return out
    }

    @Test("the installed files are read as the package says: its policy folder and SQLite file, every other key at its default")
    func installedConfiguration() async throws {
        let installed = Self.files.map { Self.environment($0.0) }.reduce(into: [:]) { $0.merge($1) { $1 } }
        #expect(Set(installed.keys) == ["SESSIONPOLICY_POLICIES", "SESSIONPOLICY_STORAGE"])
        let configuration = try await ServerConfiguration.load(environment: installed)
        #expect(configuration.policyDirectory == "/etc/sessionpolicy/policies")
        #expect(configuration.storage == .sqlite(path: "/var/lib/sessionpolicy/sessionpolicy.sqlite"))
        // Every commented line that shows a default, uncommented, changes nothing.
        let defaults = Self.files.map { Self.environment($0.0, uncommented: true) }.reduce(into: [:]) { $0.merge($1) { $1 } }
            .filter { !$0.value.isEmpty }
        #expect(defaults.count > 20)
        #expect(try await ServerConfiguration.load(environment: defaults) == configuration)
    }
}
